"""StartBulkPutItems, DescribeBulkOperation, ListBulkOperations, CancelBulkOperation, and the job.

An operation is a document in the store (`BULK_SPACE | d | arn`) plus a
background job (backups/jobs.py, kind "bulk") that the duty advances one
batch of input lines per step: each step's items, the operation's counters
and the job's cursor (object, line) commit in one transaction, and that
step's report lines are written to the output location just before, so a
crash or a restart resumes where the last commit left off and a replayed
step rewrites the same report parts (jobs survive restarts: they resume).

What is DynamoDB's (API reference and developer guide, 2026): the statuses
and when each applies; condition-check failures count as processed, never as
failed, and do not make the operation COMPLETED_WITH_ERRORS; parse and
validation failures are reported per line and do not stop the good lines;
MaxWriteRequestUnits (at least 1024) caps the write rate, here in write
request units per second of the server clock; PerformanceTier defaults to
STANDARD; ClientToken binds for 8 hours (IdempotentParameterMismatchException);
ListBulkOperations lists the last 90 days, newest first, 10 per page unless
MaxResults (1-25) says otherwise; CancelBulkOperation keeps what was written;
the table must exist and not be creating an index or restoring. Messages
without a public record are marked NOT confirmed where raised.
"""

from __future__ import annotations

import logging
import os
import secrets
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from ...errors import (
    DynamoDBError,
    ResourceInUseException,
    ResourceNotFoundException,
    ValidationException,
)
from ...storage.base import Store
from ..backups.export_job import failure_code
from ..backups.jobs import BATCH, Job, new_job, pace, put_job
from ..backups.keys import end_of, job_key, resource_id
from ..backups.objects import Directory, ObjectError, Objects, decompressed
from ..backups.tokens import earlier, remember
from ..capacity.charges import charge_write
from ..capacity.meter import Meter
from ..capacity.units import write_units
from ..items.single import prepare_put
from ..items.transactions import TOKEN_MISMATCH, IdempotentParameterMismatchException
from ..items.writes import WriteRules, store_item
from ..model.sizes import item_size
from ..tables.catalog import Catalog
from ..tables.schema import Table
from ..time.clock import Clock
from . import report
from .lines import LineError, parse_line

log = logging.getLogger("partita.bulk")
BULK_SPACE = b"\x0f"
_DOC = BULK_SPACE + b"d"
_LIST = BULK_SPACE + b"l"
_DAYS_90 = 90 * 86_400.0
TERMINAL = ("COMPLETED", "COMPLETED_WITH_ERRORS", "CANCELLED", "FAILED")
#: Lines one step reads (the job batch; the tests shrink it with PARTITA_JOB_BATCH).
LINES = int(os.environ.get("PARTITA_BULK_BATCH", str(BATCH)))


def _doc_key(arn: str) -> bytes:
    return _DOC + arn.encode()


def _public(doc: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in doc.items() if not k.startswith("_")}


def _select(request: dict[str, Any]) -> dict[str, Any]:
    """What a ClientToken binds: every parameter but the token (defaults filled in)."""
    out = {k: v for k, v in request.items() if k != "ClientToken"}
    out.setdefault("PerformanceTier", "STANDARD")
    return out


@dataclass
class _Reading:
    file: int
    key: str
    lines: Iterator[bytes]
    line: int = 0


@dataclass
class _Step:
    """What one step did, committed together."""

    processed: int = 0
    failed: int = 0
    conditions: int = 0
    errors: list[dict[str, Any]] = field(default_factory=list)
    failures: list[dict[str, Any]] = field(default_factory=list)


class BulkPuts:
    def __init__(self, store: Store, catalog: Catalog, clock: Clock, rules: WriteRules, objects: Objects,
                 wake: Any, meter: Meter | None = None) -> None:
        self._store = store
        #: With --emulate-throughput each item is charged to the table like a PutItem's.
        self._meter = meter if meter is not None and meter.enforcing else None
        self._catalog = catalog
        self._clock = clock
        self._rules = rules
        self.objects = objects
        self._wake = wake
        self._reading: dict[int, _Reading] = {}

    # -- the API ---------------------------------------------------------------------------------

    def start(self, request: dict[str, Any]) -> dict[str, Any]:
        name = request["TableName"]
        now = self._clock.now()
        with self._store.write() as txn:
            same = earlier(txn, b"u", request, now, IdempotentParameterMismatchException, TOKEN_MISMATCH, _select)
            if same is not None:
                raw = txn.get(_doc_key(same))
                if raw is not None:
                    return _public(orjson.loads(raw))
            table = self._catalog.get(name, txn)
            if table is None:
                # DescribeTable's words; NOT confirmed for this operation.
                raise ResourceNotFoundException(f"Requested resource not found: Table: {name} not found")
            _check_table(table)
            output = request["OutputS3Configuration"]
            if output.get("S3SseKmsKeyId") and output.get("S3SseAlgorithm") != "KMS":
                # NOT confirmed: the reference says only "Don't specify it when the algorithm is AES256".
                raise ValidationException("S3SseKmsKeyId can only be specified when S3SseAlgorithm is KMS")
            op_id = resource_id(now)
            arn = f"{table.description['TableArn']}/bulk-operation/{op_id}"  # NOT confirmed: the ARN's form
            doc: dict[str, Any] = {
                "BulkOperationArn": arn,
                "BulkOperationStatus": "IN_PROGRESS",
                "TableDetails": [{"TableName": name, "TableId": table.description["TableId"]}],
                "ClientToken": request.get("ClientToken") or secrets.token_hex(16),
                "InputS3Configuration": request["InputS3Configuration"],
                "OutputS3Configuration": output,
                "StartTime": now,
                "ProcessedItemCount": 0,
                "ProcessedInputBytes": 0,
                "FailedItemCount": 0,
                "PerformanceTier": request.get("PerformanceTier", "STANDARD"),
                "_TableArn": table.description["TableArn"],
            }
            if "MaxWriteRequestUnits" in request:
                doc["MaxWriteRequestUnits"] = request["MaxWriteRequestUnits"]
            remember(txn, b"u", request, arn, now, _select)
            txn.put(_doc_key(arn), orjson.dumps(doc))
            listing = struct.pack(">Q", int(now * 1000)) + secrets.token_bytes(8)
            txn.put(_LIST + listing, arn.encode())
            new_job(txn, "bulk", arn=arn, table=name, table_id=table.table_id, file=0, line=0, part=0,
                    tokens=0.0, last=now, usage={})
        self._wake()
        return _public(doc)

    def describe(self, arn: str) -> dict[str, Any]:
        raw = self._store.get(_doc_key(arn))
        if raw is None:
            # NOT confirmed against DynamoDB.
            raise ResourceNotFoundException(f"Requested resource not found: Bulk operation {arn} not found")
        return _public(orjson.loads(raw))

    def list(self, request: dict[str, Any]) -> dict[str, Any]:
        limit = request.get("MaxResults") or 10
        token = request.get("NextToken")
        end = end_of(_LIST)
        if token is not None:
            try:
                end = _LIST + bytes.fromhex(token)
            except ValueError:
                raise ValidationException("Invalid NextToken") from None  # NOT confirmed
        horizon = self._clock.now() - _DAYS_90
        out: list[dict[str, Any]] = []
        last: bytes | None = None
        more = False
        for key, value in self._store.range(_LIST, end, reverse=True):
            if len(out) == limit:
                more = True
                break
            raw = self._store.get(_doc_key(value.decode()))
            if raw is None:
                continue
            doc = orjson.loads(raw)
            if doc["StartTime"] < horizon:
                break  # older ones follow
            summary = {k: doc[k] for k in ("BulkOperationArn", "BulkOperationStatus", "StartTime")}
            if "EndTime" in doc:
                summary["EndTime"] = doc["EndTime"]
            out.append(summary)
            last = key
        answer: dict[str, Any] = {"BulkOperationsSummaryList": out}
        if more and last is not None:
            answer["NextToken"] = last[len(_LIST):].hex()
        return answer

    def cancel(self, arn: str) -> dict[str, Any]:
        with self._store.write() as txn:
            raw = txn.get(_doc_key(arn))
            if raw is None:
                raise ResourceNotFoundException(f"Requested resource not found: Bulk operation {arn} not found")
            doc = orjson.loads(raw)
            # A finished operation keeps its status (NOT confirmed: the reference names no error for it).
            if doc["BulkOperationStatus"] == "IN_PROGRESS":
                doc["BulkOperationStatus"] = "CANCELLING"
                txn.put(_doc_key(arn), orjson.dumps(doc))
        self._wake()
        return {"BulkOperationArn": arn, "BulkOperationStatus": doc["BulkOperationStatus"]}

    # -- for the console and /metrics -------------------------------------------------------------

    def documents(self) -> list[dict[str, Any]]:
        return [orjson.loads(raw) for _, raw in self._store.range(_DOC, end_of(_DOC))]

    def recent(self, limit: int = 20) -> list[dict[str, Any]]:
        """The latest operations, newest first, as the console's jobs page lists exports and imports."""
        rows = []
        for doc in self.documents():
            source = doc["InputS3Configuration"]
            rows.append({"kind": "bulk-put", "arn": doc["BulkOperationArn"], "status": doc["BulkOperationStatus"],
                         "start": doc["StartTime"], "items": doc.get("ProcessedItemCount"),
                         "bytes": doc.get("ProcessedInputBytes"), "failure": doc.get("FailureMessage"),
                         "where": f"s3://{source['S3Bucket']}/{source.get('S3KeyPrefix', '')}"})
        rows.sort(key=lambda r: r["start"], reverse=True)
        return rows[:limit]

    # -- the job ---------------------------------------------------------------------------------

    def step(self, job: Job) -> bool:
        raw = self._store.get(_doc_key(job["arn"]))
        if raw is None:
            self._drop(job)
            return True
        doc = orjson.loads(raw)
        if doc["BulkOperationStatus"] == "CANCELLING":
            self._finish(job, doc, "CANCELLED")
            return True
        table = self._catalog.get(job["table"])
        if table is None or table.table_id != job["table_id"]:
            # NOT confirmed: DynamoDB's code and words when the table goes away mid-operation.
            self._finish(job, doc, "FAILED", ("ResourceNotFound", f"Table {job['table']} was deleted"))
            return True
        source = doc["InputS3Configuration"]
        try:
            keys = list(self.objects.keys(source["S3Bucket"], source.get("S3KeyPrefix", ""), source.get("S3BucketOwner")))
            if "TotalInputBytes" not in doc:
                self._total(job, doc, keys)
        except ObjectError as error:
            log.error("bulk operation %s failed: %s %s", job["arn"], error.code, error.message)
            self._finish(job, doc, "FAILED", (failure_code(error), error.message))
            return True
        if job["file"] >= len(keys):
            self._finish(job, doc, "COMPLETED_WITH_ERRORS" if doc["FailedItemCount"] else "COMPLETED")
            return True
        budget = self._budget(job, doc)
        if budget is not None and budget < 1:
            return False  # paced: wait for the server clock to refill the bucket
        return self._run(job, doc, table, keys, budget)

    def _budget(self, job: Job, doc: dict[str, Any]) -> float | None:
        """Write request units this step may spend: MaxWriteRequestUnits per second of the server clock, 1 s of burst."""
        rate = doc.get("MaxWriteRequestUnits")
        if rate is None:
            return None
        now = self._clock.now()
        job["tokens"] = min(float(rate), job.get("tokens", 0.0) + max(0.0, now - job.get("last", now)) * rate)
        job["last"] = now
        tokens: float = job["tokens"]
        return tokens

    def _total(self, job: Job, doc: dict[str, Any], keys: list[str]) -> None:
        source = doc["InputS3Configuration"]
        total = sum(self._size(source, key) for key in keys)
        with self._store.write() as txn:
            current = orjson.loads(txn.get(_doc_key(job["arn"])) or b"{}")
            if current:
                current["TotalInputBytes"] = total
                txn.put(_doc_key(job["arn"]), orjson.dumps(current))
        doc["TotalInputBytes"] = total

    def _size(self, source: dict[str, Any], key: str) -> int:
        if isinstance(self.objects, Directory):
            return self.objects.path(source["S3Bucket"], key).stat().st_size
        extra = {"ExpectedBucketOwner": source["S3BucketOwner"]} if source.get("S3BucketOwner") else {}
        head = self.objects.client.head_object(Bucket=source["S3Bucket"], Key=key, **extra)  # type: ignore[attr-defined]
        size: int = head["ContentLength"]
        return size

    def _reader(self, job: Job, doc: dict[str, Any], keys: list[str]) -> _Reading:
        reading = self._reading.get(job["id"])
        if reading is not None and (reading.file, reading.line) == (job["file"], job["line"]):
            return reading
        source = doc["InputS3Configuration"]
        key = keys[job["file"]]

        def lines() -> Iterator[bytes]:
            with decompressed(self.objects.open(source["S3Bucket"], key, source.get("S3BucketOwner")),
                       source.get("InputCompressionType", "NONE")) as stream:
                yield from stream

        reading = _Reading(job["file"], key, lines())
        self._reading[job["id"]] = reading
        while reading.line < job["line"] and next(reading.lines, None) is not None:  # resumed: skip what committed
            reading.line += 1
        return reading

    def _run(self, job: Job, doc: dict[str, Any], table: Table, keys: list[str], budget: float | None) -> bool:
        source = doc["InputS3Configuration"]
        out_types = set(doc["OutputS3Configuration"].get("OutputType") or ())
        step = _Step()
        done = False
        try:
            reading = self._reader(job, doc, keys)
        except ObjectError as error:
            reading, done = None, True
            step.failed += 1
            step.processed += 1
            step.errors.append(_object_error(source, keys[job["file"]], error.code, error.message))
        parsed: list[tuple[int, bytes, Any]] = []
        while reading is not None and len(parsed) < LINES:
            try:
                raw = next(reading.lines, None)
            except Exception as error:  # noqa: BLE001 - gzip, zlib, zstd, S3: every decoder fails its own way
                # A corrupt or unreadable object: one error, and the rest of that object is skipped.
                step.failed += 1
                step.processed += 1
                step.errors.append(_object_error(source, reading.key, "InvalidObject", str(error)))
                done = True
                break
            if raw is None:
                done = True
                break
            reading.line += 1
            try:
                line = parse_line(raw, source["InputFormat"], table)
            except LineError as error:
                step.failed += 1
                step.processed += 1
                step.errors.append({"InputObject": f"s3://{source['S3Bucket']}/{reading.key}", "LineNumber": reading.line,
                                    "ErrorCode": error.code, "ErrorMessage": error.message,
                                    "Record": raw[:report.RECORD_CUT].decode("utf-8", "replace").rstrip("\n")})
                continue
            if line is not None:
                parsed.append((reading.line, raw, line))
                if budget is not None:
                    budget -= write_units(item_size(line.item))
                    if budget < 1:
                        break
        cursor = None if done else (reading.line if reading is not None else 0)
        part = job.get("part", 0)
        moved = self._commit(job, doc, table, parsed, step, cursor, out_types, part, source, keys)
        pace()
        return moved

    def _commit(self, job: Job, doc: dict[str, Any], table: Table, parsed: list[tuple[int, bytes, Any]],
                step: _Step, cursor: int | None, out_types: set[str], part: int, source: dict[str, Any],
                keys: list[str]) -> bool:
        """Commit the step; whether it moved (a throttled first line moves nothing: the duty may rest)."""
        usage = job.setdefault("usage", {})
        written = 0
        with self._store.write() as txn:
            current_raw = txn.get(_doc_key(job["arn"]))
            if current_raw is None:
                return True
            current = orjson.loads(current_raw)
            written_units = 0.0
            stopped: int | None = None
            for number, _raw, line in parsed:
                row = table.row_key(line.item)
                old_raw = txn.get(row)
                old = None if old_raw is None else orjson.loads(old_raw)
                if line.condition is not None and not line.condition(old if old is not None else {}):
                    step.processed += 1
                    step.conditions += 1
                    entry = {"InputObject": f"s3://{source['S3Bucket']}/{keys[job['file']]}", "LineNumber": number,
                             "Item": line.item}
                    if old is not None:
                        entry["ExistingItem"] = old
                    step.failures.append(entry)
                    continue
                if self._meter is not None:
                    try:
                        charge_write(self._meter, prepare_put(table, line.item), old, line.item)
                    except DynamoDBError:  # throttled: this line and what follows wait for the next step
                        stopped = number
                        break
                step.processed += 1
                effects = store_item(txn, table, row, old, line.item, self._rules)
                _tally(usage, table, line.item, effects.vector)
                written_units += write_units(item_size(line.item))
                written += 1
            if stopped is not None:
                later = [e for e in step.errors if e.get("LineNumber", stopped) >= stopped]
                step.errors = [e for e in step.errors if e not in later]
                step.failed -= len(later)
                step.processed -= len(later)
                cursor = stopped - 1
            if stopped is not None and step.processed == 0 and step.failed == 0 and cursor == job["line"]:
                return False  # throttled before the first line: nothing to commit, the duty may rest
            files = current.setdefault("_Parts", {})
            for kind, lines in (("ERROR", step.errors), ("CONDITION_CHECK_FAILURE", step.failures)):
                if kind in out_types and lines:
                    written = report.write_part(self.objects, current, kind, part, lines)
                    if written is not None:
                        files.setdefault(kind, []).append(written)
            current["ProcessedItemCount"] += step.processed
            current["FailedItemCount"] += step.failed
            current["_ConditionFailures"] = current.get("_ConditionFailures", 0) + step.conditions
            current["BulkOperationUsage"] = [_usage(table.name, usage)]
            if cursor is None:
                current["ProcessedInputBytes"] += self._size(source, keys[job["file"]]) if job["file"] < len(keys) else 0
                job.update(file=job["file"] + 1, line=0)
                self._reading.pop(job["id"], None)
            else:
                job["line"] = cursor
            if job.get("tokens") is not None and "MaxWriteRequestUnits" in current:
                job["tokens"] -= written_units
            job["part"] = part + 1
            job["items"] = job.get("items", 0) + step.processed
            job["bytes"] = current["ProcessedInputBytes"]
            txn.put(_doc_key(job["arn"]), orjson.dumps(current))
            put_job(txn, job)
        doc.update(current)
        return True

    def _finish(self, job: Job, doc: dict[str, Any], status: str, failure: tuple[str, str] | None = None) -> None:
        self._reading.pop(job["id"], None)
        with self._store.write() as txn:
            raw = txn.get(_doc_key(job["arn"]))
            if raw is not None:
                current = orjson.loads(raw)
                current["BulkOperationStatus"] = status
                current["EndTime"] = self._clock.now()
                if failure is not None:
                    current["FailureCode"], current["FailureMessage"] = failure
                try:
                    report.write_summary(self.objects, current, current.get("_Parts", {}))
                except ObjectError as error:  # the output location is unusable: the report is lost, not the load
                    log.error("bulk operation %s: report not written: %s", job["arn"], error.message)
                txn.put(_doc_key(job["arn"]), orjson.dumps(current))
            txn.delete(job_key(job["id"]))

    def _drop(self, job: Job) -> None:
        self._reading.pop(job["id"], None)
        with self._store.write() as txn:
            txn.delete(job_key(job["id"]))


def _check_table(table: Table) -> None:
    """A bulk put needs a table that is not restoring and not creating an index (developer guide)."""
    description = table.description
    if "_Restoring" in description:
        # NOT confirmed: DynamoDB's words.
        raise ResourceInUseException(f"Table {table.name} is being restored")
    for index in description.get("GlobalSecondaryIndexes", []):
        if index.get("IndexStatus") == "CREATING":
            raise ResourceInUseException(  # NOT confirmed: DynamoDB's words
                f"Attempt to change a resource which is still in use: Table {table.name} is creating an index")


def _object_error(source: dict[str, Any], key: str, code: str, message: str) -> dict[str, Any]:
    return {"InputObject": f"s3://{source['S3Bucket']}/{key}", "ErrorCode": code, "ErrorMessage": message}


def _tally(usage: dict[str, Any], table: Table, item: dict[str, Any], vector: dict[str, int]) -> None:
    """Bulk put bytes: the item in the table, its entry in each index it enters, its vectors."""
    usage["table"] = usage.get("table", 0) + item_size(item)
    for index in table.indexes:
        if index.covers(item):
            bucket = usage.setdefault("gsi" if index.is_global else "lsi", {})
            bucket[index.name] = bucket.get(index.name, 0) + item_size(index.project(item, table.key_names))
    for name, size in vector.items():
        vectors = usage.setdefault("vector", {})
        vectors[name] = vectors.get(name, 0) + size


def _usage(name: str, usage: dict[str, Any]) -> dict[str, Any]:
    total = usage.get("table", 0) + sum(usage.get("gsi", {}).values()) + sum(usage.get("lsi", {}).values())
    out: dict[str, Any] = {"TableName": name, "BulkPutBytes": total, "Table": {"BulkPutBytes": usage.get("table", 0)}}
    if usage.get("lsi"):
        out["LocalSecondaryIndexes"] = {k: {"BulkPutBytes": v} for k, v in usage["lsi"].items()}
    if usage.get("gsi"):
        out["GlobalSecondaryIndexes"] = {k: {"BulkPutBytes": v} for k, v in usage["gsi"].items()}
    if usage.get("vector"):
        out["VectorIndexes"] = {k: {"BulkPutVectorBytes": v} for k, v in usage["vector"].items()}
    return out
