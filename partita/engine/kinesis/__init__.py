"""Kinesis Data Streams streaming destinations: the API's state machine and the delivery duty.

A table with a live destination writes its changes to the change log
(backups/changelog.py) in each change's own commit; the delivery duty reads
them in commit order, turns each into DynamoDB's Kinesis record and sends it
with PutRecords to the `--kinesis-endpoint`, advancing a position kept in the
store only once Kinesis acknowledged the records (at least once, in order).
"""
