"""scan-filter: a Scan used as a WHERE clause. `python examples/advisor/scan_filter.py`

A shop keeps orders keyed by order id and finds the cancelled ones with a
Scan and `FilterExpression: status = CANCELLED`. The Scan reads every order
to return the few cancelled ones: the advisor reports what was read against
what came back, and proposes a global index keyed on `status` (the Query
that replaces the Scan reads only the cancelled orders).
"""

from __future__ import annotations

from typing import Any

from common import Advance, batch_put, key_table, main

ORDERS = 200
CANCELLED = 4  # orders 0, 50, 100, 150
SCANS = 3


def order(n: int) -> dict[str, Any]:
    status = "CANCELLED" if n % (ORDERS // CANCELLED) == 0 else "SHIPPED"
    return {"pk": {"S": f"ORDER#{n:04}"}, "status": {"S": status}, "customer": {"S": f"CUSTOMER#{n % 37}"},
            "amount": {"N": str(10 + n % 90)}}


def run(ddb: Any, table: str, advance: Advance) -> None:
    key_table(ddb, table, sort=False)
    batch_put(ddb, table, [order(n) for n in range(ORDERS)])
    for _ in range(SCANS):  # "SELECT * FROM orders WHERE status = 'CANCELLED'", three times
        request: dict[str, Any] = {"TableName": table, "FilterExpression": "#s = :s",
                                   "ExpressionAttributeNames": {"#s": "status"},
                                   "ExpressionAttributeValues": {":s": {"S": "CANCELLED"}}}
        while True:
            page = ddb.scan(**request)
            if "LastEvaluatedKey" not in page:
                break
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]


if __name__ == "__main__":
    main(run)
