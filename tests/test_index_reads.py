"""Query and Scan through secondary indexes."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import error_of
from test_indexes import attr, gsi, key

INVALID = "One or more parameter values were invalid: "


@pytest.fixture
def shop(ddb: Any, table_name: str) -> str:
    """Orders keyed by customer/order id, with a GSI by status/amount and an LSI by day."""
    ddb.create_table(
        TableName=table_name,
        KeySchema=[key("customer", "HASH"), key("order", "RANGE")],
        AttributeDefinitions=[attr("customer"), attr("order"), attr("status"), attr("amount", "N"), attr("day")],
        BillingMode="PAY_PER_REQUEST",
        GlobalSecondaryIndexes=[
            gsi("by-status", "status", "amount", "INCLUDE", ["note"]),
            gsi("keys-only", "status", None, "KEYS_ONLY"),
        ],
        LocalSecondaryIndexes=[gsi("by-day", "customer", "day", "KEYS_ONLY")],
    )
    ddb.put_item(TableName=table_name, Item={"customer": {"S": "c1"}, "order": {"S": "o1"}, "status": {"S": "open"},
                                             "amount": {"N": "-5"}, "day": {"S": "2026-01-02"}, "note": {"S": "n1"},
                                             "secret": {"S": "s"}})
    ddb.put_item(TableName=table_name, Item={"customer": {"S": "c2"}, "order": {"S": "o1"}, "status": {"S": "open"},
                                             "amount": {"N": "12.5"}, "day": {"S": "2026-01-01"}})
    ddb.put_item(TableName=table_name, Item={"customer": {"S": "c1"}, "order": {"S": "o2"}, "status": {"S": "open"},
                                             "amount": {"N": "12.5"}, "day": {"S": "2026-01-01"}})
    ddb.put_item(TableName=table_name, Item={"customer": {"S": "c1"}, "order": {"S": "o3"}, "status": {"S": "done"},
                                             "amount": {"N": "100"}})
    ddb.put_item(TableName=table_name, Item={"customer": {"S": "c3"}, "order": {"S": "o9"}})  # in no index
    return table_name


def keys_of(items: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(i["customer"]["S"], i["order"]["S"]) for i in items]


def test_gsi_query_orders_by_index_sort_key(ddb: Any, shop: str) -> None:
    out = ddb.query(TableName=shop, IndexName="by-status", KeyConditionExpression="#s = :s",
                    ExpressionAttributeNames={"#s": "status"}, ExpressionAttributeValues={":s": {"S": "open"}})
    assert [i["amount"]["N"] for i in out["Items"]] == ["-5", "12.5", "12.5"]
    assert out["Items"][0] == {"customer": {"S": "c1"}, "order": {"S": "o1"}, "status": {"S": "open"},
                               "amount": {"N": "-5"}, "note": {"S": "n1"}}
    assert out["Count"] == 3 and out["ScannedCount"] == 3
    backwards = ddb.query(TableName=shop, IndexName="by-status", KeyConditionExpression="#s = :s AND amount > :a",
                          ExpressionAttributeNames={"#s": "status"}, ScanIndexForward=False,
                          ExpressionAttributeValues={":s": {"S": "open"}, ":a": {"N": "0"}})
    assert sorted(keys_of(backwards["Items"])) == [("c1", "o2"), ("c2", "o1")]


def test_gsi_pagination_keys_include_table_and_index_key(ddb: Any, shop: str) -> None:
    seen = []
    start = None
    while True:
        params: dict[str, Any] = dict(TableName=shop, IndexName="by-status", Limit=1,
                                      KeyConditionExpression="#s = :s", ExpressionAttributeNames={"#s": "status"},
                                      ExpressionAttributeValues={":s": {"S": "open"}})
        if start is not None:
            params["ExclusiveStartKey"] = start
        out = ddb.query(**params)
        seen += keys_of(out["Items"])
        start = out.get("LastEvaluatedKey")
        if start is None:
            break
        assert set(start) == {"customer", "order", "status", "amount"}
    assert sorted(seen) == [("c1", "o1"), ("c1", "o2"), ("c2", "o1")]
    assert len(seen) == 3


def test_keys_only_gsi(ddb: Any, shop: str) -> None:
    out = ddb.query(TableName=shop, IndexName="keys-only", KeyConditionExpression="#s = :s",
                    ExpressionAttributeNames={"#s": "status"}, ExpressionAttributeValues={":s": {"S": "done"}})
    assert out["Items"] == [{"customer": {"S": "c1"}, "order": {"S": "o3"}, "status": {"S": "done"}}]


def test_gsi_rules(ddb: Any, shop: str) -> None:
    base = dict(TableName=shop, IndexName="by-status", KeyConditionExpression="#s = :s",
                ExpressionAttributeNames={"#s": "status"}, ExpressionAttributeValues={":s": {"S": "open"}})
    with pytest.raises(ClientError) as excinfo:
        ddb.query(**base, ConsistentRead=True)
    assert error_of(excinfo) == ("ValidationException", "Consistent reads are not supported on global secondary indexes")
    with pytest.raises(ClientError) as excinfo:
        ddb.query(**base, Select="ALL_ATTRIBUTES")
    assert error_of(excinfo) == (
        "ValidationException",
        f"{INVALID}Select type ALL_ATTRIBUTES is not supported for global secondary index by-status because its "
        "projection type is not ALL",
    )
    with pytest.raises(ClientError) as excinfo:
        ddb.query(**{**base, "ExpressionAttributeNames": {"#s": "status", "#x": "secret"}}, ProjectionExpression="#x")
    assert error_of(excinfo) == (
        "ValidationException", f"{INVALID}Global secondary index by-status does not project [secret]"
    )
    with pytest.raises(ClientError) as excinfo:
        ddb.query(**{**base, "IndexName": "nope"})
    assert error_of(excinfo) == ("ValidationException", "The table does not have the specified index: nope")


def test_lsi_fetches_unprojected_attributes_from_table(ddb: Any, shop: str) -> None:
    base = dict(TableName=shop, IndexName="by-day", KeyConditionExpression="customer = :c",
                ExpressionAttributeValues={":c": {"S": "c1"}}, ReturnConsumedCapacity="INDEXES")
    projected = ddb.query(**base)
    # o3 has no day: it is not in the LSI. Order is by day, then table key.
    assert keys_of(projected["Items"]) == [("c1", "o2"), ("c1", "o1")]
    assert projected["Items"][0] == {"customer": {"S": "c1"}, "order": {"S": "o2"}, "day": {"S": "2026-01-01"}}
    assert projected["ConsumedCapacity"] == {"TableName": shop, "CapacityUnits": 0.5, "Table": {"CapacityUnits": 0.0},
                                             "LocalSecondaryIndexes": {"by-day": {"CapacityUnits": 0.5}}}
    full = ddb.query(**base, Select="ALL_ATTRIBUTES", ConsistentRead=True)
    assert full["Items"][1]["secret"] == {"S": "s"}
    # Two items fetched from the table at 1 unit each (strong), plus 1 unit for the index page.
    assert full["ConsumedCapacity"] == {"TableName": shop, "CapacityUnits": 3.0, "Table": {"CapacityUnits": 2.0},
                                        "LocalSecondaryIndexes": {"by-day": {"CapacityUnits": 1.0}}}


def test_scan_index_returns_only_indexed_items(ddb: Any, shop: str) -> None:
    out = ddb.scan(TableName=shop, IndexName="by-status")
    assert sorted(keys_of(out["Items"])) == [("c1", "o1"), ("c1", "o2"), ("c1", "o3"), ("c2", "o1")]
    assert ddb.scan(TableName=shop, IndexName="by-day", Select="COUNT")["Count"] == 3
    segments = [
        keys_of(ddb.scan(TableName=shop, IndexName="by-status", Segment=s, TotalSegments=3)["Items"]) for s in range(3)
    ]
    assert sorted(k for seg in segments for k in seg) == sorted(keys_of(out["Items"]))


def test_index_follows_updates_and_deletes(ddb: Any, shop: str) -> None:
    ddb.update_item(TableName=shop, Key={"customer": {"S": "c1"}, "order": {"S": "o1"}},
                    UpdateExpression="SET #s = :d", ExpressionAttributeNames={"#s": "status"},
                    ExpressionAttributeValues={":d": {"S": "done"}})
    ddb.delete_item(TableName=shop, Key={"customer": {"S": "c2"}, "order": {"S": "o1"}})
    out = ddb.query(TableName=shop, IndexName="keys-only", KeyConditionExpression="#s = :s",
                    ExpressionAttributeNames={"#s": "status"}, ExpressionAttributeValues={":s": {"S": "open"}})
    assert keys_of(out["Items"]) == [("c1", "o2")]
    out = ddb.query(TableName=shop, IndexName="keys-only", KeyConditionExpression="#s = :s",
                    ExpressionAttributeNames={"#s": "status"}, ExpressionAttributeValues={":s": {"S": "done"}})
    assert sorted(keys_of(out["Items"])) == [("c1", "o1"), ("c1", "o3")]


def test_string_index_sort_key_order_and_begins_with(ddb: Any, table_name: str) -> None:
    ddb.create_table(TableName=table_name, KeySchema=[key("pk", "HASH")],
                     AttributeDefinitions=[attr("pk"), attr("g"), attr("s")], BillingMode="PAY_PER_REQUEST",
                     GlobalSecondaryIndexes=[gsi("g-s", "g", "s")])
    values = ["a", "ab", "a\x00", "a\x01z", "b", "\u00e9", "A"]
    for i, v in enumerate(values):
        ddb.put_item(TableName=table_name, Item={"pk": {"S": f"k{i}"}, "g": {"S": "x"}, "s": {"S": v}})
    out = ddb.query(TableName=table_name, IndexName="g-s", KeyConditionExpression="g = :g",
                    ExpressionAttributeValues={":g": {"S": "x"}})
    assert [i["s"]["S"] for i in out["Items"]] == sorted(values, key=lambda v: v.encode())
    out = ddb.query(TableName=table_name, IndexName="g-s", KeyConditionExpression="g = :g AND begins_with(s, :p)",
                    ExpressionAttributeValues={":g": {"S": "x"}, ":p": {"S": "a"}})
    assert [i["s"]["S"] for i in out["Items"]] == ["a", "a\x00", "a\x01z", "ab"]
    out = ddb.query(TableName=table_name, IndexName="g-s", KeyConditionExpression="g = :g AND s <= :p",
                    ExpressionAttributeValues={":g": {"S": "x"}, ":p": {"S": "a"}})
    assert [i["s"]["S"] for i in out["Items"]] == ["A", "a"]
    out = ddb.query(TableName=table_name, IndexName="g-s", KeyConditionExpression="g = :g AND s = :p",
                    ExpressionAttributeValues={":g": {"S": "x"}, ":p": {"S": "a"}})
    assert [i["s"]["S"] for i in out["Items"]] == ["a"]
