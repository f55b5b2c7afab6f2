"""Partition maps: hash ranges over the 64-bit partition-hash space, kept in the catalog.

A table and each of its global indexes is split into partitions by the hash
that already leads every row key (`prefix | hash | pk | sk`), so a partition
is one contiguous key range of the store: its item count and bytes are one
`stats` call, and one partition-key value (one hash) can never span two
partitions, which is DynamoDB's lesson: a hot key stays hot whatever the
table's capacity. Local indexes live in their table's partitions (their
entries share the table's partition key), so they have no map of their own.

The map is the sorted list of each partition's first hash, stored in the
table description under ``_Partitions`` (`""` for the table, the index name
for a GSI). A table or index without a stored map (created before this
existed, or a GSI added by UpdateTable) has the map its throughput gives it,
computed by :func:`initial_starts`; the first split stores it.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass
from typing import Any

from ..control.throughput import ON_DEMAND_WARM_READ, ON_DEMAND_WARM_WRITE

HASH_SPACE = 2**64
#: Per-partition ceilings DynamoDB documents, in either billing mode.
PARTITION_READ_UNITS = 3000
PARTITION_WRITE_UNITS = 1000
#: DynamoDB's default quotas in a Region, as DescribeLimits reports them: units per second
#: per table (and per GSI) and, for provisioned capacity, summed over the account. The
#: emulation caps an on-demand table's (or GSI's) scaling at the per-table quota
#: (`serve --table-max-units`), answering RequestLimitExceeded past it.
TABLE_MAX_UNITS = 40_000
ACCOUNT_MAX_UNITS = 80_000
#: DynamoDB splits a partition that passes 10 GB.
PARTITION_SIZE_LIMIT = 10 * 1024**3
#: The offset of the 8-byte partition hash in a row key (after space, table id, index id).
HASH_OFFSET = 7
MAP_MEMBER = "_Partitions"
#: Contributor Insights settings in a table description: {"" or index name: {...}}.
INSIGHTS = "_ContributorInsights"
TABLE_MAP = ""


def initial_count(read_units: float, write_units: float) -> int:
    """DynamoDB's published sizing: ceil(read units / 3000 + write units / 1000), at least one.

    Applied to the warm throughput (which is the provisioned capacity of a
    provisioned table, and 12,000 reads / 4,000 writes for a new on-demand
    one); see docs/decisions.md.
    """
    return max(1, math.ceil(read_units / PARTITION_READ_UNITS + write_units / PARTITION_WRITE_UNITS))


def even_starts(count: int) -> list[int]:
    return [(i * HASH_SPACE) // count for i in range(count)]


def throughput_of(doc: dict[str, Any], on_demand: bool) -> tuple[float, float]:
    """(read, write) units per second a table or GSI document is sized for."""
    warm = doc.get("WarmThroughput") or {}
    if on_demand:
        reads = warm.get("ReadUnitsPerSecond", ON_DEMAND_WARM_READ)
        writes = warm.get("WriteUnitsPerSecond", ON_DEMAND_WARM_WRITE)
    else:
        provisioned = doc.get("ProvisionedThroughput") or {}
        reads = max(provisioned.get("ReadCapacityUnits", 0), warm.get("ReadUnitsPerSecond", 0))
        writes = max(provisioned.get("WriteCapacityUnits", 0), warm.get("WriteUnitsPerSecond", 0))
    return float(reads), float(writes)


def is_on_demand(description: dict[str, Any]) -> bool:
    return (description.get("BillingModeSummary") or {}).get("BillingMode") == "PAY_PER_REQUEST"


def index_document(description: dict[str, Any], name: str) -> dict[str, Any] | None:
    for doc in description.get("GlobalSecondaryIndexes") or []:
        if doc["IndexName"] == name:
            return doc
    return None


def initial_starts(description: dict[str, Any], index_name: str = TABLE_MAP) -> list[int]:
    on_demand = is_on_demand(description)
    doc = description if index_name == TABLE_MAP else index_document(description, index_name) or {}
    return even_starts(initial_count(*throughput_of(doc, on_demand)))


def starts_of(description: dict[str, Any], index_name: str = TABLE_MAP) -> list[int]:
    """The first hash of each partition of the table (or of GSI `index_name`), ascending."""
    stored = (description.get(MAP_MEMBER) or {}).get(index_name)
    return list(stored) if stored is not None else initial_starts(description, index_name)


def store_initial_map(description: dict[str, Any]) -> None:
    """Record the new table's partition maps in its description (CreateTable)."""
    maps = {TABLE_MAP: initial_starts(description)}
    for doc in description.get("GlobalSecondaryIndexes") or []:
        maps[doc["IndexName"]] = initial_starts(description, doc["IndexName"])
    description[MAP_MEMBER] = maps


def partition_of(starts: list[int], hash_value: int) -> int:
    """Index of the partition holding `hash_value`."""
    return bisect_right(starts, hash_value) - 1


def row_hash(row: bytes) -> int:
    return int.from_bytes(row[HASH_OFFSET : HASH_OFFSET + 8], "big")


@dataclass(frozen=True, slots=True)
class PartitionRange:
    number: int
    start: int
    #: Last hash of the partition (inclusive), as the introspection API reports it.
    end: int

    def row_bounds(self, prefix: bytes) -> tuple[bytes, bytes]:
        """The store key range [low, high) of this partition's rows under `prefix`."""
        low = prefix + self.start.to_bytes(8, "big")
        if self.end == HASH_SPACE - 1:
            return low, _successor(prefix)
        return low, prefix + (self.end + 1).to_bytes(8, "big")


def _successor(prefix: bytes) -> bytes:
    trimmed = prefix.rstrip(b"\xff")
    return trimmed[:-1] + bytes([trimmed[-1] + 1])


def ranges(starts: list[int]) -> list[PartitionRange]:
    ends = [s - 1 for s in starts[1:]] + [HASH_SPACE - 1]
    return [PartitionRange(i, s, e) for i, (s, e) in enumerate(zip(starts, ends, strict=True))]
