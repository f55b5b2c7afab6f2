"""Unit tests for request-shape validation compiled from the service model.

Expected texts are DynamoDB's, as recorded by dynalite's tests against the
real service and by a 2026 catalogue of real-service answers; the module
docstring of ``partita.api.validation.shapes`` lists the sources.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from partita.api.validation import validate_request
from partita.api.validation.leaves import PASSED_LIMIT, string_leaf
from partita.api.validation.shapes import read_model
from partita.errors import SerializationException, ShapeValidationException

CAST_MSG = (
    "class sun.reflect.generics.reflectiveObjects.ParameterizedTypeImpl cannot be cast to "
    "class java.lang.Class (sun.reflect.generics.reflectiveObjects.ParameterizedTypeImpl and "
    "java.lang.Class are in module java.base of loader 'bootstrap')"
)
TABLE_PATTERN = "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+"


def clause(value: str, path: str, constraint: str) -> str:
    return f"Value {value} at '{path}' failed to satisfy constraint: Member must {constraint}"


def shape_error(operation: str, body: Any) -> str:
    with pytest.raises(ShapeValidationException) as info:
        validate_request(operation, body)
    assert info.value.body()["__type"] == "com.amazon.coral.validate#ValidationException"
    assert info.value.message is not None
    return info.value.message


def serialization_error(operation: str, body: Any) -> str | None:
    with pytest.raises(SerializationException) as info:
        validate_request(operation, body)
    assert info.value.body()["__type"] == "com.amazon.coral.service#SerializationException"
    return info.value.message


# ---------------------------------------------------------------- valid bodies


@pytest.mark.parametrize(
    ("operation", "body"),
    [
        ("GetItem", {"TableName": "users", "Key": {"id": {"S": "a"}}, "ConsistentRead": True}),
        (
            "PutItem",
            {
                "TableName": "users",
                "Item": {
                    "id": {"S": "a"},
                    "n": {"N": "1.5"},
                    "b": {"B": "YWJj"},
                    "l": {"L": [{"NULL": True}, {"M": {"x": {"BOOL": False}}}]},
                    "ss": {"SS": ["a", "b"]},
                },
                "ReturnValues": "ALL_OLD",
            },
        ),
        ("DeleteItem", {"TableName": "users", "Key": {"id": {"S": "a"}}}),
        ("DescribeTable", {"TableName": "users"}),
        ("ListTables", {}),
        ("ListTables", {"Limit": 100, "ExclusiveStartTableName": "abc"}),
        (
            "UpdateItem",
            {
                "TableName": "users",
                "Key": {"id": {"S": "a"}},
                "UpdateExpression": "SET #a = :v",
                "ExpressionAttributeNames": {"#a": "a"},
                "ExpressionAttributeValues": {":v": {"N": "1"}},
            },
        ),
        ("Query", {"TableName": "users", "KeyConditionExpression": "id = :v", "Limit": 1}),
        ("Scan", {"TableName": "users", "Segment": 0, "TotalSegments": 2}),
        (
            "CreateTable",
            {
                "TableName": "users",
                "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
                "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
                "BillingMode": "PAY_PER_REQUEST",
            },
        ),
        # A table ARN is accepted where the model allows one.
        ("DescribeTable", {"TableName": "arn:aws:dynamodb:us-east-1:123456789012:table/users"}),
    ],
)
def test_valid_bodies_pass(operation: str, body: Any) -> None:
    validate_request(operation, body)


def test_unknown_members_and_nulls_are_ignored() -> None:
    validate_request(
        "GetItem", {"TableName": "users", "Key": {"id": {"S": "a"}}, "Bogus": [1], "Limit": None}
    )


def test_unknown_operation_is_left_to_the_protocol_layer() -> None:
    validate_request("NoSuchOperation", {"x": 1})


# ---------------------------------------------------------------- serialization


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (True, "TRUE_VALUE cannot be converted to String"),
        (False, "FALSE_VALUE cannot be converted to String"),
        (23, "NUMBER_VALUE cannot be converted to String"),
        (2147483648, "NUMBER_VALUE cannot be converted to String"),
        (34.56, "DECIMAL_VALUE cannot be converted to String"),
        ([], "Unrecognized collection type class java.lang.String"),
        ({}, "Start of structure or map found where not expected"),
    ],
)
def test_string_member_type(value: Any, message: str) -> None:
    assert serialization_error("DescribeTable", {"TableName": value}) == message


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("23", "Unexpected token received from parser"),
        (23, "NUMBER_VALUE cannot be converted to Boolean"),
        (34.56, "DECIMAL_VALUE cannot be converted to Boolean"),
        ([], "Unrecognized collection type class java.lang.Boolean"),
        ({}, "Start of structure or map found where not expected"),
    ],
)
def test_boolean_member_type(value: Any, message: str) -> None:
    body = {"TableName": "abc", "Key": {"a": {"S": "x"}}, "ConsistentRead": value}
    assert serialization_error("GetItem", body) == message


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("23", "STRING_VALUE cannot be converted to Integer"),
        (True, "TRUE_VALUE cannot be converted to Integer"),
        (False, "FALSE_VALUE cannot be converted to Integer"),
        ([], "Unrecognized collection type class java.lang.Integer"),
        ({}, "Start of structure or map found where not expected"),
    ],
)
def test_integer_member_type(value: Any, message: str) -> None:
    assert serialization_error("Scan", {"TableName": "abc", "Limit": value}) == message


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("23", "STRING_VALUE cannot be converted to Long"),
        (True, "TRUE_VALUE cannot be converted to Long"),
        ([], "Unrecognized collection type class java.lang.Long"),
    ],
)
def test_long_member_type(value: Any, message: str) -> None:
    body = {"TableName": "abc", "ProvisionedThroughput": {"ReadCapacityUnits": value}}
    assert serialization_error("CreateTable", body) == message


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("23", "Unexpected field type"),
        (True, "Unexpected field type"),
        (34.56, "Unexpected field type"),
        ({}, "Start of structure or map found where not expected"),
    ],
)
def test_list_member_type(value: Any, message: str) -> None:
    assert serialization_error("CreateTable", {"KeySchema": value}) == message


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("23", "Unexpected field type"),
        (23, "Unexpected field type"),
        (
            [],
            "Unrecognized collection type java.util.Map<java.lang.String, "
            "com.amazonaws.dynamodb.v20120810.AttributeValue>",
        ),
    ],
)
def test_map_member_type(value: Any, message: str) -> None:
    assert serialization_error("PutItem", {"TableName": "abc", "Item": value}) == message


def test_map_of_strings_names_its_java_type() -> None:
    body = {"TableName": "abc", "Key": {}, "ExpressionAttributeNames": []}
    assert serialization_error("UpdateItem", body) == (
        "Unrecognized collection type java.util.Map<java.lang.String, java.lang.String>"
    )
    body = {"TableName": "abc", "Key": {}, "ExpressionAttributeNames": {"#a": 1}}
    assert serialization_error("UpdateItem", body) == "NUMBER_VALUE cannot be converted to String"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("23", "Unexpected field type"),
        (23, "Unexpected field type"),
        (
            [],
            "Unrecognized collection type class "
            "com.amazonaws.dynamodb.v20120810.ProvisionedThroughput",
        ),
    ],
)
def test_structure_field_type(value: Any, message: str) -> None:
    assert serialization_error("CreateTable", {"ProvisionedThroughput": value}) == message


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("23", "Unexpected value type in payload"),
        (True, "Unexpected value type in payload"),
        (
            [],
            "Unrecognized collection type class com.amazonaws.dynamodb.v20120810.KeySchemaElement",
        ),
    ],
)
def test_structure_in_a_list_type(value: Any, message: str) -> None:
    assert serialization_error("CreateTable", {"KeySchema": [value]}) == message


@pytest.mark.parametrize(
    ("attr", "message"),
    [
        ("x", "Unexpected value type in payload"),
        ({"S": 5}, "NUMBER_VALUE cannot be converted to String"),
        ({"N": 5}, "NUMBER_VALUE cannot be converted to String"),
        ({"S": {"S": "a"}}, "Start of structure or map found where not expected"),
        ({"BOOL": "true"}, "Unexpected token received from parser"),
        ({"NULL": 1}, "NUMBER_VALUE cannot be converted to Boolean"),
        ({"SS": "a"}, "Unexpected field type"),
        ({"SS": [1]}, "NUMBER_VALUE cannot be converted to String"),
        ({"L": [1]}, "Unexpected value type in payload"),
        (
            {"M": []},
            "Unrecognized collection type java.util.Map<java.lang.String, "
            "com.amazonaws.dynamodb.v20120810.AttributeValue>",
        ),
        ({"M": {"a": {"BS": [True]}}}, "only base-64-encoded strings are convertible to bytes"),
        ({"B": 23}, "only base-64-encoded strings are convertible to bytes"),
        ({"B": []}, "Unrecognized collection type class java.nio.ByteBuffer"),
        ({"B": "23456"}, "Base64 encoded length is expected a multiple of 4 bytes but found: 5"),
        ({"B": "=+/="}, "Invalid last non-pad Base64 character dectected"),
        ({"B": "+/+="}, "Invalid last non-pad Base64 character dectected"),
    ],
)
def test_attribute_value_json_types(attr: Any, message: str) -> None:
    assert serialization_error("PutItem", {"TableName": "abc", "Item": {"a": attr}}) == message


def test_collections_nested_in_collections_use_the_cast_message() -> None:
    # BatchWriteItem RequestItems.Attr is a list inside a map; BatchGetItem
    # RequestItems.Attr.Keys.0 is a map inside a list.
    assert serialization_error("BatchWriteItem", {"RequestItems": {"t": "x"}}) == CAST_MSG
    assert serialization_error("BatchGetItem", {"RequestItems": {"t": {"Keys": [5]}}}) == CAST_MSG


def test_serialization_beats_constraint_errors() -> None:
    # A bad table name would be a validation error, but the type error wins.
    body = {"TableName": "a;", "Key": {"a": {"S": "x"}}, "ConsistentRead": 5}
    assert serialization_error("GetItem", body) == "NUMBER_VALUE cannot be converted to Boolean"


def test_top_level_body_that_is_not_an_object() -> None:
    assert serialization_error("GetItem", []) == "Start of list found where not expected"
    assert serialization_error("GetItem", "x") is None
    assert serialization_error("GetItem", None) is None


# ---------------------------------------------------------------- constraints


def test_required_member_missing() -> None:
    assert shape_error("DescribeTable", {}) == (
        "1 validation error detected: " + clause("null", "tableName", "not be null")
    )


def test_getitem_missing_table_and_key() -> None:
    message = shape_error("GetItem", {})
    assert message.startswith("2 validation errors detected: ")
    assert clause("null", "tableName", "not be null") in message
    assert clause("null", "key", "not be null") in message


def test_table_name_length_and_pattern_on_one_member() -> None:
    # Real service, DescribeTable with TableName '' (2026): length then pattern.
    assert shape_error("DescribeTable", {"TableName": ""}) == (
        "2 validation errors detected: "
        + clause("''", "tableName", "have length greater than or equal to 3")
        + "; "
        + clause("''", "tableName", TABLE_PATTERN[len("Member must ") :])
    )


def test_table_name_too_long() -> None:
    name = "a" * 256
    assert shape_error("DescribeTable", {"TableName": name}) == (
        "1 validation error detected: "
        + clause(f"'{name}'", "tableName", "have length less than or equal to 255")
    )
    # Data-plane operations apply the model's TableArn limits (1..1024) first, then the
    # TableName rules to what is not an ARN (issue 26 N1).
    assert shape_error("DeleteItem", {"TableName": name, "Key": {}}) == (
        "1 validation error detected: "
        + clause(f"'{name}'", "tableName", "have length less than or equal to 255")
    )
    validate_request("DeleteItem", {"TableName": "arn:aws:dynamodb:us-east-1:000000000000:table/" + name, "Key": {}})
    longer = "a" * 1025
    assert shape_error("DeleteItem", {"TableName": longer, "Key": {}}) == (
        "1 validation error detected: "
        + clause(f"'{longer}'", "tableName", "have length less than or equal to 1024")
    )


def test_table_name_pattern() -> None:
    assert shape_error("DescribeTable", {"TableName": "abc;"}) == (
        "1 validation error detected: "
        + clause("'abc;'", "tableName", TABLE_PATTERN[len("Member must ") :])
    )
    # The data plane refuses such a name too, before any lookup (issue 26 N1).
    assert shape_error("Query", {"TableName": "abc;"}) == (
        "1 validation error detected: "
        + clause("'abc;'", "tableName", TABLE_PATTERN[len("Member must ") :])
    )
    assert shape_error("Query", {"TableName": ""}) == (
        "1 validation error detected: "
        + clause("''", "tableName", "have length greater than or equal to 1")
    )


def test_enum_value_sets_use_the_service_order() -> None:
    body = {
        "TableName": "abc",
        "AttributeDefinitions": [{"AttributeName": "b", "AttributeType": "SS"}],
        "KeySchema": [{"AttributeName": "b", "KeyType": "HASH"}],
        "BillingMode": "PAY_PER_REQUEST",
    }
    assert shape_error("CreateTable", body) == (
        "1 validation error detected: "
        + clause(
            "'SS'",
            "attributeDefinitions.1.member.attributeType",
            "satisfy enum value set: [B, N, S]",
        )
    )


def test_enum_in_a_map_value_path() -> None:
    message = shape_error(
        "Scan", {"TableName": "abc", "ScanFilter": {"a": {}, "b": {"ComparisonOperator": ""}}}
    )
    assert message.startswith("2 validation errors detected: ")
    assert clause("null", "scanFilter.a.member.comparisonOperator", "not be null") in message
    assert (
        clause(
            "''",
            "scanFilter.b.member.comparisonOperator",
            "satisfy enum value set: [IN, NULL, BETWEEN, LT, NOT_CONTAINS, EQ, GT, NOT_NULL, "
            "NE, LE, BEGINS_WITH, GE, CONTAINS]",
        )
        in message
    )


def test_list_length_minimum_renders_the_list() -> None:
    body = {
        "TableName": "abc",
        "AttributeDefinitions": [],
        "KeySchema": [],
        "ProvisionedThroughput": {"ReadCapacityUnits": -1, "WriteCapacityUnits": -1},
    }
    message = shape_error("CreateTable", body)
    assert message.startswith("3 validation errors detected: ")
    assert clause("'[]'", "keySchema", "have length greater than or equal to 1") in message
    assert (
        clause(
            "'-1'",
            "provisionedThroughput.readCapacityUnits",
            "have value greater than or equal to 1",
        )
        in message
    )


def test_list_length_maximum_and_nested_members() -> None:
    body = {
        "TableName": "abc",
        "AttributeDefinitions": [],
        "KeySchema": [
            {"KeyType": "HASH"},
            {"AttributeName": "a"},
            {"KeyType": "Woop", "AttributeName": "a"},
        ],
        "BillingMode": "PAY_PER_REQUEST",
    }
    message = shape_error("CreateTable", body)
    assert message.startswith("4 validation errors detected: ")
    assert (
        "at 'keySchema' failed to satisfy constraint: Member must have length less than or equal to 2"
        in message
    )
    assert "Value '[com.amazonaws.dynamodb.v20120810.KeySchemaElement@" in message
    assert clause("null", "keySchema.1.member.attributeName", "not be null") in message
    assert clause("null", "keySchema.2.member.keyType", "not be null") in message
    assert (
        clause("'Woop'", "keySchema.3.member.keyType", "satisfy enum value set: [HASH, RANGE]")
        in message
    )


def test_list_of_strings_renders_like_java() -> None:
    body = {
        "TableName": "abc",
        "Key": {},
        "AttributesToGet": [],
    }
    assert shape_error("GetItem", body) == (
        "1 validation error detected: "
        + clause("'[]'", "attributesToGet", "have length greater than or equal to 1")
    )


def test_numeric_minimum_and_maximum() -> None:
    assert shape_error("ListTables", {"Limit": 0}) == (
        "1 validation error detected: "
        + clause("'0'", "limit", "have value greater than or equal to 1")
    )
    assert shape_error("ListTables", {"Limit": 101}) == (
        "1 validation error detected: "
        + clause("'101'", "limit", "have value less than or equal to 100")
    )
    message = shape_error("Scan", {"TableName": "abc", "Segment": -1, "TotalSegments": 1000001})
    # Scan's Segment in the 2026 framework wording: no value, the member as sent.
    assert "Value at 'Segment' failed to satisfy constraint: Member must have value greater than or equal to 0" in message
    assert (
        clause("'1000001'", "totalSegments", "have value less than or equal to 1000000") in message
    )


def test_update_item_several_enums() -> None:
    body = {
        "TableName": "abc;",
        "ReturnConsumedCapacity": "hi",
        "ReturnItemCollectionMetrics": "hi",
        "ReturnValues": "hi",
    }
    # dynalite's recording: the name's pattern clause among the others (back since issue 26 N1).
    message = shape_error("UpdateItem", body)
    assert message.startswith("5 validation errors detected: ")
    parts = message[len("5 validation errors detected: ") :].split("; ")
    assert sorted(parts) == sorted(
        [
            clause(
                "'hi'", "returnConsumedCapacity", "satisfy enum value set: [INDEXES, TOTAL, NONE]"
            ),
            clause("'abc;'", "tableName", TABLE_PATTERN[len("Member must ") :]),
            clause("'hi'", "returnItemCollectionMetrics", "satisfy enum value set: [SIZE, NONE]"),
            clause(
                "'hi'",
                "returnValues",
                "satisfy enum value set: [ALL_NEW, UPDATED_OLD, ALL_OLD, NONE, UPDATED_NEW]",
            ),
            clause("null", "key", "not be null"),
        ]
    )


def test_more_than_ten_errors_are_capped_at_ten() -> None:
    body = {
        "TableName": "abc",
        "AttributeDefinitions": [{} for _ in range(6)],
        "BillingMode": "PAY_PER_REQUEST",
    }
    message = shape_error("CreateTable", body)
    assert message.startswith("10 validation errors detected: ")
    assert message.count("; ") == 9


def test_member_order_follows_the_services_hash_order() -> None:
    # Observed on the real service: writeCapacityUnits before readCapacityUnits,
    # attributeType before attributeName, attributeName before keyType.
    body = {
        "TableName": "abc",
        "AttributeDefinitions": [{}],
        "KeySchema": [{}],
        "ProvisionedThroughput": {},
    }
    message = shape_error("CreateTable", body)
    order = [
        "provisionedThroughput.writeCapacityUnits",
        "provisionedThroughput.readCapacityUnits",
    ]
    assert message.index(order[0]) < message.index(order[1])
    assert message.index("attributeDefinitions.1.member.attributeType") < message.index(
        "attributeDefinitions.1.member.attributeName"
    )
    assert message.index("keySchema.1.member.attributeName") < message.index(
        "keySchema.1.member.keyType"
    )


def test_attribute_values_are_not_judged_here() -> None:
    # Empty values, several types, bad numbers: the engine's business, not the shape's.
    body = {"TableName": "abc", "Item": {"a": {}, "b": {"S": "", "N": "x"}, "c": {"SS": []}}}
    validate_request("PutItem", body)


# ---------------------------------------------------------------- remembered values


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from("ab_.-!é 9"), max_size=300), min_size=1, max_size=40))
def test_patterned_leaf_answers_the_same_from_memory(values: list[str]) -> None:
    """A patterned string check remembers the values it accepted: it must answer each value as a
    check that never saw it does, however often and in whatever order values come."""
    shape = read_model("dynamodb")["shapes"]["TableName"]
    remembering = string_leaf("TableName", shape)
    for value in values + values[::-1]:
        assert remembering(value) == string_leaf("TableName", shape)(value)


def test_patterned_leaf_memory_is_bounded() -> None:
    check = string_leaf("TableName", read_model("dynamodb")["shapes"]["TableName"])
    for n in range(PASSED_LIMIT * 3):
        assert check(f"table{n}") is None
    assert check("x" * 300) == ["Member must have length less than or equal to 255"]
    assert check("bad name") == [TABLE_PATTERN]
    assert len(check.remembered) == PASSED_LIMIT  # type: ignore[attr-defined]
