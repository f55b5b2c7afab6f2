"""Which refusal wins when a batch or transaction request has several faults.

Each expected answer is DynamoDB's as a 2026 public conformance suite records
it (paritysuite/dynamodb-conformance, tests/tier3/validation-ordering and
error-messages, captured in us-east-1 and eu-west-2 on 2026-10-09; see
docs/decisions.md, "Batches and transactions"). Tests that pin what the
records leave open say so.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import create_table, error_of

SYNTAX = 'Invalid ConditionExpression: Syntax error; token: "<EOF>", near: "("'
UNUSED = "Value provided in ExpressionAttributeValues unused in expressions: keys: {:v}"
ENUM_RCC = ("Value 'BOGUS' at 'returnConsumedCapacity' failed to satisfy constraint: "
            "Member must satisfy enum value set: [INDEXES, TOTAL, NONE]")
NEST_BARE = ("Nesting Levels have exceeded supported limits: "
             "Attributes in the item have nested levels beyond supported limit")


def S(value: str) -> dict[str, str]:  # noqa: N802
    return {"S": value}


@pytest.fixture(scope="module")
def table(ddb: Any) -> str:
    name = f"order-{uuid.uuid4().hex[:10]}"
    create_table(ddb, name)
    return name


@pytest.fixture(scope="module")
def missing() -> str:
    return f"absent-{uuid.uuid4().hex[:10]}"


def refusal(call: Any, **request: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        call(**request)
    return error_of(excinfo)


def unused_check(table: str) -> dict[str, Any]:
    return {"ConditionCheck": {"TableName": table, "Key": {"pk": S("cc")},
                               "ConditionExpression": "attribute_not_exists(pk)",
                               "ExpressionAttributeValues": {":v": S("x")}}}


def bad_check(table: str) -> dict[str, Any]:
    return {"ConditionCheck": {"TableName": table, "Key": {"pk": S("cc")},
                               "ConditionExpression": "attribute_not_exists("}}


def deep_item() -> dict[str, Any]:
    value: dict[str, Any] = S("leaf")
    for _ in range(32):
        value = {"M": {"n": value}}
    return {"pk": S("deep"), "data": value}


# -- TransactWriteItems: every action's request-only checks before any table ----------------


def test_later_malformed_condition_beats_earlier_missing_table(ddb: Any, table: str, missing: str) -> None:
    items = [{"Put": {"TableName": missing, "Item": {"pk": S("a")}}}, bad_check(table)]
    assert refusal(ddb.transact_write_items, TransactItems=items) == ("ValidationException", SYNTAX)


def test_unused_value_beats_missing_table_before_or_after_it(ddb: Any, table: str, missing: str) -> None:
    put_missing = {"Put": {"TableName": missing, "Item": {"pk": S("a")}}}
    for items in ([put_missing, unused_check(table)], [unused_check(table), put_missing]):
        assert refusal(ddb.transact_write_items, TransactItems=items) == ("ValidationException", UNUSED)


def test_unused_value_beats_duplicate_target(ddb: Any, table: str) -> None:
    items = [{"Put": {"TableName": table, "Item": {"pk": S("cc")}}}, unused_check(table)]
    assert refusal(ddb.transact_write_items, TransactItems=items) == ("ValidationException", UNUSED)
    assert "Item" not in ddb.get_item(TableName=table, Key={"pk": S("cc")}, ConsistentRead=True)


def test_first_action_in_order_wins_between_two_request_faults(ddb: Any, table: str) -> None:
    deep = {"Put": {"TableName": table, "Item": deep_item()}}
    assert refusal(ddb.transact_write_items, TransactItems=[bad_check(table), deep]) == ("ValidationException", SYNTAX)
    assert refusal(ddb.transact_write_items, TransactItems=[deep, bad_check(table)]) == ("ValidationException", NEST_BARE)


def test_later_update_syntax_beats_earlier_missing_table(ddb: Any, table: str, missing: str) -> None:
    """Not on record for UpdateExpression: the same phase as the recorded ConditionExpression."""
    items = [{"Delete": {"TableName": missing, "Key": {"pk": S("a")}}},
             {"Update": {"TableName": table, "Key": {"pk": S("u")}, "UpdateExpression": "SET"}}]
    assert refusal(ddb.transact_write_items, TransactItems=items) == (
        "ValidationException", 'Invalid UpdateExpression: Syntax error; token: "<EOF>", near: "SET"')


def test_enum_beats_missing_table_and_duplicate(ddb: Any, table: str, missing: str) -> None:
    expected = ("ValidationException", f"1 validation error detected: {ENUM_RCC}")
    one_missing = [{"Put": {"TableName": missing, "Item": {"pk": S("a")}}}]
    twice = [{"Put": {"TableName": table, "Item": {"pk": S("d")}}}, {"Delete": {"TableName": table, "Key": {"pk": S("d")}}}]
    for items in (one_missing, twice):
        assert refusal(ddb.transact_write_items, TransactItems=items, ReturnConsumedCapacity="BOGUS") == expected
    gets = [{"Get": {"TableName": missing, "Key": {"pk": S("a")}}}]
    assert refusal(ddb.transact_get_items, TransactItems=gets, ReturnConsumedCapacity="BOGUS") == expected


def test_transact_get_projection_syntax_beats_earlier_missing_table(ddb: Any, table: str, missing: str) -> None:
    """Not on record for TransactGetItems: the writes' recorded phases, applied to reads."""
    gets = [{"Get": {"TableName": missing, "Key": {"pk": S("a")}}},
            {"Get": {"TableName": table, "Key": {"pk": S("b")}, "ProjectionExpression": "!!!"}}]
    assert refusal(ddb.transact_get_items, TransactItems=gets) == (
        "ValidationException", 'Invalid ProjectionExpression: Syntax error; token: "!", near: "!!"')


# -- BatchWriteItem / BatchGetItem: member constraints, then the RequestItems map -----------


def test_batch_write_enum_alone_over_malformed_table_name(ddb: Any) -> None:
    request = {"RequestItems": {"bad!name": [{"PutRequest": {"Item": {"pk": S("x")}}}]},
               "ReturnConsumedCapacity": "BOGUS"}
    assert refusal(ddb.batch_write_item, **request) == ("ValidationException", f"1 validation error detected: {ENUM_RCC}")


def test_batch_write_enum_beats_missing_table(ddb: Any, missing: str) -> None:
    request = {"RequestItems": {missing: [{"PutRequest": {"Item": {"pk": S("x")}}}]}, "ReturnConsumedCapacity": "BOGUS"}
    assert refusal(ddb.batch_write_item, **request) == ("ValidationException", f"1 validation error detected: {ENUM_RCC}")


def test_batch_get_states_malformed_table_name_with_enum(ddb: Any) -> None:
    request = {"RequestItems": {"bad!name": {"Keys": [{"pk": S("a")}]}}, "ReturnConsumedCapacity": "BOGUS"}
    assert refusal(ddb.batch_get_item, **request) == ("ValidationException", (
        """2 validation errors detected: Value '{"bad!name":{"Keys":[{"pk":{"S":"a"}}]}}' at 'requestItems' """
        "failed to satisfy constraint: Map keys must satisfy constraint: [Member must have length less than or "
        "equal to 255, Member must have length greater than or equal to 3, Member must satisfy regular "
        f"expression pattern: [a-zA-Z0-9_.-]+]; {ENUM_RCC}"))


@pytest.mark.parametrize(("kind", "value", "word"), [("B", b"", "binary"), ("S", "", "string")])
def test_batch_get_empty_key_value(ddb: Any, table_name: str, kind: str, value: Any, word: str) -> None:
    """Recorded on AWS for B (2026); S is assumed to share the wording, as in BatchWriteItem."""
    create_table(ddb, table_name, hash_key=("pk", kind))
    request = {"RequestItems": {table_name: {"Keys": [{"pk": {kind: value}}]}}}
    assert refusal(ddb.batch_get_item, **request) == ("ValidationException", (
        "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain "
        f"an empty {word} value. Key: pk"))


# -- BatchWriteItem's echo of RequestItems ----------------------------------------------------

AV = r"com\.amazonaws\.dynamodb\.v20120810\.AttributeValue@[0-9a-f]+"
TABLE_NAME_RULES = (
    "[Member must have length less than or equal to 255, Member must have length greater than or equal to 3, "
    "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+]"
)


def test_batch_write_echoes_put_requests_as_recorded(ddb: Any) -> None:
    """eu-west-2's form (2026): WriteRequest(putRequest=PutRequest(item={...}, ...), deleteRequest=null)."""
    request = {"RequestItems": {"bad!name": [{"PutRequest": {"Item": {"pk": S("x"), "n": {"N": "1"}}}}]}}
    code, message = refusal(ddb.batch_write_item, **request)
    assert code == "ValidationException"
    assert re.fullmatch(
        r"1 validation error detected: Value '\{bad!name=\[WriteRequest\(putRequest=PutRequest\(item=\{pk=" + AV
        + ", n=" + AV + r"\}, workloadProfileName=null\), deleteRequest=null\)\]\}' at 'requestItems' failed to "
        r"satisfy constraint: Map keys must satisfy constraint: " + re.escape(TABLE_NAME_RULES),
        message,
    ), message


def test_batch_get_projection_styles_across_tables(ddb: Any, table: str, table_name: str) -> None:
    """AWS refuses the mix with a ValidationException (recorded); the words are a block's own (unconfirmed)."""
    create_table(ddb, table_name, range_key=("sk", "S"))
    request = {"RequestItems": {
        table: {"Keys": [{"pk": S("a")}], "ProjectionExpression": "pk"},
        table_name: {"Keys": [{"pk": S("b"), "sk": S("z")}], "AttributesToGet": ["pk"]},
    }}
    assert refusal(ddb.batch_get_item, **request) == ("ValidationException", (
        "Can not use both expression and non-expression parameters in the same request: "
        "Non-expression parameters: {AttributesToGet} Expression parameters: {ProjectionExpression}"))
    one_style = {"RequestItems": {
        table: {"Keys": [{"pk": S("a")}], "AttributesToGet": ["pk"]},
        table_name: {"Keys": [{"pk": S("b"), "sk": S("z")}], "AttributesToGet": ["pk"]},
    }}
    assert ddb.batch_get_item(**one_style)["Responses"] == {table: [], table_name: []}
