"""projection-after-read: a product list reads whole 3 KB products to show names and prices.

`python examples/advisor/projection_after_read.py`. Products live in one
collection per category, each with a long description. The list page
queries the category with `ProjectionExpression: #n, price`: the projection
is applied after the read, so every page pays for whole items. The
advisor reports the bytes read per item against the projected share and
proposes a global index with the same key that INCLUDEs only those
attributes.
"""

from __future__ import annotations

from typing import Any

from common import Advance, batch_put, key_table, main

PRODUCTS = 30
DESCRIPTION = "d" * 3000
LIST_VIEWS = 4


def run(ddb: Any, table: str, advance: Advance) -> None:
    key_table(ddb, table)
    batch_put(ddb, table, [{"pk": {"S": "CATEGORY#books"}, "sk": {"S": f"PRODUCT#{n:03}"},
                            "name": {"S": f"Book {n}"}, "price": {"N": str(10 + n)},
                            "description": {"S": DESCRIPTION}} for n in range(PRODUCTS)])
    for _ in range(LIST_VIEWS):
        ddb.query(TableName=table, KeyConditionExpression="pk = :c", ProjectionExpression="#n, price",
                  ExpressionAttributeNames={"#n": "name"}, ExpressionAttributeValues={":c": {"S": "CATEGORY#books"}})


if __name__ == "__main__":
    main(run)
