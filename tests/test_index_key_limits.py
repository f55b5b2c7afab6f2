"""Index keys obey DynamoDB's key size limits: 2048 bytes for a partition key, 1024 for a sort key.

A write is refused when it would put a larger value into an index key; a
backfill meets such values in items written before the index existed and
skips those items (they stay in the table), as ScyllaDB's Alternator tests
record of DynamoDB (test_gsi_backfill_oversized_key, test_gsi_backfill_key_limits).
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import error_of
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

INVALID = "One or more parameter values were invalid: "


def key(name: str, kind: str) -> dict[str, str]:
    return {"AttributeName": name, "KeyType": kind}


def attr(name: str, kind: str = "S") -> dict[str, str]:
    return {"AttributeName": name, "AttributeType": kind}


def _gsi(name: str, *elements: tuple[str, str]) -> dict[str, Any]:
    return {"IndexName": name, "KeySchema": [key(n, k) for n, k in elements], "Projection": {"ProjectionType": "ALL"}}


def _wait_active(ddb: Any, table: str, index: str) -> dict[str, Any]:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        docs = ddb.describe_table(TableName=table)["Table"].get("GlobalSecondaryIndexes", [])
        doc = next(d for d in docs if d["IndexName"] == index)
        if doc["IndexStatus"] == "ACTIVE":
            return doc
        time.sleep(0.05)
    raise AssertionError(f"index {index} did not become ACTIVE")


def _add_gsi(ddb: Any, table: str, definitions: list[dict[str, str]], index: dict[str, Any]) -> dict[str, Any]:
    ddb.update_table(TableName=table, AttributeDefinitions=definitions,
                     GlobalSecondaryIndexUpdates=[{"Create": index}])
    return _wait_active(ddb, table, index["IndexName"])


def _scan(ddb: Any, table: str, **extra: Any) -> list[dict[str, Any]]:
    return [i for page in ddb.get_paginator("scan").paginate(TableName=table, **extra) for i in page["Items"]]


def _table(ddb: Any, name: str, **extra: Any) -> None:
    ddb.create_table(TableName=name, KeySchema=[key("p", "HASH"), key("c", "RANGE")],
                     AttributeDefinitions=extra.pop("AttributeDefinitions", [attr("p"), attr("c")]),
                     BillingMode="PAY_PER_REQUEST", **extra)


def test_backfill_skips_items_whose_key_is_too_large(ddb: Any, table_name: str) -> None:
    _table(ddb, table_name)
    lengths = [1024, 1025, 2048, 2049, 66500]
    for n in lengths:
        ddb.put_item(TableName=table_name, Item={"p": {"S": f"p{n}"}, "c": {"S": "c"}, "x": {"S": "a" * n}})
    index1 = _add_gsi(ddb, table_name, [attr("x")], _gsi("index1", ("x", "HASH")))
    index2 = _add_gsi(ddb, table_name, [attr("x"), attr("c")], _gsi("index2", ("c", "HASH"), ("x", "RANGE")))
    assert sorted(len(i["x"]["S"]) for i in _scan(ddb, table_name, IndexName="index1")) == [1024, 1025, 2048]
    assert [len(i["x"]["S"]) for i in _scan(ddb, table_name, IndexName="index2")] == [1024]
    assert (index1["ItemCount"], index2["ItemCount"]) == (3, 1)
    # Every item stays in the table.
    assert sorted(len(i["x"]["S"]) for i in _scan(ddb, table_name, ConsistentRead=True)) == lengths


def _too_large(name: str, size: int, limit: int, index: str) -> tuple[str, str]:
    return ("ValidationException", f"{INVALID}Size limit exceeded for Index Key {name} Actual Size: {size} bytes "
            f"Max Size: {limit} bytes IndexName: {index}")


def test_writes_refuse_an_index_key_that_is_too_large(ddb: Any, table_name: str) -> None:
    _table(ddb, table_name, AttributeDefinitions=[attr("p"), attr("c"), attr("x"), attr("l")],
           GlobalSecondaryIndexes=[_gsi("by-x", ("x", "HASH"))],
           LocalSecondaryIndexes=[_gsi("by-l", ("p", "HASH"), ("l", "RANGE"))])
    item = {"p": {"S": "a"}, "c": {"S": "b"}}
    cases = [
        ({"x": {"S": "é" * 1025}}, _too_large("x", 2050, 2048, "by-x")),
        ({"l": {"S": "l" * 1025}}, _too_large("l", 1025, 1024, "by-l")),
    ]
    for extra, expected in cases:
        with pytest.raises(ClientError) as excinfo:
            ddb.put_item(TableName=table_name, Item={**item, **extra})
        assert error_of(excinfo) == expected
        (name, value), = extra.items()
        with pytest.raises(ClientError) as excinfo:
            ddb.update_item(TableName=table_name, Key=item, UpdateExpression="SET #n = :v",
                            ExpressionAttributeNames={"#n": name}, ExpressionAttributeValues={":v": value})
        assert error_of(excinfo) == expected
        with pytest.raises(ClientError) as excinfo:
            ddb.batch_write_item(RequestItems={table_name: [{"PutRequest": {"Item": {**item, **extra}}}]})
        assert error_of(excinfo) == expected
    assert "Item" not in ddb.get_item(TableName=table_name, Key=item, ConsistentRead=True)
    # At the limit the item is written and indexed.
    ddb.put_item(TableName=table_name, Item={**item, "x": {"S": "é" * 1024}, "l": {"S": "l" * 1024}})
    assert len(_scan(ddb, table_name, IndexName="by-x")) == len(_scan(ddb, table_name, IndexName="by-l")) == 1


#: A value of an index key: S (possibly multi-byte characters) or B, with its size in bytes.
def _value(kind: str, size: int, wide: bool) -> dict[str, Any]:
    if kind == "B":
        return {"B": b"\x01" * size}  # boto3 sends it base64-encoded
    if wide and size % 2 == 0:
        return {"S": "é" * (size // 2)}
    return {"S": "a" * size}


SIZES = st.one_of(st.integers(1000, 1030), st.integers(2030, 2060))


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(["S", "B"]), sizes=st.lists(SIZES, min_size=1, max_size=4), wide=st.booleans())
def test_index_keys_within_limits_are_indexed_others_refused_or_skipped(
    ddb: Any, table_name: str, kind: str, sizes: list[int], wide: bool
) -> None:
    """For S and B values around both limits: a write into an existing index is refused above the
    limit of the value's role; a backfill indexes exactly the items within it."""
    name = f"{table_name}-{uuid.uuid4().hex[:8]}"
    _table(ddb, name, AttributeDefinitions=[attr("p"), attr("c"), attr("x", kind)],
           GlobalSecondaryIndexes=[_gsi("hash", ("x", "HASH")), _gsi("range", ("c", "HASH"), ("x", "RANGE"))])
    later = f"{name}-later"
    _table(ddb, later)
    for n, size in enumerate(sizes):
        item = {"p": {"S": f"p{n}"}, "c": {"S": "c"}, "x": _value(kind, size, wide)}
        ddb.put_item(TableName=later, Item=item)
        if size <= 1024:
            ddb.put_item(TableName=name, Item=item)
            continue
        with pytest.raises(ClientError) as excinfo:
            ddb.put_item(TableName=name, Item=item)
        index, limit = ("hash", 2048) if size > 2048 else ("range", 1024)
        assert error_of(excinfo) == _too_large("x", size, limit, index)
    for index, limit in (("hash", 2048), ("range", 1024)):
        expected = sorted(f"p{n}" for n, size in enumerate(sizes) if size <= limit)
        if index == "hash":
            _add_gsi(ddb, later, [attr("x", kind)], _gsi(index, ("x", "HASH")))
        else:
            _add_gsi(ddb, later, [attr("x", kind), attr("c")], _gsi(index, ("c", "HASH"), ("x", "RANGE")))
        assert sorted(i["p"]["S"] for i in _scan(ddb, later, IndexName=index)) == expected
        assert sorted(i["p"]["S"] for i in _scan(ddb, name, IndexName=index)) == sorted(
            f"p{n}" for n, size in enumerate(sizes) if size <= 1024)
    assert len(_scan(ddb, later, ConsistentRead=True)) == len(sizes)
