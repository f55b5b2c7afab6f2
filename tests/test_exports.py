"""ExportTableToPointInTime and ImportTable through the S3 layout under --s3-dir."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import zstandard
from backup_helpers import (
    contents,
    every_type_item,
    export_done,
    import_done,
    indexed_table,
    scan_all,
    wait_active,
)
from botocore.exceptions import ClientError
from conftest import Server, client_for, create_table, error_of

GSI = [{
    "IndexName": "by-g",
    "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
    "Projection": {"ProjectionType": "ALL"},
}]
DEFINITIONS = [
    {"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "N"},
    {"AttributeName": "g", "AttributeType": "S"},
]
KEYS = [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}]



@pytest.fixture
def s3(start_server: Callable[..., Server], tmp_path: Path) -> tuple[Any, Path]:
    server = start_server("--in-memory", "--s3-dir", str(tmp_path / "s3"))
    return client_for(server.url), tmp_path / "s3"


@pytest.mark.parametrize("fmt", ["DYNAMODB_JSON", "ION"])
def test_export_then_import_equals_the_source(s3: tuple[Any, Path], fmt: str) -> None:
    ddb, root = s3
    indexed_table(ddb, "src")
    arn = ddb.describe_table(TableName="src")["Table"]["TableArn"]
    ddb.update_continuous_backups(TableName="src", PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})
    for i in range(120):
        ddb.put_item(TableName="src", Item=every_type_item(i))
    source = contents(ddb, "src")
    out = ddb.export_table_to_point_in_time(TableArn=arn, S3Bucket="bucket", S3Prefix="exports/x", ExportFormat=fmt)
    description = out["ExportDescription"]
    assert description["ExportStatus"] == "IN_PROGRESS" and description["ExportFormat"] == fmt
    doc = export_done(ddb, description["ExportArn"])
    assert doc["ExportStatus"] == "COMPLETED" and doc["ItemCount"] == 120
    export_id = description["ExportArn"].rsplit("/", 1)[1]
    base = root / "bucket" / "exports/x" / "AWSDynamoDB" / export_id
    summary = json.loads((base / "manifest-summary.json").read_text())
    assert summary["itemCount"] == 120 and summary["outputFormat"] == fmt
    assert summary["manifestFilesS3Key"] == f"exports/x/AWSDynamoDB/{export_id}/manifest-files.json"
    assert doc["ExportManifest"] == f"exports/x/AWSDynamoDB/{export_id}/manifest-summary.json"
    files = [json.loads(line) for line in (base / "manifest-files.json").read_text().splitlines()]
    assert sum(f["itemCount"] for f in files) == 120
    first = gzip.open(root / "bucket" / files[0]["dataFileS3Key"]).readline()
    if fmt == "DYNAMODB_JSON":
        assert set(json.loads(first)) == {"Item"}
    else:
        assert first.startswith(b"$ion_1_0 {Item:{")

    imported = ddb.import_table(
        S3BucketSource={"S3Bucket": "bucket", "S3KeyPrefix": f"exports/x/AWSDynamoDB/{export_id}/data/"},
        InputFormat=fmt, InputCompressionType="GZIP",
        TableCreationParameters={
            "TableName": "copy", "KeySchema": KEYS, "BillingMode": "PAY_PER_REQUEST",
            "AttributeDefinitions": DEFINITIONS,
            "GlobalSecondaryIndexes": GSI,
        },
    )["ImportTableDescription"]
    assert imported["ImportStatus"] == "IN_PROGRESS"
    done = import_done(ddb, imported["ImportArn"])
    assert done["ImportStatus"] == "COMPLETED"
    assert done["ImportedItemCount"] == 120 and done["ErrorCount"] == 0
    wait_active(ddb, "copy")
    assert scan_all(ddb, "copy") == source[0]
    assert scan_all(ddb, "copy", IndexName="by-g") == source[1]
    assert [e["ExportArn"] for e in ddb.list_exports(TableArn=arn)["ExportSummaries"]] == [description["ExportArn"]]
    assert [i["ImportArn"] for i in ddb.list_imports()["ImportSummaryList"]] == [imported["ImportArn"]]


def test_incremental_export(start_server: Callable[..., Server], tmp_path: Path) -> None:
    server = start_server("--in-memory", "--s3-dir", str(tmp_path))
    ddb = client_for(server.url)
    from test_point_in_time import _advance, _now

    create_table(ddb, "src")
    arn = ddb.describe_table(TableName="src")["Table"]["TableArn"]
    ddb.update_continuous_backups(TableName="src", PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})
    ddb.put_item(TableName="src", Item={"pk": {"S": "a"}, "v": {"N": "1"}})
    _advance(server, 600)
    start = _now(server)
    ddb.put_item(TableName="src", Item={"pk": {"S": "a"}, "v": {"N": "2"}})
    ddb.put_item(TableName="src", Item={"pk": {"S": "b"}, "v": {"N": "3"}})
    ddb.delete_item(TableName="src", Key={"pk": {"S": "b"}})
    _advance(server, 600)
    end = _now(server)
    out = ddb.export_table_to_point_in_time(
        TableArn=arn, S3Bucket="bk", ExportType="INCREMENTAL_EXPORT",
        IncrementalExportSpecification={"ExportFromTime": start, "ExportToTime": end},
    )["ExportDescription"]
    doc = export_done(ddb, out["ExportArn"])
    assert doc["ExportStatus"] == "COMPLETED" and doc["ItemCount"] == 1
    export_id = out["ExportArn"].rsplit("/", 1)[1]
    base = tmp_path / "bk" / "AWSDynamoDB" / export_id
    files = [json.loads(line) for line in (base / "manifest-files.json").read_text().splitlines()]
    lines = [json.loads(line) for f in files for line in gzip.open(tmp_path / "bk" / f["dataFileS3Key"])]
    by_key = {r["Keys"]["pk"]["S"]: r for r in lines}
    assert by_key["a"]["NewImage"] == {"pk": {"S": "a"}, "v": {"N": "2"}}
    assert by_key["a"]["OldImage"] == {"pk": {"S": "a"}, "v": {"N": "1"}}
    assert "b" not in by_key  # put and deleted inside the window


def test_export_errors(ddb: Any, table_name: str) -> None:
    missing = f"arn:aws:dynamodb:us-east-1:000000000000:table/{table_name}"
    with pytest.raises(ClientError) as excinfo:
        ddb.export_table_to_point_in_time(TableArn=missing, S3Bucket="bucket")
    assert error_of(excinfo) == ("TableNotFoundException", f"Table not found: {missing}")
    create_table(ddb, table_name)
    with pytest.raises(ClientError) as excinfo:
        ddb.export_table_to_point_in_time(TableArn=missing, S3Bucket="bucket")
    assert error_of(excinfo) == (
        "PointInTimeRecoveryUnavailableException", f"Point in time recovery is not enabled for table '{table_name}'",
    )
    with pytest.raises(ClientError) as excinfo:
        ddb.describe_export(ExportArn=missing + "/export/01234567890123-abcdef01")
    assert error_of(excinfo)[0] == "ExportNotFoundException"
    with pytest.raises(ClientError) as excinfo:
        ddb.describe_import(ImportArn=missing + "/import/01234567890123-abcdef01")
    assert error_of(excinfo)[0] == "ImportNotFoundException"


@pytest.mark.parametrize("compression", ["ZSTD", "NONE"])
def test_import_csv_counts_unreadable_lines(s3: tuple[Any, Path], compression: str) -> None:
    ddb, root = s3
    data = b"pk,sk,name\na,1,x\nb,2,\nc,not-a-number,z\n\"unterminated\n"
    folder = root / "in" / "csv"
    folder.mkdir(parents=True)
    blob = zstandard.ZstdCompressor().compress(data) if compression == "ZSTD" else data
    (folder / "part-1.csv").write_bytes(blob)
    out = ddb.import_table(
        S3BucketSource={"S3Bucket": "in", "S3KeyPrefix": "csv/"}, InputFormat="CSV", InputCompressionType=compression,
        TableCreationParameters={"TableName": "csv", "KeySchema": KEYS, "BillingMode": "PAY_PER_REQUEST",
                                 "AttributeDefinitions": DEFINITIONS[:2]},
    )["ImportTableDescription"]
    done = import_done(ddb, out["ImportArn"])
    # The first line that is no item (a key that is not a number) abandons the rest of its object: one error,
    # and the import FAILS keeping its table (as DynamoDB does).
    assert (done["ImportStatus"], done["FailureCode"]) == ("FAILED", "ItemValidationError")
    assert (done["ProcessedItemCount"], done["ImportedItemCount"], done["ErrorCount"]) == (3, 2, 1)
    wait_active(ddb, "csv")
    items = ddb.scan(TableName="csv")["Items"]
    assert sorted(i["pk"]["S"] for i in items) == ["a", "b"]
    assert {"pk": {"S": "b"}, "sk": {"N": "2"}} in items
    with pytest.raises(ClientError) as excinfo:
        ddb.import_table(
            S3BucketSource={"S3Bucket": "in", "S3KeyPrefix": "csv/"}, InputFormat="CSV",
            TableCreationParameters={"TableName": "csv", "KeySchema": KEYS, "BillingMode": "PAY_PER_REQUEST",
                                     "AttributeDefinitions": DEFINITIONS[:2]},
        )
    assert error_of(excinfo) == ("ResourceInUseException", "Table already exists: csv")


def test_client_token_makes_export_idempotent(s3: tuple[Any, Path]) -> None:
    ddb, root = s3
    create_table(ddb, "src")
    arn = ddb.describe_table(TableName="src")["Table"]["TableArn"]
    ddb.update_continuous_backups(TableName="src", PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})
    ddb.put_item(TableName="src", Item={"pk": {"S": "a"}})
    first = ddb.export_table_to_point_in_time(TableArn=arn, S3Bucket="bk", ClientToken="tok-1")["ExportDescription"]
    assert first["ClientToken"] == "tok-1"
    again = ddb.export_table_to_point_in_time(TableArn=arn, S3Bucket="bk", ClientToken="tok-1")["ExportDescription"]
    assert again["ExportArn"] == first["ExportArn"]
    assert [e["ExportArn"] for e in ddb.list_exports(TableArn=arn)["ExportSummaries"]] == [first["ExportArn"]]
    with pytest.raises(ClientError) as excinfo:
        ddb.export_table_to_point_in_time(TableArn=arn, S3Bucket="other", ClientToken="tok-1")
    assert error_of(excinfo) == (
        "ExportConflictException", "Export conflict: Duplicate request detected with conflicting parameters",
    )
    export_done(ddb, first["ExportArn"])
    done = ddb.export_table_to_point_in_time(TableArn=arn, S3Bucket="bk", ClientToken="tok-1")["ExportDescription"]
    assert done["ExportArn"] == first["ExportArn"] and done["ExportStatus"] == "COMPLETED"
    other = ddb.export_table_to_point_in_time(TableArn=arn, S3Bucket="bk", ClientToken="tok-2")["ExportDescription"]
    assert other["ExportArn"] != first["ExportArn"]


def test_list_exports_pages_in_start_order(s3: tuple[Any, Path]) -> None:
    ddb, _root = s3
    create_table(ddb, "paged")
    arn = ddb.describe_table(TableName="paged")["Table"]["TableArn"]
    ddb.update_continuous_backups(TableName="paged", PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})
    made = [
        ddb.export_table_to_point_in_time(TableArn=arn, S3Bucket=f"bk{i}")["ExportDescription"]["ExportArn"]
        for i in range(4)
    ]
    seen: list[str] = []
    token = None
    while True:
        page = ddb.list_exports(TableArn=arn, MaxResults=1, **({"NextToken": token} if token else {}))
        seen += [e["ExportArn"] for e in page["ExportSummaries"]]
        token = page.get("NextToken")
        if token is None:
            break
    # Every export once, oldest first (ARNs carry random ids, so ARN order is not start order).
    assert seen == made


def test_import_client_token_binds_the_table_only(start_server: Callable[..., Server], tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """As ScyllaDB's test measured DynamoDB: while the import runs, the same token with another source is the
    original import, with another table a conflict; once it ended, its table exists and that is refused."""
    monkeypatch.setenv("PARTITA_JOB_BATCH", "2")
    monkeypatch.setenv("PARTITA_JOB_PAUSE", "0.1")
    server = start_server("--in-memory", "--s3-dir", str(tmp_path / "s3"))
    ddb = client_for(server.url)
    folder = tmp_path / "s3" / "in" / "json"
    folder.mkdir(parents=True)
    lines = [json.dumps({"Item": {"pk": {"S": f"k{i}"}, "sk": {"N": str(i)}}}) for i in range(40)]
    body = ("\n".join(lines[:20]) + "\n\n   \n" + "\n".join(lines[20:]) + "\n").encode()  # blank lines: ignored
    (folder / "part-1.json").write_bytes(body)
    request = {
        "S3BucketSource": {"S3Bucket": "in", "S3KeyPrefix": "json/"}, "InputFormat": "DYNAMODB_JSON",
        "TableCreationParameters": {"TableName": "imp", "KeySchema": KEYS, "BillingMode": "PAY_PER_REQUEST",
                                    "AttributeDefinitions": DEFINITIONS[:2]},
    }
    started = ddb.import_table(ClientToken="imp-1", **request)["ImportTableDescription"]
    assert started["ClientToken"] == "imp-1" and "ProcessedSizeBytes" not in started and "EndTime" not in started
    other_source = {**request, "InputCompressionType": "GZIP",
                    "S3BucketSource": {"S3Bucket": "elsewhere", "S3KeyPrefix": "x/"}}
    replay = ddb.import_table(ClientToken="imp-1", **other_source)["ImportTableDescription"]
    assert replay["ImportArn"] == started["ImportArn"]
    assert (replay["InputCompressionType"], replay["S3BucketSource"]) == ("NONE", request["S3BucketSource"])
    running = ddb.describe_import(ImportArn=started["ImportArn"])["ImportTableDescription"]
    assert running["ImportStatus"] == "IN_PROGRESS"
    assert (running["ProcessedItemCount"], running["ImportedItemCount"], running["ErrorCount"]) == (0, 0, 0)
    with pytest.raises(ClientError) as excinfo:
        ddb.import_table(ClientToken="imp-1", **{**request, "TableCreationParameters": {
            **request["TableCreationParameters"], "TableName": "imp-other"}})
    assert error_of(excinfo) == (
        "ImportConflictException", "Import conflict: Duplicate request detected with conflicting parameters",
    )
    done = import_done(ddb, started["ImportArn"])
    assert (done["ImportStatus"], done["ProcessedItemCount"], done["ImportedItemCount"], done["ErrorCount"]) == (
        "COMPLETED", 40, 40, 0)
    assert done["ProcessedSizeBytes"] == len(body)  # uncompressed bytes read, blank lines included
    with pytest.raises(ClientError) as excinfo:
        ddb.import_table(ClientToken="imp-1", **request)
    assert error_of(excinfo) == ("ResourceInUseException", "Table already exists: imp")
    assert len(ddb.list_imports()["ImportSummaryList"]) == 1


def test_a_server_without_s3_dir_removes_its_temporary_folder(tmp_path: Path) -> None:
    """Exports without --s3-dir go to a folder the server makes; it is gone when the server stops."""
    import os
    import subprocess
    import sys

    temp = tmp_path / "tmp"
    temp.mkdir()
    process = subprocess.Popen([sys.executable, "-m", "partita", "serve", "--port", "0", "--in-memory"],
                               stdout=subprocess.PIPE, text=True, env={**os.environ, "TMPDIR": str(temp)})
    server = Server(process, process.stdout.readline().strip().split()[-1])  # type: ignore[union-attr]
    try:
        ddb = client_for(server.url)
        create_table(ddb, "src")
        ddb.update_continuous_backups(TableName="src",
                                      PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})
        ddb.put_item(TableName="src", Item={"pk": {"S": "a"}})
        arn = ddb.describe_table(TableName="src")["Table"]["TableArn"]
        out = ddb.export_table_to_point_in_time(TableArn=arn, S3Bucket="bk")["ExportDescription"]
        assert export_done(ddb, out["ExportArn"])["ExportStatus"] == "COMPLETED"
        (made,) = temp.glob("partita-s3-*")
        assert (made / "bk").is_dir()
    finally:
        server.stop()
    assert process.returncode == 0
    assert list(temp.iterdir()) == []
