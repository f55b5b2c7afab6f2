"""Token buckets on the server clock: `--emulate-throughput`, and the usage counters behind it.

Every charged request names, per table or GSI it touches, the partition
(by hash) and the units it consumes: exactly the units ReturnConsumedCapacity
reports. Under one lock of the shared region the meter refills each bucket
for the time passed on the server clock, admits the request only if every
bucket can pay (a full bucket admits one request larger than itself, as a
400 KB write succeeds on a 1 WCU table), and then debits all of them, so a
throttled request consumes nothing and writes nothing. The buckets:

- each partition of a table or GSI: 3000 read / 1000 write units per second,
  holding one second's worth, in either billing mode;
- a PROVISIONED table or GSI: its capacity units per second, holding up to
  300 seconds of unused capacity (burst). A partition draws on the table's
  bucket, not on a fixed share of it, which is adaptive capacity: a hot
  partition may use the table's unused capacity up to the partition ceiling;
- a PAY_PER_REQUEST table or GSI: its OnDemandThroughput maxima per second,
  and its warm throughput or twice its previous peak second, whichever is
  higher (DynamoDB's on-demand scaling rule).

The same slots keep per-second and per-minute usage windows, throttle counts
and totals, which the partition map, hot keys, Contributor Insights and
/metrics read. With the emulation off, the limits are not checked; usage is
still counted for tables with Contributor Insights enabled.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..clock import Clock
from ..schema import Table
from .hotkeys import HOT_SLOT_BYTES, HOT_SLOTS, HotKeys
from .partitions import (
    INSIGHTS,
    PARTITION_READ_UNITS,
    PARTITION_WRITE_UNITS,
    TABLE_MAP,
    is_on_demand,
    partition_of,
    starts_of,
    throughput_of,
)
from .shared import SharedRegion
from .throttle import KEY_RANGE, MAX_ON_DEMAND_LIMIT, PROVISIONED, throttled

READ, WRITE = 0, 1
DIMENSIONS = ("Read", "Write")
CEILINGS = (float(PARTITION_READ_UNITS), float(PARTITION_WRITE_UNITS))
BURST_SECONDS = 300.0
#: The tag bit of a table's or GSI's own bucket (the partitions' buckets have it clear).
LEVEL = 0x10000

# A dimension of a slot: tokens, last refill, second id, units this second, units
# the second before, minute id, units this minute, units the minute before,
# throttled requests, peak units in one second, total units.
_DIM = struct.Struct("<11d")
_DIM_SIZE = _DIM.size
TOKENS, LAST, SEC, SEC_UNITS, PREV_SEC, MIN, MIN_UNITS, PREV_MIN, THROTTLED, PEAK, TOTAL = range(11)
SLOT_BYTES = 16 + 2 * _DIM.size
SLOTS = 4096


@dataclass(slots=True)
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
    #: Partition number -> (partition slot, table/GSI slot) offsets in the shared region.
    slots: dict[int, tuple[int, int]] = field(default_factory=dict)


def _maximum(doc: dict[str, Any], member: str) -> float | None:
    value = (doc.get("OnDemandThroughput") or {}).get(member)
    return None if value is None or value < 0 else float(value)


def resources_of(table: Table) -> dict[str, Resource]:
    """The table ("") and each GSI, with their partition maps and limits."""
    description = table.description
    on_demand = is_on_demand(description)
    out = {
        TABLE_MAP: Resource(
            table.table_id, "Table", TABLE_MAP, description["TableArn"], 1, starts_of(description),
            on_demand, throughput_of(description, on_demand),
            (_maximum(description, "MaxReadRequestUnits"), _maximum(description, "MaxWriteRequestUnits")),
        )
    }
    for doc in description.get("GlobalSecondaryIndexes") or []:
        index = table.index(doc["IndexName"])
        if index is None:
            continue
        out[index.name] = Resource(
            table.table_id, "Index", index.name, doc.get("IndexArn", f"{description['TableArn']}/index/{index.name}"),
            index.index_id + 1, starts_of(description, index.name), on_demand, throughput_of(doc, on_demand),
            (_maximum(doc, "MaxReadRequestUnits"), _maximum(doc, "MaxWriteRequestUnits")),
        )
    return out


Charge = tuple[Resource, int, int, float, "dict[str, Any] | None", bytes]
"""(resource, READ or WRITE, partition hash, units, key to rank in hot keys or None, its row)."""


class Meter:
    def __init__(self, clock: Clock, path: Path | None, enforcing: bool) -> None:
        self.clock = clock
        self.enforcing = enforcing
        self.region = SharedRegion(path, [(SLOTS, SLOT_BYTES), (HOT_SLOTS, HOT_SLOT_BYTES)])
        self.slots, hot_table = self.region.tables
        self.hot = HotKeys(hot_table, self.region.lock)
        self._resources: dict[int, tuple[dict[str, Any], dict[str, Resource]]] = {}

    def resources(self, table: Table) -> dict[str, Resource]:
        """Resources of `table`, cached until its description changes (a new catalog entry)."""
        cached = self._resources.get(table.table_id)
        if cached is not None and cached[0] is table.description:
            return cached[1]
        found = resources_of(table)
        self._resources[table.table_id] = (table.description, found)
        return found

    # -- the request path -------------------------------------------------------------

    def _slots_of(self, res: Resource, hash_value: int) -> tuple[int | None, int | None]:
        """(partition slot, table/GSI slot) offsets; call with the region lock held."""
        number = partition_of(res.starts, hash_value)
        found = res.slots.get(number)
        if found is not None:
            return found
        part = self.slots.find(res.table_id, res.tag, res.starts[number])
        level = self.slots.find(res.table_id, res.tag | LEVEL, 0)
        if part is not None and level is not None:
            res.slots[number] = (part, level)
        return part, level

    @staticmethod
    def _pending_entry(pending: dict[int, list[Any]], buf: Any, at: int, units: float) -> list[Any]:
        entry = pending.get(at)
        if entry is None:
            entry = pending[at] = [list(_DIM.unpack_from(buf, at)), units]
        else:
            entry[1] += units
        return entry

    def charge(self, charges: list[Charge]) -> None:
        """Admit and debit `charges` together, or raise the throttling exception and debit nothing.

        Each slot is read once and written once: refilled, checked, then
        debited (or, for a throttled request, only refilled and counted).
        """
        now = self.clock.now()
        buf = self.slots.buffer
        enforce = self.enforcing
        pending: dict[int, list[Any]] = {}  # slot field offset -> [fields, units]; one slot may recur
        failure: tuple[Charge, str] | None = None
        with self.region.lock.held():
            for charge in charges:
                res, dim, hash_value, units = charge[0], charge[1], charge[2], charge[3]
                part, level = self._slots_of(res, hash_value)
                if part is None or level is None:
                    continue  # the shared region is full: not limited, not counted
                part_entry = self._pending_entry(pending, buf, part + 16 + dim * _DIM_SIZE, units)
                level_entry = self._pending_entry(pending, buf, level + 16 + dim * _DIM_SIZE, units)
                if enforce and failure is None:
                    limit = _check(res, dim, part_entry, level_entry, now)
                    if limit is not None:
                        failure = (charge, limit)
            if failure is None:
                second = float(int(now))
                minute = float(int(now // 60))
                for at, (fields, units) in pending.items():
                    fields[TOKENS] -= units
                    if fields[SEC] != second or fields[MIN] != minute:
                        _roll(fields, now)
                    fields[SEC_UNITS] += units
                    fields[MIN_UNITS] += units
                    fields[TOTAL] += units
                    _DIM.pack_into(buf, at, *fields)
            else:
                failed = failure[0]
                for at, (fields, _) in pending.items():
                    _DIM.pack_into(buf, at, *fields)  # keep the refill
                for slot in self._slots_of(failed[0], failed[2]):
                    if slot is not None:
                        at = slot + 16 + failed[1] * _DIM_SIZE
                        fields = list(_DIM.unpack_from(buf, at))
                        fields[THROTTLED] += 1
                        _DIM.pack_into(buf, at, *fields)
        if failure is None:
            for charge in charges:
                if charge[4] is not None:
                    self.hot.add(charge, charge[3], False, now)
            return
        failed, limit = failure
        if failed[4] is not None:
            self.hot.add(failed, 0.0, True, now)
        res = failed[0]
        error = throttled(res.kind, DIMENSIONS[failed[1]], limit, res.arn, res.on_demand)
        error.charge = failed  # type: ignore[attr-defined]  # which action of a transaction
        raise error

    # -- what the introspection API reads ---------------------------------------------

    def usage(self, res: Resource, start: int | None) -> dict[str, float]:
        """Usage of one partition (by start) or, with start None, of the whole table or GSI."""
        now = self.clock.now()
        with self.region.lock.held():
            if start is None:
                at = self.slots.find(res.table_id, res.tag | LEVEL, 0, create=False)
            else:
                at = self.slots.find(res.table_id, res.tag, start, create=False)
            return _usage(self.slots.buffer, at, now)

    def forget_if_used(self, table: Table) -> None:
        if self.enforcing or INSIGHTS in table.description:
            self.forget(table.table_id)

    def forget(self, table_id: int) -> None:
        """A table was deleted: free its slots (table ids are never reused)."""
        with self.region.lock.held():
            self.slots.release_table(table_id)
            self.hot.table.release_table(table_id)
        self._resources.pop(table_id, None)

    def close(self) -> None:
        self.region.close()


def _refill(fields: list[float], rate: float, capacity: float, now: float) -> float:
    """Refill one bucket's fields for the time passed (a bucket never used starts full)."""
    last = fields[LAST]
    if last == 0.0:
        tokens = capacity
    else:
        tokens = min(capacity, fields[TOKENS] + max(0.0, now - last) * rate)
    fields[TOKENS] = tokens
    fields[LAST] = now
    return tokens


def _pays(fields: list[float], rate: float, capacity: float, units: float, now: float) -> bool:
    """Whether the refilled bucket can pay `units` (a full bucket admits one larger request)."""
    tokens = _refill(fields, rate, capacity, now)
    return tokens >= units or tokens >= capacity


def _check(res: Resource, dim: int, part: list[Any], level: list[Any], now: float) -> str | None:
    """The limit a charge exceeds (a ThrottlingReason's limit type), or None.

    `part` and `level` are [fields, units so far in this request] of the two buckets.
    """
    ceiling = CEILINGS[dim]
    if not _pays(part[0], ceiling, ceiling, part[1], now):
        return KEY_RANGE
    fields, units = level
    if not res.on_demand:
        rate = res.rates[dim]
        return None if _pays(fields, rate, rate * BURST_SECONDS, units, now) else PROVISIONED
    maximum = res.maxima[dim]
    if maximum is not None:
        return None if _pays(fields, maximum, maximum, units, now) else MAX_ON_DEMAND_LIMIT
    # On-demand scaling: the warm throughput, or twice the previous peak second.
    rate = max(res.rates[dim], 2 * fields[PEAK])
    return None if _pays(fields, rate, rate, units, now) else KEY_RANGE


def _roll(fields: list[float], now: float) -> None:
    """Move the second and minute windows to `now`."""
    second = float(int(now))
    if fields[SEC] != second:
        fields[PEAK] = max(fields[PEAK], fields[SEC_UNITS])
        fields[PREV_SEC] = fields[SEC_UNITS] if fields[SEC] == second - 1 else 0.0
        fields[SEC] = second
        fields[SEC_UNITS] = 0.0
    minute = float(int(now // 60))
    if fields[MIN] != minute:
        fields[PREV_MIN] = fields[MIN_UNITS] if fields[MIN] == minute - 1 else 0.0
        fields[MIN] = minute
        fields[MIN_UNITS] = 0.0


def windowed(current: float, previous: float, fraction: float) -> float:
    """A sliding-window rate: this window's units plus the unelapsed share of the last one's."""
    return current + previous * (1.0 - fraction)


def _usage(buf: Any, slot: int | None, now: float) -> dict[str, float]:
    out: dict[str, float] = {}
    for dim, name in enumerate(("read", "write")):
        if slot is None:
            fields = [0.0] * 11
        else:
            fields = list(_DIM.unpack_from(buf, slot + 16 + dim * _DIM.size))
            _roll(fields, now)
        out[f"{name}_units_per_second"] = windowed(fields[SEC_UNITS], fields[PREV_SEC], now % 1.0)
        out[f"{name}_units_per_minute"] = windowed(fields[MIN_UNITS], fields[PREV_MIN], (now % 60.0) / 60.0)
        out[f"{name}_throttled"] = fields[THROTTLED]
        out[f"{name}_units_total"] = fields[TOTAL]
    out["throttled_requests"] = out["read_throttled"] + out["write_throttled"]
    return out
