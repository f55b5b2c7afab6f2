"""Consistent snapshots of a live table without blocking its writers.

A snapshot of a table at instant p (the table's change-log position when it
was asked for) is taken in two phases, each in short transactions:

1. copy: the table's rows are copied in key order, a batch per transaction.
   Writers go on between batches, so the copy is fuzzy: each row is as it
   was when its batch ran, some time after p.
2. undo: the table logs every change while the snapshot is taken (its id is
   in the table's `_Capture` list), so for every item changed after p the
   first such change's old image is what the item was at p; applying those
   (a put, or a delete for an item that did not exist) makes the copy exactly
   the table at p. The last undo batch, in the same transaction, takes the
   job off `_Capture` and tells the snapshot's owner it is complete.

The first-change-seen set lives in memory; after a crash the undo pass
simply starts again from p, which is idempotent. Memory is bounded by the
number of distinct items changed while the snapshot runs, not the table.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import orjson

from ...storage.base import Store, WriteTxn
from ..tables.catalog import Catalog
from ..tables.schema import Table
from .changelog import changes, position
from .jobs import BATCH, Job, new_job, put_job, tally
from .keys import end_of, job_key, snap_prefix

Finisher = Callable[[WriteTxn, Job], None]


def start_snapshot(txn: WriteTxn, catalog: Catalog, table: Table, snap_id: int, owner: dict[str, Any]) -> Job:
    """Register a snapshot job of `table` as it is in this transaction, and start its change capture."""
    job = new_job(
        txn, "snapshot", table=table.name, table_id=table.table_id, snap=snap_id,
        at=position(txn, table.table_id), cursor=None, phase="copy", owner=owner,
    )
    description = copy.deepcopy(table.description)
    description["_Capture"] = [*description.get("_Capture", []), job["id"]]
    catalog.put(txn, Table.from_description(description, table.table_id))
    return job


def copy_rows(txn: WriteTxn, table: Table, snap_id: int, cursor: bytes | None, limit: int | None,
              job: Job | None = None) -> bytes | None:
    """Copy up to `limit` table rows after `cursor`; the new cursor, or None when the table is done."""
    start, end = table.data_range()
    if cursor is not None:
        start = table.prefix + cursor + b"\x00"
    target = snap_prefix(snap_id)
    cut = len(table.prefix)
    last = None
    count = size = 0
    for key, value in txn.range(start, end, limit=limit):
        txn.put(target + key[cut:], value)
        last = key[cut:]
        count += 1
        size += len(value)
    if job is not None:
        tally(job, count, size)
    if limit is None or count < limit:
        return None
    return last


class Snapshots:
    """Runs snapshot jobs; owners (backups, point-in-time recovery) register a finisher."""

    def __init__(self, store: Store, catalog: Catalog) -> None:
        self._store = store
        self._catalog = catalog
        self._seen: dict[int, set[bytes]] = {}
        self.finishers: dict[str, Finisher] = {}

    def step(self, job: Job) -> bool:
        with self._store.write() as txn:
            table = self._catalog.get(job["table"], txn)
            if table is None or table.table_id != job["table_id"] or txn.get(job_key(job["id"])) is None:
                txn.delete(job_key(job["id"]))  # its table went away (DeleteTable completes it first)
                return True
            if job["phase"] == "copy":
                cursor = None if job["cursor"] is None else bytes.fromhex(job["cursor"])
                cursor = copy_rows(txn, table, job["snap"], cursor, BATCH, job)
                if cursor is None:
                    job.update(phase="undo", undo=job["at"])
                    self._seen[job["id"]] = set()
                else:
                    job["cursor"] = cursor.hex()
                put_job(txn, job)
                return True
            seen = self._seen.get(job["id"])
            if seen is None:  # restarted: the undo pass begins again from the snapshot's instant
                seen = self._seen[job["id"]] = set()
                job["undo"] = job["at"]
            done = self._undo(txn, job, seen, BATCH)
            if done:
                self._finish(txn, table, job)
                self._seen.pop(job["id"], None)
            else:
                put_job(txn, job)
        return True

    def complete_now(self, txn: WriteTxn, table: Table) -> None:
        """Finish every snapshot of `table` inside `txn` (DeleteTable: the backup must survive it)."""
        for job_id in table.description.get("_Capture", []):
            raw = txn.get(job_key(job_id))
            if raw is None:
                continue
            job = orjson.loads(raw)
            if job["phase"] == "copy":
                cursor = None if job["cursor"] is None else bytes.fromhex(job["cursor"])
                copy_rows(txn, table, job["snap"], cursor, None)
            job["undo"] = job["at"]
            self._undo(txn, job, set(), None)
            self._finish(txn, table, job)
            self._seen.pop(job_id, None)

    def _undo(self, txn: WriteTxn, job: Job, seen: set[bytes], limit: int | None) -> bool:
        target = snap_prefix(job["snap"])
        count = 0
        for change in changes(txn, job["table_id"], job["undo"], limit):
            count += 1
            job["undo"] = change.n
            if change.suffix in seen:
                continue
            seen.add(change.suffix)
            if change.old is None:
                txn.delete(target + change.suffix)
            else:
                txn.put(target + change.suffix, orjson.dumps(change.old))
        return limit is None or count < limit

    def _finish(self, txn: WriteTxn, table: Table, job: Job) -> None:
        current = self._catalog.get(table.name, txn) or table
        description = copy.deepcopy(current.description)
        capture = [j for j in description.get("_Capture", []) if j != job["id"]]
        if capture:
            description["_Capture"] = capture
        else:
            description.pop("_Capture", None)
        self._catalog.put(txn, Table.from_description(description, current.table_id))
        txn.delete(job_key(job["id"]))
        finisher = self.finishers.get(job["owner"]["kind"])
        if finisher is not None:
            finisher(txn, job)


def drop_snapshot(txn: WriteTxn, snap_id: int) -> None:
    prefix = snap_prefix(snap_id)
    txn.delete_range(prefix, end_of(prefix))
