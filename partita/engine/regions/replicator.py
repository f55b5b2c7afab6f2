"""Multi-Region eventual consistency: every replica's change records, applied to the other replicas.

Each region keeps the change records of its replica tables (log.py writes
them in the item's own commit). This reads them in commit order and applies
each one to every other replica of the group once it is due, that is once
`--replication-lag-ms` has passed on the server clock since the write (0:
at once; the server then also drains right after the request that wrote,
so the other regions see it before the answer). Item by item, as DynamoDB
replicates: the items of one transaction arrive one by one.

An apply and the advance of the destination's cursor are one commit, so a
crash repeats nothing twice and loses nothing; applying is idempotent
anyway (last writer wins by version, coordinator.apply). A record is
deleted once every destination's cursor has passed it. While replication
is held (tests), nothing is applied and records accumulate. It runs as a
background duty of the process holding the duty lock, and on demand.

Engines and the coordinator are `Any` here: this package sits on top of
engine.py and never imports it (or the coordinator, which imports this).
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import orjson

from ...storage.base import Conflict
from .keys import OUTBOX, OUTBOX_END, cursor_key, outbox_entry, outbox_key, outbox_of, read_int

log = logging.getLogger("partita.replication")
#: Change records read per region and round.
BATCH = 200
#: Rounds a drain asked for (a settle) retries after a conflict with a concurrent writer.
ATTEMPTS = 5
#: Statuses of a member that receives writes (a DELETING replica is being dropped).
RECEIVING = ("CREATING", "ACTIVE", "UPDATING")


class Replicator:
    def __init__(self, coordinator: Any) -> None:
        self._gt = coordinator
        #: The duty thread and a drain after a request or a settle take turns in a process.
        self._turn = threading.Lock()

    def run(self) -> bool:
        """The background duty: one round; whether it applied anything."""
        return self.drain(quiet=True) > 0

    def drain(self, *, quiet: bool = False) -> int:
        """Apply every due record of every region (nothing while held); how many writes were applied."""
        gt = self._gt
        if gt.held():
            return 0
        applied = 0
        with gt.home.store.serialized(), self._turn:  # in this order on every thread (Store.serialized)
            for attempt in range(ATTEMPTS):
                try:
                    for region, engine in gt.engines.items():
                        applied += self._drain_region(region, engine)
                    return applied
                except Conflict:  # another process (or server) applied or wrote meanwhile: read again
                    if quiet or attempt == ATTEMPTS - 1:
                        if quiet:
                            return applied
                        raise
        return applied

    def _drain_region(self, region: str, engine: Any) -> int:
        applied = 0
        start = OUTBOX
        while True:
            rows = list(engine.store.range(start, OUTBOX_END, limit=BATCH))
            if not rows:
                return applied
            by_table: dict[int, list[tuple[int, list[Any]]]] = {}
            for key, raw in rows:
                table_id, n = outbox_entry(key)
                by_table.setdefault(table_id, []).append((n, orjson.loads(raw)))
            for table_id, records in by_table.items():
                applied += self._drain_table(region, engine, table_id, records)
            if len(rows) < BATCH:
                return applied
            start = rows[-1][0] + b"\x00"

    def _drain_table(self, region: str, engine: Any, table_id: int, records: list[tuple[int, list[Any]]]) -> int:
        gt = self._gt
        name = records[0][1][5]
        table = engine.catalog.get(name)
        if table is None or table.table_id != table_id or table.replication is None:
            self._drop(engine, table_id, records)  # the table (or its group) is gone
            return 0
        targets = [m["region"] for m in table.replication["members"]
                   if m["region"] != region and m["status"] in RECEIVING and m["region"] in gt.engines]
        now = gt.clock.now()
        applied = 0
        for target in targets:
            done = read_int(engine.store.get(cursor_key(table_id, target)))
            for n, record in records:
                if n <= done:
                    continue
                if record[0] + gt.lag > now:
                    break  # not due yet; later records are later still
                applied += self._apply(region, table, target, n, record, now)
        self._trim(engine, table_id, targets)
        return applied

    def _apply(self, region: str, table: Any, target: str, n: int, record: list[Any], now: float) -> int:
        gt = self._gt
        written, micros, origin, suffix_hex, new, name = record
        with gt.write() as txn:
            source_view = gt.view(region, txn)
            key = cursor_key(table.table_id, target)
            if read_int(source_view.get(key)) >= n:
                return 0  # another process applied it meanwhile
            other = gt.table(target, name, txn)
            kept = None
            if other is not None and other.replication is not None:
                kept = gt.apply(txn, target, other, bytes.fromhex(suffix_hex), new, (micros, origin))
            source_view.put(key, b"%d" % n)
        gt.note_applied(region, target, now - written, kept is None)
        if kept is not None:
            gt.note_conflict(target, name, _key_of(table, new), (micros, origin), kept)
            return 0
        return 1

    def _trim(self, engine: Any, table_id: int, targets: list[str]) -> None:
        """Delete the records every destination has applied (and cursors of regions that left)."""
        done = min((read_int(engine.store.get(cursor_key(table_id, t))) for t in targets), default=None)
        start, end = outbox_of(table_id)
        with engine.store.write() as txn:
            if done is None:
                txn.delete_range(start, end)
            elif done > 0:
                txn.delete_range(start, outbox_key(table_id, done + 1))

    def _drop(self, engine: Any, table_id: int, records: list[tuple[int, list[Any]]]) -> None:
        with engine.store.write() as txn:
            txn.delete_range(*outbox_of(table_id))


def _key_of(table: Any, item: dict[str, Any] | None) -> dict[str, Any] | None:
    if item is None:
        return None
    return {name: item[name] for name in table.key_names if name in item}


def join_cursors(gt: Any, txn: Any, tables: dict[str, Any], target: str, source: str) -> None:
    """A new member `target` receives from each member what that member has not yet sent to `source`.

    The copy from `source` brings everything `source` holds; what another
    member wrote and has not yet delivered to `source` must still reach the
    new member, so its cursor starts where `source`'s does; `source`'s own
    later writes follow the copy (last writer wins settles any overlap).
    """
    from .keys import counter_key

    for region, table in tables.items():
        if region == target:
            continue
        view = gt.view(region, txn)
        start = view.get(counter_key(table.table_id)) if region == source else view.get(
            cursor_key(table.table_id, source))
        view.put(cursor_key(table.table_id, target), b"%d" % read_int(start))


def leave_cursors(gt: Any, txn: Any, tables: dict[str, Any], target: str) -> None:
    """Forget `target` in every remaining member's cursors (it left the group)."""
    for region, table in tables.items():
        if region != target:
            gt.view(region, txn).delete(cursor_key(table.table_id, target))

