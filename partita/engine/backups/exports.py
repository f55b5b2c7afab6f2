"""ExportTableToPointInTime, DescribeExport, ListExports: DynamoDB's S3 export layout on disk.

`s3://bucket/prefix` is `S3_DIR/bucket/prefix`; an export writes what
DynamoDB writes there: `AWSDynamoDB/<export id>/data/<name>.json.gz` (or
`.ion.gz`), then `manifest-files.json` (one JSON line per data file) and
last `manifest-summary.json` (plus their `.md5`), so a reader that finds the
summary finds a complete export. The job first materializes the table at
the export instant into a private snapshot (the point-in-time base plus the
logged changes up to the instant, in batches), then streams that snapshot
to gzip files: memory stays flat whatever the table's size. A crash makes
the job start again from nothing (its partial files are removed first); the
status says IN_PROGRESS until the summary is written.
"""

from __future__ import annotations

import gzip
import hashlib
import logging
import secrets
import shutil
from pathlib import Path
from typing import Any

import orjson

from ...storage.base import Store
from ..catalog import Catalog
from ..clock import Clock
from ..tables import ACCOUNT_ID
from .changelog import changes
from .errors import (
    ExportConflictException,
    ExportNotFoundException,
    InvalidExportTimeException,
    PointInTimeRecoveryUnavailableException,
    TableNotFoundException,
    instant,
)
from .formats import ion_line, json_line
from .jobs import BATCH, Job, new_job, pace, put_job
from .keys import EXPORT_ROW, end_of, job_key, next_id, resource_id, snap_prefix
from .listing import listed
from .pitr import read_state, window
from .snapshots import drop_snapshot
from .tokens import earlier, remember

log = logging.getLogger("partita.backups")
#: Items per data file (DynamoDB's files hold a few hundred MB; the count is ours).
ITEMS_PER_FILE = 50_000


def local_path(root: Path, bucket: str, key: str) -> Path:
    """Where `s3://bucket/key` lives under --s3-dir; refuses keys that climb out of it."""
    path = (root / bucket / key).resolve()
    if not str(path).startswith(str((root / bucket).resolve())):
        raise ValueError("key outside the bucket")
    return path


def _row(arn: str) -> bytes:
    return EXPORT_ROW + arn.encode()


def _public(doc: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in doc.items() if not k.startswith("_")}


class Exports:
    def __init__(self, store: Store, catalog: Catalog, clock: Clock, region: str, root: Path, wake: Any) -> None:
        self._store = store
        self._catalog = catalog
        self._clock = clock
        self._region = region
        self.root = root
        self._wake = wake

    def export(self, request: dict[str, Any]) -> dict[str, Any]:
        arn = request["TableArn"]
        name = arn.partition(":table/")[2].split("/", 1)[0]
        kind = request.get("ExportType", "FULL_EXPORT")
        now = self._clock.now()
        spec = request.get("IncrementalExportSpecification") or {}
        with self._store.write() as txn:
            # NOT confirmed against DynamoDB: ScyllaDB's conformance test matches only
            # "ExportConflictException.*Duplicate request detected"; the rest follows ImportTable's recorded text.
            same = earlier(txn, b"e", request, now, ExportConflictException,
                           "Export conflict: Duplicate request detected with conflicting parameters")
            if same is not None:
                raw = txn.get(_row(same))
                if raw is not None:
                    return _public(orjson.loads(raw))
            table = self._catalog.get(name, txn) if name else None
            if table is None or "_Restoring" in table.description:
                raise TableNotFoundException(f"Table not found: {name or arn}")
            bounds = window(table.description, now)
            state = read_state(txn, table.table_id)
            if bounds is None or state is None:
                # NOT confirmed against DynamoDB: the exception is the documented one, the text ours.
                raise PointInTimeRecoveryUnavailableException(
                    f"Point in time recovery is not enabled for table '{name}'"
                )
            earliest = bounds[0]
            if kind == "FULL_EXPORT":
                at = now if request.get("ExportTime") is None else instant(request["ExportTime"])
                if not earliest <= at <= now:
                    # NOT confirmed against DynamoDB.
                    raise InvalidExportTimeException("ExportTime must be within the point in time recovery window")
                frm = None
            else:
                if spec.get("ExportFromTime") is None or spec.get("ExportToTime") is None:
                    # NOT confirmed against DynamoDB.
                    from ...errors import ValidationException

                    raise ValidationException("ExportFromTime and ExportToTime are required for an incremental export")
                frm, at = instant(spec["ExportFromTime"]), instant(spec["ExportToTime"])
                if not earliest <= frm < at <= now:
                    # NOT confirmed against DynamoDB.
                    raise InvalidExportTimeException(
                        "ExportFromTime and ExportToTime must be within the point in time recovery window, "
                        "ExportFromTime before ExportToTime"
                    )
            export_id = resource_id(now)
            doc: dict[str, Any] = {
                "ExportArn": f"{table.description['TableArn']}/export/{export_id}",
                "ExportStatus": "IN_PROGRESS",
                "StartTime": now,
                "TableArn": table.description["TableArn"],
                "TableId": table.description["TableId"],
                "ExportTime": at,
                "S3Bucket": request["S3Bucket"],
                "S3BucketOwner": request.get("S3BucketOwner", ACCOUNT_ID),
                "S3Prefix": request.get("S3Prefix", ""),
                "S3SseAlgorithm": request.get("S3SseAlgorithm", "AES256"),
                "ExportFormat": request.get("ExportFormat", "DYNAMODB_JSON"),
                "ExportType": kind,
                "_id": export_id,
            }
            # DynamoDB answers a token of its own when the request has none (SDKs always send one).
            doc["ClientToken"] = request.get("ClientToken") or secrets.token_hex(16)
            remember(txn, b"e", request, doc["ExportArn"], now)
            if kind == "INCREMENTAL_EXPORT":
                doc["IncrementalExportSpecification"] = {
                    "ExportFromTime": frm, "ExportToTime": at,
                    "ExportViewType": spec.get("ExportViewType", "NEW_AND_OLD_IMAGES"),
                }
            txn.put(_row(doc["ExportArn"]), orjson.dumps(doc))
            new_job(txn, "export", arn=doc["ExportArn"], source_id=table.table_id, table=name)
        self._wake()
        return _public(doc)

    def describe(self, arn: str) -> dict[str, Any]:
        raw = self._store.get(_row(arn))
        if raw is None:
            # NOT confirmed against DynamoDB.
            raise ExportNotFoundException(f"Export not found: {arn}")
        return _public(orjson.loads(raw))

    def list(self, request: dict[str, Any]) -> dict[str, Any]:
        docs, out = listed(self._store, EXPORT_ROW, "ExportArn", request, "MaxResults")
        out["ExportSummaries"] = [
            {"ExportArn": d["ExportArn"], "ExportStatus": d["ExportStatus"], "ExportType": d["ExportType"]}
            for d in docs
        ]
        return out

    # -- the job -------------------------------------------------------------------------

    def step(self, job: Job) -> bool:
        raw = self._store.get(_row(job["arn"]))
        if raw is None:
            with self._store.write() as txn:
                txn.delete(job_key(job["id"]))
            return True
        doc = orjson.loads(raw)
        state = read_state(self._store, job["source_id"])
        if state is not None and not state["ready"]:
            return False  # the point-in-time base is still being built
        base = self.root / doc["S3Bucket"] / doc["S3Prefix"] / "AWSDynamoDB" / doc["_id"]
        shutil.rmtree(base, ignore_errors=True)
        try:
            if state is None:
                raise RuntimeError("point in time recovery was disabled during the export")
            snap = self._materialize(job, doc, state)
            count, size = self._write(base, doc, snap)
            doc.update(ExportStatus="COMPLETED", ItemCount=count, BilledSizeBytes=size,
                       ExportManifest=self._key(doc, "manifest-summary.json"))
        except OSError as error:
            log.error("export %s failed: %s", doc["ExportArn"], error)
            doc.update(ExportStatus="FAILED", FailureCode="S3AccessDenied", FailureMessage=str(error))
        except RuntimeError as error:
            doc.update(ExportStatus="FAILED", FailureCode="UNKNOWN", FailureMessage=str(error))
        doc["EndTime"] = self._clock.now()
        with self._store.write() as txn:  # status, snapshot and job change together: a crash redoes all or none
            if job.get("snap") is not None:
                drop_snapshot(txn, job["snap"])
            txn.put(_row(doc["ExportArn"]), orjson.dumps(doc))
            txn.delete(job_key(job["id"]))
        return True

    def _key(self, doc: dict[str, Any], name: str) -> str:
        prefix = doc["S3Prefix"].strip("/")
        return "/".join(p for p in (prefix, "AWSDynamoDB", doc["_id"], name) if p)

    def _materialize(self, job: Job, doc: dict[str, Any], state: dict[str, Any]) -> int:
        """The export's rows in a private snapshot: the table at ExportTime, or an incremental export's changes.

        The snapshot's id is stored in the job before its first row, so a run
        cut short by a crash leaves nothing behind: the next run drops it first.
        """
        with self._store.write() as txn:
            if job.get("snap") is not None:
                drop_snapshot(txn, job["snap"])
            snap = job["snap"] = next_id(txn)
            put_job(txn, job)
        target = snap_prefix(snap)
        incremental = doc.get("IncrementalExportSpecification")
        if incremental is None:
            source = snap_prefix(state["snap"])
            cursor = source
            while True:
                with self._store.write() as txn:
                    rows = list(txn.range(cursor, end_of(source), limit=BATCH))
                    for key, value in rows:
                        txn.put(target + key[len(source):], value)
                pace()
                if len(rows) < BATCH:
                    break
                cursor = rows[-1][0] + b"\x00"
        after = state["seq"]
        while True:
            with self._store.write() as txn:
                batch = list(changes(txn, job["source_id"], after, BATCH))
                for change in batch:
                    if change.time > doc["ExportTime"]:
                        return snap
                    after = change.n
                    key = target + change.suffix
                    if incremental is None:
                        if change.new is None:
                            txn.delete(key)
                        else:
                            txn.put(key, orjson.dumps(change.new))
                    elif change.time > incremental["ExportFromTime"]:
                        seen = txn.get(key)
                        first_old = change.old if seen is None else orjson.loads(seen)[0]
                        txn.put(key, orjson.dumps([first_old, change.new, change.time]))
            pace()
            if len(batch) < BATCH:
                return snap

    def _write(self, base: Path, doc: dict[str, Any], snap: int) -> tuple[int, int]:
        ion = doc["ExportFormat"] == "ION"
        line = ion_line if ion else json_line
        suffix = ".ion.gz" if ion else ".json.gz"
        incremental = doc.get("IncrementalExportSpecification")
        keys = self._key_names(doc)
        (base / "data").mkdir(parents=True, exist_ok=True)
        files: list[dict[str, Any]] = []
        total = size = 0
        out: gzip.GzipFile | None = None
        path: Path | None = None
        in_file = 0
        prefix = snap_prefix(snap)
        cursor = prefix

        def close() -> None:
            nonlocal out
            if out is None or path is None:
                return
            out.close()
            digest = hashlib.md5(path.read_bytes()).hexdigest()  # noqa: S324 - S3's own checksum
            files.append({"itemCount": in_file, "md5Checksum": digest, "etag": digest,
                          "dataFileS3Key": self._key(doc, f"data/{path.name}")})
            out = None

        while True:
            rows = list(self._store.range(cursor, end_of(prefix), limit=BATCH))
            for _, value in rows:
                if out is None:
                    path = base / "data" / f"{secrets.token_hex(13)}{suffix}"
                    out = gzip.open(path, "wb")
                    in_file = 0
                if incremental is None:
                    record: dict[str, Any] = {"Item": orjson.loads(value)}
                    size += len(value)
                else:
                    old, new, when = orjson.loads(value)
                    subject = new if new is not None else old
                    if subject is None:
                        continue  # created and deleted inside the window: no net change (our reading)
                    record = {"Metadata": {"WriteTimestampMicros": {"N": str(int(when * 1_000_000))}},
                              "Keys": {k: subject[k] for k in keys if k in subject}}
                    if new is not None:
                        record["NewImage"] = new
                    if old is not None and incremental["ExportViewType"] == "NEW_AND_OLD_IMAGES":
                        record["OldImage"] = old
                    size += len(value)
                out.write(line(record))
                in_file += 1
                total += 1
                if in_file >= ITEMS_PER_FILE:
                    close()
            pace()
            if len(rows) < BATCH:
                break
            cursor = rows[-1][0] + b"\x00"
        close()
        manifest = b"".join(orjson.dumps(f) + b"\n" for f in files)
        (base / "manifest-files.json").write_bytes(manifest)
        (base / "manifest-files.md5").write_text(hashlib.md5(manifest).hexdigest())  # noqa: S324
        summary = {
            "version": "2020-06-30" if incremental is None else "2023-08-01",
            "exportArn": doc["ExportArn"], "startTime": _iso(doc["StartTime"]), "endTime": _iso(self._clock.now()),
            "tableArn": doc["TableArn"], "tableId": doc["TableId"], "exportTime": _iso(doc["ExportTime"]),
            "s3Bucket": doc["S3Bucket"], "s3Prefix": doc["S3Prefix"] or None, "s3SseAlgorithm": doc["S3SseAlgorithm"],
            "s3SseKmsKeyId": None, "manifestFilesS3Key": self._key(doc, "manifest-files.json"),
            "billedSizeBytes": size, "itemCount": total, "outputFormat": doc["ExportFormat"],
            "exportType": doc["ExportType"],
        }
        raw = orjson.dumps(summary)
        (base / "manifest-summary.md5").write_text(hashlib.md5(raw).hexdigest())  # noqa: S324
        (base / "manifest-summary.json").write_bytes(raw)
        return total, size

    def _key_names(self, doc: dict[str, Any]) -> list[str]:
        name = doc["TableArn"].partition(":table/")[2]
        table = self._catalog.get(name)
        return [] if table is None else list(table.key_names)


def _iso(epoch: float) -> str:
    import datetime

    moment = datetime.datetime.fromtimestamp(epoch, tz=datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
