"""Online index changes: backfilling a new global index, dropping a deleted one.

They run on one background thread per engine, so UpdateTable answers at
once (the index says CREATING / DELETING, as on DynamoDB) while the work
proceeds in small transactions that interleave with client writes. Client
writes already maintain a CREATING index, and each backfill batch re-reads
the rows it indexes inside its own transaction, so items written before and
during the backfill all end up in the index. A drop removes the index rows
and the index itself in one transaction, so no write can leave an orphan.
After a restart, unfinished jobs start again from the catalog's statuses.
With several worker processes only the holder of the store's duty lock
works on them, as DESIGN.md asks of background duties.

Each change also waits out its phases on the server clock (`index_phases`):
resource allocation before the backfill starts, the backfill's minimum
time before ACTIVE, the DELETING time before the drop. While a job waits,
the thread sleeps until the deadline, looking at the clock a few times a
second so that a `partita clock advance` from any process is seen.
"""

from __future__ import annotations

import copy
import logging
import threading
from collections.abc import Callable
from typing import Any

import orjson

from ...storage.base import Conflict, Store
from ..items.writes import store_index_entry
from ..model.keys import prefix_successor
from ..time.clock import Clock
from ..vector import jobs as vector_jobs
from . import index_phases as phases
from .catalog import Catalog
from .definitions import prune_definitions
from .schema import Table

log = logging.getLogger("partita.index_jobs")
BATCH_ROWS = 500
#: How often a process without the duty lock looks again while jobs remain.
RETRY_SECONDS = 0.2
#: Longest sleep while a job waits for a phase deadline: how soon a clock advance is seen.
POLL_SECONDS = 0.1
#: Pause after a failed step (PostgreSQL gone for a moment, a lock timeout), longer each time up to 5 s.
FAILURE_PAUSE_SECONDS = 0.5


class IndexJobs:
    def __init__(self, store: Store, catalog: Catalog, clock: Clock | None = None) -> None:
        self._store = store
        self._catalog = catalog
        self._clock = Clock(store) if clock is None else clock
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._stopped = threading.Event()

    def kick(self) -> None:
        """Make sure the worker runs; it stops by itself when nothing is left to do."""
        with self._lock:
            if self._stopped.is_set():
                return
            self._wake.set()
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="partita-index-jobs", daemon=True)
                self._thread.start()

    def stop(self) -> None:
        """End the worker after its current batch and wait for it: the engine closes the store next.

        A batch cut off here is an ordinary unfinished job: the catalog still
        says CREATING / DELETING, and the next start (or another process)
        resumes it.
        """
        with self._lock:
            self._stopped.set()
            self._wake.set()  # end a wait for a phase deadline now
            thread = self._thread
        if thread is not None:
            thread.join(5)

    def _run(self) -> None:
        """Work while there is work, in whichever one process holds the duty lock.

        A process that does not get the lock waits and looks again, so a job
        is never left behind when the holder finishes just as it is created.
        The holder sleeps while its jobs wait for phase deadlines; a kick (a
        new change in this process) wakes it at once.
        """
        failures = 0
        while self._carry_on():
            self._wake.clear()
            pause = RETRY_SECONDS
            with self._store.duty_lock() as leader:
                if leader:
                    try:
                        due = self._work()
                    except Conflict:  # a concurrent writer won this batch (PostgreSQL): run it again
                        self._wake.set()
                        continue
                    except Exception:  # a failed job is retried after a pause, never lost or left waiting
                        log.exception("index job failed")
                        failures += 1
                        pause = min(FAILURE_PAUSE_SECONDS * failures, 5.0)
                    else:
                        failures = 0
                        if due is None:
                            continue
                        pause = min(max(due - self._clock.now(), 0.0), POLL_SECONDS)
            self._wake.wait(pause)

    def _carry_on(self) -> bool:
        """Whether to go on; when not, the thread is forgotten under the kick lock.

        Deciding to end outside that lock lost jobs: the thread could find no
        pending change, a new one could commit and its kick see the thread
        still alive (so start none), and the thread then ended, leaving the
        index CREATING until the next UpdateTable. Here a kick either comes
        before the decision (its wake is seen) or finds no thread and starts one.
        """
        if not self._stopped.is_set() and (self._wake.is_set() or self._pending()):
            return True
        with self._lock:
            if not self._stopped.is_set() and self._wake.is_set():
                return True
            self._thread = None
            return False

    def _work(self) -> float | None:
        """Take every step that is due; the earliest deadline still ahead, or None when nothing is left."""
        while not self._stopped.is_set():
            outcome = self._step()
            if outcome is not True:
                return outcome
        return None

    def _pending(self) -> bool:
        for name in list(self._catalog.names(None)):
            table = self._catalog.get(name)
            if table is not None and _online_change(table.description) is not None:
                return True
        return False

    def _step(self) -> bool | float | None:
        """Do one unit of work (True); else the earliest phase deadline ahead, or None if no job is left."""
        now = self._clock.now()
        earliest: float | None = None
        for name in list(self._catalog.names(None)):
            table = self._catalog.get(name)
            if table is None:
                continue
            found = _online_change(table.description)
            if found is None:
                continue
            kind, doc = found
            due = phases.waiting_until(table.description, doc, now)
            if due is not None:
                earliest = due if earliest is None else min(earliest, due)
                continue
            self._advance(table, kind, doc, now)
            return True
        return earliest

    def _advance(self, table: Table, kind: str, doc: dict[str, Any], now: float) -> None:
        """One transaction of the change `doc` describes, in the phase it is in."""
        table_name, index_name = table.name, doc["IndexName"]
        if doc["IndexStatus"] == "CREATING" and phases.allocating(doc):
            self._phase_change(table_name, index_name, phases.end_allocation)
        elif doc["IndexStatus"] == "CREATING" and phases.filled(table.description, index_name):
            self._phase_change(table_name, index_name, phases.activate)
        elif kind == "VectorIndexes":
            vector_jobs.step(self._store, self._catalog, table_name, index_name, self._put_description, now)
        elif doc["IndexStatus"] == "DELETING":
            self._drop(table_name, index_name)
        else:
            self._backfill_batch(table_name, index_name, now)

    def _phase_change(self, table_name: str, index_name: str, change: Callable[[dict[str, Any], str], None]) -> None:
        with self._store.write() as txn:
            table = self._catalog.get(table_name, txn)
            if table is None:
                return
            self._mutate(txn, table, lambda description: change(description, index_name))

    def _put_description(self, txn: Any, table: Table, description: dict[str, Any]) -> None:
        self._catalog.put(txn, Table.from_description(description, table.table_id))

    def _mutate(self, txn: Any, table: Table, change: Callable[[dict[str, Any]], None]) -> None:
        description = copy.deepcopy(table.description)
        change(description)
        self._catalog.put(txn, Table.from_description(description, table.table_id))

    def _drop(self, table_name: str, index_name: str) -> None:
        with self._store.write(exclusive=True) as txn:
            table = self._catalog.get(table_name, txn)
            index = None if table is None else table.index(index_name)
            if table is None or index is None:
                return
            end = prefix_successor(index.prefix)
            assert end is not None
            txn.delete_range(index.prefix, end)

            def remove(description: dict[str, Any]) -> None:
                kept = [d for d in description["GlobalSecondaryIndexes"] if d["IndexName"] != index_name]
                if kept:
                    description["GlobalSecondaryIndexes"] = kept
                else:
                    del description["GlobalSecondaryIndexes"]
                description["_IndexIds"].pop(index_name, None)
                description.pop("_Backfill", None)
                phases.forget(description, index_name)
                prune_definitions(description)

            self._mutate(txn, table, remove)

    def _backfill_batch(self, table_name: str, index_name: str, now: float) -> None:
        with self._store.write(exclusive=True) as txn:
            table = self._catalog.get(table_name, txn)
            index = None if table is None else table.index(index_name)
            if table is None or index is None:
                return
            cursors = table.description.get("_Backfill", {})
            start, end = table.data_range()
            cursor = cursors.get(index_name)
            if cursor is not None:
                start = bytes.fromhex(cursor) + b"\x00"
            rows = list(txn.range(start, end, limit=BATCH_ROWS))
            for _, raw in rows:
                store_index_entry(txn, table, index, orjson.loads(raw))

            def advance(description: dict[str, Any]) -> None:
                progress = description.setdefault("_Backfill", {})
                if len(rows) < BATCH_ROWS:
                    progress.pop(index_name, None)
                    if not progress:
                        del description["_Backfill"]
                    phases.finish_backfill(description, index_name, now)
                else:
                    progress[index_name] = rows[-1][0].hex()

            self._mutate(txn, table, advance)


def _online_change(description: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The index (kind, document) a table is creating or deleting, if any.

    A table being restored or imported is skipped: its job builds every
    index with the table and makes them ACTIVE with it.
    """
    if "_Restoring" in description:
        return None
    for kind in phases.KINDS:
        for doc in description.get(kind, ()):
            if doc.get("IndexStatus") in ("CREATING", "DELETING"):
                return kind, doc
    return None
