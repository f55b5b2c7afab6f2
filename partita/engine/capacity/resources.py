"""What the meter limits: a table or one of its GSIs with its partition map and rates.

Kept apart from the meter itself (meter.py): this is read from the catalog's
table description once per table version, while the meter's code is what
every request runs.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..tables.schema import Table
from .partitions import (
    HASH_OFFSET,
    HASH_SPACE,
    TABLE_MAP,
    TABLE_MAX_UNITS,
    is_on_demand,
    starts_of,
    throughput_of,
)

if TYPE_CHECKING:
    from .leases import Lease

#: In a `Resource.lookup`: a partition boundary falls inside this slice of hashes (bisect instead).
AMBIGUOUS = 0xFFFF
#: Slices of the lookup per partition: the share of requests that must bisect is about its inverse.
_SLICES_PER_PARTITION_BITS = 6
#: In `Resource.state`: the tokens of the table's (or GSI's) lease at LEVEL_AT + dimension, the
#: hot-key sampling debt at DEBT_AT + dimension, a partition's lease tokens at `tokens_at`.
LEVEL_AT = 0
DEBT_AT = 2
PARTS_AT = 4


def tokens_at(number: int, dim: int) -> int:
    """Where partition `number`'s lease tokens of dimension `dim` are in `Resource.state`."""
    return PARTS_AT + (number << 1) + dim


@dataclass(slots=True, eq=False)
class Resource:
    """A table or one of its GSIs, as the meter limits it."""

    table_id: int
    kind: str  # "Table" or "Index"
    name: str  # "" for the table, else the index name
    arn: str
    tag: int
    starts: list[int]
    on_demand: bool
    #: Provisioned units per second (read, write); on-demand: the warm throughput.
    rates: tuple[float, float]
    #: OnDemandThroughput maxima (read, write), None where there is none.
    maxima: tuple[float | None, float | None]
    #: The per-table quota an on-demand table or GSI scales up to (DescribeLimits).
    quota: float
    #: This process's leases, per dimension: one per partition number, and the table's (or GSI's).
    parts: tuple[list[Lease | None], list[Lease | None]] = field(init=False)
    levels: list[Lease | None] = field(init=False)
    #: Contributor Insights is on for the table: every key's units are ranked, not a sample.
    exact: bool = False
    hot_token: tuple[int, int] = field(init=False)
    #: Partition number by a row key's first two hash bytes shifted right by `shift` (see `number`).
    lookup: array[int] = field(init=False)
    shift: int = field(init=False)
    #: What the request path reads and debits, in one flat array of doubles (`LEVEL_AT`, `DEBT_AT`,
    #: `tokens_at`): the tokens of this process's leases (0 where it holds none), the table's (or
    #: GSI's) and each partition's, per dimension, and the units since the last request sampled for
    #: the hot-key ranking. One array, not objects or an array each: in a loaded server every
    #: object a request touches is likely a cache miss (docs/decisions.md, "The emulation's fifth
    #: cost pass").
    state: array[float] = field(init=False)

    def __post_init__(self) -> None:
        self.parts = ([None] * len(self.starts), [None] * len(self.starts))
        self.levels = [None, None]
        self.hot_token = (self.table_id, self.tag)
        self.lookup, self.shift = lookup_of(self.starts)
        self.state = array("d", bytes(8 * tokens_at(len(self.starts), 0)))

    def number(self, row: bytes) -> int:
        """The partition number of a row key (_spend.c, the meter's request path, has this inline).

        By a table over the hash's leading bits, so the common request pays
        two byte reads and an index instead of an 8-byte int and a bisection;
        the few slices a boundary cuts say AMBIGUOUS and bisect.
        """
        number = self.lookup[(row[HASH_OFFSET] << 8 | row[HASH_OFFSET + 1]) >> self.shift]
        if number == AMBIGUOUS:
            return bisect_right(self.starts, int.from_bytes(row[HASH_OFFSET : HASH_OFFSET + 8], "big")) - 1
        return number


def lookup_of(starts: list[int]) -> tuple[array[int], int]:
    """`Resource.lookup` and `shift` for a partition map: 2**bits slices of the hash space.

    About 64 slices per partition (at most 2**16, 128 KiB), each holding the
    partition it lies in whole, or AMBIGUOUS.
    """
    count = len(starts)
    if count >= AMBIGUOUS:
        return array("H", [AMBIGUOUS]), 16
    bits = 0 if count == 1 else min(16, (count - 1).bit_length() + _SLICES_PER_PARTITION_BITS)
    width = HASH_SPACE >> bits
    lookup = array("H", [AMBIGUOUS]) * (1 << bits)
    for number, (low, high) in enumerate(zip(starts, [*starts[1:], HASH_SPACE], strict=True)):
        first, end = -(-low // width), high // width  # the slices wholly in [low, high)
        if end > first:
            lookup[first:end] = array("H", [number]) * (end - first)
    return lookup, 16 - bits


def _maximum(doc: dict[str, Any], member: str) -> float | None:
    value = (doc.get("OnDemandThroughput") or {}).get(member)
    return None if value is None or value < 0 else float(value)


def resources_of(table: Table, quota: float = TABLE_MAX_UNITS) -> dict[str, Resource]:
    """The table ("") and each GSI, with their partition maps and limits."""
    description = table.description
    on_demand = is_on_demand(description)
    out = {
        TABLE_MAP: Resource(
            table.table_id, "Table", TABLE_MAP, description["TableArn"], 1, starts_of(description),
            on_demand, throughput_of(description, on_demand),
            (_maximum(description, "MaxReadRequestUnits"), _maximum(description, "MaxWriteRequestUnits")), quota,
            table.insights,
        )
    }
    for doc in description.get("GlobalSecondaryIndexes") or []:
        index = table.index(doc["IndexName"])
        if index is None:
            continue
        out[index.name] = Resource(
            table.table_id, "Index", index.name, doc.get("IndexArn", f"{description['TableArn']}/index/{index.name}"),
            index.index_id + 1, starts_of(description, index.name), on_demand, throughput_of(doc, on_demand),
            (_maximum(doc, "MaxReadRequestUnits"), _maximum(doc, "MaxWriteRequestUnits")), quota,
            table.insights,
        )
    return out
