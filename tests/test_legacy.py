"""The pre-2014 parameter forms: Expected, ConditionalOperator, AttributeUpdates, AttributesToGet.

Server tests go through boto3; the translator of QueryFilter/ScanFilter-shaped
maps (used by Query and Scan) is also checked directly, because its messages
are pinned against the service by dynalite's suite.
"""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import error_of

from partita.engine.expressions import evaluate
from partita.engine.expressions.legacy import translate_conditions, translate_expected
from partita.errors import ValidationException

KEY = {"pk": {"S": "k"}}
ITEM = {
    **KEY,
    "n": {"N": "5"},
    "s": {"S": "hello"},
    "b": {"B": b"hi there"},
    "ss": {"SS": ["a", "b"]},
    "ns": {"NS": ["2", "4", "7"]},
    "l": {"L": [{"N": "2"}, {"S": "x"}]},
    "m": {"M": {"x": {"N": "1"}}},
    "t": {"BOOL": True},
    "a.b": {"S": "dotted"},
}
INVALID = "One or more parameter values were invalid: "
CONDITION_FAILED = ("ConditionalCheckFailedException", "The conditional request failed")


def cond(op: str, *values: dict[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = {"ComparisonOperator": op}
    if values:
        entry["AttributeValueList"] = list(values)
    return entry


def put_expected(ddb: Any, table: str, expected: dict[str, Any], **extra: Any) -> tuple[str, str] | None:
    """PutItem of ITEM under `expected`; the error, or None when it was written."""
    try:
        ddb.put_item(TableName=table, Item=ITEM, Expected=expected, **extra)
    except ClientError as error:
        return error.response["Error"]["Code"], error.response["Error"]["Message"]
    return None


@pytest.fixture
def table(ddb: Any, hash_table: str) -> str:
    ddb.put_item(TableName=hash_table, Item=ITEM)
    return hash_table


# -- Expected: every operator ----------------------------------------------------------------

PASSING = [
    ("n", cond("EQ", {"N": "5.0"})),
    ("ss", cond("EQ", {"SS": ["b", "a"]})),
    ("l", cond("EQ", {"L": [{"N": "2"}, {"S": "x"}]})),
    ("n", cond("NE", {"N": "6"})),
    ("n", cond("NE", {"S": "5"})),
    ("absent", cond("NE", {"N": "5"})),
    ("n", cond("LE", {"N": "5"})),
    ("s", cond("LT", {"S": "help"})),
    ("n", cond("GE", {"N": "-1"})),
    ("b", cond("GT", {"B": b"hi"})),
    ("n", cond("NOT_NULL")),
    ("absent", cond("NULL")),
    ("s", cond("CONTAINS", {"S": "ell"})),
    ("ss", cond("CONTAINS", {"S": "a"})),
    ("ns", cond("CONTAINS", {"N": "4"})),
    ("l", cond("CONTAINS", {"N": "2"})),
    ("b", cond("CONTAINS", {"B": b"here"})),
    ("s", cond("NOT_CONTAINS", {"S": "dog"})),
    ("ns", cond("NOT_CONTAINS", {"N": "1"})),
    ("s", cond("BEGINS_WITH", {"S": "hell"})),
    ("b", cond("BEGINS_WITH", {"B": b"hi"})),
    ("n", cond("IN", {"N": "1"}, {"N": "5"})),
    ("s", cond("BETWEEN", {"S": "a"}, {"S": "z"})),
    ("n", cond("BETWEEN", {"N": "5"}, {"N": "5"})),
    ("a.b", cond("EQ", {"S": "dotted"})),  # a name, never a document path
    ("n", {"Value": {"N": "5"}}),
    ("n", {"Value": {"N": "5"}, "Exists": True}),
    ("n", {"Value": {"N": "5"}, "ComparisonOperator": "GE"}),
    ("absent", {"Exists": False}),
]

FAILING = [
    ("n", cond("EQ", {"S": "5"})),
    ("absent", cond("EQ", {"N": "5"})),
    ("n", cond("NE", {"N": "5"})),
    ("n", cond("LT", {"N": "5"})),
    ("n", cond("LE", {"S": "9"})),
    ("absent", cond("GT", {"N": "0"})),
    ("absent", cond("NOT_NULL")),
    ("n", cond("NULL")),
    ("s", cond("CONTAINS", {"S": "dog"})),
    ("ns", cond("CONTAINS", {"N": "3"})),
    ("absent", cond("CONTAINS", {"N": "3"})),
    ("s", cond("NOT_CONTAINS", {"S": "ell"})),
    ("absent", cond("NOT_CONTAINS", {"N": "1"})),  # false when missing, unlike NE
    ("n", cond("BEGINS_WITH", {"S": "5"})),
    ("ns", cond("IN", {"N": "2"})),
    ("n", cond("IN", {"N": "1"}, {"N": "2"})),
    ("n", cond("BETWEEN", {"N": "6"}, {"N": "9"})),
    ("n", {"Value": {"N": "6"}}),
    ("n", {"Exists": False}),
    ("absent", {"Value": {"N": "5"}, "Exists": True}),
]


@pytest.mark.parametrize(("name", "entry"), PASSING)
def test_expected_passes(ddb: Any, table: str, name: str, entry: dict[str, Any]) -> None:
    assert put_expected(ddb, table, {name: entry}) is None


@pytest.mark.parametrize(("name", "entry"), FAILING)
def test_expected_fails(ddb: Any, table: str, name: str, entry: dict[str, Any]) -> None:
    assert put_expected(ddb, table, {name: entry}) == CONDITION_FAILED


def test_conditional_operator(ddb: Any, table: str) -> None:
    good, bad = cond("EQ", {"N": "5"}), cond("EQ", {"N": "6"})
    assert put_expected(ddb, table, {"n": good, "s": cond("NOT_NULL")}) is None
    assert put_expected(ddb, table, {"n": good, "s": cond("NULL")}, ConditionalOperator="AND") == CONDITION_FAILED
    assert put_expected(ddb, table, {"n": bad, "s": cond("NOT_NULL")}, ConditionalOperator="OR") is None
    assert put_expected(ddb, table, {"n": bad, "s": cond("NULL")}, ConditionalOperator="OR") == CONDITION_FAILED


def test_expected_on_a_missing_item(ddb: Any, hash_table: str) -> None:
    assert put_expected(ddb, hash_table, {"pk": {"Value": KEY["pk"]}}) == CONDITION_FAILED
    assert put_expected(ddb, hash_table, {"pk": cond("NOT_NULL")}) == CONDITION_FAILED
    assert put_expected(ddb, hash_table, {"pk": {"Exists": False}}) is None


def test_expected_on_delete_and_update(ddb: Any, table: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        ddb.delete_item(TableName=table, Key=KEY, Expected={"n": cond("GT", {"N": "5"})},
                        ReturnValuesOnConditionCheckFailure="ALL_OLD")
    assert error_of(excinfo) == CONDITION_FAILED
    assert excinfo.value.response["Item"]["n"] == {"N": "5"}
    ddb.update_item(TableName=table, Key=KEY, Expected={"t": {"Value": {"BOOL": True}, "Exists": True}},
                    AttributeUpdates={"t": {"Action": "PUT", "Value": {"BOOL": False}}})
    out = ddb.delete_item(TableName=table, Key=KEY, Expected={"t": {"Value": {"BOOL": False}}},
                          ReturnValues="ALL_OLD")
    assert out["Attributes"]["t"] == {"BOOL": False}


# -- Expected: validation -----------------------------------------------------------------------

EXPECTED_ERRORS = [
    ({"a": {}}, "Value must be provided when Exists is null for Attribute: a"),
    ({"a": {"Exists": True}}, "Value must be provided when Exists is true for Attribute: a"),
    ({"a": {"Exists": False, "Value": {"S": "a"}}}, "Value cannot be used when Exists is false for Attribute: a"),
    ({"a": {"ComparisonOperator": "LT"}},
     "Value or AttributeValueList must be used with ComparisonOperator: LT for Attribute: a"),
    ({"a": {"Exists": True, "ComparisonOperator": "LT"}},
     "Exists and ComparisonOperator cannot be used together for Attribute: a"),
    ({"a": {"AttributeValueList": [{"S": "a"}], "Value": {"S": "a"}, "ComparisonOperator": "LT"}},
     "Value and AttributeValueList cannot be used together for Attribute: a"),
    ({"a": {"AttributeValueList": [{"S": "a"}]}},
     "AttributeValueList can only be used with a ComparisonOperator for Attribute: a"),
    ({"a": {"Exists": True, "AttributeValueList": [{"S": "a"}]}},
     "AttributeValueList can only be used with a ComparisonOperator for Attribute: a"),
    ({"a": cond("EQ")}, "Value or AttributeValueList must be used with ComparisonOperator: EQ for Attribute: a"),
    ({"a": {"ComparisonOperator": "EQ", "AttributeValueList": []}},
     "Invalid number of argument(s) for the EQ ComparisonOperator"),
    ({"a": cond("NULL", {"S": "a"})}, "Invalid number of argument(s) for the NULL ComparisonOperator"),
    ({"a": {"ComparisonOperator": "IN", "AttributeValueList": []}},
     "Invalid number of argument(s) for the IN ComparisonOperator"),
    ({"a": cond("BETWEEN", {"N": "1"}, {"N": "10"}, {"N": "12"})},
     "Invalid number of argument(s) for the BETWEEN ComparisonOperator"),
    ({"a": {"Value": {"S": "a"}, "ComparisonOperator": "NULL"}},
     "Invalid number of argument(s) for the NULL ComparisonOperator"),
    ({"a": {"Value": {"S": "a"}, "ComparisonOperator": "BETWEEN"}},
     "Invalid number of argument(s) for the BETWEEN ComparisonOperator"),
    ({"a": cond("IN", {"S": "a"}, {"N": "1"})}, "AttributeValues inside AttributeValueList must be of same type"),
    ({"a": cond("LE", {"SS": ["a"]})}, "ComparisonOperator LE is not valid for SS AttributeValue type"),
    ({"a": cond("CONTAINS", {"L": []})}, "ComparisonOperator CONTAINS is not valid for L AttributeValue type"),
    ({"a": cond("BEGINS_WITH", {"N": "1"})}, "ComparisonOperator BEGINS_WITH is not valid for N AttributeValue type"),
]


@pytest.mark.parametrize(("expected", "message"), EXPECTED_ERRORS)
def test_expected_validation(ddb: Any, hash_table: str, expected: dict[str, Any], message: str) -> None:
    # A malformed Expected is a fault of PutItem's parameters: inside the envelope (a 2026
    # conformance suite's records, docs/decisions.md "Query and Scan").
    want = "1 validation error detected: " + INVALID + message
    assert put_expected(ddb, hash_table, expected) == ("ValidationException", want)
    assert "Item" not in ddb.get_item(TableName=hash_table, Key=KEY)


def test_expected_value_fault(ddb: Any, hash_table: str) -> None:
    """A bad value in Expected (not a number or a repeated member) keeps its bare wording (no record)."""
    assert put_expected(ddb, hash_table, {"a": {"Value": {"SS": []}}}) == (
        "ValidationException", INVALID + "An string set  may not be empty")


def test_between_bounds_in_order(ddb: Any, hash_table: str) -> None:
    assert put_expected(ddb, hash_table, {"a": cond("BETWEEN", {"N": "10"}, {"N": "9"})}) == (
        "ValidationException",
        "The BETWEEN condition was provided a range where the lower bound is greater than the upper bound",
    )


def test_conditional_operator_rules(ddb: Any, hash_table: str) -> None:
    """Messages recorded from the service (ExtendDB's conformance suite)."""
    without = ("ValidationException", "ConditionalOperator cannot be used without Filter or Expected")
    two = ("ValidationException",
           "ConditionalOperator can only be used when Filter or Expected has two or more elements")
    calls = [
        (lambda: ddb.put_item(TableName=hash_table, Item=KEY, ConditionalOperator="AND"), without),
        (lambda: ddb.put_item(TableName=hash_table, Item=KEY, ConditionalOperator="OR", Expected={}), without),
        (lambda: ddb.delete_item(TableName=hash_table, Key=KEY, ConditionalOperator="AND"), without),
        (lambda: ddb.update_item(TableName=hash_table, Key=KEY, ConditionalOperator="AND",
                                 AttributeUpdates={"a": {"Value": {"S": "v"}}}), without),
        (lambda: ddb.put_item(TableName=hash_table, Item=KEY, ConditionalOperator="AND",
                              Expected={"a": cond("NULL")}), two),
        (lambda: ddb.update_item(TableName=hash_table, Key=KEY, ConditionalOperator="AND",
                                 Expected={"a": cond("NULL")}), two),
    ]
    for call, error in calls:
        with pytest.raises(ClientError) as excinfo:
            call()
        assert error_of(excinfo) == error
    assert "Item" not in ddb.get_item(TableName=hash_table, Key=KEY)


def test_mixing_legacy_and_expression_parameters(ddb: Any, hash_table: str) -> None:
    prefix = "Can not use both expression and non-expression parameters in the same request: "
    calls = [
        (lambda: ddb.update_item(
            TableName=hash_table, Key=KEY, AttributeUpdates={"a": {"Value": {"S": "v"}}},
            Expected={"a": cond("NULL")}, ConditionalOperator="AND", UpdateExpression="SET a = :v",
            ConditionExpression="attribute_exists(pk)", ExpressionAttributeValues={":v": {"S": "x"}}),
         "Non-expression parameters: {AttributeUpdates, Expected, ConditionalOperator} "
         "Expression parameters: {UpdateExpression, ConditionExpression}"),
        (lambda: ddb.update_item(
            TableName=hash_table, Key=KEY, Expected={"a": cond("NULL"), "b": cond("NULL")},
            UpdateExpression="SET c = :v", ExpressionAttributeValues={":v": {"S": "x"}}),
         "Non-expression parameters: {Expected} Expression parameters: {UpdateExpression}"),
        (lambda: ddb.update_item(
            TableName=hash_table, Key=KEY, AttributeUpdates={"a": {"Value": {"S": "v"}}},
            ConditionExpression="attribute_exists(pk)"),
         "Non-expression parameters: {AttributeUpdates} Expression parameters: {ConditionExpression}"),
        (lambda: ddb.put_item(TableName=hash_table, Item=KEY, ConditionalOperator="AND",
                              ConditionExpression="attribute_exists(pk)"),
         "Non-expression parameters: {ConditionalOperator} Expression parameters: {ConditionExpression}"),
        (lambda: ddb.delete_item(TableName=hash_table, Key=KEY, Expected={"a": cond("NULL")},
                                 ConditionalOperator="AND", ConditionExpression="attribute_exists(pk)"),
         "Non-expression parameters: {Expected, ConditionalOperator} Expression parameters: {ConditionExpression}"),
        (lambda: ddb.get_item(TableName=hash_table, Key=KEY, AttributesToGet=["a"], ProjectionExpression="a"),
         "Non-expression parameters: {AttributesToGet} Expression parameters: {ProjectionExpression}"),
    ]
    for call, message in calls:
        with pytest.raises(ClientError) as excinfo:
            call()
        assert error_of(excinfo) == ("ValidationException", prefix + message)


def test_expression_values_without_expressions(ddb: Any, hash_table: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        ddb.put_item(TableName=hash_table, Item=KEY, Expected={"a": cond("NULL")},
                     ExpressionAttributeValues={":a": {"S": "a"}})
    assert error_of(excinfo) == (
        "ValidationException",
        "1 validation error detected: ExpressionAttributeValues can only be specified when using expressions",
    )


# -- AttributeUpdates ---------------------------------------------------------------------------


def legacy_update(ddb: Any, table: str, updates: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return ddb.update_item(TableName=table, Key=KEY, AttributeUpdates=updates, **extra)


def test_attribute_updates_put_and_delete(ddb: Any, hash_table: str) -> None:
    out = legacy_update(ddb, hash_table, {"a": {"Value": {"S": "1"}}, "b": {"Action": "PUT", "Value": {"N": "2"}},
                                          "gone": {"Action": "DELETE"}}, ReturnValues="ALL_NEW")
    assert out["Attributes"] == {**KEY, "a": {"S": "1"}, "b": {"N": "2"}}
    out = legacy_update(ddb, hash_table, {"a": {"Action": "DELETE"}, "b": {"Value": {"N": "3"}}},
                        ReturnValues="UPDATED_OLD")
    assert out["Attributes"] == {"a": {"S": "1"}, "b": {"N": "2"}}
    assert ddb.get_item(TableName=hash_table, Key=KEY)["Item"] == {**KEY, "b": {"N": "3"}}


def test_attribute_updates_add(ddb: Any, hash_table: str) -> None:
    out = legacy_update(ddb, hash_table, {
        "n": {"Action": "ADD", "Value": {"N": "5"}},
        "ss": {"Action": "ADD", "Value": {"SS": ["a", "b"]}},
        "l": {"Action": "ADD", "Value": {"L": [{"S": "a"}, {"N": "1"}]}},
        "d": {"Action": "DELETE", "Value": {"SS": ["a"]}},
    }, ReturnValues="UPDATED_NEW")
    assert out["Attributes"] == {"n": {"N": "5"}, "ss": {"SS": ["a", "b"]}, "l": {"L": [{"S": "a"}, {"N": "1"}]}}
    out = legacy_update(ddb, hash_table, {
        "n": {"Action": "ADD", "Value": {"N": "-7.5"}},
        "ss": {"Action": "ADD", "Value": {"SS": ["b", "c"]}},
        "l": {"Action": "ADD", "Value": {"L": [{"S": "b"}]}},
    }, ReturnValues="UPDATED_NEW")
    attributes = out["Attributes"]
    assert attributes["n"] == {"N": "-2.5"}
    assert sorted(attributes["ss"]["SS"]) == ["a", "b", "c"]
    assert attributes["l"] == {"L": [{"S": "a"}, {"N": "1"}, {"S": "b"}]}


def test_attribute_updates_delete_from_sets(ddb: Any, hash_table: str) -> None:
    legacy_update(ddb, hash_table, {"ns": {"Value": {"NS": ["1", "2", "3"]}}, "c": {"Value": {"S": "a"}}})
    out = legacy_update(ddb, hash_table, {"ns": {"Action": "DELETE", "Value": {"NS": ["1", "4"]}}},
                        ReturnValues="UPDATED_NEW")
    assert sorted(out["Attributes"]["ns"]["NS"]) == ["2", "3"]
    out = legacy_update(ddb, hash_table, {"ns": {"Action": "DELETE", "Value": {"NS": ["2", "3"]}}},
                        ReturnValues="UPDATED_NEW")
    assert "Attributes" not in out
    assert ddb.get_item(TableName=hash_table, Key=KEY)["Item"] == {**KEY, "c": {"S": "a"}}


@pytest.mark.parametrize(("updates", "message"), [
    ({"a": {"Action": "PUT"}}, "Only DELETE action is allowed when no attribute value is specified"),
    ({"a": {"Action": "ADD"}}, "Only DELETE action is allowed when no attribute value is specified"),
    ({"a": {"Action": "DELETE", "Value": {"S": "1"}}}, "DELETE action with value is not supported for the type S"),
    ({"a": {"Action": "DELETE", "Value": {"N": "1"}}}, "DELETE action with value is not supported for the type N"),
    ({"a": {"Action": "DELETE", "Value": {"L": []}}}, "DELETE action with value is not supported for the type L"),
    ({"a": {"Action": "ADD", "Value": {"S": "1"}}}, "ADD action is not supported for the type S"),
    ({"a": {"Action": "ADD", "Value": {"B": b"b"}}}, "ADD action is not supported for the type B"),
    ({"a": {"Action": "ADD", "Value": {"M": {}}}}, "ADD action is not supported for the type M"),
    ({"a": {"Action": "ADD", "Value": {"BOOL": True}}}, "ADD action is not supported for the type BOOL"),
    ({"pk": {"Value": {"S": "other"}}}, "Cannot update attribute pk. This attribute is part of the key"),
    ({"pk": {"Action": "DELETE"}}, "Cannot update attribute pk. This attribute is part of the key"),
])
def test_attribute_updates_validation(ddb: Any, hash_table: str, updates: dict[str, Any], message: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        legacy_update(ddb, hash_table, updates)
    assert error_of(excinfo) == ("ValidationException", INVALID + message)


@pytest.mark.parametrize("updates", [
    {"b": {"Action": "DELETE", "Value": {"NS": ["1"]}}},
    {"b": {"Action": "DELETE", "Value": {"BS": [b"a"]}}},
    {"c": {"Action": "DELETE", "Value": {"NS": ["1"]}}},
    {"b": {"Action": "ADD", "Value": {"NS": ["1"]}}},
    {"d": {"Action": "ADD", "Value": {"N": "1"}}},
    {"c": {"Action": "ADD", "Value": {"L": []}}},
])
def test_attribute_updates_type_mismatch(ddb: Any, hash_table: str, updates: dict[str, Any]) -> None:
    legacy_update(ddb, hash_table, {"b": {"Value": {"SS": ["1"]}}, "c": {"Value": {"N": "1"}},
                                    "d": {"Value": {"NS": ["1"]}}})
    with pytest.raises(ClientError) as excinfo:
        legacy_update(ddb, hash_table, updates)
    assert error_of(excinfo) == ("ValidationException", "Type mismatch for attribute to update")


def test_attribute_updates_item_size(ddb: Any, hash_table: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        legacy_update(ddb, hash_table, {"b": {"Value": {"S": "a" * 409600}}})
    assert error_of(excinfo) == ("ValidationException", "Item size to update has exceeded the maximum allowed size")


# -- AttributesToGet ----------------------------------------------------------------------------


def test_attributes_to_get(ddb: Any, table: str) -> None:
    item = ddb.get_item(TableName=table, Key=KEY, AttributesToGet=["n", "a.b", "absent", "m"])["Item"]
    assert item == {"n": {"N": "5"}, "a.b": {"S": "dotted"}, "m": {"M": {"x": {"N": "1"}}}}


def test_attributes_to_get_duplicates(ddb: Any, table: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        ddb.get_item(TableName=table, Key=KEY, AttributesToGet=["n", "s", "n"])
    assert error_of(excinfo) == ("ValidationException", INVALID + "Duplicate value in attribute name: n")


# -- the translator used by Query and Scan -------------------------------------------------------


def test_filter_translation_evaluates_like_expected() -> None:
    item = {"n": {"N": "5"}, "s": {"S": "hello"}}
    legacy = translate_conditions({"n": cond("GT", {"N": "1"}), "s": cond("BEGINS_WITH", {"S": "x"})}, "OR",
                                  "ScanFilter")
    assert legacy is not None
    assert evaluate(legacy.condition, item, legacy.names, legacy.values)
    legacy = translate_conditions({"n": cond("GT", {"N": "1"}), "s": cond("BEGINS_WITH", {"S": "x"})}, None,
                                  "QueryFilter")
    assert legacy is not None
    assert not evaluate(legacy.condition, item, legacy.names, legacy.values)
    assert translate_conditions({}, None, "ScanFilter") is None
    assert translate_expected(None, None) is None


@pytest.mark.parametrize(("entry", "message"), [
    (cond("NE"), "Invalid number of argument(s) for the NE ComparisonOperator"),
    (cond("NOT_NULL", {"S": "a"}), "Invalid number of argument(s) for the NOT_NULL ComparisonOperator"),
    (cond("LE", {"S": "a"}, {"S": "a"}), "Invalid number of argument(s) for the LE ComparisonOperator"),
    (cond("LT", {"NS": ["1"]}), "ComparisonOperator LT is not valid for NS AttributeValue type"),
    (cond("GE", {"BS": ["YWJj"]}), "ComparisonOperator GE is not valid for BS AttributeValue type"),
    (cond("NOT_CONTAINS", {"SS": ["a"]}), "ComparisonOperator NOT_CONTAINS is not valid for SS AttributeValue type"),
    (cond("BEGINS_WITH", {"SS": ["a"]}), "ComparisonOperator BEGINS_WITH is not valid for SS AttributeValue type"),
    (cond("IN", {"SS": ["a"]}), "ComparisonOperator IN is not valid for SS AttributeValue type"),
    (cond("BETWEEN", {"S": "a"}, {"SS": ["a"]}), "ComparisonOperator BETWEEN is not valid for SS AttributeValue type"),
    (cond("BETWEEN", {"S": "a"}, {"N": "1"}), "AttributeValues inside AttributeValueList must be of same type"),
])
def test_filter_validation_messages(entry: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationException) as excinfo:
        translate_conditions({"a": entry}, None, "ScanFilter")
    assert excinfo.value.message == INVALID + message


# -- ProjectionExpression (the projection code AttributesToGet shares) -----------------------------


def test_projection_expression_with_nested_paths(ddb: Any, hash_table: str) -> None:
    item = {**KEY, "a": {"M": {"b": {"L": [{"N": "0"}, {"M": {"c": {"S": "deep"}, "d": {"S": "no"}}}]}}},
            "d": {"S": "top"}, "e": {"S": "left out"}, "l": {"L": [{"N": "0"}, {"N": "1"}, {"N": "2"}]}}
    ddb.put_item(TableName=hash_table, Item=item)
    out = ddb.get_item(TableName=hash_table, Key=KEY, ProjectionExpression="a.b[1].c, d, l[2], l[0], l[7], zz.y")
    assert out["Item"] == {
        "a": {"M": {"b": {"L": [{"M": {"c": {"S": "deep"}}}]}}},
        "d": {"S": "top"},
        "l": {"L": [{"N": "0"}, {"N": "2"}]},
    }


@pytest.mark.parametrize(("projection", "message"), [
    ("a, b, a", "Two document paths overlap with each other; must remove or rewrite one of these paths; "
                "path one: [a], path two: [a]"),
    ("a.b, a", "Two document paths overlap with each other; must remove or rewrite one of these paths; "
               "path one: [a, b], path two: [a]"),
    ("a[0], a.b", "Two document paths conflict with each other; must remove or rewrite one of these paths; "
                  "path one: [a, [0]], path two: [a, b]"),
    ("a, #b", "An expression attribute name used in the document path is not defined; attribute name: #b"),
    ("a.", 'Syntax error; token: "<EOF>", near: "."'),
])
def test_projection_expression_errors(ddb: Any, hash_table: str, projection: str, message: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        ddb.get_item(TableName=hash_table, Key=KEY, ProjectionExpression=projection)
    assert error_of(excinfo) == ("ValidationException", f"Invalid ProjectionExpression: {message}")
