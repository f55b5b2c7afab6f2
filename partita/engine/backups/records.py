"""A backup's record: the document ListBackups and DescribeBackup answer from.

Kept apart from the on-demand operations (ondemand.py) because the restore
job also writes it (a finished restore lets its backup be deleted again),
and ondemand starts restores: each imports this, neither the other.
"""

from __future__ import annotations

from typing import Any

import orjson

from ...storage.base import ReadView, WriteTxn
from .jobs import Job
from .keys import BACKUP_ROW


def backup_row(arn: str) -> bytes:
    return BACKUP_ROW + arn.encode()


def read_backup(view: ReadView, arn: str) -> dict[str, Any] | None:
    raw = view.get(backup_row(arn))
    return None if raw is None else orjson.loads(raw)


def write_backup(txn: WriteTxn, doc: dict[str, Any]) -> None:
    txn.put(backup_row(doc["arn"]), orjson.dumps(doc))


def release_backup(txn: WriteTxn, arn: str) -> None:
    """A restore from the backup finished: it may be deleted again."""
    doc = read_backup(txn, arn)
    if doc is not None:
        doc["restoring"] = max(0, doc.get("restoring", 0) - 1)
        write_backup(txn, doc)


def finish_backup(txn: WriteTxn, job: Job) -> None:
    doc = read_backup(txn, job["owner"]["arn"])
    if doc is not None:
        doc["status"] = "AVAILABLE"
        write_backup(txn, doc)
