"""The export job: many short duty steps, each committing its cursor, so a crash resumes where it stopped.

Phases, stored in the job row: `start` writes the `_started` marker (a
missing bucket fails the export here, before any work), `copy` copies the
point-in-time base into a private snapshot a batch a step, `replay` applies
the logged changes up to the instant a batch a step, `write` streams the
snapshot into gzip data files, a batch a step. A data file is the unit of
resumption: its name and first row are stored before its first byte is
written, its manifest entry once its object is complete. The file being
written lives in this process only (an open upload); a restarted job, or
one picked up by another worker's duty, writes that file again from its
first row under the same name, and keeps every file already listed.
`manifest-files.json`, then `manifest-summary.json` (each with its `.md5`)
come last, and the status turns COMPLETED in the same transaction that
drops the job and its snapshot.
"""

from __future__ import annotations

import base64
import datetime
import gzip
import hashlib
import logging
import os
import secrets
from dataclasses import dataclass
from typing import Any

import orjson

from ...storage.base import Store
from ..tables.catalog import Catalog
from ..time.clock import Clock
from .changelog import changes
from .formats import ion_line, json_line
from .jobs import BATCH, Job, pace, put_job
from .keys import EXPORT_ROW, end_of, job_key, next_id, snap_prefix
from .objects import ObjectError, Objects, Placement, Upload
from .pitr import read_state
from .snapshots import drop_snapshot

log = logging.getLogger("partita.backups")
#: Items per data file (DynamoDB's files hold a few hundred MB; the count is ours). The crash
#: tests shrink it (`PARTITA_EXPORT_FILE_ITEMS`) so a small table makes several files.
ITEMS_PER_FILE = int(os.environ.get("PARTITA_EXPORT_FILE_ITEMS", "50000"))
#: S3's error codes as DynamoDB reports them in FailureCode. S3NoSuchBucket with S3's own message is
#: recorded against DynamoDB (moto's and ScyllaDB's tests); S3AccessDenied is NOT confirmed.
FAILURE_CODES = {"NoSuchBucket": "S3NoSuchBucket", "AccessDenied": "S3AccessDenied"}


def export_row(arn: str) -> bytes:
    return EXPORT_ROW + arn.encode()


def failure_code(error: ObjectError) -> str:
    return FAILURE_CODES.get(error.code, "UNKNOWN")


def placement(doc: dict[str, Any]) -> Placement:
    return Placement(doc.get("_owner"), doc.get("S3SseAlgorithm"), doc.get("S3SseKmsKeyId"))


def object_key(doc: dict[str, Any], name: str) -> str:
    prefix = doc["S3Prefix"].strip("/")
    return "/".join(p for p in (prefix, "AWSDynamoDB", doc["_id"], name) if p)


def iso(epoch: float) -> str:
    moment = datetime.datetime.fromtimestamp(epoch, tz=datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


class _Sink:
    """The upload as a file object for GzipFile (which only calls write)."""

    def __init__(self, upload: Upload) -> None:
        self.upload = upload

    def write(self, data: bytes) -> int:
        self.upload.write(bytes(data))
        return len(data)

    def flush(self) -> None:
        pass


@dataclass
class _Writing:
    """The data file this process is writing for a job."""

    name: str
    sink: _Sink
    out: gzip.GzipFile
    cursor: bytes
    items: int = 0
    size: int = 0


class ExportJob:
    def __init__(self, store: Store, catalog: Catalog, clock: Clock, objects: Objects) -> None:
        self._store = store
        self._catalog = catalog
        self._clock = clock
        self.objects = objects
        self._writing: dict[int, _Writing] = {}

    def step(self, job: Job) -> bool:
        raw = self._store.get(export_row(job["arn"]))
        if raw is None:
            self._drop(job)
            return True
        doc = orjson.loads(raw)
        state = read_state(self._store, job["source_id"])
        phase = job.get("phase", "start")
        if state is not None and not state["ready"] and phase in ("start", "copy"):
            return False  # the point-in-time base is still being built
        try:
            if state is None and phase != "write":
                raise RuntimeError("point in time recovery was disabled during the export")
            if phase == "start":
                self.objects.put(doc["S3Bucket"], object_key(doc, "_started"), b"", placement(doc))
                with self._store.write() as txn:
                    if job.get("snap") is None:
                        job["snap"] = next_id(txn)
                    job["phase"] = "copy" if doc.get("IncrementalExportSpecification") is None else "replay"
                    job.setdefault("after", state["seq"])  # type: ignore[index]
                    put_job(txn, job)
            elif phase == "copy":
                self._copy(job, state)  # type: ignore[arg-type]
            elif phase == "replay":
                self._replay(job, doc)
            else:
                self._write(job, doc)
        except ObjectError as error:
            log.error("export %s failed: %s %s", doc["ExportArn"], error.code, error.message)
            self._fail(job, doc, failure_code(error), error.message)
        except RuntimeError as error:
            self._fail(job, doc, "UNKNOWN", str(error))
        pace()
        return True

    # -- materializing the instant ------------------------------------------------------------

    def _copy(self, job: Job, state: dict[str, Any]) -> None:
        source, target = snap_prefix(state["snap"]), snap_prefix(job["snap"])
        start = source if job.get("cursor") is None else source + bytes.fromhex(job["cursor"]) + b"\x00"
        with self._store.write() as txn:
            rows = list(txn.range(start, end_of(source), limit=BATCH))
            for key, value in rows:
                txn.put(target + key[len(source):], value)
            if len(rows) < BATCH:
                job["phase"] = "replay"
            else:
                job["cursor"] = rows[-1][0][len(source):].hex()
            put_job(txn, job)

    def _replay(self, job: Job, doc: dict[str, Any]) -> None:
        target = snap_prefix(job["snap"])
        incremental = doc.get("IncrementalExportSpecification")
        with self._store.write() as txn:
            batch = list(changes(txn, job["source_id"], job["after"], BATCH))
            done = len(batch) < BATCH
            for change in batch:
                if change.time > doc["ExportTime"]:
                    done = True  # the log is in commit order: nothing later belongs to the instant
                    break
                job["after"] = change.n
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
            if done:
                job.update(phase="write", files=[], next=None, file=None, items=0, size=0)
            put_job(txn, job)

    # -- writing the data files ------------------------------------------------------------------

    def _open(self, job: Job, doc: dict[str, Any]) -> _Writing:
        writing = self._writing.get(job["id"])
        if writing is not None and writing.name == job["file"]:
            return writing
        if writing is not None:
            writing.sink.upload.abort()
        if job["file"] is None:  # a new file: its name is stored before its first byte
            suffix = ".ion.gz" if doc["ExportFormat"] == "ION" else ".json.gz"
            job["file"] = f"{secrets.token_hex(13)}{suffix}"
            with self._store.write() as txn:
                put_job(txn, job)
        prefix = snap_prefix(job["snap"])
        cursor = prefix if job["next"] is None else prefix + bytes.fromhex(job["next"])
        sink = _Sink(self.objects.upload(doc["S3Bucket"], object_key(doc, f"data/{job['file']}"), placement(doc)))
        # mtime 0: a file written again after a crash is the same bytes.
        out = gzip.GzipFile(fileobj=sink, mode="wb", mtime=0)  # type: ignore[arg-type]
        writing = self._writing[job["id"]] = _Writing(job["file"], sink, out, cursor)
        return writing

    def _write(self, job: Job, doc: dict[str, Any]) -> None:
        writing = self._open(job, doc)
        prefix = snap_prefix(job["snap"])
        rows = list(self._store.range(writing.cursor, end_of(prefix), limit=BATCH))
        line = ion_line if doc["ExportFormat"] == "ION" else json_line
        incremental = doc.get("IncrementalExportSpecification")
        keys = self._key_names(doc) if incremental is not None else []
        for n, (key, value) in enumerate(rows):
            writing.cursor = key + b"\x00"
            record = _record(value, incremental, keys)
            if record is not None:
                writing.out.write(line(record))
                writing.items += 1
                writing.size += len(value)
            if writing.items >= ITEMS_PER_FILE and (n + 1 < len(rows) or len(rows) == BATCH):
                self._close_file(job, doc, writing, key[len(prefix):] + b"\x00")
                return  # the next step opens the next file at this row's successor
        if len(rows) < BATCH:
            if writing.items or not job["files"]:
                self._close_file(job, doc, writing, None)
            else:
                writing.sink.upload.abort()
                self._writing.pop(job["id"], None)
            self._finish(job, doc)
            return
        with self._store.write() as txn:  # progress for /metrics and the console, whichever worker asks
            job.update(current=writing.items, current_bytes=writing.size)
            put_job(txn, job)

    def _close_file(self, job: Job, doc: dict[str, Any], writing: _Writing, following: bytes | None) -> None:
        writing.out.close()
        stored = writing.sink.upload.finish()
        self._writing.pop(job["id"], None)
        job["files"].append({"itemCount": writing.items, "md5Checksum": stored.md5, "etag": stored.etag,
                             "dataFileS3Key": object_key(doc, f"data/{writing.name}")})
        job["items"] += writing.items
        job["size"] += writing.size
        job.update(file=None, next=None if following is None else following.hex(), current=0,
                   current_bytes=0)
        with self._store.write() as txn:
            put_job(txn, job)

    def _finish(self, job: Job, doc: dict[str, Any]) -> None:
        files = job["files"]
        place = placement(doc)
        manifest = b"".join(orjson.dumps(f) + b"\n" for f in files)
        self.objects.put(doc["S3Bucket"], object_key(doc, "manifest-files.json"), manifest, place)
        self.objects.put(doc["S3Bucket"], object_key(doc, "manifest-files.md5"), _md5(manifest), place)
        incremental = doc.get("IncrementalExportSpecification")
        end = self._clock.now()
        summary = {
            "version": "2020-06-30" if incremental is None else "2023-08-01",
            "exportArn": doc["ExportArn"], "startTime": iso(doc["StartTime"]), "endTime": iso(end),
            "tableArn": doc["TableArn"], "tableId": doc["TableId"], "exportTime": iso(doc["ExportTime"]),
            "s3Bucket": doc["S3Bucket"], "s3Prefix": doc["S3Prefix"] or None, "s3SseAlgorithm": doc["S3SseAlgorithm"],
            "s3SseKmsKeyId": doc.get("S3SseKmsKeyId"), "manifestFilesS3Key": object_key(doc, "manifest-files.json"),
            "billedSizeBytes": job["size"], "itemCount": job["items"], "outputFormat": doc["ExportFormat"],
            "exportType": doc.get("ExportType", "FULL_EXPORT"),
        }
        raw = orjson.dumps(summary)
        self.objects.put(doc["S3Bucket"], object_key(doc, "manifest-summary.md5"), _md5(raw), place)
        self.objects.put(doc["S3Bucket"], object_key(doc, "manifest-summary.json"), raw, place)
        doc.update(ExportStatus="COMPLETED", ItemCount=job["items"], BilledSizeBytes=job["size"],
                   ExportManifest=object_key(doc, "manifest-summary.json"), EndTime=end)
        self._settle(job, doc)

    def _fail(self, job: Job, doc: dict[str, Any], code: str, message: str) -> None:
        writing = self._writing.pop(job["id"], None)
        if writing is not None:
            writing.sink.upload.abort()
        doc.update(ExportStatus="FAILED", FailureCode=code, FailureMessage=message, EndTime=self._clock.now())
        self._settle(job, doc)

    def _settle(self, job: Job, doc: dict[str, Any]) -> None:
        with self._store.write() as txn:  # status, snapshot and job change together: a crash redoes all or none
            if job.get("snap") is not None:
                drop_snapshot(txn, job["snap"])
            txn.put(export_row(doc["ExportArn"]), orjson.dumps(doc))
            txn.delete(job_key(job["id"]))

    def _drop(self, job: Job) -> None:
        writing = self._writing.pop(job["id"], None)
        if writing is not None:
            writing.sink.upload.abort()
        with self._store.write() as txn:
            if job.get("snap") is not None:
                drop_snapshot(txn, job["snap"])
            txn.delete(job_key(job["id"]))

    def _key_names(self, doc: dict[str, Any]) -> list[str]:
        name = doc["TableArn"].partition(":table/")[2]
        table = self._catalog.get(name)
        return [] if table is None else list(table.key_names)


def _md5(data: bytes) -> bytes:
    """A manifest's `.md5` object: the base64 MD5 of its bytes (as ScyllaDB's test recorded against DynamoDB)."""
    return base64.b64encode(hashlib.md5(data).digest())  # noqa: S324 - S3's own checksum


def _record(value: bytes, incremental: dict[str, Any] | None, keys: list[str]) -> dict[str, Any] | None:
    if incremental is None:
        return {"Item": orjson.loads(value)}
    old, new, when = orjson.loads(value)
    subject = new if new is not None else old
    if subject is None:
        return None  # created and deleted inside the window: no net change (our reading)
    record: dict[str, Any] = {"Metadata": {"WriteTimestampMicros": {"N": str(int(when * 1_000_000))}},
                              "Keys": {k: subject[k] for k in keys if k in subject}}
    if new is not None:
        record["NewImage"] = new
    if old is not None and incremental["ExportViewType"] == "NEW_AND_OLD_IMAGES":
        record["OldImage"] = old
    return record
