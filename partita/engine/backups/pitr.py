"""Point-in-time recovery: a base snapshot rolled forward, plus the change log.

Enabling recovery (in UpdateContinuousBackups' transaction) starts a
snapshot of the table at that instant, the *base*, and the table logs every
change from then on. The state of the table at any instant T of the
recovery window is the base plus the logged changes up to T; a restore
copies the base into the new table and replays the log (see `restore`).

The trimming duty keeps storage to the window: changes older than the
window's start (`RecoveryPeriodInDays` on the server clock) are folded into
the base and deleted, so the base is always the table as it was at the
window's start or later. Disabling recovery drops the base and the log. A
table being restored or exported from is not folded while that runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from ...storage.base import ReadView, Store, WriteTxn
from ..tables.catalog import Catalog
from ..tables.schema import Table
from ..time.clock import Clock
from .changelog import changes, logging
from .jobs import BATCH, Job, all_jobs
from .keys import LOG_SPACE, end_of, job_key, log_key, log_prefix, next_id, pitr_key, snap_prefix
from .snapshots import drop_snapshot, start_snapshot

_DAY = 86_400.0
LATEST_RESTORABLE_LAG = 300.0


def read_state(view: ReadView, table_id: int) -> dict[str, Any] | None:
    raw = view.get(pitr_key(table_id))
    return None if raw is None else orjson.loads(raw)


def write_state(txn: WriteTxn, table_id: int, state: dict[str, Any]) -> None:
    txn.put(pitr_key(table_id), orjson.dumps(state))


def enable(txn: WriteTxn, catalog: Catalog, table: Table) -> None:
    """Start the base snapshot: called in the transaction that turns recovery on."""
    snap_id = next_id(txn)
    write_state(txn, table.table_id, {"table": table.name, "snap": snap_id, "seq": 0, "ready": False})
    start_snapshot(txn, catalog, table, snap_id, {"kind": "pitr", "table_id": table.table_id})


def disable(txn: WriteTxn, table: Table) -> dict[str, Any]:
    """Forget the base (the duty trims the log); returns the description without a pending base job."""
    state = read_state(txn, table.table_id)
    description = table.description
    if state is not None:
        txn.delete(pitr_key(table.table_id))
        drop_snapshot(txn, state["snap"])
        capture = []
        for job_id in description.get("_Capture", []):
            raw = txn.get(job_key(job_id))
            job = None if raw is None else orjson.loads(raw)
            if job is not None and job["owner"]["kind"] == "pitr":
                txn.delete(job_key(job_id))
            else:
                capture.append(job_id)
        if capture:
            description["_Capture"] = capture
        else:
            description.pop("_Capture", None)
    return description


def finish_base(txn: WriteTxn, job: Job) -> None:
    state = read_state(txn, job["owner"]["table_id"])
    if state is not None and state["snap"] == job["snap"]:
        state.update(ready=True, seq=job["at"])
        write_state(txn, job["owner"]["table_id"], state)


def _pinned(jobs: list[Job]) -> set[int]:
    """Tables whose base a restore or an export is reading."""
    return {j["replay"]["table_id"] for j in jobs if j.get("replay")} | {j["source_id"] for j in jobs if "source_id" in j}


#: (view, table id) -> the n after which another reader (a Kinesis destination) still needs the
#: table's change log, or None when it needs none of it.
Hold = Callable[[ReadView, int], "int | None"]


class Trimmer:
    """The duty: fold changes older than the window into the base; drop log entries nobody needs."""

    def __init__(self, store: Store, catalog: Catalog, clock: Clock) -> None:
        self._store = store
        self._catalog = catalog
        self._clock = clock
        #: Other readers of the change log, which keep their entries from being dropped.
        self.holds: list[Hold] = []

    def run(self) -> bool:
        jobs = all_jobs(self._store)
        pinned = _pinned(jobs)
        worked = False
        start = LOG_SPACE
        while True:
            first = next(iter(self._store.range(start, end_of(LOG_SPACE), limit=1)), None)
            if first is None:
                return worked
            table_id = int.from_bytes(first[0][1:5], "big")
            worked = self._trim(table_id, jobs, table_id in pinned) or worked
            start = end_of(log_prefix(table_id))

    def _trim(self, table_id: int, jobs: list[Job], pinned: bool) -> bool:
        with self._store.write() as txn:
            state = read_state(txn, table_id)
            keep_after: int | None = None
            for job in jobs:
                if job["kind"] == "snapshot" and job["table_id"] == table_id:
                    keep_after = job["at"] if keep_after is None else min(keep_after, job["at"])
            worked = False
            if state is not None:
                table = self._catalog.get(state["table"], txn)
                if table is None or table.table_id != table_id or not logging(table.description):
                    txn.delete(pitr_key(table_id))
                    drop_snapshot(txn, state["snap"])
                    state = None
                    worked = True
            if state is not None and state["ready"] and not pinned:
                pitr = table.description["_PointInTimeRecovery"]  # type: ignore[union-attr]
                horizon = self._clock.now() - pitr["RecoveryPeriodInDays"] * _DAY
                target = snap_prefix(state["snap"])
                for change in changes(txn, table_id, state["seq"], BATCH):
                    if change.time >= horizon:
                        break
                    if change.new is None:
                        txn.delete(target + change.suffix)
                    else:
                        txn.put(target + change.suffix, orjson.dumps(change.new))
                    state["seq"] = change.n
                    worked = True
                if worked:
                    write_state(txn, table_id, state)
            if state is not None:
                keep_after = state["seq"] if keep_after is None else min(keep_after, state["seq"])
            for hold in self.holds:
                held = hold(txn, table_id)
                if held is not None:
                    keep_after = held if keep_after is None else min(keep_after, held)
            end = log_key(table_id, keep_after + 1) if keep_after is not None else end_of(log_prefix(table_id))
            doomed = [key for key, _ in txn.range(log_prefix(table_id), end, limit=BATCH)]
            for key in doomed:
                txn.delete(key)
            return worked or bool(doomed)


def window(description: dict[str, Any], now: float) -> tuple[float, float] | None:
    """(earliest, latest) restorable instants, or None without recovery.

    From when recovery was enabled (or the recovery period ago, whichever is
    later) to five minutes ago, DynamoDB's usual lag; DescribeContinuousBackups
    reports this same window (control/backups.py).
    """
    settings = description.get("_PointInTimeRecovery")
    if not settings:
        return None
    earliest = max(settings["EnabledAt"], now - settings["RecoveryPeriodInDays"] * _DAY)
    return earliest, max(earliest, now - LATEST_RESTORABLE_LAG)
