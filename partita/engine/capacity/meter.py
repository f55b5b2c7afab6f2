"""Token buckets on the server clock: `--emulate-throughput`, and the usage counters behind it.

Every charged request names, per table or GSI it touches, the partition
(by hash) and the units it consumes: exactly the units ReturnConsumedCapacity
reports. The buckets live in the shared region (one per partition and one
per table or GSI, per dimension), so the limits hold across worker processes:

- each partition of a table or GSI: 3000 read / 1000 write units per second,
  holding one second's worth, in either billing mode;
- a PROVISIONED table or GSI: its capacity units per second, holding up to
  300 seconds of unused capacity (burst). A partition draws on the table's
  bucket, not on a fixed share of it, which is adaptive capacity: a hot
  partition may use the table's unused capacity up to the partition ceiling;
- a PAY_PER_REQUEST table or GSI: its OnDemandThroughput maxima per second,
  or else its warm throughput or twice its previous peak second, whichever
  is higher (DynamoDB's on-demand scaling rule).

A request is admitted only if every bucket can pay (a full bucket admits one
request larger than itself, as a 400 KB write succeeds on a 1 WCU table), and
then all are debited, so a throttled request consumes nothing.

Why leases: locking the shared file and unpacking two slots on every request
cost about as much as the request itself. So each process takes a *lease*
from a bucket when it settles with it: up to 50 ms of the bucket's rate,
taken out of the shared tokens, to spend within 0.5 s. Requests then spend
from their leases with no lock, no system call and no allocation; a request
the leases cannot pay (or that comes after a lease's 0.5 s) settles under
the lock: the lease's
spent units go into the shared usage windows, its unspent tokens go back
into the bucket, and the request is checked against the shared bucket
exactly as without leases. Tokens are conserved, so one process throttles
exactly where a lease-free meter would; with several processes, at most 50
ms of a bucket's rate per process sits in another process's lease until it
is spent or expires (0.5 s; an idle process's tick gives it back then). A bucket whose 50 ms is less than a request's units
(the small tables throttle tests use) grants no lease, and every request
settles. Usage reaches the shared windows when a lease settles, and at
the latest 0.25 s later (`publish`, from the request path, or from the
background tick in an idle process), so another worker's /metrics lags by
at most about that.

With the emulation off, the limits are not checked and leases never run
out; usage is still counted for tables with Contributor Insights enabled.
"""

from __future__ import annotations

import logging
import threading
from bisect import bisect_right
from pathlib import Path
from typing import Any

from ...errors import DynamoDBError
from ..clock import Clock
from ..schema import Table
from .buckets import (
    COOL_SECONDS,
    DIM,
    DIM_SIZE,
    DIMENSIONS,
    HOT_STREAK,
    LAST_HOT,
    PEAK,
    READ,
    SLOT_BYTES,
    THROTTLED,
    TOKENS,
    WRITE,
    count,
    mark_hot,
    refill,
    usage,
)
from .hotkeys import HOT_SLOT_BYTES, HOT_SLOTS, HotKeys
from .partitions import (
    HASH_OFFSET,
    INSIGHTS,
    PARTITION_READ_UNITS,
    PARTITION_WRITE_UNITS,
    TABLE_MAP,
    TABLE_MAX_UNITS,
)
from .remote import BORROW_SECONDS, RemoteBuckets
from .resources import Resource, resources_of
from .shared import SharedRegion, slot_key
from .throttle import ACCOUNT_LIMIT, KEY_RANGE, MAX_ON_DEMAND_LIMIT, PROVISIONED, throttled

__all__ = ["DIMENSIONS", "READ", "WRITE", "Charge", "Meter", "Resource", "resources_of"]

log = logging.getLogger("partita.capacity")
CEILINGS = (float(PARTITION_READ_UNITS), float(PARTITION_WRITE_UNITS))
BURST_SECONDS = 300.0
#: The tag bit of a table's or GSI's own bucket (the partitions' buckets have it clear).
LEVEL = 0x10000
SLOTS = 4096
#: How much of a bucket's rate one lease takes, in seconds.
LEASE_SECONDS = 0.05
#: How long a lease may be spent before the process settles it again.
LEASE_TTL = 0.5
_INF = float("inf")
#: Units between two requests the hot-key ranking samples, on a table without Contributor Insights.
HOT_SAMPLE_UNITS = 8.0
#: How often a busy process adds its leases' usage and its hot keys to the shared region.
PUBLISH_SECONDS = 0.25


class Lease:
    """Tokens of one shared bucket this process may spend without the lock, until `until`."""

    __slots__ = ("slot", "key", "at", "res", "dim", "level", "ceiling", "tokens", "until", "used", "local")

    def __init__(self, slot: int | None, key: tuple[int, int, int], res: Resource, dim: int, level: bool) -> None:
        #: The bucket's fields in this process only, when the shared region had no free slot for it:
        #: still limited (failing safe), though not shared with other workers.
        self.local: list[float] | None = None
        if slot is None:
            self.local = list(DIM.unpack(bytes(DIM_SIZE)))
            slot = -1
        self.slot = slot
        self.key = key  # the slot's key: another process may free the slot (DeleteTable)
        self.at = slot + 16 + dim * DIM_SIZE  # offset of the bucket's fields in the shared region
        self.res = res
        self.dim = dim
        self.level = level  # the table's (or GSI's) bucket, not a partition's
        self.ceiling = 0.0 if level else CEILINGS[dim]  # a partition's, for its hot seconds
        self.tokens = 0.0
        self.until = 0.0
        self.used = 0.0  # units spent and not yet added to the shared windows

    def bucket(self, fields: list[float]) -> tuple[float, float]:
        """(refill rate per second, capacity) of the bucket."""
        dim = self.dim
        if not self.level:
            ceiling = CEILINGS[dim]
            return ceiling, ceiling
        res = self.res
        if not res.on_demand:
            rate = res.rates[dim]
            return rate, rate * BURST_SECONDS
        maximum = res.maxima[dim]
        if maximum is not None:
            return maximum, maximum
        # Warm throughput, or twice the peak second, up to the per-table quota.
        rate = min(max(res.rates[dim], 2 * fields[PEAK]), res.quota)
        return rate, rate

    def limit(self, fields: list[float]) -> str:
        """The ThrottlingReason limit type of this bucket."""
        if not self.level:
            return KEY_RANGE
        res = self.res
        if not res.on_demand:
            return PROVISIONED
        if res.maxima[self.dim] is not None:
            return MAX_ON_DEMAND_LIMIT
        return ACCOUNT_LIMIT if max(res.rates[self.dim], 2 * fields[PEAK]) >= res.quota else KEY_RANGE


Charge = tuple[Resource, int, int, float, "dict[str, Any] | None", bytes]
"""(resource, READ or WRITE, partition hash, units, key to rank in hot keys or None, its row)."""

# A bucket being settled: [lease, its fields, units this request charges it].
_Entry = list[Any]


class Meter:
    def __init__(self, clock: Clock, path: Path | None, enforcing: bool, table_quota: float = TABLE_MAX_UNITS,
                 remote: RemoteBuckets | None = None) -> None:
        self.clock = clock
        self.enforcing = enforcing
        #: With PostgreSQL servers: the buckets every server shares, which the region's borrow from.
        self.remote = remote
        #: Units per second one on-demand table or GSI may reach (DescribeLimits' TableMax*).
        self.table_quota = table_quota
        self.region = SharedRegion(path, [(SLOTS, SLOT_BYTES), (HOT_SLOTS, HOT_SLOT_BYTES)])
        self.slots, hot_table = self.region.tables
        self.hot = HotKeys(hot_table, self.region.lock)
        self._resources: dict[int, tuple[dict[str, Any], dict[str, Resource]]] = {}
        #: Every lease of this process, by table id (for publish and for retiring them).
        self._leases: dict[int, list[Lease]] = {}
        #: Guards the leases and pending hot keys against the background tick's publish. The
        #: request thread publishes itself while busy, so the tick (taking the lock without
        #: waiting) only publishes for an idle process: a request never waits on a background
        #: thread that the OS descheduled while it held the lock.
        self._lock = threading.Lock()
        self._due = 0.0  # when the request path publishes next

    def resources(self, table: Table) -> dict[str, Resource]:
        """Resources of `table`, cached until its description changes (a new catalog entry)."""
        cached = self._resources.get(table.table_id)
        if cached is not None and cached[0] is table.description:
            return cached[1]
        found = resources_of(table, self.table_quota)
        if cached is not None:  # new limits or a new map: settle the old leases first
            with self._lock:
                self._publish(self.clock.now(), self._leases.pop(table.table_id, []), True)
        self._resources[table.table_id] = (table.description, found)
        return found

    def table_resource(self, table: Table) -> Resource:
        """The table's own resource (the bucket its items and local indexes are charged to)."""
        cached = self._resources.get(table.table_id)
        if cached is not None and cached[0] is table.description:
            return cached[1][TABLE_MAP]
        return self.resources(table)[TABLE_MAP]

    # -- the request path -------------------------------------------------------------

    def charge_table(self, table: Table, dim: int, row: bytes, units: float, key: dict[str, Any] | None) -> None:
        """`charge` for one charge to the table itself: GetItem, and a write to a table without indexes.

        The same rules; spelled out so that the common request allocates
        nothing and makes no Python call but the clock's when its leases can
        pay (each call costs about as much as the lease arithmetic).
        """
        now = self.clock.now()
        cached = self._resources.get(table.table_id)
        if cached is not None and cached[0] is table.description:
            res = cached[1][TABLE_MAP]
        else:
            res = self.resources(table)[TABLE_MAP]
        hash_value = int.from_bytes(row[HASH_OFFSET : HASH_OFFSET + 8], "big")
        with self._lock:
            if now < self._due:
                part = res.parts[dim][bisect_right(res.starts, hash_value) - 1]
                level = res.levels[dim]
                if (part is not None and level is not None and part.tokens >= units and level.tokens >= units
                        and now < part.until and now < level.until):
                    part.tokens -= units
                    part.used += units
                    level.tokens -= units
                    level.used += units
                    if key is not None:
                        if res.exact:
                            self.hot.add((res, dim, hash_value, units, key, row), units, False, now)
                        else:
                            debt = res.hot_debt
                            owed = debt[dim] + units
                            if owed >= HOT_SAMPLE_UNITS:
                                debt[dim] = 0.0
                                self.hot.add((res, dim, hash_value, units, key, row), owed, False, now)
                            else:
                                debt[dim] = owed
                    return
        self.charge([(res, dim, hash_value, units, key, row)])

    def charge_rows(self, table: Table, dim: int, rows: list[bytes], units: list[float],
                    keys: list[dict[str, Any] | None]) -> list[DynamoDBError | None] | None:
        """`charge_table` for each of a batch's requests to one table, in order; None when all are admitted.

        Else the throttling exception of each refused request (None where
        admitted). One clock read, one look-up and one lock hold for the
        run of requests the leases can pay, instead of one each: a 25-item
        batch paid that per item. A request the leases cannot pay goes
        through `charge_table` as it would alone, and the run goes on after
        it, so each request is admitted or refused exactly as in a loop of
        `charge_table` at this time.
        """
        now = self.clock.now()
        cached = self._resources.get(table.table_id)
        if cached is not None and cached[0] is table.description:
            res = cached[1][TABLE_MAP]
        else:
            res = self.resources(table)[TABLE_MAP]
        parts, starts, hot, debt = res.parts[dim], res.starts, self.hot, res.hot_debt
        sample = not res.exact
        count = len(rows)
        refused: list[DynamoDBError | None] | None = None
        position = 0
        while position < count:
            with self._lock:
                level = res.levels[dim]
                if now < self._due and level is not None and now < level.until:
                    while position < count:
                        row, need = rows[position], units[position]
                        hash_value = int.from_bytes(row[HASH_OFFSET : HASH_OFFSET + 8], "big")
                        part = parts[bisect_right(starts, hash_value) - 1]
                        if part is None or part.tokens < need or level.tokens < need or now >= part.until:
                            break
                        part.tokens -= need
                        part.used += need
                        level.tokens -= need
                        level.used += need
                        key = keys[position]
                        position += 1
                        if key is not None:
                            counted = need
                            if sample:
                                counted = debt[dim] + need
                                if counted < HOT_SAMPLE_UNITS:
                                    debt[dim] = counted
                                    continue
                                debt[dim] = 0.0
                            hot.add((res, dim, hash_value, need, key, row), counted, False, now)
            if position == count:
                break
            try:  # the leases cannot pay this one: settle it as a request of its own
                self.charge_table(table, dim, rows[position], units[position], keys[position])
            except DynamoDBError as error:
                refused = refused or [None] * count
                refused[position] = error
            position += 1
        return refused

    def charge(self, charges: list[Charge]) -> None:
        """Admit and debit `charges` together, or raise the throttling exception and debit nothing."""
        now = self.clock.now()
        with self._lock:
            if now >= self._due:
                self._publish_all(now)
            if len(charges) == 1:  # the common case, without the bookkeeping of recurring buckets
                charge = charges[0]
                res, dim, units = charge[0], charge[1], charge[3]
                part = res.parts[dim][bisect_right(res.starts, charge[2]) - 1]
                level = res.levels[dim]
                if (part is not None and level is not None and part.tokens >= units and level.tokens >= units
                        and now < part.until and now < level.until):
                    part.tokens -= units
                    part.used += units
                    level.tokens -= units
                    level.used += units
                    if charge[4] is not None:
                        self._rank(charge, units, now)
                    return
            elif self._spend(charges, now):
                return
            failure = self._settle(charges, now)
            if failure is None:
                for charge in charges:
                    if charge[4] is not None:
                        self._rank(charge, charge[3], now)
                return
            failed, limit = failure
            if failed[4] is not None:
                self.hot.add(failed, 0.0, True, now)
        res = failed[0]
        error = throttled(res.kind, DIMENSIONS[failed[1]], limit, res.arn, res.on_demand)
        error.charge = failed  # type: ignore[attr-defined]  # which action of a transaction
        raise error

    def _spend(self, charges: list[Charge], now: float) -> bool:
        """Pay several charges from the leases alone, if they can (call with the lock held)."""
        need: dict[int, list[Any]] = {}
        for charge in charges:
            res, dim = charge[0], charge[1]
            for lease in (res.parts[dim][bisect_right(res.starts, charge[2]) - 1], res.levels[dim]):
                if lease is None or now >= lease.until:
                    return False
                entry = need.get(id(lease))
                if entry is None:
                    need[id(lease)] = [lease, charge[3]]
                else:
                    entry[1] += charge[3]
        for lease, units in need.values():
            if lease.tokens < units:
                return False
        for lease, units in need.values():
            lease.tokens -= units
            lease.used += units
        for charge in charges:
            if charge[4] is not None:
                self._rank(charge, charge[3], now)
        return True

    def _rank(self, charge: Charge, units: float, now: float) -> None:
        """Count an admitted charge for the hot-key ranking: every one, or a sample by units.

        Without Contributor Insights, one request per `HOT_SAMPLE_UNITS` units
        consumed is counted, carrying those units (systematic sampling in
        proportion to units): a key's expected share is its true share, a key
        using that many units per request is never missed, and a uniform
        workload of small requests costs one count in 16 reads. Throttles are
        always counted.
        """
        res = charge[0]
        if res.exact:
            self.hot.add(charge, units, False, now)
            return
        debt = res.hot_debt
        dim = charge[1]
        owed = debt[dim] + units
        if owed >= HOT_SAMPLE_UNITS:
            debt[dim] = 0.0
            self.hot.add(charge, owed, False, now)
        else:
            debt[dim] = owed

    def _lease(self, res: Resource, dim: int, number: int | None) -> Lease:
        """The lease of a partition (by number) or, for None, of the table/GSI (a local bucket if the region is full)."""
        if number is None:
            found = res.levels[dim]
        else:
            found = res.parts[dim][number]
        if found is not None:
            return found
        key = (res.table_id, res.tag | LEVEL if number is None else res.tag, 0 if number is None else res.starts[number])
        slot = self.slots.find(*key)
        if slot is None:
            log.warning("the shared capacity region is full: a bucket of table %d is limited per process",
                        res.table_id)
        lease = Lease(slot, key, res, dim, number is None)
        if number is None:
            res.levels[dim] = lease
        else:
            res.parts[dim][number] = lease
        self._leases.setdefault(res.table_id, []).append(lease)
        return lease

    def _open(self, work: dict[int, _Entry], lease: Lease, now: float, units: float) -> _Entry:
        """Settle a lease with its bucket (once per request) and add `units` to what it must pay."""
        entry = work.get(id(lease))
        if entry is not None:
            entry[2] += units
            return entry
        fields = list(DIM.unpack_from(self.slots.buffer, lease.at)) if lease.local is None else lease.local
        if lease.used:
            count(fields, lease.used, now, lease.ceiling)
            lease.used = 0.0
        if self.enforcing:
            rate, capacity = lease.bucket(fields)
            if self.remote is None:
                refill(fields, rate, capacity, now)
            if lease.tokens:
                fields[TOKENS] = min(capacity, fields[TOKENS] + lease.tokens)
        lease.tokens = 0.0
        lease.until = 0.0
        entry = work[id(lease)] = [lease, fields, units]
        return entry

    def _borrow(self, entry: _Entry, now: float) -> bool:
        """Borrow the shortfall and `BORROW_SECONDS` of the rate from the servers' shared bucket; whether it pays now."""
        assert self.remote is not None
        lease, fields, units = entry
        rate, capacity = lease.bucket(fields)
        want = units - max(0.0, fields[TOKENS]) + rate * BORROW_SECONDS
        fields[TOKENS] += self.remote.borrow(lease.key, lease.dim, want, rate, capacity, now)
        return fields[TOKENS] >= units

    def _settle(self, charges: list[Charge], now: float) -> tuple[Charge, str] | None:
        """Check and debit the shared buckets under the region lock; the failed charge and limit, or None.

        Each bucket is read once and written once: its lease settled and
        refilled, checked, then debited and leased again (or, for a throttled
        request, only settled and its throttle counted).
        """
        buf = self.slots.buffer
        enforce = self.enforcing
        work: dict[int, _Entry] = {}
        failure: tuple[Charge, str] | None = None
        failed_entries: tuple[_Entry, _Entry] | None = None
        partition_hot = False
        with self.region.lock.held():
            for charge in charges:
                res, dim, units = charge[0], charge[1], charge[3]
                part = self._lease(res, dim, bisect_right(res.starts, charge[2]) - 1)
                level = self._lease(res, dim, None)
                part_entry = self._open(work, part, now, units)
                level_entry = self._open(work, level, now, units)
                if enforce and failure is None:
                    for entry in (part_entry, level_entry):
                        if not _pays(entry) and not (self.remote is not None and self._borrow(entry, now)):
                            failure, failed_entries = (charge, entry[0].limit(entry[1])), (part_entry, level_entry)
                            partition_hot = entry is part_entry
                            break
            if failure is None:
                until = now + LEASE_TTL
                for lease, fields, units in work.values():
                    count(fields, units, now, lease.ceiling)
                    if enforce:
                        fields[TOKENS] -= units
                        rate, capacity = lease.bucket(fields)
                        grant = min(max(0.0, fields[TOKENS]), rate * LEASE_SECONDS)
                        fields[TOKENS] -= grant
                        lease.tokens = grant
                    else:
                        lease.tokens = _INF
                    lease.until = until
                    if lease.local is None:
                        DIM.pack_into(buf, lease.at, *fields)
                return None
            assert failed_entries is not None
            for entry in failed_entries:
                entry[1][THROTTLED] += 1
            if partition_hot:  # the partition's own ceiling: a hot second (splits for heat)
                mark_hot(failed_entries[0][1], float(int(now)))
            for lease, fields, _ in work.values():
                if lease.local is None:
                    DIM.pack_into(buf, lease.at, *fields)  # keep the settled lease and the refill
        return failure

    # -- what the introspection API reads ---------------------------------------------

    def publish(self) -> None:
        """Bring the shared windows up to date with this process's leases and hot keys.

        Readers call it before reading; the request path calls it every
        `PUBLISH_SECONDS`, so what one worker spent reaches the others within
        that, and an expired lease's tokens go back to their bucket.
        """
        now = self.clock.now()
        with self._lock:
            self._publish_all(now)

    def tick(self) -> None:
        """The background tick: publish for a process that has had no request for a while."""
        now = self.clock.now()
        if now < self._due + PUBLISH_SECONDS or not self._lock.acquire(blocking=False):
            return
        try:
            self._publish_all(now)
        finally:
            self._lock.release()

    def _publish_all(self, now: float) -> None:
        self._due = now + PUBLISH_SECONDS
        self._publish(now, [lease for leases in self._leases.values() for lease in leases], False)
        self.hot.flush(now)

    def _publish(self, now: float, leases: list[Lease], retire: bool) -> None:
        buf = self.slots.buffer
        with self.region.lock.held():
            for lease in leases:
                back = self.enforcing and lease.tokens > 0 and (retire or now >= lease.until)
                if not lease.used and not back:
                    continue
                if lease.local is not None:
                    fields = lease.local
                elif slot_key(buf, lease.slot) != lease.key:
                    continue  # the table was deleted (by another worker): its slot is not ours
                else:
                    fields = list(DIM.unpack_from(buf, lease.at))
                if lease.used:
                    count(fields, lease.used, now, lease.ceiling)
                    lease.used = 0.0
                if back:
                    rate, capacity = lease.bucket(fields)
                    if self.remote is None:
                        refill(fields, rate, capacity, now)
                    fields[TOKENS] = min(capacity, fields[TOKENS] + lease.tokens)
                    lease.tokens = 0.0
                    lease.until = 0.0
                if lease.local is None:
                    DIM.pack_into(buf, lease.at, *fields)

    def usage(self, res: Resource, start: int | None) -> dict[str, float]:
        """Usage of one partition (by start) or, with start None, of the whole table or GSI.

        As of the last `publish` (callers publish once before reading many).
        """
        now = self.clock.now()
        with self.region.lock.held():
            if start is None:
                at = self.slots.find(res.table_id, res.tag | LEVEL, 0, create=False)
            else:
                at = self.slots.find(res.table_id, res.tag, start, create=False)
            return usage(self.slots.buffer, at, now)

    def hot_streaks(self, res: Resource, now: float) -> list[float]:
        """Each partition's streak of hot seconds (the longer of read and write), in one lock hold.

        The splitter looks every second; one hold instead of one per
        partition keeps it from contending with requests for the lock.
        """
        buf = self.slots.buffer
        out = []
        with self.region.lock.held():
            for start in res.starts:
                at = self.slots.find(res.table_id, res.tag, start, create=False)
                streak = 0.0
                if at is not None:
                    for dim in (READ, WRITE):
                        fields = DIM.unpack_from(buf, at + 16 + dim * DIM_SIZE)
                        if now - fields[LAST_HOT] <= COOL_SECONDS:
                            streak = max(streak, fields[HOT_STREAK])
                out.append(streak)
        return out

    def cool(self, res: Resource, start: int) -> None:
        """End a partition's streak of hot seconds (it has just split for heat)."""
        with self.region.lock.held():
            at = self.slots.find(res.table_id, res.tag, start, create=False)
            if at is None:
                return
            for dim in (READ, WRITE):
                offset = at + 16 + dim * DIM_SIZE
                fields = list(DIM.unpack_from(self.slots.buffer, offset))
                fields[HOT_STREAK] = 0.0
                fields[LAST_HOT] = 0.0
                DIM.pack_into(self.slots.buffer, offset, *fields)

    def forget_if_used(self, table: Table) -> None:
        if self.enforcing or INSIGHTS in table.description:
            self.forget(table.table_id)

    def forget(self, table_id: int) -> None:
        """A table was deleted: free its slots (table ids are never reused)."""
        with self._lock:
            self._leases.pop(table_id, None)
            self.hot.drop_table(table_id)
            with self.region.lock.held():
                self.slots.release_table(table_id)
                self.hot.table.release_table(table_id)
                if self.remote is not None:
                    self.remote.forget(table_id)
        self._resources.pop(table_id, None)

    def close(self) -> None:
        self.region.close()
        if self.remote is not None:
            self.remote.close()


def _pays(entry: _Entry) -> bool:
    """Whether the settled bucket can pay the request's units (a full bucket admits one larger request)."""
    lease, fields, units = entry
    tokens = fields[TOKENS]
    return tokens >= units or tokens >= lease.bucket(fields)[1]
