"""Background jobs: rows in the store that the duty advances one batch at a time.

A job is a JSON row (`keys.job_key`); each kind has a runner whose `step`
does one batch in one write transaction that also stores the job's new
cursor, so a crash loses at most the batch in flight and the next duty tick
(in whichever process holds the duty lock) resumes from the cursor.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from typing import Any

import orjson

from ...storage.base import ReadView, Store, WriteTxn
from .keys import JOB_ROW, end_of, job_key, next_id

log = logging.getLogger("partita.backups")
Job = dict[str, Any]
#: Rows (items, log entries) one job step handles in one transaction. The
#: crash tests shrink it (`PARTITA_JOB_BATCH`) so a small table takes many steps.
BATCH = int(os.environ.get("PARTITA_JOB_BATCH", "500"))
#: Seconds the duty waits after each job batch: 0 in service; the crash tests
#: set `PARTITA_JOB_PAUSE` so a `kill -9` reliably lands mid-job.
PAUSE = float(os.environ.get("PARTITA_JOB_PAUSE", "0"))


def pace() -> None:
    """Called after each committed batch (a no-op unless the crash tests slow jobs down)."""
    if PAUSE:
        time.sleep(PAUSE)


def tally(job: Job, items: int, size: int) -> None:
    """Count rows a step handled into the job (progress for /metrics and the console's jobs page)."""
    job["items"] = job.get("items", 0) + items
    job["bytes"] = job.get("bytes", 0) + size


def put_job(txn: WriteTxn, job: Job) -> None:
    txn.put(job_key(job["id"]), orjson.dumps(job))


def new_job(txn: WriteTxn, kind: str, **fields: Any) -> Job:
    job: Job = {"id": next_id(txn), "kind": kind, **fields}
    put_job(txn, job)
    return job


def read_job(view: ReadView, job_id: int) -> Job | None:
    raw = view.get(job_key(job_id))
    return None if raw is None else orjson.loads(raw)


def all_jobs(view: ReadView) -> list[Job]:
    return [orjson.loads(raw) for _, raw in view.range(JOB_ROW, end_of(JOB_ROW))]


class Jobs:
    """The duty that runs every job; runners register by kind."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self.runners: dict[str, Callable[[Job], bool]] = {}
        self.wake: Callable[[], None] = lambda: None

    def run(self) -> bool:
        worked = False
        for job in all_jobs(self._store):
            runner = self.runners.get(job["kind"])
            if runner is None:
                continue
            try:
                if runner(job):
                    worked = True
                    pace()
            except Exception:
                log.exception("backup job %s (%s) failed a step; retrying next tick", job["id"], job["kind"])
        return worked
