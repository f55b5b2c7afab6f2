"""Helpers of the bulk put tests: input objects under --s3-dir, waiting for an operation, the report."""

from __future__ import annotations

import gzip
import json
import urllib.request
from pathlib import Path
from typing import Any

import zstandard
from backup_helpers import wait_for


def json_line(item: dict[str, Any], **extra: Any) -> str:
    return json.dumps({"Item": item, **extra})


def write_object(root: Path, bucket: str, key: str, lines: list[str], compression: str = "NONE") -> int:
    """Write one input object; its size in bytes."""
    data = ("\n".join(lines) + "\n").encode()
    if compression == "GZIP":
        data = gzip.compress(data)
    elif compression == "ZSTD":
        data = zstandard.ZstdCompressor().compress(data)
    path = root / bucket / key
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return len(data)


def start(ddb: Any, table: str, prefix: str = "in/", fmt: str = "DYNAMODB_JSON", compression: str | None = None,
          outputs: tuple[str, ...] = ("ERROR", "CONDITION_CHECK_FAILURE"), **extra: Any) -> str:
    source: dict[str, Any] = {"S3Bucket": "input", "S3KeyPrefix": prefix, "InputFormat": fmt}
    if compression is not None:
        source["InputCompressionType"] = compression
    out = ddb.start_bulk_put_items(TableName=table, InputS3Configuration=source,
                                   OutputS3Configuration={"S3Bucket": "output", "S3KeyPrefix": "reports",
                                                          "OutputType": list(outputs)}, **extra)
    arn: str = out["BulkOperationDescription"]["BulkOperationArn"]
    return arn


def finished(ddb: Any, arn: str, timeout: float = 120) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        doc = ddb.describe_bulk_operation(BulkOperationArn=arn)["BulkOperationDescription"]
        return None if doc["BulkOperationStatus"] in ("IN_PROGRESS", "CANCELLING") else doc

    result: dict[str, Any] = wait_for(done, timeout)
    return result


def report_lines(root: Path, arn: str, kind: str) -> list[dict[str, Any]]:
    """Every line of the report's `kind` (errors, condition-check-failures) parts, in part order."""
    folder = root / "output" / "reports" / "AWSDynamoDB" / arn.rsplit("/", 1)[1] / kind
    if not folder.is_dir():
        return []
    return [json.loads(line) for part in sorted(folder.iterdir()) for line in part.read_text().splitlines()]


def server_now(url: str) -> float:
    """The server clock (GET /partita/v1/clock)."""
    with urllib.request.urlopen(url + "/partita/v1/clock", timeout=10) as response:
        now: float = json.loads(response.read())["now"]
        return now
