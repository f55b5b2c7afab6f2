"""gsi-read-after-write: a sign-up flow checks the new user through a GSI at once.

`python examples/advisor/gsi_read_after_write.py`. Users are keyed by id
(pk USER#<id>) with a global index on email. Each sign-up writes the user
and immediately queries the email index to confirm it: on DynamoDB a GSI is
eventually consistent, so that Query may not see the write yet. Locally it
always does, which hides the bug; the advisor reports it (and
`--gsi-lag-ms` makes the test really miss the write).
"""

from __future__ import annotations

from typing import Any

from common import Advance, key_table, main

SIGNUPS = 5


def run(ddb: Any, table: str, advance: Advance) -> None:
    key_table(ddb, table, sort=False, GlobalSecondaryIndexes=[{
        "IndexName": "byEmail", "KeySchema": [{"AttributeName": "email", "KeyType": "HASH"}],
        "Projection": {"ProjectionType": "KEYS_ONLY"}}])
    for n in range(SIGNUPS):
        email = f"user{n}@example.com"
        ddb.put_item(TableName=table, Item={"pk": {"S": f"USER#{n}"}, "email": {"S": email}})
        ddb.query(TableName=table, IndexName="byEmail", KeyConditionExpression="email = :e",
                  ExpressionAttributeValues={":e": {"S": email}})


if __name__ == "__main__":
    main(run)
