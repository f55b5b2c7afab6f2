"""lsi-collection-growth: a vehicle's log under a local index, growing toward the cap.

`python examples/advisor/lsi_collection_growth.py` (runs with a 600 KB cap,
`--item-collection-limit 600000`, so that a few writes show what 10 GB
does in production). A table with a local index caps each item collection
at 10 GB. One vehicle writes 200 KB of log on day one and 200 KB the next
day (the server clock is advanced a day): the advisor reports the
collection's size, its growth a day and the projected date of refusal, and
proposes the same table with a global index instead (no cap).
"""

from __future__ import annotations

from typing import Any

from common import Advance, key_table, main

ENTRY = "x" * 20_000
PER_DAY = 10
LIMIT = 600_000


def run(ddb: Any, table: str, advance: Advance) -> None:
    key_table(ddb, table, LocalSecondaryIndexes=[{
        "IndexName": "byKind", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                             {"AttributeName": "kind", "KeyType": "RANGE"}],
        "Projection": {"ProjectionType": "KEYS_ONLY"}}])
    for day in range(2):
        for n in range(PER_DAY):
            ddb.put_item(TableName=table, Item={
                "pk": {"S": "VEHICLE#1"}, "sk": {"S": f"LOG#{day}#{n:03}"}, "kind": {"S": "GPS"},
                "payload": {"S": ENTRY}})
        if day == 0:
            advance(86400)


if __name__ == "__main__":
    main(run, item_collection_limit=LIMIT)
