"""How far each background backup job has come, for `GET /metrics` and the console's jobs page.

Everything is read from the store (the job rows and the export, import and
backup documents), so any worker answers the same, whichever process's duty
runs the jobs. Counts are rows handled so far: a snapshot's and a restore's
copied items, an export's items written to data files (the file being
written included), an import's processed lines.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import orjson

from ...storage.base import ReadView
from .jobs import all_jobs
from .keys import BACKUP_ROW, EXPORT_ROW, IMPORT_ROW, end_of


@dataclass(frozen=True)
class JobProgress:
    kind: str  # backup, pitr-base, restore, export, import, bulk-put
    table: str
    resource: str  # the ARN (backup, export, import) or the job number
    phase: str
    items: int
    bytes: int


def _docs(view: ReadView, prefix: bytes) -> list[dict[str, Any]]:
    return [orjson.loads(raw) for _, raw in view.range(prefix, end_of(prefix))]


def running(view: ReadView) -> list[JobProgress]:
    out: list[JobProgress] = []
    for job in all_jobs(view):
        kind = job["kind"]
        if kind == "snapshot":
            owner = job.get("owner") or {}
            label = "backup" if owner.get("kind") == "backup" else "pitr-base"
            out.append(JobProgress(label, job["table"], owner.get("arn") or str(job["id"]), job.get("phase", ""),
                                   job.get("items", 0), job.get("bytes", 0)))
        elif kind == "restore":
            out.append(JobProgress("restore", job["target"], str(job["id"]), job.get("phase", ""),
                                   job.get("items", 0), job.get("bytes", 0)))
        elif kind == "export":
            out.append(JobProgress("export", job.get("table", ""), job["arn"], job.get("phase", "start"),
                                   job.get("items", 0) + job.get("current", 0),
                                   job.get("size", 0) + job.get("current_bytes", 0)))
        elif kind == "bulk":  # a bulk put (engine/bulk): lines handled so far
            out.append(JobProgress("bulk-put", job["table"], job["arn"], f"object {job.get('file', 0) + 1}",
                                   job.get("items", 0), job.get("bytes", 0)))
        elif kind == "import":  # DescribeImport's counters stay 0 until the end, as DynamoDB's do
            out.append(JobProgress("import", job["target"], job["arn"], f"object {job.get('file', 0) + 1}",
                                   job.get("processed", 0), job.get("bytes", 0)))
    return out


def statuses(view: ReadView) -> Counter[tuple[str, str]]:
    """(kind, status) -> how many: exports, imports and on-demand backups the store remembers."""
    counts: Counter[tuple[str, str]] = Counter()
    for doc in _docs(view, EXPORT_ROW):
        counts["export", doc.get("ExportStatus", "")] += 1
    for doc in _docs(view, IMPORT_ROW):
        counts["import", doc.get("ImportStatus", "")] += 1
    for doc in _docs(view, BACKUP_ROW):
        counts["backup", doc.get("status", "")] += 1
    return counts


def recent(view: ReadView, limit: int = 20) -> list[dict[str, Any]]:
    """The latest exports and imports, newest first, with their final counts."""
    rows = []
    for doc in _docs(view, EXPORT_ROW):
        rows.append({"kind": "export", "arn": doc["ExportArn"], "status": doc["ExportStatus"],
                     "start": doc.get("StartTime", 0), "items": doc.get("ItemCount"),
                     "bytes": doc.get("BilledSizeBytes"), "failure": doc.get("FailureMessage"),
                     "where": f"s3://{doc['S3Bucket']}/{doc.get('S3Prefix', '')}"})
    for doc in _docs(view, IMPORT_ROW):
        source = doc.get("S3BucketSource") or {}
        rows.append({"kind": "import", "arn": doc["ImportArn"], "status": doc["ImportStatus"],
                     "start": doc.get("StartTime", 0), "items": doc.get("ImportedItemCount"),
                     "bytes": doc.get("ProcessedSizeBytes"), "failure": doc.get("FailureMessage"),
                     "where": f"s3://{source.get('S3Bucket', '')}/{source.get('S3KeyPrefix', '')}"})
    rows.sort(key=lambda r: r["start"], reverse=True)
    return rows[:limit]
