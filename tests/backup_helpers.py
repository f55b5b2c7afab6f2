"""Helpers shared by the backup, point-in-time and export/import tests."""

from __future__ import annotations

import time
from decimal import Decimal
from typing import Any


def wait_for(check: Any, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.05)


def export_done(ddb: Any, arn: str) -> dict[str, Any]:
    """DescribeExport once the export has left IN_PROGRESS."""

    def done() -> dict[str, Any] | None:
        doc = ddb.describe_export(ExportArn=arn)["ExportDescription"]
        return doc if doc["ExportStatus"] != "IN_PROGRESS" else None

    result: dict[str, Any] = wait_for(done, 120)
    return result


def import_done(ddb: Any, arn: str) -> dict[str, Any]:
    """DescribeImport once the import has left IN_PROGRESS."""

    def done() -> dict[str, Any] | None:
        doc = ddb.describe_import(ImportArn=arn)["ImportTableDescription"]
        return doc if doc["ImportStatus"] != "IN_PROGRESS" else None

    result: dict[str, Any] = wait_for(done, 120)
    return result


def wait_active(ddb: Any, name: str) -> dict[str, Any]:
    def active() -> dict[str, Any] | None:
        table = ddb.describe_table(TableName=name)["Table"]
        return table if table["TableStatus"] == "ACTIVE" else None

    result: dict[str, Any] = wait_for(active)
    return result


def wait_backup(ddb: Any, arn: str) -> dict[str, Any]:
    def available() -> dict[str, Any] | None:
        doc = ddb.describe_backup(BackupArn=arn)["BackupDescription"]
        return doc if doc["BackupDetails"]["BackupStatus"] == "AVAILABLE" else None

    result: dict[str, Any] = wait_for(available)
    return result


def indexed_table(ddb: Any, name: str, **extra: Any) -> None:
    """pk/sk table with a GSI on (g, sk) and an LSI on (pk, l)."""
    extra.setdefault("BillingMode", "PAY_PER_REQUEST")
    ddb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "N"},
            {"AttributeName": "g", "AttributeType": "S"},
            {"AttributeName": "l", "AttributeType": "B"},
        ],
        GlobalSecondaryIndexes=[{
            "IndexName": "by-g",
            "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"},
        }],
        LocalSecondaryIndexes=[{
            "IndexName": "by-l",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "l", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"},
        }],
        **extra,
    )


def every_type_item(i: int) -> dict[str, Any]:
    """An item with every attribute type (and index keys on most items: the indexes are sparse)."""
    item: dict[str, Any] = {
        "pk": {"S": f"p{i % 7}"},
        "sk": {"N": str(i)},
        "s": {"S": f"text {i} é"},
        "n": {"N": str(Decimal(i) / 4)},
        "b": {"B": bytes([i % 256, 0, 255])},
        "t": {"BOOL": i % 2 == 0},
        "z": {"NULL": True},
        "l": {"B": bytes([i % 5])},
        "list": {"L": [{"S": "a"}, {"N": "1"}, {"M": {"x": {"SS": ["u", "v"]}}}]},
        "map": {"M": {"deep": {"L": [{"NS": ["1", "2.5"]}]}, "bs": {"BS": [b"\x01", b"\x02"]}}},
        "ss": {"SS": ["a", "b"]},
        "ns": {"NS": ["1", "-3"]},
        "bs": {"BS": [b"x", b"y"]},
    }
    if i % 3:
        item["g"] = {"S": f"g{i % 4}"}
    return item


def scan_all(ddb: Any, name: str, **extra: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {"TableName": name, **extra}
    while True:
        page = ddb.scan(**kwargs)
        items.extend(page["Items"])
        if "LastEvaluatedKey" not in page:
            return sorted(items, key=lambda it: (it["pk"]["S"], Decimal(it["sk"]["N"])))
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def contents(ddb: Any, name: str) -> tuple[list[Any], list[Any], list[Any]]:
    """The table's items, its GSI's and its LSI's entries: what a restore must reproduce."""
    return scan_all(ddb, name), scan_all(ddb, name, IndexName="by-g"), scan_all(ddb, name, IndexName="by-l")
