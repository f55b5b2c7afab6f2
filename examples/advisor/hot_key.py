"""hot-key: one vehicle of a telemetry fleet takes most of the writes. `python examples/advisor/hot_key.py`

A fleet keeps one item collection per vehicle (pk VEHICLE#<id>, sk
READING#<n>). Twenty vehicles report a burst of readings each; vehicle 7's
tracker is stuck in a loop and sends forty bursts. One partition-key value
is one partition (1,000 writes a second at most, whatever the table): the
advisor reports the key's share of the table's units and its rate against
that ceiling, and explains write sharding.

Writes come in bursts of eight one-unit readings, so that the meter's hot-key
sample (one request per 8 units, carrying 8) counts each vehicle exactly.
"""

from __future__ import annotations

from typing import Any

from common import Advance, key_table, main

VEHICLES = 20
HOT = 7
HOT_BURSTS = 40
BURST = 8


def run(ddb: Any, table: str, advance: Advance) -> None:
    key_table(ddb, table)
    seq = 0
    for burst in range(HOT_BURSTS):
        for vehicle in range(VEHICLES):
            if vehicle != HOT and burst > 0:
                continue
            for _ in range(BURST):
                seq += 1
                ddb.put_item(TableName=table, Item={
                    "pk": {"S": f"VEHICLE#{vehicle}"}, "sk": {"S": f"READING#{seq:06}"},
                    "speed": {"N": str(seq % 120)}, "lat": {"N": "48.85"}, "lon": {"N": "2.35"}})


if __name__ == "__main__":
    main(run)
