"""ImportTable, DescribeImport, ListImports: a new table filled from files in the S3 layout.

Every object under `s3://bucket/prefix` (a directory with --s3-dir, a real
S3-compatible service with --s3-endpoint) is read in key order, as a stream,
line by line through its decompressor (GZIP, ZSTD or none), so memory stays
flat. A missing bucket fails the import (S3NoSuchBucket, S3's message) and
removes the table it was creating, as DynamoDB does (moto's test recorded
against it); an object that cannot be read counts one error.
The table is CREATING (invisible to the data plane, like a restore) until
the last file is read; items go in through `store_item` in batches, each
batch committing the job's cursor (file, line) with its items, so a crash
resumes exactly where it stopped. A line that cannot be read, or an item
without the table's key, is counted in ErrorCount and logged (DynamoDB's
CloudWatch report, replaced by a log line).
"""

from __future__ import annotations

import copy
import gzip
import io
import logging
import secrets
from collections.abc import Iterator
from typing import IO, Any

import orjson
import zstandard

from ...errors import ResourceInUseException
from ...storage.base import Store
from ..catalog import Catalog
from ..clock import Clock
from ..item_keys import check_item_key
from ..schema import Table
from ..sizes import item_size
from ..tables import TableOps
from ..writes import WriteRules, store_item
from .errors import ImportConflictException, ImportNotFoundException
from .export_job import failure_code
from .formats import csv_header, parse_csv_line, parse_ion_line, parse_json_line
from .jobs import BATCH, Job, new_job, pace, put_job
from .keys import IMPORT_ROW, job_key, resource_id
from .listing import listed
from .objects import ObjectError, Objects
from .restore import create_restored
from .tokens import earlier, remember

log = logging.getLogger("partita.backups")


def _row(arn: str) -> bytes:
    return IMPORT_ROW + arn.encode()


def _public(doc: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in doc.items() if not k.startswith("_")}


def _open(raw: IO[bytes], compression: str) -> IO[bytes]:
    if compression == "GZIP":
        return gzip.open(raw)  # type: ignore[return-value]
    if compression == "ZSTD":
        return io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(raw))  # type: ignore[arg-type]
    return raw


class Imports:
    def __init__(self, store: Store, catalog: Catalog, tables: TableOps, clock: Clock, rules: WriteRules,
                 objects: Objects, wake: Any) -> None:
        self._store = store
        self._catalog = catalog
        self._tables = tables
        self._clock = clock
        self._rules = rules
        self.objects = objects
        self._wake = wake

    def start(self, request: dict[str, Any], validate: Any) -> dict[str, Any]:
        params = request["TableCreationParameters"]
        name = params["TableName"]
        create = {k: v for k, v in params.items()}
        create.setdefault("BillingMode", "PROVISIONED")
        now = self._clock.now()
        with self._store.write() as txn:
            # The text recorded against DynamoDB by terraform-provider-aws#34335.
            same = earlier(txn, b"i", request, now, ImportConflictException,
                           "Import conflict: Duplicate request detected with conflicting parameters")
            if same is not None:
                raw = txn.get(_row(same))
                if raw is not None:
                    return _public(orjson.loads(raw))
            validate(create)
            if self._catalog.get(name, txn) is not None:
                # NOT confirmed against DynamoDB.
                raise ResourceInUseException(f"Table already exists: {name}")
            table = create_restored(txn, self._catalog, self._tables, create, {})
            description = copy.deepcopy(table.description)
            description.pop("RestoreSummary", None)
            self._catalog.put(txn, Table.from_description(description, table.table_id))
            import_id = resource_id(now)
            doc: dict[str, Any] = {
                "ImportArn": f"{description['TableArn']}/import/{import_id}",
                "ImportStatus": "IN_PROGRESS",
                "TableArn": description["TableArn"],
                "TableId": description["TableId"],
                "S3BucketSource": request["S3BucketSource"],
                "ErrorCount": 0,
                "InputFormat": request["InputFormat"],
                "InputCompressionType": request.get("InputCompressionType", "NONE"),
                "TableCreationParameters": params,
                "StartTime": now,
                "ProcessedSizeBytes": 0,
                "ProcessedItemCount": 0,
                "ImportedItemCount": 0,
            }
            if request.get("InputFormatOptions"):
                doc["InputFormatOptions"] = request["InputFormatOptions"]
            doc["ClientToken"] = request.get("ClientToken") or secrets.token_hex(16)
            remember(txn, b"i", request, doc["ImportArn"], now)
            txn.put(_row(doc["ImportArn"]), orjson.dumps(doc))
            new_job(txn, "import", arn=doc["ImportArn"], target=name, target_id=table.table_id, file=0, line=0)
        self._wake()
        return _public(doc)

    def describe(self, arn: str) -> dict[str, Any]:
        raw = self._store.get(_row(arn))
        if raw is None:
            # NOT confirmed against DynamoDB.
            raise ImportNotFoundException(f"Import not found: {arn}")
        return _public(orjson.loads(raw))

    def list(self, request: dict[str, Any]) -> dict[str, Any]:
        docs, out = listed(self._store, IMPORT_ROW, "ImportArn", request, "PageSize")
        out["ImportSummaryList"] = [
            {k: d[k] for k in ("ImportArn", "ImportStatus", "TableArn", "S3BucketSource", "InputFormat", "StartTime")
             if k in d} | ({"EndTime": d["EndTime"]} if "EndTime" in d else {})
            for d in docs
        ]
        return out

    # -- the job -------------------------------------------------------------------------

    def _files(self, doc: dict[str, Any]) -> list[str]:
        source = doc["S3BucketSource"]
        return list(self.objects.keys(source["S3Bucket"], source.get("S3KeyPrefix", ""), source.get("S3BucketOwner")))

    def _lines(self, doc: dict[str, Any], key: str) -> Iterator[bytes]:
        source = doc["S3BucketSource"]
        with _open(self.objects.open(source["S3Bucket"], key, source.get("S3BucketOwner")),
                   doc["InputCompressionType"]) as stream:
            yield from stream

    def step(self, job: Job) -> bool:
        raw = self._store.get(_row(job["arn"]))
        if raw is None:
            with self._store.write() as txn:
                txn.delete(job_key(job["id"]))
            return True
        doc = orjson.loads(raw)
        try:
            files = self._files(doc)
        except ObjectError as error:
            log.error("import %s failed: %s %s", doc["ImportArn"], error.code, error.message)
            self._fail(job, doc, failure_code(error), error.message)
            return True
        options = (doc.get("InputFormatOptions") or {}).get("Csv") or {}
        delimiter = options.get("Delimiter", ",")
        types = {d["AttributeName"]: d["AttributeType"] for d in doc["TableCreationParameters"]["AttributeDefinitions"]}
        while job["file"] < len(files):
            path = files[job["file"]]
            name = path.rsplit("/", 1)[-1]
            header = options.get("HeaderList")
            batch: list[tuple[Any, int]] = []
            errors = 0
            line_no = 0
            try:
                for line_no, line in enumerate(self._lines(doc, path)):
                    if doc["InputFormat"] == "CSV" and header is None:
                        header = csv_header(line, delimiter)
                        continue
                    if line_no < job["line"] or not line.strip():
                        continue
                    try:
                        if doc["InputFormat"] == "DYNAMODB_JSON":
                            item = parse_json_line(line)
                        elif doc["InputFormat"] == "ION":
                            item = parse_ion_line(line)
                        else:
                            item = parse_csv_line(line, header or [], delimiter, types)
                    except Exception as error:  # any unreadable line is one error, as DynamoDB counts it
                        log.warning("import %s: %s line %d unreadable: %s", doc["ImportArn"], name, line_no + 1, error)
                        errors += 1
                        continue
                    if item is not None:
                        batch.append((item, len(line)))
                    if len(batch) >= BATCH:
                        errors = self._commit(job, doc, batch, errors, line_no + 1)
                        batch = []
                        pace()
            except (OSError, EOFError, zstandard.ZstdError, ObjectError) as error:
                log.warning("import %s: %s unreadable: %s", doc["ImportArn"], name, error)
                errors += 1
            self._commit(job, doc, batch, errors, line_no + 1)
            job.update(file=job["file"] + 1, line=0)
            with self._store.write() as txn:
                put_job(txn, job)
        self._finish(job, doc)
        return True

    def _commit(self, job: Job, doc: dict[str, Any], batch: list[tuple[Any, int]], errors: int, line: int) -> int:
        with self._store.write() as txn:
            table = self._catalog.get(job["target"], txn)
            current = orjson.loads(txn.get(_row(doc["ImportArn"])) or b"{}")
            if table is None or not current:
                return 0
            imported = 0
            for item, size in batch:
                try:
                    check_item_key(table, item)
                    item_size(item)
                    row = table.row_key(item)
                except Exception as error:  # a bad item is one error (a malformed number key fails the encoding)
                    log.warning("import %s: item skipped: %s", doc["ImportArn"], error)
                    errors += 1
                    continue
                old_raw = txn.get(row)
                store_item(txn, table, row, None if old_raw is None else orjson.loads(old_raw), item, self._rules)
                imported += 1
                current["ProcessedSizeBytes"] += size
            current["ProcessedItemCount"] += len(batch)
            current["ImportedItemCount"] += imported
            current["ErrorCount"] += errors
            txn.put(_row(doc["ImportArn"]), orjson.dumps(current))
            doc.update(current)
            job["line"] = line
            put_job(txn, job)
        return 0

    def _finish(self, job: Job, doc: dict[str, Any]) -> None:
        with self._store.write() as txn:
            table = self._catalog.get(job["target"], txn)
            current = orjson.loads(txn.get(_row(doc["ImportArn"])) or b"{}")
            if table is not None and current:
                description = copy.deepcopy(table.description)
                description.pop("_Restoring", None)
                description["TableStatus"] = "ACTIVE"
                for index in description.get("GlobalSecondaryIndexes", []):
                    index["IndexStatus"] = "ACTIVE"
                self._catalog.put(txn, Table.from_description(description, table.table_id))
                current.update(ImportStatus="COMPLETED", EndTime=self._clock.now())
                txn.put(_row(doc["ImportArn"]), orjson.dumps(current))
            txn.delete(job_key(job["id"]))

    def _fail(self, job: Job, doc: dict[str, Any], code: str, message: str) -> None:
        """FAILED before any item went in: the table being created goes away with the job."""
        with self._store.write() as txn:
            table = self._catalog.get(job["target"], txn)
            current = orjson.loads(txn.get(_row(doc["ImportArn"])) or b"{}")
            if table is not None and table.table_id == job["target_id"]:
                txn.delete_range(*table.all_rows_range())
                self._catalog.delete(txn, job["target"])
            if current:
                current.update(ImportStatus="FAILED", FailureCode=code, FailureMessage=message,
                               EndTime=self._clock.now())
                txn.put(_row(doc["ImportArn"]), orjson.dumps(current))
            txn.delete(job_key(job["id"]))
