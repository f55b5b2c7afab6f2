"""DynamoDB's capacity arithmetic, and the ConsumedCapacity document.

Reads are charged per 4 KB of item read (halved when eventually
consistent), writes per 1 KB of the larger of the old and the new item;
a missing item still costs one unit (half for an eventual read).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

READ_UNIT_BYTES = 4096
WRITE_UNIT_BYTES = 1024


def read_units(size: int, consistent: bool) -> float:
    units = max(1, -(-size // READ_UNIT_BYTES))
    return float(units) if consistent else units / 2


def write_units(size: int) -> float:
    return float(max(1, -(-size // WRITE_UNIT_BYTES)))


def write_need(action: Any, old: Any, new: Any) -> float:
    """The units of a put or delete (an ItemAction) whose stored item was `old` and will be `new` (None: none)."""
    size = 0 if new is None else action.new_size
    if old is not None and action.old_size > size:
        size = action.old_size
    return write_units(size)


@dataclass(slots=True)
class Consumed:
    """Units one request consumed on one table, split by table and index."""

    table_name: str
    table: float = 0.0
    local_indexes: dict[str, float] = field(default_factory=dict)
    global_indexes: dict[str, float] = field(default_factory=dict)
    #: VectorWriteRequestBytes per vector index the write changed; None (no dict
    #: made) for the tables without a vector index. Bytes, not units: never in the total.
    vector_indexes: dict[str, float] | None = None

    @property
    def total(self) -> float:
        return self.table + sum(self.local_indexes.values()) + sum(self.global_indexes.values())

    def document(self, mode: str | None) -> dict[str, Any] | None:
        """ConsumedCapacity as DynamoDB returns it for ReturnConsumedCapacity=mode."""
        if mode not in ("TOTAL", "INDEXES"):
            return None
        out: dict[str, Any] = {"TableName": self.table_name, "CapacityUnits": self.total}
        if mode == "INDEXES":
            out["Table"] = {"CapacityUnits": self.table}
            if self.local_indexes:
                out["LocalSecondaryIndexes"] = {
                    name: {"CapacityUnits": units} for name, units in self.local_indexes.items()
                }
            if self.global_indexes:
                out["GlobalSecondaryIndexes"] = {
                    name: {"CapacityUnits": units} for name, units in self.global_indexes.items()
                }
            if self.vector_indexes:
                out["VectorIndexes"] = {
                    name: {"VectorWriteRequestBytes": size} for name, size in self.vector_indexes.items()
                }
        return out
