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
(leases.py) from a bucket when it settles with it: up to 100 ms of the
bucket's rate, taken out of the shared tokens, to spend within 1 s.
Requests then spend from their leases with no lock on the region, no system
call and no clock read; a request the leases cannot pay settles under the
region's lock: the lease's spent units go into the shared usage windows,
its unspent tokens go back into the bucket, and the request is checked
against the shared bucket exactly as without leases. A publish (below)
renews every lease spent from since the last one, as a settle would (its
unspent tokens back, the bucket refilled, a new grant), so a busy lease
seldom makes a request settle; an unused lease lapses at the publish
before its second is up, which takes its tokens back; requests spend from
leases only while no publish is due. Tokens are
conserved, so one process throttles exactly where a lease-free meter would;
with several processes, at most 100 ms of a bucket's rate per process sits
in another process's lease until it is spent or lapses (1 s; an idle
process's tick gives it back then). A bucket whose 100 ms is less than a
request's units (the small tables throttle tests use) grants no lease, and
every request settles. Usage reaches the shared windows when a lease settles, and at
the latest 0.25 s later (`publish`, from the request path, or from the
background tick in an idle process), so another worker's /metrics lags by
at most about that. That cadence is real elapsed time (`clock.cadence`),
not the server clock: it is how soon other processes see this one, and
reading it costs the request path one C call where the server clock costs
two Python ones. Every bucket, window and lease lapse reads the server clock.

With the emulation off, the limits are not checked and leases never run
out; usage is still counted, on every table (issue 28: the partition map,
hot keys, Contributor Insights and /metrics show real traffic on a plain
server). A lease then grants `UNLIMITED` tokens, so a request settles only
when its lease is new or a publish retired it.
"""

from __future__ import annotations

import logging
import threading
from bisect import bisect_right
from pathlib import Path
from typing import Any

from ...errors import DynamoDBError
from ..tables.schema import Table
from ..time import clock as clocks
from ..time.clock import Clock
from .buckets import (
    COOL_SECONDS,
    DIM,
    DIM_SIZE,
    DIMENSIONS,
    HOT_STREAK,
    LAST_HOT,
    READ,
    SLOT_BYTES,
    THROTTLED,
    TOKENS,
    WRITE,
    count,
    mark_hot,
    usage,
)
from .hotkeys import HOT_SLOT_BYTES, HOT_SLOTS, HotKeys
from .leases import LEASE_TTL, UNLIMITED, Entry, Lease, pays
from .partitions import TABLE_MAP, TABLE_MAX_UNITS, row_hash
from .remote import BORROW_SECONDS, RemoteBuckets
from .resources import LEVEL_AT, Resource, resources_of, tokens_at
from .shared import SharedRegion, slot_key
from .spend import DONE, SAMPLE, sample
from .spend import one as spend_one
from .spend import writes as spend_writes
from .throttle import throttled
from .units import write_need

__all__ = ["DIMENSIONS", "LEASE_TTL", "READ", "WRITE", "Charge", "Meter", "Resource", "resources_of"]

log = logging.getLogger("partita.capacity")
#: The tag bit of a table's or GSI's own bucket (the partitions' buckets have it clear).
LEVEL = 0x10000
#: Bucket slots of the shared region: every metered table takes one for itself and one per
#: partition that sees traffic (a table's 8 partitions and its GSIs' mean up to ~20), and every
#: table is metered (4096 until issue 28 metered only emulated and Contributor Insights tables).
SLOTS = 16384
#: How often a busy process adds its leases' usage and its hot keys to the shared region.
PUBLISH_SECONDS = 0.25


Charge = tuple[Resource, int, int, float, "dict[str, Any] | None", bytes]
"""(resource, READ or WRITE, partition hash, units, key to rank in hot keys or None, its row)."""


class Meter:
    def __init__(self, clock: Clock, path: Path | None, enforcing: bool, table_quota: float = TABLE_MAX_UNITS,
                 remote: RemoteBuckets | None = None) -> None:
        self.clock = clock
        #: Real elapsed time, for when a publish is due (read where `clocks.cadence` is at start-up).
        self._cadence = clocks.cadence
        self.enforcing = enforcing
        #: With PostgreSQL servers: the buckets every server shares, which the region's borrow from.
        self.remote = remote
        #: Units per second one on-demand table or GSI may reach (DescribeLimits' TableMax*).
        self.table_quota = table_quota
        self.region = SharedRegion(path, [(SLOTS, SLOT_BYTES), (HOT_SLOTS, HOT_SLOT_BYTES)])
        self.slots, hot_table = self.region.tables
        self.hot = HotKeys(hot_table, self.region.lock, clock.now_cached)  # it reads under the lock
        #: table id -> (the description they are of, its resources, the table's own resource).
        self._resources: dict[int, tuple[dict[str, Any], dict[str, Resource], Resource]] = {}
        #: Every lease of this process, by table id (for publish and for retiring them).
        self._leases: dict[int, list[Lease]] = {}
        #: Guards the leases and pending hot keys against the background tick's publish. The
        #: request thread publishes itself while busy, so the tick (taking the lock without
        #: waiting) only publishes for an idle process: a request never waits on a background
        #: thread that the OS descheduled while it held the lock.
        #: Nothing under it may read the store, and `clock.now()` may: the server thread takes
        #: this lock while its open write group holds the store's lock, so a background thread
        #: reading the store under it deadlocks the two (a server once hung this way). Read the
        #: time before taking it, or use `clock.now_cached()` (tests/test_lock_order.py).
        self._lock = threading.Lock()
        self._due = 0.0  # `_cadence` time at which the request path publishes next

    def resources(self, table: Table) -> dict[str, Resource]:
        """Resources of `table`, cached until its description changes (a new catalog entry)."""
        cached = self._resources.get(table.table_id)
        if cached is not None and cached[0] is table.description:
            return cached[1]
        found = resources_of(table, self.table_quota)
        if cached is not None:  # new limits or a new map: settle the old leases first
            now = self.clock.now()
            with self._lock:
                self._publish(now, self._leases.pop(table.table_id, []), True)
        self._resources[table.table_id] = (table.description, found, found[TABLE_MAP])
        return found

    def table_resource(self, table: Table) -> Resource:
        """The table's own resource (the bucket its items and local indexes are charged to)."""
        cached = self._resources.get(table.table_id)
        if cached is not None and cached[0] is table.description:
            return cached[2]
        return self.resources(table)[TABLE_MAP]

    # -- the request path -------------------------------------------------------------

    def charge_table(self, table: Table, dim: int, row: bytes, units: float, key: dict[str, Any] | None) -> None:
        """`charge` for one charge to the table itself: GetItem, and a write to a table without indexes.

        The same rules; spelled out so that the common request allocates
        nothing and calls nothing but the cadence clock and `spend.one` (C,
        when built) when its leases can pay: under load each object a request
        touches costs about as much as the lease arithmetic.
        """
        cached = self._resources.get(table.table_id)
        if cached is not None and cached[0] is table.description:
            res = cached[2]
        else:
            res = self.resources(table)[TABLE_MAP]
        lock = self._lock
        lock.acquire()  # not `with`: its __enter__/__exit__ look-ups cost more than the lock
        try:
            if self._cadence() < self._due:
                due = spend_one(res, dim, row, units, key)
                if due >= 0.0:
                    if due:
                        self.hot.add(res.hot_token, dim, row, key, due)
                    return
        finally:
            lock.release()
        self.charge([(res, dim, row_hash(row), units, key, row)])

    def charge_writes(self, table: Table, actions: list[Any], resolved: list[tuple[Any, Any]], position: int,
                      refused: list[DynamoDBError | None] | None) -> tuple[int, list[DynamoDBError | None] | None]:
        """`charge_table` for each of a batch's writes to `table` from `position`, in order.

        `actions` are the batch's ItemActions, `resolved` their (old, new)
        items; the run ends at the first action to another table, and the
        answer is where it ended and `refused` (made when first needed, as
        long as `actions`) with the throttling exception of each refused write.

        One look-up, one lock hold and one `spend.writes` call (C, when built)
        for the run of writes the leases can pay, instead of a charge each:
        a 25-item batch paid that per item. A write the leases cannot pay
        goes through `charge_table` as it would alone, and the run goes on
        after it, so each write is admitted or refused exactly as in a loop
        of `charge_table` at this time.
        """
        res = self.table_resource(table)
        count = len(actions)
        while position < count:
            with self._lock:
                if self._cadence() < self._due:
                    while True:
                        status, position, units = spend_writes(res, table, actions, resolved, position)
                        if status != SAMPLE:
                            break
                        action = actions[position - 1]
                        self.hot.add(res.hot_token, WRITE, action.row, action.key, units)
                    if status == DONE:
                        return position, refused
                else:  # a publish is due: `charge_table` runs it
                    units = write_need(actions[position], *resolved[position])
            try:  # the leases cannot pay this one: settle it as a request of its own
                action = actions[position]
                self.charge_table(table, WRITE, action.row, units, action.key)
            except DynamoDBError as error:
                refused = refused or [None] * count
                refused[position] = error
            position += 1
            if position < count and actions[position].table is not table:
                break
        return position, refused

    def charge(self, charges: list[Charge]) -> None:
        """Admit and debit `charges` together, or raise the throttling exception and debit nothing."""
        now = self.clock.now()
        with self._lock:
            if self._cadence() >= self._due:
                self._publish_all(now)
            if len(charges) == 1:  # the common case, without the bookkeeping of recurring buckets
                charge = charges[0]
                res, dim, units = charge[0], charge[1], charge[3]
                state = res.state
                at = tokens_at(bisect_right(res.starts, charge[2]) - 1, dim)
                if state[at] >= units and state[LEVEL_AT + dim] >= units:
                    state[at] -= units
                    state[LEVEL_AT + dim] -= units
                    if charge[4] is not None:
                        self._rank(res, dim, charge[5], charge[4], units)
                    return
            elif self._spend(charges):
                return
            failure = self._settle(charges, now)
            if failure is None:
                for charge in charges:
                    if charge[4] is not None:
                        self._rank(charge[0], charge[1], charge[5], charge[4], charge[3])
                return
            failed, limit = failure
            if failed[4] is not None:
                self.hot.throttle(failed[0].hot_token, failed[5], failed[4])
        res = failed[0]
        error = throttled(res.kind, DIMENSIONS[failed[1]], limit, res.arn, res.on_demand)
        error.charge = failed  # type: ignore[attr-defined]  # which action of a transaction
        raise error

    def _spend(self, charges: list[Charge]) -> bool:
        """Pay several charges from the leases alone, if they can (call with the lock held)."""
        need: dict[int, list[Any]] = {}
        for charge in charges:
            res, dim = charge[0], charge[1]
            for lease in (res.parts[dim][bisect_right(res.starts, charge[2]) - 1], res.levels[dim]):
                if lease is None:
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
        for charge in charges:
            if charge[4] is not None:
                self._rank(charge[0], charge[1], charge[5], charge[4], charge[3])
        return True

    def _rank(self, res: Resource, dim: int, row: bytes, key: dict[str, Any], units: float) -> None:
        """Count an admitted charge for the hot-key ranking: every one, or a sample by units.

        Without Contributor Insights, one request per `HOT_SAMPLE_UNITS` units
        consumed is counted, carrying those units (systematic sampling in
        proportion to units): a key's expected share is its true share, a key
        using that many units per request is never missed, and a uniform
        workload of small requests costs one count in 16 reads. Throttles are
        always counted. (`spend.sample` decides, for what `spend.one` and `spend.writes` pay too.)
        """
        due = sample(res, dim, units)
        if due:
            self.hot.add(res.hot_token, dim, row, key, due)

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
        lease = Lease(slot, key, res, dim, number)
        if number is None:
            res.levels[dim] = lease
        else:
            res.parts[dim][number] = lease
        self._leases.setdefault(res.table_id, []).append(lease)
        return lease

    def _open(self, work: dict[int, Entry], lease: Lease, now: float, units: float) -> Entry:
        """Add `units` to what `lease` pays in this settle; settle it with its bucket unless its tokens cover them.

        A lease that can still pay (the table's, mostly, when a partition's
        ran out) is left as it is: its entry has no fields, and it is debited
        like a lease on the request path. Only the buckets that must be
        checked are read and written, which halves what a settle costs.
        """
        entry = work.get(id(lease))
        if entry is None:
            entry = work[id(lease)] = [lease, None if lease.tokens >= units else self._settled(lease, now), units]
        else:
            entry[2] += units
            if entry[1] is None and entry[2] > lease.tokens:
                entry[1] = self._settled(lease, now)
        return entry

    def _settled(self, lease: Lease, now: float) -> list[float]:
        """The lease's bucket, read from the region with the lease settled into it (its spent
        units counted, its unspent tokens back) and refilled to `now`."""
        fields = list(DIM.unpack_from(self.slots.buffer, lease.at)) if lease.local is None else lease.local
        spent = lease.grant - lease.tokens
        if spent:
            count(fields, spent, now, lease.ceiling)
        if self.enforcing:
            lease.give_back(fields, now, self.remote is None)
        else:
            lease.tokens = lease.grant = 0.0  # UNLIMITED, never tokens of the bucket
            lease.until = 0.0
        return fields

    def _borrow(self, entry: Entry, now: float) -> bool:
        """Borrow the shortfall and `BORROW_SECONDS` of the rate from the servers' shared bucket; whether it pays now."""
        assert self.remote is not None
        lease, fields, units = entry
        rate, capacity = lease.bucket(fields)
        want = units - max(0.0, fields[TOKENS]) + rate * BORROW_SECONDS
        fields[TOKENS] += self.remote.borrow(lease.key, lease.dim, want, rate, capacity, now)
        return fields[TOKENS] >= units

    def _settle(self, charges: list[Charge], now: float) -> tuple[Charge, str] | None:
        """Check and debit the shared buckets under the region lock; the failed charge and limit, or None.

        Each bucket whose lease cannot pay is read once and written once: its
        lease settled and refilled, checked, then debited and leased again (or,
        for a throttled request, only settled and its throttle counted). The
        others are debited from their leases (`_open`).
        """
        buf = self.slots.buffer
        enforce = self.enforcing
        work: dict[int, Entry] = {}
        failure: tuple[Charge, str] | None = None
        failed_entries: tuple[Entry, Entry] | None = None
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
                        if entry[1] is None:
                            continue  # paid from its lease
                        if not pays(entry) and not (self.remote is not None and self._borrow(entry, now)):
                            failure, failed_entries = (charge, entry[0].limit(entry[1])), (part_entry, level_entry)
                            partition_hot = entry is part_entry
                            break
            if failure is None:
                until = now + LEASE_TTL
                for lease, fields, units in work.values():
                    if fields is None:
                        lease.tokens -= units
                        continue
                    count(fields, units, now, lease.ceiling)
                    if enforce:
                        fields[TOKENS] -= units
                        lease.take(fields, until)
                    else:
                        lease.tokens = lease.grant = UNLIMITED
                        lease.until = until
                    if lease.local is None:
                        DIM.pack_into(buf, lease.at, *fields)
                return None
            assert failed_entries is not None
            for entry in failed_entries:
                if entry[1] is None:
                    entry[1] = self._settled(entry[0], now)  # a throttle counts on both buckets
                entry[1][THROTTLED] += 1
            if partition_hot:  # the partition's own ceiling: a hot second (splits for heat)
                mark_hot(failed_entries[0][1], float(int(now)))
            for lease, fields, _ in work.values():
                if fields is not None and lease.local is None:
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
        if self._cadence() < self._due + PUBLISH_SECONDS:
            return
        now = self.clock.now()
        if not self._lock.acquire(blocking=False):
            return
        try:
            self._publish_all(now)
        finally:
            self._lock.release()

    def _publish_all(self, now: float) -> None:
        self._due = self._cadence() + PUBLISH_SECONDS
        self._publish(now, [lease for leases in self._leases.values() for lease in leases], False)
        self.hot.flush(now)

    def _publish(self, now: float, leases: list[Lease], retire: bool) -> None:
        """Count what `leases` spent; renew those spent from; take back the tokens of the others that
        lapse before the next publish.

        The request path spends from a lease only while no publish is due,
        so a lease whose `until` comes before the next one is retired now.
        """
        buf = self.slots.buffer
        lapse = now + PUBLISH_SECONDS
        # A lease spent from since the last publish is renewed here, as a settle would renew it
        # (its unspent tokens back, the bucket refilled, a new grant taken), while its bucket's
        # fields are read and written anyway: a busy lease then seldom runs out or lapses on the
        # request path, where a settle costs a request ~25 us in a loaded server. Not with the
        # servers' shared buckets (`remote`), whose borrowing only a settle does.
        renewing = self.enforcing and self.remote is None and not retire
        until = now + LEASE_TTL
        with self.region.lock.held():
            for lease in leases:
                spent = lease.grant - lease.tokens
                back = self.enforcing and lease.tokens > 0 and (retire or lapse >= lease.until)
                renew = renewing and spent > 0
                if not spent and not back:
                    continue
                if lease.local is not None:
                    fields = lease.local
                elif slot_key(buf, lease.slot) != lease.key:
                    continue  # the table was deleted (by another worker): its slot is not ours
                else:
                    fields = list(DIM.unpack_from(buf, lease.at))
                if spent:
                    count(fields, spent, now, lease.ceiling)
                    lease.grant = lease.tokens
                if renew:  # as a settle does: tokens back, refilled, a new grant
                    lease.give_back(fields, now, True)
                    lease.take(fields, until)
                elif back:
                    lease.give_back(fields, now, self.remote is None)
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

    def forget_all(self) -> None:
        """Every table was dropped (`POST /partita/v1/reset`): free every slot and lease at once.

        Without it a test suite that resets between tests fills the shared
        region within a few hundred tables, since every table is metered.
        Other workers keep stale leases of the old table ids, which are
        never reused: a publish skips a lease whose slot has a new owner.
        """
        with self._lock:
            self._leases.clear()
            self.hot.drop_all()
            with self.region.lock.held():
                for table in (self.slots, self.hot.table):
                    table.release_all()
                if self.remote is not None:
                    for table_id in list(self._resources):
                        self.remote.forget(table_id)
        self._resources.clear()

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

