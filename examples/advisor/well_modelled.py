"""A well-modelled single-table shop: the advisor finds nothing. `python examples/advisor/well_modelled.py`

Customers and their orders share an item collection (pk CUSTOMER#<id>; sk
PROFILE, ORDER#<date>#<n>), with a global index on email for sign-in. Every
read names its key: a profile by GetItem, a customer's latest orders by a
Query with a sort-key prefix and a Limit, a sign-in by a Query on the
email index long after the customer was written. Load spreads over many
partition keys.
"""

from __future__ import annotations

from typing import Any

from common import Advance, batch_put, key_table, main

CUSTOMERS = 150
ORDERS_EACH = 3


def run(ddb: Any, table: str, advance: Advance) -> None:
    key_table(ddb, table, GlobalSecondaryIndexes=[{
        "IndexName": "byEmail", "KeySchema": [{"AttributeName": "email", "KeyType": "HASH"}],
        "Projection": {"ProjectionType": "KEYS_ONLY"}}])
    items = []
    for c in range(CUSTOMERS):
        items.append({"pk": {"S": f"CUSTOMER#{c}"}, "sk": {"S": "PROFILE"},
                      "email": {"S": f"c{c}@example.com"}, "name": {"S": f"Customer {c}"}})
        items += [{"pk": {"S": f"CUSTOMER#{c}"}, "sk": {"S": f"ORDER#2026-09-0{o + 1}#{c}{o}"},
                   "amount": {"N": str(10 * (o + 1))}} for o in range(ORDERS_EACH)]
    batch_put(ddb, table, items)
    advance(60)  # sign-ins come later than the sign-ups
    for c in range(0, CUSTOMERS, 3):
        key = {"pk": {"S": f"CUSTOMER#{c}"}}
        ddb.query(TableName=table, IndexName="byEmail", KeyConditionExpression="email = :e",
                  ExpressionAttributeValues={":e": {"S": f"c{c}@example.com"}})
        ddb.get_item(TableName=table, Key={**key, "sk": {"S": "PROFILE"}})
        ddb.query(TableName=table, KeyConditionExpression="pk = :p AND begins_with(sk, :o)",
                  ExpressionAttributeValues={":p": key["pk"], ":o": {"S": "ORDER#"}},
                  ScanIndexForward=False, Limit=10)


if __name__ == "__main__":
    main(run)
