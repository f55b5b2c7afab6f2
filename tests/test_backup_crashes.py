"""`kill -9` during a backup, a restore, an export or an import: no half-visible table, a truthful status.

The server runs on a durable store (the pass's SQLite file or PostgreSQL
database) with jobs slowed down (`PARTITA_JOB_BATCH` rows a step,
`PARTITA_JOB_PAUSE` seconds between steps) so the kill lands mid-job; the
restarted server must finish the job and the result must be exact.
"""

from __future__ import annotations

import gzip
import json
import re
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from backup_helpers import contents, every_type_item, indexed_table, scan_all, wait_backup, wait_for
from botocore.exceptions import ClientError
from conftest import STORE, Server, client_for, fresh_database
from test_point_in_time import _advance

pytestmark = pytest.mark.skipif(STORE == "memory", reason="needs a durable store (the sqlite and postgres passes)")

ITEMS = 150
KEYS = [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}]
DEFINITIONS = [
    {"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "N"},
    {"AttributeName": "g", "AttributeType": "S"},
]


@pytest.fixture
def durable(start_server: Callable[..., Server], tmp_path: Path,
            monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[], Any]]:
    """Starts (and restarts) a server on one durable store; returns a client of the newest."""
    monkeypatch.setenv("PARTITA_JOB_BATCH", "5")
    monkeypatch.setenv("PARTITA_JOB_PAUSE", "0.04")
    store = ["--backend", fresh_database("crash")] if STORE == "postgres" else ["--data-dir", str(tmp_path / "data")]
    servers: list[Server] = []

    def start() -> Any:
        if servers:
            servers[-1].kill()
        servers.append(start_server(*store, "--s3-dir", str(tmp_path / "s3")))
        return client_for(servers[-1].url)

    start.servers = servers  # type: ignore[attr-defined]
    yield start


def _fill(ddb: Any, name: str, count: int = ITEMS) -> None:
    items = [every_type_item(i) for i in range(count)]
    for start in range(0, count, 25):
        ddb.batch_write_item(RequestItems={name: [{"PutRequest": {"Item": it}} for it in items[start:start + 25]]})


def _hidden_until_complete(ddb: Any, name: str, expected: Any, indexes: int = 3) -> None:
    """Until the table is ACTIVE every data-plane call finds no table; once ACTIVE it is exactly `expected`."""
    def settled() -> bool:
        # The data-plane call first: the status only moves CREATING -> ACTIVE, so a scan that succeeds must
        # be followed by ACTIVE (asking in the other order races with the job's last step).
        try:
            ddb.scan(TableName=name, Limit=1)
        except ClientError as error:
            assert error.response["Error"]["Code"] == "ResourceNotFoundException"
            assert ddb.describe_table(TableName=name)["Table"]["TableStatus"] in ("CREATING", "ACTIVE")
            return False
        assert ddb.describe_table(TableName=name)["Table"]["TableStatus"] == "ACTIVE"
        return True

    wait_for(settled, 120)
    if indexes == 3:
        assert contents(ddb, name) == expected
    else:
        assert (scan_all(ddb, name), scan_all(ddb, name, IndexName="by-g")) == expected


def test_kill_during_backup_and_during_its_restore(durable: Callable[[], Any]) -> None:
    ddb = durable()
    indexed_table(ddb, "src")
    _fill(ddb, "src")
    before = contents(ddb, "src")
    arn = ddb.create_backup(TableName="src", BackupName="crashed")["BackupDetails"]["BackupArn"]
    # Changes after the backup's instant, while it copies: the undo pass must take them out again.
    ddb.put_item(TableName="src", Item=every_type_item(1000))
    ddb.delete_item(TableName="src", Key={"pk": {"S": "p1"}, "sk": {"N": "1"}})
    ddb.update_item(TableName="src", Key={"pk": {"S": "p2"}, "sk": {"N": "2"}},
                    UpdateExpression="SET g = :g", ExpressionAttributeValues={":g": {"S": "changed"}})
    assert ddb.describe_backup(BackupArn=arn)["BackupDescription"]["BackupDetails"]["BackupStatus"] == "CREATING"

    ddb = durable()
    assert ddb.describe_backup(BackupArn=arn)["BackupDescription"]["BackupDetails"]["BackupStatus"] == "CREATING"
    ddb.delete_item(TableName="src", Key={"pk": {"S": "p3"}, "sk": {"N": "3"}})  # and after the restart
    doc = wait_backup(ddb, arn)
    assert doc["SourceTableDetails"]["ItemCount"] == ITEMS

    ddb.restore_table_from_backup(TargetTableName="dst", BackupArn=arn)
    assert ddb.describe_table(TableName="dst")["Table"]["TableStatus"] == "CREATING"
    # Exactly what a table that does not exist answers.
    for name in ("dst", "no-such-table"):
        with pytest.raises(ClientError) as excinfo:
            ddb.get_item(TableName=name, Key={"pk": {"S": "p0"}, "sk": {"N": "0"}})
        assert excinfo.value.response["Error"] == {
            "Code": "ResourceNotFoundException", "Message": "Requested resource not found",
        }

    ddb = durable()
    table = ddb.describe_table(TableName="dst")["Table"]
    assert table["TableStatus"] == "CREATING" and table["RestoreSummary"]["RestoreInProgress"] is True
    _hidden_until_complete(ddb, "dst", before)
    assert ddb.describe_table(TableName="dst")["Table"]["RestoreSummary"]["RestoreInProgress"] is False


def test_kill_during_point_in_time_restore(durable: Callable[[], Any]) -> None:
    ddb = durable()
    indexed_table(ddb, "src")
    ddb.update_continuous_backups(TableName="src", PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})
    _fill(ddb, "src")
    before = contents(ddb, "src")
    _advance(durable.servers[-1], 600)  # type: ignore[attr-defined]  # the latest restorable time lags 5 minutes
    ddb.restore_table_to_point_in_time(SourceTableName="src", TargetTableName="dst", UseLatestRestorableTime=True)
    ddb.put_item(TableName="src", Item=every_type_item(1000))  # after the instant: not restored
    ddb = durable()
    assert ddb.describe_table(TableName="dst")["Table"]["TableStatus"] == "CREATING"
    _hidden_until_complete(ddb, "dst", before)


def _write_export_file(root: Path, count: int) -> None:
    folder = root / "bucket" / "in"
    folder.mkdir(parents=True)
    with gzip.open(folder / "part-0.json.gz", "wb") as out:
        for i in range(count):
            item = {k: _jsonable(v) for k, v in every_type_item(i).items()}
            out.write(json.dumps({"Item": item}).encode() + b"\n")


def _jsonable(value: dict[str, Any]) -> dict[str, Any]:
    """An attribute value as DynamoDB JSON on the wire (binaries base64)."""
    import base64

    (kind, inner), = value.items()
    if kind == "B":
        return {"B": base64.b64encode(inner).decode()}
    if kind == "BS":
        return {"BS": [base64.b64encode(b).decode() for b in inner]}
    if kind == "L":
        return {"L": [_jsonable(v) for v in inner]}
    if kind == "M":
        return {"M": {k: _jsonable(v) for k, v in inner.items()}}
    return value


def test_kill_during_import(durable: Callable[[], Any], tmp_path: Path) -> None:
    _write_export_file(tmp_path / "s3", ITEMS)
    ddb = durable()
    indexed_table(ddb, "expected")
    _fill(ddb, "expected")
    expected = contents(ddb, "expected")[:2]  # ImportTable makes no local secondary indexes
    params = {
        "TableName": "imported", "KeySchema": KEYS, "AttributeDefinitions": DEFINITIONS, "BillingMode": "PAY_PER_REQUEST",
        "GlobalSecondaryIndexes": [{
            "IndexName": "by-g", "Projection": {"ProjectionType": "ALL"},
            "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        }],
    }
    arn = ddb.import_table(S3BucketSource={"S3Bucket": "bucket", "S3KeyPrefix": "in/"}, InputFormat="DYNAMODB_JSON",
                           InputCompressionType="GZIP", TableCreationParameters=params)["ImportTableDescription"]["ImportArn"]

    def started() -> float | None:
        # DescribeImport's counters stay 0 until the end (as DynamoDB's do): progress is in /metrics.
        with urllib.request.urlopen(durable.servers[-1].url + "/metrics") as answer:  # type: ignore[attr-defined]
            found = re.search(r'partita_backup_job_items\{kind="import",[^}]*\} (\S+)', answer.read().decode())
        return float(found.group(1)) if found and float(found.group(1)) > 0 else None

    assert wait_for(started) < ITEMS
    doc = ddb.describe_import(ImportArn=arn)["ImportTableDescription"]
    assert doc["ImportStatus"] == "IN_PROGRESS" and doc["ProcessedItemCount"] == 0
    with pytest.raises(ClientError) as excinfo:
        ddb.scan(TableName="imported")
    assert excinfo.value.response["Error"]["Code"] == "ResourceNotFoundException"

    ddb = durable()
    _hidden_until_complete(ddb, "imported", expected, indexes=2)
    doc = ddb.describe_import(ImportArn=arn)["ImportTableDescription"]
    assert doc["ImportStatus"] == "COMPLETED"
    assert (doc["ProcessedItemCount"], doc["ImportedItemCount"], doc["ErrorCount"]) == (ITEMS, ITEMS, 0)


def test_kill_during_export_resumes_from_its_cursor(durable: Callable[[], Any], tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The restarted export keeps the data files it had finished (same names, untouched) and redoes the rest."""
    monkeypatch.setenv("PARTITA_EXPORT_FILE_ITEMS", "20")  # 150 items: 8 data files
    ddb = durable()
    indexed_table(ddb, "src")
    table_arn = ddb.describe_table(TableName="src")["Table"]["TableArn"]
    ddb.update_continuous_backups(TableName="src", PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})
    _fill(ddb, "src")
    before = contents(ddb, "src")[0]
    arn = ddb.export_table_to_point_in_time(TableArn=table_arn, S3Bucket="bucket",
                                            S3Prefix="out")["ExportDescription"]["ExportArn"]
    ddb.put_item(TableName="src", Item=every_type_item(1000))  # after ExportTime: not exported
    base = tmp_path / "s3" / "bucket" / "out" / "AWSDynamoDB" / arn.rsplit("/", 1)[1]
    # Files are written one after another: with three or more on disk, all but the newest are finished.
    wait_for(lambda: len(list((base / "data").glob("*.json.gz"))) >= 3, 60)
    seen = sorted((p.stat().st_mtime_ns, p.name, p.stat().st_size) for p in (base / "data").iterdir())
    finished = seen[:-1]
    assert ddb.describe_export(ExportArn=arn)["ExportDescription"]["ExportStatus"] == "IN_PROGRESS"
    assert not (base / "manifest-summary.json").exists()

    ddb = durable()
    assert ddb.describe_export(ExportArn=arn)["ExportDescription"]["ExportStatus"] == "IN_PROGRESS"

    def done() -> dict[str, Any] | None:
        doc = ddb.describe_export(ExportArn=arn)["ExportDescription"]
        return doc if doc["ExportStatus"] != "IN_PROGRESS" else None

    doc = wait_for(done, 120)
    assert doc["ExportStatus"] == "COMPLETED" and doc["ItemCount"] == ITEMS
    files = [json.loads(line) for line in (base / "manifest-files.json").read_text().splitlines()]
    names = [f["dataFileS3Key"].rsplit("/", 1)[1] for f in files]
    assert len(files) == 8 and [f["itemCount"] for f in files] == [20] * 7 + [10]
    # Nothing left over from the crashed run: the data folder holds exactly the manifest's files, and the
    # files finished before the crash are the manifest's first ones, never rewritten.
    assert sorted(p.name for p in (base / "data").iterdir()) == sorted(names)
    assert names[:len(finished)] == [name for _, name, _ in finished]
    for mtime, name, size in finished:
        assert ((base / "data" / name).stat().st_mtime_ns, (base / "data" / name).stat().st_size) == (mtime, size)
    exported = []
    for f in files:
        with gzip.open(tmp_path / "s3" / "bucket" / f["dataFileS3Key"]) as stream:
            exported.extend(json.loads(line)["Item"] for line in stream)
    assert len(exported) == ITEMS
    assert sorted((i["pk"]["S"], int(i["sk"]["N"])) for i in exported) == [
        (i["pk"]["S"], int(i["sk"]["N"])) for i in before
    ]
