"""Export to and import from a real S3-compatible service (`--s3-endpoint`), over HTTP.

The service is moto's server mode (`ThreadedMotoServer`, a real HTTP S3 on a
free port of this test process); Partita's server talks to it through boto3
exactly as it would talk to AWS, and the tests read and write its objects
through boto3's S3 client. No mocks: moto's decorators are never used.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import os
import secrets
import socket
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from backup_helpers import (
    contents,
    every_type_item,
    export_done,
    import_done,
    indexed_table,
    scan_all,
    wait_active,
)
from botocore.config import Config
from botocore.exceptions import ClientError
from conftest import Server, client_for

KEYS = [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}]
DEFINITIONS = [
    {"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "N"},
    {"AttributeName": "g", "AttributeType": "S"},
]
GSI = [{
    "IndexName": "by-g",
    "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
    "Projection": {"ProjectionType": "ALL"},
}]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    from moto.server import ThreadedMotoServer

    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()


@pytest.fixture
def s3(s3_endpoint: str) -> Any:
    return boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1",
                        config=Config(s3={"addressing_style": "path"}))


@pytest.fixture
def bucket(s3: Any) -> str:
    name = f"bk-{secrets.token_hex(6)}"
    s3.create_bucket(Bucket=name)
    return name


@pytest.fixture
def ddb(start_server: Callable[..., Server], s3_endpoint: str) -> Any:
    server = start_server("--in-memory", "--s3-endpoint", s3_endpoint, "--s3-region", "us-east-1")
    return client_for(server.url)



def _keys(s3: Any, bucket: str, prefix: str = "") -> list[str]:
    pages = s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    return [entry["Key"] for page in pages for entry in page.get("Contents", [])]


def _body(s3: Any, bucket: str, key: str) -> bytes:
    data: bytes = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
    return data


def _md5(data: bytes) -> str:
    return base64.b64encode(hashlib.md5(data).digest()).decode()  # noqa: S324


def _with_pitr(ddb: Any, name: str) -> str:
    ddb.update_continuous_backups(TableName=name, PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})
    arn: str = ddb.describe_table(TableName=name)["Table"]["TableArn"]
    return arn


def _import(ddb: Any, bucket: str, prefix: str, name: str, fmt: str = "DYNAMODB_JSON",
            compression: str = "GZIP") -> dict[str, Any]:
    out = ddb.import_table(
        S3BucketSource={"S3Bucket": bucket, "S3KeyPrefix": prefix}, InputFormat=fmt, InputCompressionType=compression,
        TableCreationParameters={"TableName": name, "KeySchema": KEYS, "BillingMode": "PAY_PER_REQUEST",
                                 "AttributeDefinitions": DEFINITIONS, "GlobalSecondaryIndexes": GSI},
    )["ImportTableDescription"]
    return import_done(ddb, out["ImportArn"])


@pytest.mark.parametrize("fmt", ["DYNAMODB_JSON", "ION"])
def test_export_to_s3_then_import_from_it(ddb: Any, s3: Any, bucket: str, fmt: str) -> None:
    indexed_table(ddb, "src")
    arn = _with_pitr(ddb, "src")
    for i in range(150):
        ddb.put_item(TableName="src", Item=every_type_item(i))
    source = contents(ddb, "src")
    out = ddb.export_table_to_point_in_time(TableArn=arn, S3Bucket=bucket, S3Prefix="exports/run",
                                            ExportFormat=fmt)["ExportDescription"]
    doc = export_done(ddb, out["ExportArn"])
    assert doc["ExportStatus"] == "COMPLETED" and doc["ItemCount"] == 150
    export_id = out["ExportArn"].rsplit("/", 1)[1]
    base = f"exports/run/AWSDynamoDB/{export_id}/"
    assert doc["ExportManifest"] == base + "manifest-summary.json"
    listed = _keys(s3, bucket)
    assert {k for k in listed if not k.startswith(base + "data/")} == {
        base + name for name in ("_started", "manifest-files.json", "manifest-files.md5",
                                 "manifest-summary.json", "manifest-summary.md5")
    }
    summary_raw = _body(s3, bucket, base + "manifest-summary.json")
    summary = json.loads(summary_raw)
    assert (summary["itemCount"], summary["outputFormat"], summary["s3Bucket"]) == (150, fmt, bucket)
    assert summary["manifestFilesS3Key"] == base + "manifest-files.json"
    assert _body(s3, bucket, base + "manifest-summary.md5").decode() == _md5(summary_raw)
    manifest_raw = _body(s3, bucket, base + "manifest-files.json")
    assert _body(s3, bucket, base + "manifest-files.md5").decode() == _md5(manifest_raw)
    files = [json.loads(line) for line in manifest_raw.splitlines()]
    assert sorted(f["dataFileS3Key"] for f in files) == sorted(k for k in listed if k.startswith(base + "data/"))
    suffix = ".ion.gz" if fmt == "ION" else ".json.gz"
    lines = 0
    for entry in files:
        data = _body(s3, bucket, entry["dataFileS3Key"])
        assert entry["dataFileS3Key"].endswith(suffix)
        assert entry["md5Checksum"] == _md5(data)
        assert entry["etag"] == s3.head_object(Bucket=bucket, Key=entry["dataFileS3Key"])["ETag"].strip('"')
        found = gzip.decompress(data).splitlines()
        assert len(found) == entry["itemCount"]
        lines += len(found)
    assert lines == 150

    done = _import(ddb, bucket, base + "data/", "copy", fmt)
    assert (done["ImportStatus"], done["ImportedItemCount"], done["ErrorCount"]) == ("COMPLETED", 150, 0)
    wait_active(ddb, "copy")
    assert scan_all(ddb, "copy") == source[0]
    assert scan_all(ddb, "copy", IndexName="by-g") == source[1]


def test_large_data_file_goes_up_in_parts_with_the_requested_encryption(ddb: Any, s3: Any, bucket: str) -> None:
    """More than S3's 5 MiB part of gzip output: a multipart upload (ETag `...-N`), read back as a stream."""
    ddb.create_table(TableName="big", KeySchema=KEYS, AttributeDefinitions=DEFINITIONS[:2],
                     BillingMode="PAY_PER_REQUEST")
    arn = _with_pitr(ddb, "big")
    blobs = {}
    for i in range(70):
        blob = base64.b64encode(os.urandom(90_000)).decode()  # random: gzip saves only base64's quarter
        blobs[i] = blob
        ddb.put_item(TableName="big", Item={"pk": {"S": f"p{i % 7}"}, "sk": {"N": str(i)}, "blob": {"S": blob}})
    out = ddb.export_table_to_point_in_time(TableArn=arn, S3Bucket=bucket, S3SseAlgorithm="AES256")
    doc = export_done(ddb, out["ExportDescription"]["ExportArn"])
    assert doc["ExportStatus"] == "COMPLETED" and doc["ItemCount"] == 70
    assert doc["S3SseAlgorithm"] == "AES256"
    export_id = doc["ExportArn"].rsplit("/", 1)[1]
    (data_key,) = _keys(s3, bucket, f"AWSDynamoDB/{export_id}/data/")
    head = s3.head_object(Bucket=bucket, Key=data_key)
    assert head["ContentLength"] > 5 * 1024 * 1024
    assert head["ETag"].strip('"').endswith("-2")
    assert head["ServerSideEncryption"] == "AES256"
    summary = s3.head_object(Bucket=bucket, Key=f"AWSDynamoDB/{export_id}/manifest-summary.json")
    assert summary["ServerSideEncryption"] == "AES256"

    ddb.import_table(S3BucketSource={"S3Bucket": bucket, "S3KeyPrefix": f"AWSDynamoDB/{export_id}/data/"},
                     InputFormat="DYNAMODB_JSON", InputCompressionType="GZIP",
                     TableCreationParameters={"TableName": "big-copy", "KeySchema": KEYS,
                                              "BillingMode": "PAY_PER_REQUEST", "AttributeDefinitions": DEFINITIONS[:2]})
    wait_active(ddb, "big-copy")
    copied = scan_all(ddb, "big-copy")
    assert {int(item["sk"]["N"]): item["blob"]["S"] for item in copied} == blobs


def test_export_to_a_missing_bucket_fails_as_dynamodb_reports_it(ddb: Any, s3: Any) -> None:
    ddb.create_table(TableName="src", KeySchema=KEYS, AttributeDefinitions=DEFINITIONS[:2],
                     BillingMode="PAY_PER_REQUEST")
    arn = _with_pitr(ddb, "src")
    ddb.put_item(TableName="src", Item={"pk": {"S": "a"}, "sk": {"N": "1"}})
    out = ddb.export_table_to_point_in_time(TableArn=arn, S3Bucket="no-such-bucket-here")["ExportDescription"]
    assert out["ExportStatus"] == "IN_PROGRESS"  # DynamoDB accepts it, then fails the export
    doc = export_done(ddb, out["ExportArn"])
    assert doc["ExportStatus"] == "FAILED"
    assert (doc["FailureCode"], doc["FailureMessage"]) == ("S3NoSuchBucket", "The specified bucket does not exist")
    assert "EndTime" in doc and "ExportManifest" not in doc
    summaries = ddb.list_exports(TableArn=arn)["ExportSummaries"]
    assert summaries == [{"ExportArn": out["ExportArn"], "ExportStatus": "FAILED", "ExportType": "FULL_EXPORT"}]


def test_import_from_a_missing_bucket_fails_and_leaves_no_table(ddb: Any) -> None:
    done = _import(ddb, "no-such-bucket-here", "", "never")
    assert done["ImportStatus"] == "FAILED"
    assert (done["FailureCode"], done["FailureMessage"]) == ("S3NoSuchBucket", "The specified bucket does not exist")
    assert done["TableArn"].endswith(":table/never")
    assert "never" not in ddb.list_tables()["TableNames"]
    with pytest.raises(ClientError) as excinfo:
        ddb.describe_table(TableName="never")
    assert excinfo.value.response["Error"]["Code"] == "ResourceNotFoundException"


def test_import_reads_only_the_prefix_and_counts_an_unreadable_object(ddb: Any, s3: Any, bucket: str) -> None:
    good = [{"Item": {"pk": {"S": f"p{i}"}, "sk": {"N": str(i)}}} for i in range(3)]
    s3.put_object(Bucket=bucket, Key="in/part-1.json.gz",
                  Body=gzip.compress(b"".join(json.dumps(r).encode() + b"\n" for r in good)))
    s3.put_object(Bucket=bucket, Key="in/part-2.json.gz", Body=b"not gzip at all")
    s3.put_object(Bucket=bucket, Key="other/part-9.json.gz",
                  Body=gzip.compress(json.dumps({"Item": {"pk": {"S": "x"}, "sk": {"N": "9"}}}).encode()))
    done = _import(ddb, bucket, "in/", "imp")
    assert (done["ImportStatus"], done["FailureCode"]) == ("FAILED", "ItemValidationError")  # the table is kept
    assert (done["ProcessedItemCount"], done["ImportedItemCount"], done["ErrorCount"]) == (4, 3, 1)
    wait_active(ddb, "imp")
    assert sorted(i["pk"]["S"] for i in scan_all(ddb, "imp")) == ["p0", "p1", "p2"]


def test_import_from_an_empty_prefix_completes_empty(ddb: Any, bucket: str) -> None:
    """As recorded against DynamoDB by moto's test_import_from_empty_s3_bucket."""
    done = _import(ddb, bucket, "", "empty")
    assert done["ImportStatus"] == "COMPLETED"
    assert (done["ProcessedItemCount"], done["ImportedItemCount"], done["ErrorCount"]) == (0, 0, 0)
    wait_active(ddb, "empty")
    assert ddb.scan(TableName="empty")["Items"] == []
