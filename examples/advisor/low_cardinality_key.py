"""low-cardinality-key: a table keyed by status. `python examples/advisor/low_cardinality_key.py`

A task tracker keys its table by status (pk STATUS#OPEN, STATUS#IN_PROGRESS,
STATUS#DONE; sk TASK#<id>) so that "all open tasks" is one Query. Every write
then lands on one of three partition-key values, three partitions at most
whatever the table's size: the advisor reports the values and their share of
the units, and proposes keying by task id with a sharded status index.
"""

from __future__ import annotations

from typing import Any

from common import Advance, key_table, main

STATUSES = ("OPEN", "IN_PROGRESS", "DONE")
TASKS_PER_STATUS = 200
BURST = 8  # writes to one status in a row: the meter's hot-key sample counts each status exactly


def run(ddb: Any, table: str, advance: Advance) -> None:
    key_table(ddb, table)
    for start in range(0, TASKS_PER_STATUS, BURST):
        for status in STATUSES:
            for n in range(start, min(start + BURST, TASKS_PER_STATUS)):
                ddb.put_item(TableName=table, Item={
                    "pk": {"S": f"STATUS#{status}"}, "sk": {"S": f"TASK#{status[0]}{n:04}"},
                    "title": {"S": f"task {n}"}})
    ddb.query(TableName=table, KeyConditionExpression="pk = :p",
              ExpressionAttributeValues={":p": {"S": "STATUS#OPEN"}}, Limit=50)


if __name__ == "__main__":
    main(run)
