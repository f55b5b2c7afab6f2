"""Secondary indexes: declaration, description, maintenance, online changes."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import error_of

INVALID = "One or more parameter values were invalid: "


def key(name: str, kind: str) -> dict[str, str]:
    return {"AttributeName": name, "KeyType": kind}


def attr(name: str, kind: str = "S") -> dict[str, str]:
    return {"AttributeName": name, "AttributeType": kind}


def gsi(name: str, hash_key: str, range_key: str | None = None, projection: str = "ALL",
        non_key: list[str] | None = None) -> dict[str, Any]:
    schema = [key(hash_key, "HASH")] + ([key(range_key, "RANGE")] if range_key else [])
    proj: dict[str, Any] = {"ProjectionType": projection}
    if non_key is not None:
        proj["NonKeyAttributes"] = non_key
    return {"IndexName": name, "KeySchema": schema, "Projection": proj}


def lsi(name: str, range_key: str, projection: str = "ALL", non_key: list[str] | None = None) -> dict[str, Any]:
    return gsi(name, "pk", range_key, projection, non_key)


def create_indexed(ddb: Any, name: str, **extra: Any) -> dict[str, Any]:
    extra.setdefault("BillingMode", "PAY_PER_REQUEST")
    return ddb.create_table(
        TableName=name,
        KeySchema=[key("pk", "HASH"), key("sk", "RANGE")],
        AttributeDefinitions=extra.pop("AttributeDefinitions", [attr("pk"), attr("sk"), attr("g"), attr("l", "N")]),
        **extra,
    )


@pytest.fixture
def indexed(ddb: Any, table_name: str) -> str:
    create_indexed(
        ddb, table_name,
        GlobalSecondaryIndexes=[gsi("by-g", "g", "sk", "INCLUDE", ["x"])],
        LocalSecondaryIndexes=[lsi("by-l", "l", "KEYS_ONLY")],
    )
    return table_name


def test_describe_reports_indexes(ddb: Any, indexed: str) -> None:
    table = ddb.describe_table(TableName=indexed)["Table"]
    arn = table["TableArn"]
    (g,) = table["GlobalSecondaryIndexes"]
    assert g == {
        "IndexName": "by-g",
        "KeySchema": [key("g", "HASH"), key("sk", "RANGE")],
        "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["x"]},
        "IndexStatus": "ACTIVE",
        "ProvisionedThroughput": {"NumberOfDecreasesToday": 0, "ReadCapacityUnits": 0, "WriteCapacityUnits": 0},
        "WarmThroughput": {"ReadUnitsPerSecond": 12000, "WriteUnitsPerSecond": 4000, "Status": "ACTIVE"},
        "IndexSizeBytes": 0,
        "ItemCount": 0,
        "IndexArn": f"{arn}/index/by-g",
    }
    (loc,) = table["LocalSecondaryIndexes"]
    assert loc == {
        "IndexName": "by-l",
        "KeySchema": [key("pk", "HASH"), key("l", "RANGE")],
        "Projection": {"ProjectionType": "KEYS_ONLY"},
        "IndexSizeBytes": 0,
        "ItemCount": 0,
        "IndexArn": f"{arn}/index/by-l",
    }


def test_index_counts_follow_writes_and_sparseness(ddb: Any, indexed: str) -> None:
    ddb.put_item(TableName=indexed, Item={"pk": {"S": "a"}, "sk": {"S": "1"}, "g": {"S": "G"}, "x": {"S": "xx"},
                                         "y": {"S": "not projected"}})
    ddb.put_item(TableName=indexed, Item={"pk": {"S": "a"}, "sk": {"S": "2"}, "l": {"N": "5"}})
    ddb.put_item(TableName=indexed, Item={"pk": {"S": "a"}, "sk": {"S": "3"}})
    table = ddb.describe_table(TableName=indexed)["Table"]
    assert table["ItemCount"] == 3
    g = table["GlobalSecondaryIndexes"][0]
    loc = table["LocalSecondaryIndexes"][0]
    assert (g["ItemCount"], loc["ItemCount"]) == (1, 1)
    # The GSI entry holds keys and x only: pk(2+1) sk(2+1) g(1+1) x(1+2) = 11 bytes.
    assert g["IndexSizeBytes"] == 11
    ddb.delete_item(TableName=indexed, Key={"pk": {"S": "a"}, "sk": {"S": "1"}})
    ddb.update_item(TableName=indexed, Key={"pk": {"S": "a"}, "sk": {"S": "2"}}, UpdateExpression="REMOVE l")
    table = ddb.describe_table(TableName=indexed)["Table"]
    assert table["GlobalSecondaryIndexes"][0]["ItemCount"] == 0
    assert table["LocalSecondaryIndexes"][0]["ItemCount"] == 0


def test_index_key_type_and_empty_values_rejected(ddb: Any, indexed: str) -> None:
    item = {"pk": {"S": "a"}, "sk": {"S": "1"}}
    with pytest.raises(ClientError) as excinfo:
        ddb.put_item(TableName=indexed, Item={**item, "g": {"N": "1"}})
    assert error_of(excinfo) == (
        "ValidationException",
        f"{INVALID}Type mismatch for Index Key g Expected: S Actual: N IndexName: by-g",
    )
    with pytest.raises(ClientError) as excinfo:
        ddb.put_item(TableName=indexed, Item={**item, "g": {"S": ""}})
    assert error_of(excinfo) == (
        "ValidationException",
        "One or more parameter values are not valid. A value specified for a secondary index key is not "
        "supported. The AttributeValue for a key attribute cannot contain an empty string value. "
        "IndexName: by-g, IndexKey: g",
    )
    assert "Item" not in ddb.get_item(TableName=indexed, Key=item)


def test_index_write_capacity(ddb: Any, indexed: str) -> None:
    item = {"pk": {"S": "a"}, "sk": {"S": "1"}, "g": {"S": "G"}, "l": {"N": "1"}}
    out = ddb.put_item(TableName=indexed, Item=item, ReturnConsumedCapacity="INDEXES")
    assert out["ConsumedCapacity"] == {
        "TableName": indexed,
        "CapacityUnits": 3.0,
        "Table": {"CapacityUnits": 1.0},
        "LocalSecondaryIndexes": {"by-l": {"CapacityUnits": 1.0}},
        "GlobalSecondaryIndexes": {"by-g": {"CapacityUnits": 1.0}},
    }
    # Changing the GSI key: delete + put in the GSI (2), LSI entry unchanged (0).
    out = ddb.put_item(TableName=indexed, Item={**item, "g": {"S": "H"}}, ReturnConsumedCapacity="INDEXES")
    assert out["ConsumedCapacity"] == {
        "TableName": indexed,
        "CapacityUnits": 3.0,
        "Table": {"CapacityUnits": 1.0},
        "GlobalSecondaryIndexes": {"by-g": {"CapacityUnits": 2.0}},
    }
    # A non-projected attribute changes nothing in either index.
    out = ddb.put_item(TableName=indexed, Item={**item, "g": {"S": "H"}, "z": {"S": "z"}},
                       ReturnConsumedCapacity="TOTAL")
    assert out["ConsumedCapacity"] == {"TableName": indexed, "CapacityUnits": 1.0}


CREATE_ERRORS = [
    (
        dict(LocalSecondaryIndexes=[lsi("ix1", "l")]),
        dict(KeySchema=[key("pk", "HASH")], AttributeDefinitions=[attr("pk"), attr("l", "N")]),
        f"{INVALID}Table KeySchema does not have a range key, which is required when specifying a LocalSecondaryIndex",
    ),
    (
        dict(GlobalSecondaryIndexes=[gsi("ix1", "nope")]),
        {},
        f"{INVALID}Some index key attributes are not defined in AttributeDefinitions. Keys: [nope], "
        "AttributeDefinitions: [pk, sk, g, l]",
    ),
    (
        dict(GlobalSecondaryIndexes=[gsi("ix1", "g", projection="ALL", non_key=["a"])]),
        dict(AttributeDefinitions=[attr("pk"), attr("sk"), attr("g")]),
        f"{INVALID}ProjectionType is ALL, but NonKeyAttributes is specified",
    ),
    (
        dict(GlobalSecondaryIndexes=[gsi("ix1", "g"), gsi("ix1", "g")]),
        dict(AttributeDefinitions=[attr("pk"), attr("sk"), attr("g")]),
        f"{INVALID}Duplicate index name: ix1",
    ),
    (
        dict(GlobalSecondaryIndexes=[gsi("ix1", "g")]),
        {},
        f"{INVALID}Some AttributeDefinitions are not used. AttributeDefinitions: [pk, sk, g, l], keys used: [g, pk, sk]",
    ),
    (
        dict(LocalSecondaryIndexes=[gsi("ix1", "g", "l")]),
        {},
        f"{INVALID}Index KeySchema does not have the same leading hash key as table KeySchema for index: ix1. "
        "index hash key: g, table hash key: pk",
    ),
    (
        dict(LocalSecondaryIndexes=[lsi(f"ix{i}", "l") for i in range(6)]),
        dict(AttributeDefinitions=[attr("pk"), attr("sk"), attr("l", "N")]),
        f"{INVALID}Number of LocalSecondaryIndexes exceeds per-table limit of 5",
    ),
    (
        dict(GlobalSecondaryIndexes=[gsi("ix1", "g")], BillingMode="PROVISIONED",
             ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}),
        dict(AttributeDefinitions=[attr("pk"), attr("sk"), attr("g")]),
        f"{INVALID}ProvisionedThroughput is not specified for index: ix1",
    ),
]


@pytest.mark.parametrize(("indexes", "overrides", "message"), CREATE_ERRORS)
def test_create_table_index_errors(ddb: Any, table_name: str, indexes: dict[str, Any],
                                   overrides: dict[str, Any], message: str) -> None:
    params: dict[str, Any] = {
        "TableName": table_name,
        "KeySchema": [key("pk", "HASH"), key("sk", "RANGE")],
        "AttributeDefinitions": [attr("pk"), attr("sk"), attr("g"), attr("l", "N")],
        "BillingMode": "PAY_PER_REQUEST",
        **indexes,
        **overrides,
    }
    with pytest.raises(ClientError) as excinfo:
        ddb.create_table(**params)
    assert error_of(excinfo) == ("ValidationException", message)


def wait_index(ddb: Any, table: str, index: str, gone: bool = False) -> dict[str, Any] | None:
    deadline = time.monotonic() + 120  # generous: a loaded CI machine starves the backfill thread
    while time.monotonic() < deadline:
        docs = ddb.describe_table(TableName=table)["Table"].get("GlobalSecondaryIndexes", [])
        doc = next((d for d in docs if d["IndexName"] == index), None)
        if gone and doc is None:
            return None
        if not gone and doc is not None and doc["IndexStatus"] == "ACTIVE":
            return doc
        time.sleep(0.05)
    raise AssertionError(f"index {index} did not settle")


def _scan_all(ddb: Any, **params: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for page in ddb.get_paginator("scan").paginate(**params):
        items += page["Items"]
    return items


def test_online_create_backfills_while_writes_continue(ddb: Any, endpoint: str, table_name: str) -> None:
    from conftest import client_for

    ddb.create_table(TableName=table_name, KeySchema=[key("pk", "HASH")], AttributeDefinitions=[attr("pk")],
                     BillingMode="PAY_PER_REQUEST")
    for i in range(3000):
        item = {"pk": {"S": f"k{i}"}}
        if i % 3 == 0:
            item["color"] = {"S": f"c{i % 7}"}
        ddb.put_item(TableName=table_name, Item=item)
    stop = threading.Event()
    written: list[int] = []

    def writer() -> None:
        client = client_for(endpoint)
        n = 3000
        while not stop.is_set():
            # Overwrite old items (some enter the index, some leave it) and add new ones.
            client.put_item(TableName=table_name, Item={"pk": {"S": f"k{n % 3600}"}, "color": {"S": "late"}})
            client.delete_item(TableName=table_name, Key={"pk": {"S": f"k{(n * 7) % 3000}"}})
            written.append(n)
            n += 1

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        out = ddb.update_table(
            TableName=table_name,
            AttributeDefinitions=[attr("color")],
            GlobalSecondaryIndexUpdates=[{"Create": gsi("by-color", "color")}],
        )["TableDescription"]
        assert out["TableStatus"] == "UPDATING"
        (created,) = out["GlobalSecondaryIndexes"]
        assert created["IndexStatus"] == "CREATING"
        assert created["Backfilling"] is True
        doc = wait_index(ddb, table_name, "by-color")
        assert doc is not None and "Backfilling" not in doc
    finally:
        stop.set()
        thread.join(30)
    assert written, "the writer made no progress during the backfill"
    table_items = _scan_all(ddb, TableName=table_name, ConsistentRead=True)
    expected = sorted(i["pk"]["S"] for i in table_items if "color" in i)
    indexed = sorted(i["pk"]["S"] for i in _scan_all(ddb, TableName=table_name, IndexName="by-color"))
    assert indexed == expected
    described = ddb.describe_table(TableName=table_name)["Table"]["GlobalSecondaryIndexes"][0]
    assert described["ItemCount"] == len(expected)


def test_online_create_and_delete_errors(ddb: Any, table_name: str) -> None:
    ddb.create_table(TableName=table_name, KeySchema=[key("pk", "HASH")], AttributeDefinitions=[attr("pk")],
                     BillingMode="PAY_PER_REQUEST")
    for i in range(30):
        ddb.put_item(TableName=table_name, Item={"pk": {"S": f"k{i}"}, "color": {"S": "red"}})
    ddb.update_table(TableName=table_name, AttributeDefinitions=[attr("color")],
                     GlobalSecondaryIndexUpdates=[{"Create": gsi("by-color", "color")}])
    wait_index(ddb, table_name, "by-color")
    with pytest.raises(ClientError) as excinfo:
        ddb.update_table(TableName=table_name, AttributeDefinitions=[attr("color")],
                         GlobalSecondaryIndexUpdates=[{"Create": gsi("by-color", "color")}])
    assert error_of(excinfo) == ("ValidationException", "Attempting to create an index which already exists")

    out = ddb.update_table(TableName=table_name, GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "by-color"}}])
    assert out["TableDescription"]["GlobalSecondaryIndexes"][0]["IndexStatus"] == "DELETING"
    wait_index(ddb, table_name, "by-color", gone=True)
    assert ddb.describe_table(TableName=table_name)["Table"]["ItemCount"] == 30
    with pytest.raises(ClientError) as excinfo:
        ddb.query(TableName=table_name, IndexName="by-color", KeyConditionExpression="color = :c",
                  ExpressionAttributeValues={":c": {"S": "red"}})
    assert error_of(excinfo) == ("ValidationException", "The table does not have the specified index: by-color")


def test_update_table_errors(ddb: Any, indexed: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        ddb.update_table(TableName=indexed, GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "nope"}}])
    assert error_of(excinfo) == ("ResourceNotFoundException", "Requested resource not found: Index: nope not found")
    with pytest.raises(ClientError) as excinfo:
        ddb.update_table(
            TableName=indexed, AttributeDefinitions=[attr("h"), attr("i")],
            GlobalSecondaryIndexUpdates=[{"Create": gsi("ix-h", "h")}, {"Create": gsi("ix-i", "i")}],
        )
    assert error_of(excinfo) == (
        "LimitExceededException",
        "Subscriber limit exceeded: Only 1 online index can be created or deleted simultaneously per table",
    )
    with pytest.raises(ClientError) as excinfo:
        ddb.update_table(TableName=indexed, AttributeDefinitions=[attr("h")],
                         GlobalSecondaryIndexUpdates=[{"Create": gsi("ix-h", "zzz")}])
    assert error_of(excinfo) == (
        "ValidationException",
        f"{INVALID}Some index key attributes are not defined in AttributeDefinitions. Keys: [zzz], "
        "AttributeDefinitions: [h]",
    )
    with pytest.raises(ClientError) as excinfo:
        ddb.update_table(TableName=indexed)
    assert error_of(excinfo)[1].startswith("At least one of ProvisionedThroughput, BillingMode")


def test_update_table_billing_and_protection(ddb: Any, table_name: str) -> None:
    ddb.create_table(TableName=table_name, KeySchema=[key("pk", "HASH")], AttributeDefinitions=[attr("pk")],
                     BillingMode="PAY_PER_REQUEST")
    out = ddb.update_table(TableName=table_name, BillingMode="PROVISIONED",
                           ProvisionedThroughput={"ReadCapacityUnits": 3, "WriteCapacityUnits": 4})
    desc = out["TableDescription"]
    assert desc["BillingModeSummary"]["BillingMode"] == "PROVISIONED"
    assert desc["ProvisionedThroughput"]["ReadCapacityUnits"] == 3
    with pytest.raises(ClientError) as excinfo:
        ddb.update_table(TableName=table_name, ProvisionedThroughput={"ReadCapacityUnits": 3, "WriteCapacityUnits": 4})
    assert error_of(excinfo)[1].startswith("The provisioned throughput for the table will not change.")
    ddb.update_table(TableName=table_name, DeletionProtectionEnabled=True)
    with pytest.raises(ClientError) as excinfo:
        ddb.delete_table(TableName=table_name)
    assert error_of(excinfo)[0] == "ValidationException"
    ddb.update_table(TableName=table_name, DeletionProtectionEnabled=False)
    ddb.delete_table(TableName=table_name)


def test_online_create_with_two_workers(start_server: Any, tmp_path: Any) -> None:
    """Index jobs run in one worker at a time and finish whichever worker took the UpdateTable."""
    from conftest import client_for

    server = start_server("--workers", "2", "--data-dir", str(tmp_path / "data"))
    ddb = client_for(server.url)
    ddb.create_table(TableName="two", KeySchema=[key("pk", "HASH")], AttributeDefinitions=[attr("pk")],
                     BillingMode="PAY_PER_REQUEST")
    for start in range(0, 1200, 25):
        ddb.batch_write_item(RequestItems={"two": [
            {"PutRequest": {"Item": {"pk": {"S": f"k{i}"}, "c": {"S": f"c{i % 3}"}}}} for i in range(start, start + 25)
        ]})
    client_for(server.url).update_table(TableName="two", AttributeDefinitions=[attr("c")],
                                        GlobalSecondaryIndexUpdates=[{"Create": gsi("by-c", "c")}])
    doc = wait_index(client_for(server.url), "two", "by-c")
    assert doc is not None
    counts = [
        client_for(server.url).query(TableName="two", IndexName="by-c", KeyConditionExpression="c = :c",
                                     ExpressionAttributeValues={":c": {"S": f"c{n}"}}, Select="COUNT")["Count"]
        for n in range(3)
    ]
    assert counts == [400, 400, 400]


def test_update_table_streams_and_encryption(ddb: Any, table_name: str) -> None:
    ddb.create_table(TableName=table_name, KeySchema=[key("pk", "HASH")], AttributeDefinitions=[attr("pk")],
                     BillingMode="PAY_PER_REQUEST")
    with pytest.raises(ClientError) as excinfo:
        ddb.update_table(TableName=table_name, StreamSpecification={"StreamEnabled": False})
    assert error_of(excinfo) == ("ValidationException", f"Table has no stream to disable: TableName: {table_name}")
    out = ddb.update_table(TableName=table_name,
                           StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"})
    desc = out["TableDescription"]
    assert desc["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
    assert desc["LatestStreamArn"].startswith(desc["TableArn"] + "/stream/")
    with pytest.raises(ClientError) as excinfo:
        ddb.update_table(TableName=table_name, StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})
    assert error_of(excinfo) == ("ValidationException", f"Table already has an enabled stream: TableName: {table_name}")
    ddb.update_table(TableName=table_name, StreamSpecification={"StreamEnabled": False})
    assert "StreamSpecification" not in ddb.describe_table(TableName=table_name)["Table"]
    ddb.update_table(TableName=table_name, SSESpecification={"Enabled": True})
    assert ddb.describe_table(TableName=table_name)["Table"]["SSEDescription"]["Status"] == "ENABLED"
