"""Query requests DynamoDB refuses, with its exact messages: key condition forms,
legacy parameters, start keys, Select, and checks against the table's key schema.

Expected messages are the real service's, as recorded by dynalite's query tests
and moto's aws-verified tests (see docs/decisions.md, "Query and Scan").
Validation tests that must fail before the table is looked up use a table that
does not exist, which proves the order of the checks.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import create_table, error_of, raw_request

MISSING_TABLE = "no-such-table-for-query"


def query_error(ddb: Any, table: str, **kwargs: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        ddb.query(TableName=table, **kwargs)
    return error_of(excinfo)


def eq(pk: dict[str, Any]) -> dict[str, Any]:
    """The partition-key condition, as an expression and as KeyConditions."""
    return {"KeyConditionExpression": "pk = :pk", "ExpressionAttributeValues": {":pk": pk}}


@pytest.fixture(scope="module")
def schema_tables(ddb: Any) -> tuple[str, str]:
    """A hash-key table and a pk/sk (N) table for the validation tests, made once."""
    suffix = uuid.uuid4().hex[:10]
    create_table(ddb, f"qh-{suffix}")
    create_table(ddb, f"qr-{suffix}", range_key=("sk", "N"))
    return f"qh-{suffix}", f"qr-{suffix}"


# -- validation before the table is read ----------------------------------------------


def test_key_condition_required(ddb: Any) -> None:
    assert query_error(ddb, MISSING_TABLE) == (
        "ValidationException",
        "Either the KeyConditions or KeyConditionExpression parameter must be specified in the request.",
    )


@pytest.mark.parametrize(("expression", "word"), [
    ("a > b and size(b) > c or a > c", "OR"),
    ("a in (b, size(c), d)", "IN"),
    ("attribute_exists(a)", "attribute_exists"),
    ("attribute_not_exists(a)", "attribute_not_exists"),
    ("contains(a.d, b)", "contains"),
    ("not a > b", "NOT"),
    ("a <> b", "<>"),
])
def test_invalid_operators(ddb: Any, expression: str, word: str) -> None:
    assert query_error(ddb, MISSING_TABLE, KeyConditionExpression=expression) == (
        "ValidationException", f"Invalid operator used in KeyConditionExpression: {word}")


def test_attribute_type_is_not_a_key_operator(ddb: Any) -> None:
    assert query_error(ddb, MISSING_TABLE, KeyConditionExpression="attribute_type(a, :a)",
                       ExpressionAttributeValues={":a": {"S": "S"}}) == (
        "ValidationException", "Invalid operator used in KeyConditionExpression: attribute_type")


KEY_FORM_ERRORS = [
    (":a between size(b) and size(a) and b > :b",
     "Invalid condition in KeyConditionExpression: BETWEEN operator must have the key attribute as its first operand"),
    ("begins_with(:a, b) and a > :b",
     "Invalid condition in KeyConditionExpression: begins_with operator must have the key attribute as its "
     "first operand"),
    ("size(b) > a AND a.b > b AND b > c", "KeyConditionExpressions cannot contain nested operations"),
    ("a > size(b.d)", "KeyConditionExpressions cannot contain nested operations"),
    ("a between size(b) and size(a)", "KeyConditionExpressions cannot contain nested operations"),
    ("b > a.b", "Invalid condition in KeyConditionExpression: Multiple attribute names used in one condition"),
    ("b between c[1] and d", "Invalid condition in KeyConditionExpression: Multiple attribute names used in one condition"),
    ("a between b and size(a)", "Invalid condition in KeyConditionExpression: Multiple attribute names used in one condition"),
    ("begins_with(a, b)", "Invalid condition in KeyConditionExpression: Multiple attribute names used in one condition"),
    ("b.d > a AND c.d > e.f", "KeyConditionExpressions cannot have conditions on nested attributes"),
    ("a.d > c", "KeyConditionExpressions cannot have conditions on nested attributes"),
    ("b[0] > a", "KeyConditionExpressions cannot have conditions on nested attributes"),
    (":b > :a AND a < :b", "Invalid condition in KeyConditionExpression: No key attribute specified"),
    (":a > b AND :a < :b", "Invalid condition in KeyConditionExpression: No key attribute specified"),
    # dynalite recorded these bare; DynamoDB names the expression since (a 2026 conformance suite).
    ("b > :a AND b < :a and c = :a and d = :a",
     "Invalid KeyConditionExpression: KeyConditionExpressions must only contain one condition per key"),
    ("(a > :a and b > :a) and (b > :a and c > :a)",
     "Invalid KeyConditionExpression: KeyConditionExpressions must only contain one condition per key"),
    (":a = a and b = :a and :a = c", "Conditions can be of length 1 or 2 only"),
    ("(a > :a and b > :a) and (c > :a and d > :a) and (e > :a and f > :a)", "Conditions can be of length 1 or 2 only"),
]


@pytest.mark.parametrize(("expression", "message"), KEY_FORM_ERRORS)
def test_key_condition_forms(ddb: Any, expression: str, message: str) -> None:
    used = {v: {"S": "1"} for v in (":a", ":b") if v in expression}
    kwargs: dict[str, Any] = {"KeyConditionExpression": expression}
    if used:
        kwargs["ExpressionAttributeValues"] = used
    assert query_error(ddb, MISSING_TABLE, **kwargs) == ("ValidationException", message)


def test_between_bounds_in_key_condition(ddb: Any) -> None:
    assert query_error(ddb, MISSING_TABLE, KeyConditionExpression="a between :b and :a",
                       ExpressionAttributeValues={":a": {"S": "a"}, ":b": {"N": "1"}}) == (
        "ValidationException",
        "Invalid KeyConditionExpression: The BETWEEN operator requires same data type for lower and upper "
        "bounds; lower bound operand: AttributeValue: {N:1}, upper bound operand: AttributeValue: {S:a}")
    assert query_error(ddb, MISSING_TABLE, KeyConditionExpression="a between :b and :a",
                       ExpressionAttributeValues={":a": {"S": "a"}, ":b": {"S": "b"}}) == (
        "ValidationException",
        "Invalid KeyConditionExpression: The BETWEEN operator requires upper bound to be greater than or "
        "equal to lower bound; lower bound operand: AttributeValue: {S:b}, upper bound operand: "
        "AttributeValue: {S:a}")


def test_empty_key_condition_expression_is_parsed_first(ddb: Any) -> None:
    assert query_error(ddb, MISSING_TABLE, KeyConditionExpression="", FilterExpression="",
                       ProjectionExpression="", ExpressionAttributeValues={":0": {"S": "b"}}) == (
        "ValidationException", "Invalid KeyConditionExpression: The expression can not be empty;")


def test_expression_and_legacy_parameters_do_not_mix(ddb: Any) -> None:
    assert query_error(ddb, MISSING_TABLE, KeyConditionExpression="a = :a",
                       ExpressionAttributeValues={":a": {"S": "a"}}, AttributesToGet=["a"],
                       KeyConditions={"a": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "a"}]}}) == (
        "ValidationException",
        "Can not use both expression and non-expression parameters in the same request: Non-expression "
        "parameters: {AttributesToGet, KeyConditions} Expression parameters: {KeyConditionExpression}")
    assert query_error(ddb, MISSING_TABLE, ExpressionAttributeValues={":a": {"S": "a"}},
                       KeyConditions={"a": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "a"}]}}) == (
        "ValidationException",
        "ExpressionAttributeValues can only be specified when using expressions: FilterExpression and "
        "KeyConditionExpression are null")


def test_legacy_key_condition_values(ddb: Any) -> None:
    def legacy_error(conditions: dict[str, Any]) -> tuple[str, str]:
        return query_error(ddb, MISSING_TABLE, KeyConditions=conditions)

    assert legacy_error({"a": {"ComparisonOperator": "EQ"}}) == (
        "ValidationException",
        "One or more parameter values were invalid: Invalid number of argument(s) for the EQ ComparisonOperator")
    assert legacy_error({"a": {"ComparisonOperator": "BETWEEN",
                               "AttributeValueList": [{"S": "b"}, {"S": "a"}]}}) == (
        "ValidationException",
        "The BETWEEN condition was provided a range where the lower bound is greater than the upper bound")
    assert legacy_error({"a": {"ComparisonOperator": "IN", "AttributeValueList": [{"S": "b"}, {"N": "1"}]}}) == (
        "ValidationException",
        "One or more parameter values were invalid: AttributeValues inside AttributeValueList must be of same type")
    assert legacy_error({"a": {"ComparisonOperator": "BEGINS_WITH", "AttributeValueList": [{"N": "1"}]}}) == (
        "ValidationException",
        "One or more parameter values were invalid: ComparisonOperator BEGINS_WITH is not valid for N "
        "AttributeValue type")
    three = {k: {"ComparisonOperator": "NULL"} for k in "abc"}
    assert legacy_error(three) == ("ValidationException", "Conditions can be of length 1 or 2 only")


def test_duplicate_attributes_to_get(ddb: Any) -> None:
    assert query_error(ddb, MISSING_TABLE, AttributesToGet=["a", "a"], KeyConditions={
        "a": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "a"}]}}) == (
        "ValidationException", "One or more parameter values were invalid: Duplicate value in attribute name: a")


@pytest.mark.parametrize(("value", "message"), [
    ({}, "The provided starting key is invalid: Supplied AttributeValue is empty, must contain exactly one of "
         "the supported datatypes"),
    ({"SS": []}, "The provided starting key is invalid: One or more parameter values were invalid: An string "
                 "set  may not be empty"),
    ({"NS": []}, "One or more parameter values were invalid: An number set  may not be empty"),
    ({"N": "1e126"}, "Number overflow. Attempting to store a number with magnitude larger than supported range"),
    ({"S": "a", "N": "1"}, "The provided starting key is invalid: Supplied AttributeValue has more than one "
                           "datatypes set, must contain exactly one of the supported datatypes"),
])
def test_start_key_values(endpoint: str, value: dict[str, Any], message: str) -> None:
    # a raw request: the SDK would not send some of these values
    response = raw_request(endpoint, "Query", {"TableName": MISSING_TABLE, "KeyConditionExpression": "",
                                               "ExclusiveStartKey": {"a": value}})
    assert response.status == 400
    assert response.json()["message"] == message


SELECT_ERRORS = [
    ({"Select": "SPECIFIC_ATTRIBUTES"},
     "Must specify the AttributesToGet or ProjectionExpression when choosing to get SPECIFIC_ATTRIBUTES"),
    ({"Select": "ALL_PROJECTED_ATTRIBUTES"}, "ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName"),
    ({"Select": "COUNT", "ProjectionExpression": "a"},
     "Cannot specify the ProjectionExpression when choosing to get only the Count"),
    ({"Select": "ALL_ATTRIBUTES", "ProjectionExpression": "a"},
     "Cannot specify the ProjectionExpression when choosing to get ALL_ATTRIBUTES"),
    ({"Select": "ALL_PROJECTED_ATTRIBUTES", "ProjectionExpression": "a"},
     "Cannot specify the ProjectionExpression when choosing to get ALL_PROJECTED_ATTRIBUTES"),
    ({"Select": "COUNT", "AttributesToGet": ["a"]}, "Cannot specify the AttributesToGet when choosing to get only the Count"),
]


@pytest.mark.parametrize(("extra", "message"), SELECT_ERRORS)
def test_select_rules(ddb: Any, extra: dict[str, Any], message: str) -> None:
    if "AttributesToGet" in extra:
        key = {"KeyConditions": {"a": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "a"}]}}}
    else:
        key = {"KeyConditionExpression": "a = :a", "ExpressionAttributeValues": {":a": {"S": "a"}}}
    assert query_error(ddb, MISSING_TABLE, **key, **extra) == (
        "ValidationException", "1 validation error detected: " + message)


# -- validation against the table ---------------------------------------------------------


def test_missing_table(ddb: Any) -> None:
    assert query_error(ddb, MISSING_TABLE, **eq({"S": "a"})) == (
        "ResourceNotFoundException", "Requested resource not found")


def test_unknown_index(ddb: Any, hash_table: str) -> None:
    assert query_error(ddb, hash_table, IndexName="whatever", **eq({"S": "a"})) == (
        "ValidationException", "The table does not have the specified index: whatever")


TABLE_ERRORS = [
    # (range table?, request, message)
    (True, {"KeyConditionExpression": "sk = :n", "ExpressionAttributeValues": {":n": {"N": "1"}}},
     "Query condition missed key schema element: pk"),
    (True, {"KeyConditionExpression": "pk = :s AND attr1 = :n",
            "ExpressionAttributeValues": {":s": {"S": "a"}, ":n": {"N": "1"}}},
     "Query condition missed key schema element: sk"),
    (False, {"KeyConditionExpression": "pk = :s AND attr1 = :s", "ExpressionAttributeValues": {":s": {"S": "a"}}},
     "Query key condition not supported"),
    (False, {"KeyConditionExpression": "pk > :s", "ExpressionAttributeValues": {":s": {"S": "a"}}},
     "Query key condition not supported"),
    (False, {"KeyConditionExpression": "begins_with(pk, :s)", "ExpressionAttributeValues": {":s": {"S": "a"}}},
     "Query key condition not supported"),
    (False, {"KeyConditionExpression": ":n > pk", "ExpressionAttributeValues": {":n": {"N": "1"}}},
     "One or more parameter values were invalid: Condition parameter type does not match schema type"),
    (True, {"KeyConditionExpression": "pk = :s AND sk = :s", "ExpressionAttributeValues": {":s": {"S": "a"}}},
     "One or more parameter values were invalid: Condition parameter type does not match schema type"),
    (False, {"KeyConditions": {"pk": {"ComparisonOperator": "NE", "AttributeValueList": [{"S": "a"}]}}},
     "Attempted conditional constraint is not an indexable operation"),
    (True, {"KeyConditions": {"pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "a"}]},
                              "sk": {"ComparisonOperator": "NOT_NULL"}}},
     "Attempted conditional constraint is not an indexable operation"),
    (False, {"KeyConditionExpression": "pk = :s", "ExpressionAttributeValues": {":s": {"S": ""}}},
     "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an "
     "empty string value. Key: pk"),
    (False, {**eq({"S": "a"}), "FilterExpression": "pk = :b",
             "ExpressionAttributeValues": {":pk": {"S": "a"}, ":b": {"N": "1"}}},
     "Filter Expression can only contain non-primary key attributes: Primary key attribute: pk"),
    (True, {**eq({"S": "a"}), "FilterExpression": "attribute_exists(sk.c) AND c = :b",
            "ExpressionAttributeValues": {":pk": {"S": "a"}, ":b": {"N": "1"}}},
     "Filter Expression can only contain non-primary key attributes: Primary key attribute: sk"),
    (True, {"KeyConditions": {"pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "a"}]}},
            "QueryFilter": {"sk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"N": "1"}]}}},
     "QueryFilter can only contain non-primary key attributes: Primary key attribute: sk"),
    (False, {**eq({"S": "a"}), "ProjectionExpression": "pk.x"},
     "Key attributes must be scalars; list random access '[]' and map lookup '.' are not allowed: Key: pk"),
]


@pytest.mark.parametrize(("ranged", "request_", "message"), TABLE_ERRORS)
def test_key_schema_errors(ddb: Any, schema_tables: tuple[str, str], ranged: bool,
                           request_: dict[str, Any], message: str) -> None:
    assert query_error(ddb, schema_tables[ranged], **request_) == ("ValidationException", message)


START_KEY_ERRORS = [
    # (range table?, key condition, start key, message)
    (False, eq({"S": "a"}), {}, "The provided starting key is invalid"),
    (False, eq({"S": "a"}), {"other": {"S": "a"}}, "The provided starting key is invalid"),
    (False, eq({"S": "a"}), {"pk": {"S": "a"}, "x": {"S": "a"}}, "The provided starting key is invalid"),
    (False, eq({"S": "a"}), {"pk": {"N": "1"}}, "The provided key element does not match the schema"),
    (True, eq({"S": "a"}), {"pk": {"S": "a"}, "sk": {"S": "1"}}, "The provided key element does not match the schema"),
    (True, {"KeyConditionExpression": "sk = :n", "ExpressionAttributeValues": {":n": {"N": "1"}}},
     {"pk": {"S": "a"}, "sk": {"N": "1"}}, "Query condition missed key schema element: pk"),
    (True, eq({"S": "b"}), {"pk": {"S": "a"}, "sk": {"N": "1"}},
     "The provided starting key is outside query boundaries based on provided conditions"),
    (True, {"KeyConditionExpression": "pk = :a AND sk > :n",
            "ExpressionAttributeValues": {":a": {"S": "b"}, ":n": {"N": "5"}}},
     {"pk": {"S": "b"}, "sk": {"N": "1"}}, "The provided starting key does not match the range key predicate"),
    (True, {"KeyConditionExpression": "pk = :a AND sk < :n",
            "ExpressionAttributeValues": {":a": {"S": "b"}, ":n": {"N": "5"}}},
     {"pk": {"S": "a"}, "sk": {"N": "1"}}, "The query can return at most one row and cannot be restarted"),
    (False, eq({"S": "a"}), {"pk": {"S": ""}},
     "The provided starting key is invalid: One or more parameter values were invalid: The AttributeValue for "
     "a key attribute cannot contain an empty string value. Key: pk"),
]


@pytest.mark.parametrize(("ranged", "condition", "start", "message"), START_KEY_ERRORS)
def test_start_key_against_schema(ddb: Any, schema_tables: tuple[str, str], ranged: bool,
                                  condition: dict[str, Any], start: dict[str, Any], message: str) -> None:
    assert query_error(ddb, schema_tables[ranged], ExclusiveStartKey=start, **condition) == (
        "ValidationException", message)


def test_conditional_operator_needs_a_filter(ddb: Any, hash_table: str) -> None:
    keys = {"KeyConditions": {"pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "a"}]}}}
    assert query_error(ddb, hash_table, ConditionalOperator="OR", **keys) == (
        "ValidationException", "ConditionalOperator cannot be used without Filter or Expected")


def test_limit_of_zero_is_worded_by_the_validation_framework(endpoint: str) -> None:
    """A 2026 conformance suite's exact answer: no value echoed, the member named as sent."""
    response = raw_request(endpoint, "Query", {"TableName": MISSING_TABLE, "KeyConditionExpression": "pk = :v",
                                               "ExpressionAttributeValues": {":v": {"S": "val"}}, "Limit": 0})
    assert (response.status, response.json()) == (400, {
        "__type": "com.amazon.coral.validate#ValidationException",
        "message": "1 validation error detected: Value at 'Limit' failed to satisfy constraint: Member must have "
                   "value greater than or equal to 1"})
    # Other members keep coral's form, value echoed (ListTables, 2026 catalogue).
    response = raw_request(endpoint, "ListTables", {"Limit": 0})
    assert response.json()["message"] == (
        "1 validation error detected: Value '0' at 'limit' failed to satisfy constraint: Member must have value "
        "greater than or equal to 1")
