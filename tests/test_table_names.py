"""A TableName that breaks DynamoDB's naming rules, in every operation that takes one (issue 26, N1).

The shape check refuses it before any table is looked up, with the coral
clause for each rule it breaks: the pattern [a-zA-Z0-9_.-]+ and the length
3..255. Data-plane operations first apply the model's TableArn limit
(1..1024), so an empty name there is the one clause ">= 1" (recorded in
2026); a table ARN passes the name rules in every operation.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from conftest import raw_request
from hypothesis import given, settings
from hypothesis import strategies as st

VALIDATE = "com.amazon.coral.validate#ValidationException"
PATTERN = "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+"
TOO_SHORT = "Member must have length greater than or equal to 3"
TOO_LONG = "Member must have length less than or equal to 255"
KEY = {"pk": {"S": "a"}}
KEY_SCHEMA = [{"AttributeName": "pk", "KeyType": "HASH"}]
DEFINITIONS = [{"AttributeName": "pk", "AttributeType": "S"}]

Body = Callable[[str], dict[str, Any]]

#: operation -> (request with that TableName, the member's path in the message).
OPERATIONS: dict[str, tuple[Body, str]] = {
    "GetItem": (lambda n: {"TableName": n, "Key": KEY}, "tableName"),
    "PutItem": (lambda n: {"TableName": n, "Item": KEY}, "tableName"),
    "UpdateItem": (lambda n: {"TableName": n, "Key": KEY}, "tableName"),
    "DeleteItem": (lambda n: {"TableName": n, "Key": KEY}, "tableName"),
    "Query": (lambda n: {"TableName": n, "KeyConditionExpression": "pk = :p",
                         "ExpressionAttributeValues": {":p": {"S": "a"}}}, "tableName"),
    "Scan": (lambda n: {"TableName": n}, "tableName"),
    "CreateTable": (lambda n: {"TableName": n, "KeySchema": KEY_SCHEMA, "AttributeDefinitions": DEFINITIONS,
                               "BillingMode": "PAY_PER_REQUEST"}, "tableName"),
    "DescribeTable": (lambda n: {"TableName": n}, "tableName"),
    "DeleteTable": (lambda n: {"TableName": n}, "tableName"),
    "UpdateTable": (lambda n: {"TableName": n, "BillingMode": "PAY_PER_REQUEST"}, "tableName"),
    "DescribeTimeToLive": (lambda n: {"TableName": n}, "tableName"),
    "UpdateTimeToLive": (lambda n: {"TableName": n, "TimeToLiveSpecification": {"Enabled": True,
                                                                                "AttributeName": "t"}}, "tableName"),
    "DescribeContinuousBackups": (lambda n: {"TableName": n}, "tableName"),
    "UpdateContinuousBackups": (lambda n: {"TableName": n, "PointInTimeRecoverySpecification": {
        "PointInTimeRecoveryEnabled": True}}, "tableName"),
    "DescribeContributorInsights": (lambda n: {"TableName": n}, "tableName"),
    "UpdateContributorInsights": (lambda n: {"TableName": n, "ContributorInsightsAction": "ENABLE"}, "tableName"),
    "ListContributorInsights": (lambda n: {"TableName": n}, "tableName"),
    "CreateBackup": (lambda n: {"TableName": n, "BackupName": "bk1"}, "tableName"),
    "ListBackups": (lambda n: {"TableName": n}, "tableName"),
    # Not here: RestoreTableFromBackup and RestoreTableToPointInTime, whose TargetTableName the service
    # checks with a sentence of its own ("TableName must be at least 3 characters long and at most 255
    # characters long" for '', ack-api-quirks 2026); how it words the other cases is not on record.
    "TransactGetItems": (lambda n: {"TransactItems": [{"Get": {"TableName": n, "Key": KEY}}]},
                         "transactItems.1.member.get.tableName"),
    "TransactWriteItems": (lambda n: {"TransactItems": [{"Put": {"TableName": n, "Item": KEY}}]},
                           "transactItems.1.member.put.tableName"),
}
DATA_PLANE = {"GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query", "Scan"}
#: The batch operations state the rules once for the RequestItems map (its keys are table names).
BATCHES: dict[str, Body] = {
    "BatchGetItem": lambda n: {"RequestItems": {n: {"Keys": [KEY]}}},
    "BatchWriteItem": lambda n: {"RequestItems": {n: [{"PutRequest": {"Item": KEY}}]}},
}

VALID = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-"
BAD = " !#$%&*+/:;<=>?@[]^`{|}~éßü€中"

@st.composite
def bad_names(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A name that breaks exactly one rule, and that rule's clause."""
    kind = draw(st.sampled_from(["pattern", "short", "long"]))
    if kind == "pattern":
        name = draw(st.text(VALID, min_size=2, max_size=250))
        at = draw(st.integers(0, len(name)))
        return name[:at] + draw(st.text(BAD, min_size=1, max_size=3)) + name[at:], [PATTERN]
    if kind == "short":
        return draw(st.text(VALID, min_size=1, max_size=2)), [TOO_SHORT]
    return draw(st.text(VALID, min_size=256, max_size=300)), [TOO_LONG]


def _clause(name: str, path: str, tail: str) -> str:
    return f"Value '{name}' at '{path}' failed to satisfy constraint: {tail}"


@settings(max_examples=60, deadline=None)
@given(operation=st.sampled_from(sorted(OPERATIONS)), bad=bad_names())
def test_a_bad_table_name_is_the_shape_clause_in_every_operation(
    endpoint: str, operation: str, bad: tuple[str, list[str]]
) -> None:
    name, tails = bad
    build, path = OPERATIONS[operation]
    response = raw_request(endpoint, operation, build(name))
    assert response.status == 400
    assert response.json() == {"__type": VALIDATE, "message": "1 validation error detected: " + _clause(name, path, tails[0])}


@settings(max_examples=20, deadline=None)
@given(operation=st.sampled_from(sorted(BATCHES)), bad=bad_names())
def test_a_bad_table_name_in_a_batch_is_one_clause_about_the_map(
    endpoint: str, operation: str, bad: tuple[str, list[str]]
) -> None:
    name, _ = bad
    request = BATCHES[operation](name)
    response = raw_request(endpoint, operation, request)
    assert response.status == 400
    body = response.json()
    assert body["__type"] == VALIDATE
    rules = f"Map keys must satisfy constraint: [{TOO_LONG}, {TOO_SHORT}, {PATTERN}]"
    if operation == "BatchGetItem":
        # Echoed as JSON (captured in us-east-1 and eu-west-2, 2026-10-09).
        echo = json.dumps(request["RequestItems"], separators=(",", ":"), ensure_ascii=False)
        assert body["message"] == (
            f"1 validation error detected: Value '{echo}' at 'requestItems' failed to satisfy constraint: {rules}")
        return
    # BatchWriteItem's echo is Java's rendering of the request objects; the rest is exact.
    assert re.fullmatch(
        r"1 validation error detected: Value '\{.*\}' at 'requestItems' failed to satisfy constraint: " + re.escape(rules),
        body["message"],
        re.DOTALL,
    ), body["message"]
    assert body["message"].startswith("1 validation error detected: Value '{" + name + "=")


def test_the_rules_come_before_the_table_lookup(endpoint: str, ddb: Any) -> None:
    """N1's request, word for word, and a name that is fine but absent (ResourceNotFound, not a clause)."""
    response = raw_request(endpoint, "PutItem", {"TableName": "bad!table!name", "Item": KEY})
    assert (response.status, response.json()) == (400, {
        "__type": VALIDATE,
        "message": "1 validation error detected: Value 'bad!table!name' at 'tableName' failed to satisfy "
                   "constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+",
    })
    response = raw_request(endpoint, "PutItem", {"TableName": "xx", "Item": KEY})
    assert response.json()["message"] == "1 validation error detected: " + _clause("xx", "tableName", TOO_SHORT)
    response = raw_request(endpoint, "PutItem", {"TableName": "no-such-table-here", "Item": KEY})
    assert response.json() == {"__type": "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException",
                               "message": "Requested resource not found"}


def test_an_empty_name_and_a_table_arn(endpoint: str) -> None:
    for operation in sorted(DATA_PLANE):
        build, _ = OPERATIONS[operation]
        response = raw_request(endpoint, operation, build(""))
        assert response.json() == {
            "__type": VALIDATE,
            "message": "1 validation error detected: " + _clause("", "tableName",
                                                                "Member must have length greater than or equal to 1"),
        }, operation
        # An ARN is not held to the name rules: this one names no table.
        arn = "arn:aws:dynamodb:us-east-1:000000000000:table/absent-table"
        response = raw_request(endpoint, operation, build(arn))
        assert response.json()["__type"] == "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException", operation
    # Control plane: the TableName rules at once (DescribeTable '' recorded in 2026, length then pattern).
    response = raw_request(endpoint, "DescribeTable", {"TableName": ""})
    assert response.json()["message"] == (
        "2 validation errors detected: " + _clause("", "tableName", TOO_SHORT) + "; " + _clause("", "tableName", PATTERN)
    )


def test_create_table_without_a_name(endpoint: str) -> None:
    """CreateTable's own sentence for a missing TableName, before the clauses of the other members."""
    for body in ({}, {"KeySchema": KEY_SCHEMA}, {"TableName": None, "AttributeDefinitions": DEFINITIONS}):
        response = raw_request(endpoint, "CreateTable", body)
        assert (response.status, response.json()) == (400, {
            "__type": "com.amazonaws.dynamodb.v20120810#ValidationException",
            "message": "The parameter 'TableName' is required but was not present in the request"}), body
    # The codec's errors still come first; with a name, a missing KeySchema is coral's clause (2026).
    response = raw_request(endpoint, "CreateTable", {"KeySchema": "x"})
    assert response.json()["__type"] == "com.amazon.coral.service#SerializationException"
    response = raw_request(endpoint, "CreateTable", {"TableName": "abc", "AttributeDefinitions": DEFINITIONS})
    assert response.json()["message"] == (
        "1 validation error detected: Value null at 'keySchema' failed to satisfy constraint: Member must not be null")
