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
from ..vector import jobs as vector_jobs
from .catalog import Catalog
from .schema import Table

log = logging.getLogger("partita.index_jobs")
BATCH_ROWS = 500
#: How often a process without the duty lock looks again while jobs remain.
RETRY_SECONDS = 0.2


class IndexJobs:
    def __init__(self, store: Store, catalog: Catalog) -> None:
        self._store = store
        self._catalog = catalog
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
            thread = self._thread
        if thread is not None:
            thread.join(5)

    def _run(self) -> None:
        """Work while there is work, in whichever one process holds the duty lock.

        A process that does not get the lock waits and looks again, so a job
        is never left behind when the holder finishes just as it is created.
        """
        stopped = self._stopped
        while not stopped.is_set() and (self._wake.is_set() or self._pending()):
            self._wake.clear()
            with self._store.duty_lock() as leader:
                if leader:
                    try:
                        while not stopped.is_set() and self._step():
                            pass
                    except Conflict:  # a concurrent writer won this batch (PostgreSQL): run it again
                        self._wake.set()
                        continue
                    except Exception:  # a failed job is retried on the next kick, never lost
                        log.exception("index job failed")
                        return
                    continue
            stopped.wait(RETRY_SECONDS)

    def _pending(self) -> bool:
        for name in list(self._catalog.names(None)):
            table = self._catalog.get(name)
            if table is not None and (any(
                d.get("IndexStatus") in ("CREATING", "DELETING")
                for d in table.description.get("GlobalSecondaryIndexes", [])
            ) or vector_jobs.pending(table.description)):
                return True
        return False

    def _step(self) -> bool:
        """Do one unit of work; False when there is nothing left."""
        for name in list(self._catalog.names(None)):
            table = self._catalog.get(name)
            if table is None:
                continue
            for doc in table.description.get("GlobalSecondaryIndexes", []):
                status = doc.get("IndexStatus")
                if status == "DELETING":
                    self._drop(name, doc["IndexName"])
                    return True
                if status == "CREATING":
                    self._backfill_batch(name, doc["IndexName"])
                    return True
            vector_index = vector_jobs.pending(table.description)
            if vector_index is not None:
                vector_jobs.step(self._store, self._catalog, name, vector_index, self._put_description)
                return True
        return False

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

            self._mutate(txn, table, remove)

    def _backfill_batch(self, table_name: str, index_name: str) -> None:
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
                    for doc in description["GlobalSecondaryIndexes"]:
                        if doc["IndexName"] == index_name:
                            doc["IndexStatus"] = "ACTIVE"
                            doc.pop("Backfilling", None)
                else:
                    progress[index_name] = rows[-1][0].hex()

            self._mutate(txn, table, advance)
