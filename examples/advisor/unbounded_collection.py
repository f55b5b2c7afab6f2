"""unbounded-collection: a telemetry dashboard reads each vehicle's whole history.

`python examples/advisor/unbounded_collection.py`. Readings are kept per
vehicle (pk VEHICLE#<id>, sk READING#<n>), and the dashboard shows a vehicle
by querying its collection with no sort-key condition and no Limit, paging
to the end. Each vehicle's history is past a megabyte already, so each view
is two pages, and more every week: the advisor reports pages and items per
logical Query and proposes a sort-key condition with a Limit, TTL, or
time-bucketed keys.
"""

from __future__ import annotations

from typing import Any

from common import Advance, batch_put, key_table, main

VEHICLES = 2
READINGS = 600
TRACE = "p" * 1900  # a reading's GPS trace: ~2 KB an item, 1.2 MB a vehicle
VIEWS = 2


def run(ddb: Any, table: str, advance: Advance) -> None:
    key_table(ddb, table)
    for vehicle in range(VEHICLES):
        batch_put(ddb, table, [{"pk": {"S": f"VEHICLE#{vehicle}"}, "sk": {"S": f"READING#{n:06}"},
                                "trace": {"S": TRACE}} for n in range(READINGS)])
    for _ in range(VIEWS):
        for vehicle in range(VEHICLES):
            request: dict[str, Any] = {"TableName": table, "KeyConditionExpression": "pk = :v",
                                       "ExpressionAttributeValues": {":v": {"S": f"VEHICLE#{vehicle}"}}}
            while True:
                page = ddb.query(**request)
                if "LastEvaluatedKey" not in page:
                    break
                request["ExclusiveStartKey"] = page["LastEvaluatedKey"]


if __name__ == "__main__":
    main(run)
