"""PutItem, GetItem and DeleteItem against a real server."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import error_of, raw_request

ALL_TYPES = {
    "pk": {"S": "all-types"},
    "s": {"S": "text ✓"},
    "empty_s": {"S": ""},
    "n": {"N": "12.5"},
    "b": {"B": b"\x00\x01binary"},
    "empty_b": {"B": b""},
    "t": {"BOOL": True},
    "f": {"BOOL": False},
    "null": {"NULL": True},
    "l": {"L": [{"S": "a"}, {"N": "1"}, {"L": []}, {"M": {}}]},
    "m": {"M": {"child": {"M": {"deep": {"SS": ["x", "y"]}}}}},
    "ss": {"SS": ["a", "b"]},
    "ns": {"NS": ["1", "2.5"]},
    "bs": {"BS": [b"a", b"b"]},
}


def test_put_then_get_every_type(ddb: Any, hash_table: str) -> None:
    assert "Attributes" not in ddb.put_item(TableName=hash_table, Item=ALL_TYPES)
    item = ddb.get_item(TableName=hash_table, Key={"pk": {"S": "all-types"}})["Item"]
    assert item == ALL_TYPES


def test_get_missing_item_has_no_item(ddb: Any, hash_table: str) -> None:
    out = ddb.get_item(TableName=hash_table, Key={"pk": {"S": "nope"}})
    assert "Item" not in out


def test_numbers_are_normalized(ddb: Any, hash_table: str) -> None:
    ddb.put_item(
        TableName=hash_table,
        Item={
            "pk": {"S": "num"},
            "a": {"N": "+01.50"},
            "b": {"N": "1E2"},
            "c": {"N": "-0"},
            "d": {"N": ".5"},
            "e": {"N": "-1.2300e-3"},
        },
    )
    item = ddb.get_item(TableName=hash_table, Key={"pk": {"S": "num"}})["Item"]
    assert item["a"] == {"N": "1.5"}
    assert item["b"] == {"N": "100"}
    assert item["c"] == {"N": "0"}
    assert item["d"] == {"N": "0.5"}
    assert item["e"] == {"N": "-0.00123"}


def test_number_keys_compare_by_value(ddb: Any, table_name: str) -> None:
    from conftest import create_table

    create_table(ddb, table_name, hash_key=("id", "N"))
    ddb.put_item(TableName=table_name, Item={"id": {"N": "1.0"}, "v": {"S": "first"}})
    item = ddb.get_item(TableName=table_name, Key={"id": {"N": "1"}})["Item"]
    assert item == {"id": {"N": "1"}, "v": {"S": "first"}}


def test_put_replaces_and_returns_old(ddb: Any, hash_table: str) -> None:
    ddb.put_item(TableName=hash_table, Item={"pk": {"S": "k"}, "a": {"S": "1"}})
    out = ddb.put_item(TableName=hash_table, Item={"pk": {"S": "k"}, "b": {"S": "2"}}, ReturnValues="ALL_OLD")
    assert out["Attributes"] == {"pk": {"S": "k"}, "a": {"S": "1"}}
    assert ddb.get_item(TableName=hash_table, Key={"pk": {"S": "k"}})["Item"] == {"pk": {"S": "k"}, "b": {"S": "2"}}


def test_put_return_values_only_all_old_or_none(ddb: Any, hash_table: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        ddb.put_item(TableName=hash_table, Item={"pk": {"S": "k"}}, ReturnValues="ALL_NEW")
    # Enveloped, as DynamoDB answers PutItem's request faults (a 2026 conformance suite, docs/decisions.md).
    assert error_of(excinfo) == ("ValidationException", "1 validation error detected: ReturnValues can only be ALL_OLD or NONE")


def test_delete_returns_old_and_removes(ddb: Any, range_table: str) -> None:
    key = {"pk": {"S": "a"}, "sk": {"N": "1"}}
    ddb.put_item(TableName=range_table, Item={**key, "x": {"S": "y"}})
    out = ddb.delete_item(TableName=range_table, Key=key, ReturnValues="ALL_OLD")
    assert out["Attributes"] == {**key, "x": {"S": "y"}}
    assert "Item" not in ddb.get_item(TableName=range_table, Key=key)
    assert "Attributes" not in ddb.delete_item(TableName=range_table, Key=key, ReturnValues="ALL_OLD")


def test_condition_expression(ddb: Any, hash_table: str) -> None:
    item = {"pk": {"S": "c"}, "status": {"S": "new"}, "n": {"N": "5"}}
    ddb.put_item(TableName=hash_table, Item=item, ConditionExpression="attribute_not_exists(pk)")
    with pytest.raises(ClientError) as excinfo:
        ddb.put_item(TableName=hash_table, Item=item, ConditionExpression="attribute_not_exists(pk)")
    assert error_of(excinfo) == ("ConditionalCheckFailedException", "The conditional request failed")
    assert "Item" not in excinfo.value.response

    ddb.put_item(
        TableName=hash_table,
        Item={**item, "n": {"N": "6"}},
        ConditionExpression="#s = :s AND n BETWEEN :lo AND :hi",
        ExpressionAttributeNames={"#s": "status"},
        ExpressionAttributeValues={":s": {"S": "new"}, ":lo": {"N": "1"}, ":hi": {"N": "5"}},
    )
    assert ddb.get_item(TableName=hash_table, Key={"pk": {"S": "c"}})["Item"]["n"] == {"N": "6"}


def test_condition_failure_returns_item_when_asked(ddb: Any, hash_table: str) -> None:
    item = {"pk": {"S": "c"}, "v": {"N": "1"}}
    ddb.put_item(TableName=hash_table, Item=item)
    with pytest.raises(ClientError) as excinfo:
        ddb.delete_item(
            TableName=hash_table,
            Key={"pk": {"S": "c"}},
            ConditionExpression="v > :v",
            ExpressionAttributeValues={":v": {"N": "1"}},
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )
    assert error_of(excinfo) == ("ConditionalCheckFailedException", "The conditional request failed")
    assert excinfo.value.response["Item"] == item
    assert ddb.get_item(TableName=hash_table, Key={"pk": {"S": "c"}})["Item"] == item


def test_projection_expression(ddb: Any, hash_table: str) -> None:
    ddb.put_item(TableName=hash_table, Item=ALL_TYPES)
    out = ddb.get_item(
        TableName=hash_table,
        Key={"pk": {"S": "all-types"}},
        ProjectionExpression="s, #m.child, l[1], nothing",
        ExpressionAttributeNames={"#m": "m"},
    )
    assert out["Item"] == {
        "s": {"S": "text ✓"},
        "m": {"M": {"child": {"M": {"deep": {"SS": ["x", "y"]}}}}},
        "l": {"L": [{"N": "1"}]},
    }


def test_consumed_capacity(ddb: Any, hash_table: str) -> None:
    big = "x" * 5000  # 5 KB: 5 write units, 2 read units strongly consistent
    out = ddb.put_item(TableName=hash_table, Item={"pk": {"S": "big"}, "v": {"S": big}},
                       ReturnConsumedCapacity="TOTAL")
    assert out["ConsumedCapacity"] == {"TableName": hash_table, "CapacityUnits": 5.0}
    out = ddb.get_item(TableName=hash_table, Key={"pk": {"S": "big"}}, ReturnConsumedCapacity="TOTAL",
                       ConsistentRead=True)
    assert out["ConsumedCapacity"] == {"TableName": hash_table, "CapacityUnits": 2.0}
    out = ddb.get_item(TableName=hash_table, Key={"pk": {"S": "big"}}, ReturnConsumedCapacity="INDEXES")
    assert out["ConsumedCapacity"] == {"TableName": hash_table, "CapacityUnits": 1.0,
                                       "Table": {"CapacityUnits": 1.0}}
    out = ddb.get_item(TableName=hash_table, Key={"pk": {"S": "missing"}}, ReturnConsumedCapacity="TOTAL")
    assert out["ConsumedCapacity"] == {"TableName": hash_table, "CapacityUnits": 0.5}
    # Overwriting a 5 KB item with a small one is charged on the larger (old) item.
    out = ddb.put_item(TableName=hash_table, Item={"pk": {"S": "big"}}, ReturnConsumedCapacity="TOTAL")
    assert out["ConsumedCapacity"]["CapacityUnits"] == 5.0
    out = ddb.delete_item(TableName=hash_table, Key={"pk": {"S": "big"}}, ReturnConsumedCapacity="TOTAL")
    assert out["ConsumedCapacity"]["CapacityUnits"] == 1.0
    out = ddb.put_item(TableName=hash_table, Item={"pk": {"S": "big"}}, ReturnConsumedCapacity="NONE")
    assert "ConsumedCapacity" not in out


def test_missing_table(ddb: Any, table_name: str) -> None:
    for call in (
        lambda: ddb.put_item(TableName=table_name, Item={"pk": {"S": "a"}}),
        lambda: ddb.get_item(TableName=table_name, Key={"pk": {"S": "a"}}),
        lambda: ddb.delete_item(TableName=table_name, Key={"pk": {"S": "a"}}),
    ):
        with pytest.raises(ClientError) as excinfo:
            call()
        assert error_of(excinfo) == ("ResourceNotFoundException", "Requested resource not found")


KEY_ERRORS = [
    ({"other": {"S": "a"}}, "One or more parameter values were invalid: Missing the key pk in the item"),
    ({"pk": {"N": "1"}}, "One or more parameter values were invalid: Type mismatch for key pk expected: S actual: N"),
    ({"pk": {"S": ""}}, "One or more parameter values are not valid. The AttributeValue for a key attribute "
                        "cannot contain an empty string value. Key: pk"),
    ({"pk": {"S": "x" * 2049}}, "One or more parameter values were invalid: Size of hashkey has exceeded the "
                                "maximum size limit of2048 bytes"),
]


@pytest.mark.parametrize(("item", "message"), KEY_ERRORS)
def test_put_key_errors(ddb: Any, hash_table: str, item: dict[str, Any], message: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        ddb.put_item(TableName=hash_table, Item=item)
    assert error_of(excinfo) == ("ValidationException", message)


def test_range_key_limits(ddb: Any, table_name: str) -> None:
    from conftest import create_table

    create_table(ddb, table_name, range_key=("sk", "S"))
    ddb.put_item(TableName=table_name, Item={"pk": {"S": "a"}, "sk": {"S": "y" * 1024}})
    with pytest.raises(ClientError) as excinfo:
        ddb.put_item(TableName=table_name, Item={"pk": {"S": "a"}, "sk": {"S": "y" * 1025}})
    assert error_of(excinfo) == (
        "ValidationException",
        "One or more parameter values were invalid: Aggregated size of all range keys has exceeded the "
        "size limit of 1024 bytes",
    )


GET_KEY_ERRORS = [
    {"pk": {"S": "a"}, "extra": {"S": "b"}},
    {"other": {"S": "a"}},
    {"pk": {"N": "1"}},
]


@pytest.mark.parametrize("key", GET_KEY_ERRORS)
def test_get_key_must_match_schema(ddb: Any, hash_table: str, key: dict[str, Any]) -> None:
    with pytest.raises(ClientError) as excinfo:
        ddb.get_item(TableName=hash_table, Key=key)
    assert error_of(excinfo) == ("ValidationException", "The provided key element does not match the schema")


def test_get_empty_key_value(ddb: Any, hash_table: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        ddb.get_item(TableName=hash_table, Key={"pk": {"S": ""}})
    assert error_of(excinfo) == (
        "ValidationException",
        "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain "
        "an empty string value. Key: pk",
    )


def test_item_size_limit(ddb: Any, hash_table: str) -> None:
    # 400 KB exactly is allowed: name "pk"(2)+"a"(1) + name "v"(1) + value.
    fits = 409600 - 4
    ddb.put_item(TableName=hash_table, Item={"pk": {"S": "a"}, "v": {"S": "x" * fits}})
    with pytest.raises(ClientError) as excinfo:
        ddb.put_item(TableName=hash_table, Item={"pk": {"S": "a"}, "v": {"S": "x" * (fits + 1)}})
    assert error_of(excinfo) == ("ValidationException", "Item size has exceeded the maximum allowed size")
    assert len(ddb.get_item(TableName=hash_table, Key={"pk": {"S": "a"}})["Item"]["v"]["S"]) == fits


def test_expression_attribute_rules(ddb: Any, hash_table: str) -> None:
    cases = [
        # The request's parameter faults come inside the envelope, without naming null expressions
        # (a 2026 conformance suite's records; docs/decisions.md, "Query and Scan").
        (dict(ExpressionAttributeNames={"#a": "a"}),
         "1 validation error detected: ExpressionAttributeNames can only be specified when using expressions"),
        (dict(ExpressionAttributeValues={":a": {"S": "a"}}),
         "1 validation error detected: ExpressionAttributeValues can only be specified when using expressions"),
        (dict(ConditionExpression="a = :a", ExpressionAttributeValues={}),
         "1 validation error detected: ExpressionAttributeValues must not be empty"),
        (dict(ConditionExpression="a = :a", ExpressionAttributeValues={":a": {"S": "x"}, ":b": {"S": "y"}}),
         "Value provided in ExpressionAttributeValues unused in expressions: keys: {:b}"),
        (dict(ConditionExpression="#a = :a", ExpressionAttributeValues={":a": {"S": "x"}}),
         "Invalid ConditionExpression: An expression attribute name used in the document path is not defined; "
         "attribute name: #a"),
        (dict(ConditionExpression="a = :a"),
         "Invalid ConditionExpression: An expression attribute value used in expression is not defined; "
         "attribute value: :a"),
        (dict(ConditionExpression="attribute_exists(status)"),
         "Invalid ConditionExpression: Attribute name is a reserved keyword; reserved keyword: status"),
        (dict(ConditionExpression=""),
         "1 validation error detected: Invalid ConditionExpression: The expression can not be empty;"),
        (dict(ConditionExpression="a = :a", ExpressionAttributeValues={":a": {"SS": []}}),
         "ExpressionAttributeValues contains invalid value: One or more parameter values were invalid: "
         "An string set  may not be empty for key :a"),
        (dict(ConditionExpression="a = :a", Expected={"a": {"Exists": False}}),
         "Can not use both expression and non-expression parameters in the same request: "
         "Non-expression parameters: {Expected} Expression parameters: {ConditionExpression}"),
    ]
    for params, message in cases:
        with pytest.raises(ClientError) as excinfo:
            ddb.put_item(TableName=hash_table, Item={"pk": {"S": "a"}}, **params)
        assert error_of(excinfo) == ("ValidationException", message), params
    assert "Item" not in ddb.get_item(TableName=hash_table, Key={"pk": {"S": "a"}})


# PutItem words a bad number or a repeated set member in the current layer, inside the envelope
# (a 2026 conformance suite's records; docs/decisions.md, "Query and Scan").
ONE = "1 validation error detected: "
VALUE_ERRORS = [
    ({"SS": []}, "One or more parameter values were invalid: An string set  may not be empty"),
    ({"NS": []}, "One or more parameter values were invalid: An number set  may not be empty"),
    ({"SS": ["a", "a"]}, ONE + 'One or more parameter values were invalid: Input collection ["a", "a"] contains duplicates.'),
    ({"N": "abc"}, ONE + "The parameter cannot be converted to a numeric value: abc"),
    ({"N": "1" * 39}, ONE + "Attempting to store more than 38 significant digits in a Number"),
    ({"N": "1E126"}, ONE + "Number overflow. Attempting to store a number with magnitude larger than supported range"),
    ({"N": "1E-131"}, ONE + "Number underflow. Attempting to store a number with magnitude smaller than supported range"),
    ({"NULL": False}, "One or more parameter values were invalid: Null attribute value types must have the value of true"),
]


@pytest.mark.parametrize(("value", "message"), VALUE_ERRORS)
def test_invalid_values(ddb: Any, hash_table: str, value: dict[str, Any], message: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        ddb.put_item(TableName=hash_table, Item={"pk": {"S": "v"}, "bad": value})
    assert error_of(excinfo) == ("ValidationException", message)
    assert "Item" not in ddb.get_item(TableName=hash_table, Key={"pk": {"S": "v"}})


def test_data_plane_table_name_rules(endpoint: str) -> None:
    # Observed in 2026: the data plane checks TableName with the model's TableArn
    # constraint (1..1024) first, so an empty name is one clause; a short or oddly
    # spelled name then meets the TableName rules before any lookup (issue 26 N1:
    # this test used to expect ResourceNotFoundException for them, which DynamoDB
    # does not answer; tests/test_table_names.py covers every operation).
    response = raw_request(endpoint, "PutItem", {"TableName": "", "Item": {"pk": {"S": "a"}}})
    assert response.status == 400
    assert response.json() == {
        "__type": "com.amazon.coral.validate#ValidationException",
        "message": "1 validation error detected: Value '' at 'tableName' failed to satisfy "
        "constraint: Member must have length greater than or equal to 1",
    }
    for name, tail in (("ab", "Member must have length greater than or equal to 3"),
                       ("bad name", "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+")):
        response = raw_request(endpoint, "GetItem", {"TableName": name, "Key": {"pk": {"S": "a"}}})
        assert response.status == 400
        assert response.json() == {
            "__type": "com.amazon.coral.validate#ValidationException",
            "message": f"1 validation error detected: Value '{name}' at 'tableName' failed to satisfy constraint: {tail}",
        }
    response = raw_request(endpoint, "GetItem", {"TableName": "no-such-table", "Key": {"pk": {"S": "a"}}})
    assert response.json()["__type"] == "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException"
