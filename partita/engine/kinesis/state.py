"""Where a table's Kinesis destinations live: one row per table id, beside the change log.

The row (`KINESIS_SPACE | table id`) holds the destinations DescribeKinesis-
StreamingDestination lists (newest first), the key schema and names the
delivery needs even after the table is gone, and the delivery position: the
n of the last change-log entry Kinesis acknowledged. The catalog document
carries `_KinesisLive` while one destination is ENABLING, ACTIVE, UPDATING or
DISABLING, which is what makes the write path log the table's changes; a
table without it pays nothing (tables/schema.py `logs_changes`).
"""

from __future__ import annotations

import struct
from typing import Any

import orjson

from ...storage.base import ReadView, WriteTxn
from ..backups.keys import end_of

KINESIS_SPACE = b"\x10"
#: The statuses during which the table logs its changes and no other destination may be enabled.
LIVE = ("ENABLING", "ACTIVE", "UPDATING", "DISABLING")
#: The statuses whose changes are sent to Kinesis.
DELIVERING = ("ACTIVE", "UPDATING")

State = dict[str, Any]


def state_key(table_id: int) -> bytes:
    return KINESIS_SPACE + struct.pack(">I", table_id)


def read_state(view: ReadView, table_id: int) -> State | None:
    raw = view.get(state_key(table_id))
    return None if raw is None else orjson.loads(raw)


def write_state(txn: WriteTxn, state: State) -> None:
    txn.put(state_key(state["table_id"]), orjson.dumps(state))


def all_states(view: ReadView) -> list[State]:
    return [orjson.loads(raw) for _, raw in view.range(KINESIS_SPACE, end_of(KINESIS_SPACE))]


def live_entry(state: State | None) -> dict[str, Any] | None:
    """The one destination that is ENABLING, ACTIVE, UPDATING or DISABLING, if any."""
    for entry in (state or {}).get("entries", []):
        if entry["DestinationStatus"] in LIVE:
            return entry  # type: ignore[no-any-return]
    return None


def hold(view: ReadView, table_id: int) -> int | None:
    """The change-log position a live destination has delivered up to (the log trimmer keeps what follows)."""
    state = read_state(view, table_id)
    if state is None or live_entry(state) is None:
        return None
    delivered: int = state["delivered"]
    return delivered
