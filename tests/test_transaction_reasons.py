"""Which transaction errors are cancellation reasons and which are plain exceptions (issue 26, class 3).

A key that does not fit its table's schema (a key attribute of another type,
not a scalar, missing, or an extra one; an index key of another type)
cancels the transaction: that action's reason is ValidationError with the
check's message, every other action's None, and only the first such action
is reported; no condition is evaluated. What the request shows on its own
(expressions, values, empty key values, the table) stays a plain exception.

Sources (docs/decisions.md, "Batches and transactions"): ScyllaDB's
Alternator suite (test_transact.py, run against DynamoDB), floci's handler
tests ("checked against DynamoDB in eu-west-2"), a 2026 conformance suite's
nesting-depth captures (us-east-1 and eu-west-2, 2026-10-09).
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import create_table, raw_request
from hypothesis import given, settings
from hypothesis import strategies as st
from test_indexes import attr, create_indexed, gsi

CANCELLED = "Transaction cancelled, please refer cancellation reasons for specific reasons [{}]"
NONE = {"Code": "None"}
SCHEMA = "The provided key element does not match the schema"
INVALID = "One or more parameter values were invalid: "
NEST_BARE = ("Nesting Levels have exceeded supported limits: "
             "Attributes in the item have nested levels beyond supported limit")


def S(value: str) -> dict[str, str]:  # noqa: N802
    return {"S": value}


@pytest.fixture(scope="module")
def indexed(ddb: Any) -> str:
    """pk (S) + sk (N), and a GSI on g (S)."""
    name = f"txr-{uuid.uuid4().hex[:8]}"
    create_indexed(ddb, name, AttributeDefinitions=[attr("pk"), attr("sk", "N"), attr("g")],
                   GlobalSecondaryIndexes=[gsi("by-g", "g")])
    return name


def cancelled(ddb: Any, items: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    with pytest.raises(ClientError) as excinfo:
        ddb.transact_write_items(TransactItems=items)
    response = excinfo.value.response
    assert response["Error"]["Code"] == "TransactionCanceledException"
    return response["Error"]["Message"], response["CancellationReasons"]


def refused(call: Any, **kwargs: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        call(**kwargs)
    error = excinfo.value.response["Error"]
    assert "CancellationReasons" not in excinfo.value.response
    return error["Code"], error["Message"]


# -- Bad keys, as Hypothesis draws them ---------------------------------------------------

#: Values of every type but S and N (the table's key types here), each one not a scalar of the declared type.
OTHER_VALUES: list[dict[str, Any]] = [
    {"B": "AQI="}, {"BOOL": True}, {"NULL": True}, {"SS": ["a"]}, {"NS": ["1"]}, {"BS": ["AQI="]},
    {"L": [S("a")]}, {"M": {"a": S("b")}}, {"M": {}}, {"L": []},
]


def _type_of(value: dict[str, Any]) -> str:
    return next(iter(value))


@st.composite
def bad_writes(draw: st.DrawFn, table: str) -> tuple[dict[str, Any], str]:
    """One write action whose key does not fit the schema, and its reason's message."""
    kind = draw(st.sampled_from(["put_pk", "put_sk", "put_missing", "put_gsi", "keyed", "update_gsi"]))
    pk, sk = S(uuid.uuid4().hex), {"N": str(draw(st.integers(0, 10**6)))}
    if kind == "put_pk":
        value = draw(st.sampled_from([{"N": "7"}, *OTHER_VALUES]))
        return ({"Put": {"TableName": table, "Item": {"pk": value, "sk": sk}}},
                f"{INVALID}Type mismatch for key pk expected: S actual: {_type_of(value)}")
    if kind == "put_sk":
        value = draw(st.sampled_from([S("7"), *OTHER_VALUES]))
        return ({"Put": {"TableName": table, "Item": {"pk": pk, "sk": value}}},
                f"{INVALID}Type mismatch for key sk expected: N actual: {_type_of(value)}")
    if kind == "put_missing":
        missing = draw(st.sampled_from(["pk", "sk"]))
        item = {"pk": pk, "sk": sk, "other": S("x")}
        del item[missing]
        return {"Put": {"TableName": table, "Item": item}}, f"{INVALID}Missing the key {missing} in the item"
    if kind == "put_gsi":
        value = draw(st.sampled_from([{"N": "1"}, *OTHER_VALUES]))
        return ({"Put": {"TableName": table, "Item": {"pk": pk, "sk": sk, "g": value}}},
                f"{INVALID}Type mismatch for Index Key g Expected: S Actual: {_type_of(value)} IndexName: by-g")
    if kind == "update_gsi":
        return ({"Update": {"TableName": table, "Key": {"pk": pk, "sk": sk}, "UpdateExpression": "SET g = :g",
                            "ExpressionAttributeValues": {":g": {"N": "1"}}}},
                f"{INVALID}Type mismatch for Index Key g Expected: S Actual: N IndexName: by-g")
    # Delete, Update and ConditionCheck name a Key: any misfit is the one schema message.
    key: dict[str, Any] = {"pk": pk, "sk": sk}
    misfit = draw(st.sampled_from(["type", "missing", "extra"]))
    if misfit == "type":
        key[draw(st.sampled_from(["pk", "sk"]))] = draw(st.sampled_from(OTHER_VALUES))
    elif misfit == "missing":
        del key[draw(st.sampled_from(["pk", "sk"]))]
    else:
        key["extra"] = S("x")
    action = draw(st.sampled_from(["Delete", "Update", "ConditionCheck"]))
    body: dict[str, Any] = {"TableName": table, "Key": key}
    if action == "Update":
        body.update(UpdateExpression="SET v = :v", ExpressionAttributeValues={":v": S("x")})
    elif action == "ConditionCheck":
        body["ConditionExpression"] = "attribute_exists(pk)"
    return {action: body}, SCHEMA


@st.composite
def good_writes(draw: st.DrawFn, table: str) -> dict[str, Any]:
    """An action that is fine on its own; a ConditionCheck whose condition would fail included."""
    key = {"pk": S(uuid.uuid4().hex), "sk": {"N": str(draw(st.integers(0, 10**6)))}}
    kind = draw(st.sampled_from(["Put", "Update", "Delete", "ConditionCheck"]))
    if kind == "Put":
        return {"Put": {"TableName": table, "Item": {**key, "g": S("x")}}}
    if kind == "Update":
        return {"Update": {"TableName": table, "Key": key, "UpdateExpression": "SET v = :v",
                           "ExpressionAttributeValues": {":v": S("x")}}}
    if kind == "Delete":
        return {"Delete": {"TableName": table, "Key": key}}
    return {"ConditionCheck": {"TableName": table, "Key": key, "ConditionExpression": "attribute_exists(pk)"}}


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_schema_errors_are_cancellation_reasons(ddb: Any, indexed: str, data: st.DataObject) -> None:
    goods = data.draw(st.lists(good_writes(indexed), max_size=4))
    bads = data.draw(st.lists(bad_writes(indexed), min_size=1, max_size=3))
    positions = sorted(data.draw(st.lists(st.integers(0, len(goods) + len(bads) - 1), min_size=len(bads),
                                          max_size=len(bads), unique=True)))
    items: list[dict[str, Any]] = list(goods)
    for position, (bad, _) in zip(positions, bads, strict=True):
        items.insert(position, bad)
    message, reasons = cancelled(ddb, items)
    first = positions[0]
    expected = [NONE] * len(items)
    expected[first] = {"Code": "ValidationError", "Message": bads[0][1]}
    assert reasons == expected
    assert message == CANCELLED.format(", ".join(r["Code"] for r in expected))
    assert ddb.scan(TableName=indexed, ConsistentRead=True)["Items"] == []


@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_transact_get_key_errors_are_cancellation_reasons(ddb: Any, indexed: str, data: st.DataObject) -> None:
    def key() -> dict[str, Any]:
        return {"pk": S(uuid.uuid4().hex), "sk": {"N": "1"}}

    count = data.draw(st.integers(1, 5))
    items = [{"Get": {"TableName": indexed, "Key": key()}} for _ in range(count)]
    bad_at = sorted(data.draw(st.lists(st.integers(0, count - 1), min_size=1, max_size=count, unique=True)))
    for position in bad_at:
        broken = key()
        misfit = data.draw(st.sampled_from(["type", "missing", "extra", "empty"]))
        if misfit == "type":
            broken[data.draw(st.sampled_from(["pk", "sk"]))] = data.draw(st.sampled_from(OTHER_VALUES))
        elif misfit == "missing":
            del broken[data.draw(st.sampled_from(["pk", "sk"]))]
        elif misfit == "extra":
            broken["g"] = S("x")
        else:
            broken = {}
        items[position]["Get"]["Key"] = broken
    with pytest.raises(ClientError) as excinfo:
        ddb.transact_get_items(TransactItems=items)
    reasons = [NONE] * count
    reasons[bad_at[0]] = {"Code": "ValidationError", "Message": SCHEMA}
    assert excinfo.value.response["CancellationReasons"] == reasons
    assert excinfo.value.response["Error"]["Message"] == CANCELLED.format(", ".join(r["Code"] for r in reasons))


# -- The recorded cases, one by one ------------------------------------------------------


def test_only_the_first_invalid_action_is_reported(ddb: Any, table_name: str) -> None:
    """ScyllaDB's test_transact_write_cancellation_reasons_validationerror, run against DynamoDB."""
    create_table(ddb, table_name)
    items = [
        {"Put": {"TableName": table_name, "Item": {"pk": {"N": "7"}}}},
        {"Put": {"TableName": table_name, "Item": {"pk": {"N": "8"}}}},
        {"Put": {"TableName": table_name, "Item": {"pk": S("p")}, "ConditionExpression": "attribute_exists(pk)"}},
    ]
    message, reasons = cancelled(ddb, items)
    assert message == CANCELLED.format("ValidationError, None, None")
    assert reasons == [{"Code": "ValidationError", "Message": INVALID + "Type mismatch for key pk expected: S actual: N"},
                       NONE, NONE]


def test_key_errors_come_before_duplicates_and_conditions(ddb: Any, table_name: str) -> None:
    """floci's case "checked against DynamoDB in eu-west-2": the duplicate pair and the failing check report None."""
    create_table(ddb, table_name)
    items = [
        {"ConditionCheck": {"TableName": table_name, "Key": {"pk": S("u9")}, "ConditionExpression": "attribute_exists(pk)"}},
        {"Put": {"TableName": table_name, "Item": {"pk": S("u1")}}},
        {"Put": {"TableName": table_name, "Item": {"pk": S("u1")}}},
        {"Put": {"TableName": table_name, "Item": {"pk": {"N": "5"}}}},
        {"Put": {"TableName": table_name, "Item": {"pk": {"N": "6"}}}},
    ]
    message, reasons = cancelled(ddb, items)
    assert message == CANCELLED.format("None, None, None, ValidationError, None")
    assert reasons[3] == {"Code": "ValidationError", "Message": INVALID + "Type mismatch for key pk expected: S actual: N"}
    assert ddb.scan(TableName=table_name, ConsistentRead=True)["Items"] == []
    # Without the misfit, the duplicate pair is the plain ValidationException.
    assert refused(ddb.transact_write_items, TransactItems=items[:3]) == (
        "ValidationException", "Transaction request cannot include multiple operations on one item")


def test_what_the_request_shows_stays_a_plain_exception(ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name)
    mismatch = {"Put": {"TableName": table_name, "Item": {"pk": {"N": "5"}}}}
    # An empty key value, even ahead of a key of the wrong type (floci; moto's AWS-verified test for the words).
    assert refused(ddb.transact_write_items, TransactItems=[
        {"Put": {"TableName": table_name, "Item": {"pk": S("")}}}, mismatch]) == (
        "ValidationException", "One or more parameter values are not valid. The AttributeValue for a key attribute "
        "cannot contain an empty string value. Key: pk")
    # Expression errors (ScyllaDB: missing or unused names and values, syntax errors).
    assert refused(ddb.transact_write_items, TransactItems=[{"Put": {
        "TableName": table_name, "Item": {"pk": S("a")}, "ConditionExpression": "attribute_exists(#xyz)"}}]) == (
        "ValidationException",
        "Invalid ConditionExpression: An expression attribute name used in the document path is not defined; "
        "attribute name: #xyz")
    # A missing table.
    assert refused(ddb.transact_write_items, TransactItems=[
        {"Put": {"TableName": table_name + "-nope", "Item": {"pk": {"N": "5"}}}}]) == (
        "ResourceNotFoundException", "Requested resource not found")
    assert ddb.scan(TableName=table_name, ConsistentRead=True)["Items"] == []


def test_transact_get_leaves_out_item_for_a_missing_one(endpoint: str, ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name)
    ddb.put_item(TableName=table_name, Item={"pk": S("here")})
    response = raw_request(endpoint, "TransactGetItems", {"TransactItems": [
        {"Get": {"TableName": table_name, "Key": {"pk": S("gone")}}},
        {"Get": {"TableName": table_name, "Key": {"pk": S("here")}}},
    ]})
    assert (response.status, response.json()) == (200, {"Responses": [{}, {"Item": {"pk": S("here")}}]})


# -- Nesting depth (2026 captures: us-east-1 and eu-west-2, 2026-10-09) -------------------


def deep_map(levels: int) -> dict[str, Any]:
    """`levels` single-key maps around a leaf: as an attribute, its leaf sits at level levels + 1."""
    value: dict[str, Any] = S("leaf")
    for _ in range(levels):
        value = {"M": {"n": value}}
    return value


def deep_list(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = S("leaf")
    for _ in range(levels):
        value = {"L": [value]}
    return value


def test_nesting_depth_in_transactions(ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name)
    ddb.put_item(TableName=table_name, Item={"pk": S("eav"), "marker": S("x")})
    # An item: 31 wraps are stored, 32 refused before anything runs.
    ddb.transact_write_items(TransactItems=[{"Put": {"TableName": table_name, "Item": {"pk": S("d31"), "data": deep_map(31)}}}])
    assert ddb.get_item(TableName=table_name, Key={"pk": S("d31")}, ConsistentRead=True)["Item"]["data"] == deep_map(31)
    assert refused(ddb.transact_write_items, TransactItems=[
        {"Put": {"TableName": table_name, "Item": {"pk": S("d32"), "data": deep_map(32)}}}]) == (
        "ValidationException", NEST_BARE)
    # A value one level past the item limit is accepted: compared only, the condition runs ...
    compare = {"ConditionExpression": "#d = :deep", "ExpressionAttributeNames": {"#d": "data"}}
    _, reasons = cancelled(ddb, [{"Update": {"TableName": table_name, "Key": {"pk": S("eav")},
                                             "UpdateExpression": "SET touched = :t", **compare,
                                             "ExpressionAttributeValues": {":t": S("y"), ":deep": deep_map(32)}}}])
    assert reasons == [{"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"}]
    _, reasons = cancelled(ddb, [{"ConditionCheck": {"TableName": table_name, "Key": {"pk": S("eav")}, **compare,
                                                     "ExpressionAttributeValues": {":deep": deep_map(32)}}}])
    assert reasons == [{"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"}]
    # ... and written into the item, it cancels the action with the short sentence.
    message, reasons = cancelled(ddb, [
        {"Put": {"TableName": table_name, "Item": {"pk": S("other")}}},
        {"Update": {"TableName": table_name, "Key": {"pk": S("eav")}, "UpdateExpression": "SET deep = :deep",
                    "ExpressionAttributeValues": {":deep": deep_map(32)}}},
    ])
    assert message == CANCELLED.format("None, ValidationError")
    assert reasons[1] == {"Code": "ValidationError", "Message": "Nesting Levels have exceeded supported limits"}
    # Deeper still, on every action type and before the table is looked up: refused, naming the key.
    for levels, build in ((33, deep_map), (61, deep_map), (61, deep_list), (101, deep_list)):
        value = {":deep": build(levels)}
        for table in (table_name, table_name + "-missing"):
            for action in (
                {"ConditionCheck": {"TableName": table, "Key": {"pk": S("eav")}, **compare, "ExpressionAttributeValues": value}},
                {"Put": {"TableName": table, "Item": {"pk": S("p33")}, "ConditionExpression": "#d <> :deep",
                         "ExpressionAttributeNames": {"#d": "data"}, "ExpressionAttributeValues": value}},
                {"Update": {"TableName": table, "Key": {"pk": S("u33")}, "UpdateExpression": "SET deep = :deep",
                            "ExpressionAttributeValues": value}},
            ):
                assert refused(ddb.transact_write_items, TransactItems=[action]) == (
                    "ValidationException", f"ExpressionAttributeValues contains invalid value: {NEST_BARE} for key :deep"
                ), (levels, next(iter(action)))
    items = ddb.scan(TableName=table_name, ConsistentRead=True)["Items"]
    assert sorted(item["pk"]["S"] for item in items) == ["d31", "eav"]
    assert {"pk": S("eav"), "marker": S("x")} in items
