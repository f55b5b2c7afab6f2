"""What an UpdateItem writes and returns beyond its actions, against a real server.

Key attributes that cannot be updated, upserts of missing items, conditions,
ReturnValues (and on condition check failure), consumed capacity, the item
size limit, and secondary index key types, with DynamoDB's exact messages.

Expected outcomes come from DynamoDB's documentation and from behaviour
recorded against the real service (dynalite's updateItem suite, ExtendDB's
and Alternator's conformance notes).
"""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import error_of
from update_helpers import KEY, L, N, S, failure, get, put, update

# -- keys, upsert, conditions ------------------------------------------------------------


@pytest.mark.parametrize("expression", [
    "SET pk = :v", "REMOVE pk", "ADD pk.b :n", "SET a = :v REMOVE pk", "SET pk = pk",
])
def test_key_attributes_cannot_be_updated(ddb: Any, hash_table: str, expression: str) -> None:
    values = {k: v for k, v in {":v": S("x"), ":n": N(1)}.items() if k in expression}
    assert failure(ddb, hash_table, expression, values) == (
        "ValidationException",
        "One or more parameter values were invalid: Cannot update attribute pk. This attribute is part of the key",
    )
    assert get(ddb, hash_table) is None


def test_range_key_cannot_be_updated(ddb: Any, range_table: str) -> None:
    key = {"pk": S("a"), "sk": N(1)}
    with pytest.raises(ClientError) as excinfo:
        update(ddb, range_table, "SET d[1] = :a ADD sk :a", {":a": N(1)}, key=key)
    assert error_of(excinfo) == (
        "ValidationException",
        "One or more parameter values were invalid: Cannot update attribute sk. This attribute is part of the key",
    )


def test_key_must_match_the_schema_and_table_must_exist(ddb: Any, hash_table: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        update(ddb, hash_table, "SET a = :v", {":v": N(1)}, key={"pk": N(1)})
    assert error_of(excinfo) == ("ValidationException", "The provided key element does not match the schema")
    with pytest.raises(ClientError) as excinfo:
        update(ddb, hash_table + "-absent", "SET a = :v", {":v": N(1)})
    assert error_of(excinfo) == ("ResourceNotFoundException", "Requested resource not found")


def test_update_without_actions_creates_the_key(ddb: Any, range_table: str) -> None:
    key = {"pk": S("a"), "sk": N("1.50")}
    assert "Attributes" not in update(ddb, range_table, None, key=key, ReturnValues="ALL_OLD")
    assert get(ddb, range_table, {"pk": S("a"), "sk": N("1.5")}) == {"pk": S("a"), "sk": N("1.5")}


def test_remove_on_a_missing_item_creates_nothing(ddb: Any, hash_table: str) -> None:
    """Only deletions on a missing item do nothing (observed; AttributeValueUpdate's documentation)."""
    assert "Attributes" not in update(ddb, hash_table, "REMOVE a", ReturnValues="ALL_NEW")
    assert get(ddb, hash_table) is None


def test_condition_expression(ddb: Any, hash_table: str) -> None:
    assert failure(ddb, hash_table, "SET a = :v", {":v": N(1)}, ConditionExpression="attribute_exists(pk)") == (
        "ConditionalCheckFailedException", "The conditional request failed",
    )
    assert get(ddb, hash_table) is None
    update(ddb, hash_table, "SET a = :v", {":v": N(1)}, ConditionExpression="attribute_not_exists(pk)")
    update(ddb, hash_table, "SET a = a + :v", {":v": N(1)}, ConditionExpression="a = :v")
    assert get(ddb, hash_table) == {**KEY, "a": N(2)}


def test_condition_is_checked_before_the_update_is_applied(ddb: Any, hash_table: str) -> None:
    put(ddb, hash_table, a=S("x"))
    assert failure(ddb, hash_table, "SET a = a + :v", {":v": N(1)}, ConditionExpression="a = :v") == (
        "ConditionalCheckFailedException", "The conditional request failed",
    )


def test_return_values_on_condition_check_failure(ddb: Any, hash_table: str) -> None:
    item = put(ddb, hash_table, a=N(1))
    with pytest.raises(ClientError) as excinfo:
        update(ddb, hash_table, "SET a = :v", {":v": N(2)}, ConditionExpression="a > :v",
               ReturnValuesOnConditionCheckFailure="ALL_OLD")
    assert error_of(excinfo)[0] == "ConditionalCheckFailedException"
    assert excinfo.value.response["Item"] == item
    with pytest.raises(ClientError) as excinfo:
        update(ddb, hash_table, "SET a = :v", {":v": N(2)}, ConditionExpression="a > :v",
               ReturnValuesOnConditionCheckFailure="NONE")
    assert "Item" not in excinfo.value.response


# -- ReturnValues ---------------------------------------------------------------------------


def test_return_values(ddb: Any, hash_table: str) -> None:
    put(ddb, hash_table, a=S("a"), b=S("b"), c=S("c"))
    expression, values = "SET a = :x, d = :x REMOVE b", {":x": S("x")}
    assert "Attributes" not in update(ddb, hash_table, expression, values)
    assert "Attributes" not in update(ddb, hash_table, expression, values, ReturnValues="NONE")
    put(ddb, hash_table, a=S("a"), b=S("b"), c=S("c"))
    assert update(ddb, hash_table, expression, values, ReturnValues="ALL_OLD")["Attributes"] == {
        **KEY, "a": S("a"), "b": S("b"), "c": S("c"),
    }
    put(ddb, hash_table, a=S("a"), b=S("b"), c=S("c"))
    assert update(ddb, hash_table, expression, values, ReturnValues="UPDATED_OLD")["Attributes"] == {
        "a": S("a"), "b": S("b"),
    }
    put(ddb, hash_table, a=S("a"), b=S("b"), c=S("c"))
    assert update(ddb, hash_table, expression, values, ReturnValues="ALL_NEW")["Attributes"] == {
        **KEY, "a": S("x"), "c": S("c"), "d": S("x"),
    }
    put(ddb, hash_table, a=S("a"), b=S("b"), c=S("c"))
    assert update(ddb, hash_table, expression, values, ReturnValues="UPDATED_NEW")["Attributes"] == {
        "a": S("x"), "d": S("x"),
    }


def test_empty_updated_values_are_left_out(ddb: Any, hash_table: str) -> None:
    put(ddb, hash_table, m={"M": {"x": N(1)}})
    assert "Attributes" not in update(ddb, hash_table, "REMOVE m", ReturnValues="UPDATED_NEW")
    assert "Attributes" not in update(ddb, hash_table, "SET fresh = :v", {":v": N(1)}, ReturnValues="UPDATED_OLD")
    other = {"pk": S("other")}
    assert "Attributes" not in update(ddb, hash_table, "SET a = :v", {":v": N(1)}, key=other,
                                      ReturnValues="ALL_OLD")


def test_updated_values_of_nested_paths(ddb: Any, hash_table: str) -> None:
    put(ddb, hash_table, m={"M": {"x": N(1), "y": N(2), "z": L(N(0), N(1), N(2))}}, other=S("o"))
    expression = "SET m.x = :v, m.z[2] = :v REMOVE m.z[0]"
    out = update(ddb, hash_table, expression, {":v": S("new")}, ReturnValues="UPDATED_OLD")
    assert out["Attributes"] == {"m": {"M": {"x": N(1), "z": L(N(0), N(2))}}}
    put(ddb, hash_table, m={"M": {"x": N(1), "y": N(2), "z": L(N(0), N(1), N(2))}}, other=S("o"))
    out = update(ddb, hash_table, expression, {":v": S("new")}, ReturnValues="UPDATED_NEW")
    # Indexes are read in the new item: z is now [1, "new"], so z[0] and z[2] give [1].
    assert out["Attributes"] == {"m": {"M": {"x": S("new"), "z": L(N(1))}}}


# -- capacity and size ------------------------------------------------------------------------


def test_consumed_capacity(ddb: Any, hash_table: str) -> None:
    """dynalite's 1 KB boundaries (checked against DynamoDB), then a shrinking update."""
    key = {"pk": S("k")}
    # pk+k 3, b+1007, c+12.3456 5, d+2 bytes 3, e+4 bytes 5: exactly 1024 bytes.
    small = {"b": S("b" * 1007), "c": N("12.3456"), "d": {"B": b"\x01\x02"},
             "e": {"BS": [b"\x01\x02", b"\x02", b"\x01"]}}
    out = update_legacy(ddb, hash_table, key, small, ReturnConsumedCapacity="TOTAL")
    assert out["ConsumedCapacity"] == {"TableName": hash_table, "CapacityUnits": 1.0}
    out = update_legacy(ddb, hash_table, key, {"b": S("b" * 1008)}, ReturnConsumedCapacity="INDEXES")
    assert out["ConsumedCapacity"] == {"TableName": hash_table, "CapacityUnits": 2.0, "Table": {"CapacityUnits": 2.0}}
    update(ddb, hash_table, "SET big = :big", {":big": S("x" * 5000)})
    out = update(ddb, hash_table, "REMOVE big", ReturnConsumedCapacity="TOTAL")
    assert out["ConsumedCapacity"]["CapacityUnits"] == 6.0  # charged on the larger, old item
    out = update(ddb, hash_table, "REMOVE b, c, d, e", ReturnConsumedCapacity="TOTAL")
    assert out["ConsumedCapacity"]["CapacityUnits"] == 2.0
    assert "ConsumedCapacity" not in update(ddb, hash_table, None, ReturnConsumedCapacity="NONE")


def update_legacy(ddb: Any, table: str, key: dict[str, Any], values: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return ddb.update_item(TableName=table, Key=key,
                           AttributeUpdates={k: {"Value": v} for k, v in values.items()}, **extra)


def test_updated_item_size_limit(ddb: Any, hash_table: str) -> None:
    fits = 409600 - 4  # "pk" + "k" + "v" + value
    update(ddb, hash_table, "SET v = :v", {":v": S("x" * fits)})
    before = get(ddb, hash_table)
    assert failure(ddb, hash_table, "SET w = :w", {":w": S("")}) == (
        "ValidationException", "Item size to update has exceeded the maximum allowed size",
    )
    assert get(ddb, hash_table) == before
    update(ddb, hash_table, "SET v = :v", {":v": S("short")})
    assert get(ddb, hash_table) == {**KEY, "v": S("short")}


# -- secondary index keys ------------------------------------------------------------------------


@pytest.fixture
def gsi_table(ddb: Any, table_name: str) -> str:
    ddb.create_table(
        TableName=table_name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexes=[{"IndexName": "by-g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}],
        BillingMode="PAY_PER_REQUEST",
    )
    return table_name


def test_index_key_rules(ddb: Any, gsi_table: str) -> None:
    assert failure(ddb, gsi_table, "SET g = :n", {":n": N(1)}) == (
        "ValidationException",
        "One or more parameter values were invalid: Type mismatch for Index Key g Expected: S Actual: N "
        "IndexName: by-g",
    )
    assert failure(ddb, gsi_table, "SET a = g.x") == (
        "ValidationException",
        "Key attributes must be scalars; list random access '[]' and map lookup '.' are not allowed: IndexKey: g",
    )
    update(ddb, gsi_table, "SET n = :n", {":n": N(1)})
    assert failure(ddb, gsi_table, "SET g = n") == (
        "ValidationException", "The update expression attempted to update the secondary index key to unsupported type",
    )
    out = update(ddb, gsi_table, "SET g = :s", {":s": S("x")}, ReturnConsumedCapacity="INDEXES")
    assert out["ConsumedCapacity"] == {
        "TableName": gsi_table, "CapacityUnits": 2.0, "Table": {"CapacityUnits": 1.0},
        "GlobalSecondaryIndexes": {"by-g": {"CapacityUnits": 1.0}},
    }
