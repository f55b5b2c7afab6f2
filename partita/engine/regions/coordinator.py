"""The global tables of a server of several regions: one coordinator over every region's engine.

It opens the transactions that span regions (each region's catalog and rows
are a namespace of one store, storage/namespace.py, so one commit reaches
them all), keeps the replication settings (`--replication-lag-ms`, the
phase length of replica changes, the hold tests set) and the counters the
console and `/metrics` show, and runs the two background duties: replica
jobs (jobs.py) and replication (replicator.py).

Engines are handled as `Any`: this package is built on top of engine.py
(build.py imports it), so it never imports it back.
"""

from __future__ import annotations

import copy
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ...storage.base import WriteTxn
from ...storage.namespace import within
from ..items.writes import store_item
from ..tables.schema import Table
from . import group as groups
from .keys import HOLD, pack_version, unpack_version, version_key

Item = dict[str, dict[str, Any]]
#: Keys of the last conflicts kept for the console (per server process).
RECENT_CONFLICTS = 20
#: Rounds of jobs and replication one settle runs at most (a copy of many items takes several).
SETTLE_ROUNDS = 10_000


@dataclass
class Stats:
    """Replication counters of this process (the console and /metrics)."""

    applied: dict[tuple[str, str], int] = field(default_factory=dict)  # (from, to) -> writes applied
    latency: dict[tuple[str, str], float] = field(default_factory=dict)  # (from, to) -> last lag, seconds
    conflicts: dict[str, int] = field(default_factory=dict)  # table -> writes that lost to a later one
    recent: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=RECENT_CONFLICTS))


class GlobalTables:
    def __init__(self, engines: dict[str, Any], home: Any, lag_ms: int, phase_ms: int) -> None:
        self.engines = engines
        self.home = home
        self.lag = lag_ms / 1000
        self.phase = phase_ms / 1000
        self.stats = Stats()
        #: A replicated write committed since the last drain (lag 0 drains after the request).
        self.written = False
        self._lock = threading.Lock()
        from .jobs import ReplicaJobs
        from .replicator import Replicator

        self.jobs = ReplicaJobs(self)
        self.replicator = Replicator(self)

    @property
    def clock(self) -> Any:
        return self.home.clock

    def regions(self) -> list[str]:
        return list(self.engines)

    # -- transactions over every region ------------------------------------------------

    @contextmanager
    def write(self) -> Iterator[WriteTxn]:
        """One transaction of the whole store (the home region's rows are the store's own)."""
        with self.home.store.write() as txn:
            yield txn

    def view(self, region: str, txn: WriteTxn) -> WriteTxn:
        """`region`'s rows within a transaction of the whole store."""
        return within(self.engines[region].store, txn)

    def table(self, region: str, name: str, txn: WriteTxn | None = None) -> Table | None:
        engine = self.engines[region]
        return engine.catalog.get(name, None if txn is None else self.view(region, txn))

    def members(self, txn: WriteTxn, table: Table) -> dict[str, Table]:
        """Every replica's table of `table`'s global table (regions in the group order)."""
        group = table.replication
        out: dict[str, Table] = {}
        if group is None:
            return out
        for region in groups.regions(group):
            if region in self.engines:
                other = self.table(region, table.name, txn)
                if other is not None and other.replication is not None:
                    out[region] = other
        return out

    def put(self, txn: WriteTxn, region: str, table: Table, description: dict[str, Any]) -> Table:
        """Store `description` (its group rendered for `region`) as `region`'s table."""
        groups.render(description, region)
        updated = Table.from_description(description, table.table_id)
        self.engines[region].catalog.put(self.view(region, txn), updated)
        return updated

    def put_group(self, txn: WriteTxn, tables: dict[str, Table], group: groups.Group | None,
                  statuses: dict[str, str] | None = None) -> dict[str, Table]:
        """Give every table of `tables` the group `group` (None: none) and optionally a TableStatus."""
        out: dict[str, Table] = {}
        for region, table in tables.items():
            description = copy.deepcopy(table.description)
            if group is None:
                description.pop(groups.MEMBER, None)
            else:
                description[groups.MEMBER] = copy.deepcopy(group)
            if statuses and region in statuses:
                description["TableStatus"] = statuses[region]
            out[region] = self.put(txn, region, table, description)
        return out

    # -- applying a write made elsewhere -------------------------------------------------

    def apply(self, txn: WriteTxn, region: str, table: Table, suffix: bytes, new: Item | None,
              version: tuple[int, str]) -> tuple[int, str] | None:
        """Write another replica's change into `region`'s `table` if it is later than what it holds.

        Last writer wins by version (microseconds, then region name: the
        tie-break every replica decides alike). The write goes through the
        one write path (indexes, TTL, the region's stream, its change log)
        but is not sent on again. None when applied; the held version when
        that is later (a conflict resolved by discarding this write).
        """
        view = self.view(region, txn)
        key = version_key(table.table_id, suffix)
        held = view.get(key)
        if held is not None:
            kept = unpack_version(held)
            if kept == version:
                return None  # this very write, delivered again
            if kept > version:
                return kept
        row = table.prefix + suffix
        stored = view.get_weighted(row)
        old = None if stored is None else _loads(stored[0])
        if old != new:
            store_item(view, table, row, old, new, self.engines[region].apply_rules)
        view.put(key, pack_version(*version))
        return None

    def write_through(self, txn: WriteTxn, region: str, table: Table, suffix: bytes, new: Item | None,
                      version: tuple[int, str]) -> None:
        """MRSC: write the item to every other replica in the writer's own commit."""
        from .strong import write_through

        write_through(self, txn, region, table, suffix, new, version)

    # -- the operations of global tables (api/tables.py, api/ttl.py) ------------------------

    def update_replicas(self, region: str, request: dict[str, Any]) -> dict[str, Any]:
        from .strong import is_strong_request, update_strong

        if is_strong_request(self, region, request):
            return update_strong(self, region, request)
        from .replica_updates import update

        return update(self, region, request)

    def delete_table(self, region: str, name: str) -> dict[str, Any] | None:
        """DeleteTable of a replica (its leaving the group), or None for a table of no global table."""
        from .replica_updates import start_delete
        from .strong import refuse_delete

        with self.write() as txn:
            table = self.table(region, name, txn)
            if table is None:
                return None
            if table.replication is None:
                if table.description.get("TableStatus") == "DELETING":  # a replica on its way out
                    from .errors import in_use

                    raise in_use()
                return None
            refuse_delete(table)
            return start_delete(self, txn, region, table, self.clock.now())

    def before_update(self, region: str, request: dict[str, Any]) -> None:
        from .settings import before_update

        before_update(self, region, request)

    def after_update(self, region: str, request: dict[str, Any]) -> None:
        from .settings import after_update

        after_update(self, region, request)

    def share_ttl(self, region: str, name: str, spec: dict[str, Any]) -> None:
        from .settings import share_ttl

        share_ttl(self, region, name, spec)

    def check_conflict(self, region: str, held: bytes, now: float) -> None:
        from .strong import check_conflict

        check_conflict(self, region, held, now)

    # -- holding replication (tests) ----------------------------------------------------

    def held(self) -> bool:
        return self.home.store.get(HOLD) is not None

    def hold(self, on: bool) -> None:
        with self.write() as txn:
            if on:
                txn.put(HOLD, b"1")
            else:
                txn.delete(HOLD)

    def settle(self) -> int:
        """Take every replica change as far as the clock allows and apply every due write, now.

        What the background duties would do over their next ticks, done
        before returning, so a test that advanced the clock sees the result
        without waiting (replication stays held while held).
        """
        from ...storage.base import Conflict

        applied = 0
        for _ in range(SETTLE_ROUNDS):
            try:
                moved = self.jobs.run()
            except Conflict:  # a concurrent writer won this step: take it again
                moved = True
            done = self.replicator.drain()
            applied += done
            if not moved and not done:
                break
        return applied

    def after_request(self) -> None:
        """With no lag, a write reaches the other replicas before its answer is sent."""
        if self.written and self.lag == 0:
            self.written = False
            self.replicator.drain(quiet=True)

    def note_conflict(self, region: str, table: str, key: Item | None, mine: tuple[int, str],
                      theirs: tuple[int, str]) -> None:
        with self._lock:
            self.stats.conflicts[table] = self.stats.conflicts.get(table, 0) + 1
            self.stats.recent.append({"table": table, "region": region, "key": key, "kept": theirs[1],
                                      "discarded": mine[1]})

    def note_applied(self, source: str, target: str, lag: float, won: bool) -> None:
        """A change reached `target` `lag` seconds after it was written (and was applied if `won`)."""
        with self._lock:
            pair = (source, target)
            if won:
                self.stats.applied[pair] = self.stats.applied.get(pair, 0) + 1
            self.stats.latency[pair] = lag


def _loads(raw: bytes) -> Item:
    import orjson

    item: Item = orjson.loads(raw)
    return item
