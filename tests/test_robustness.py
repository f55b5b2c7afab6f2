"""Issue 9's reproducers: each once answered InternalServerError or cost far more than its limits allow.

Sent raw (boto3 validates most of these away before sending) or through a
boto3 client without parameter validation, against the shared server.
"""

from __future__ import annotations

import time
from typing import Any

import boto3
import pytest
from botocore.config import Config
from conftest import create_table, error_of, raw_request

VALIDATE = "com.amazon.coral.validate#ValidationException"
DYNAMO = "com.amazonaws.dynamodb.v20120810#ValidationException"
SERIALIZATION = "com.amazon.coral.service#SerializationException"
NESTING = (
    "Nesting Levels have exceeded supported limits: "
    "Attributes in the item have nested levels beyond supported limit"
)
KS = [{"AttributeName": "pk", "KeyType": "HASH"}]
AD = [{"AttributeName": "pk", "AttributeType": "S"}]


def not_null(path: str) -> str:
    return f"1 validation error detected: Value null at '{path}' failed to satisfy constraint: Member must not be null"


def deep(levels: int, kind: str = "M") -> dict[str, Any]:
    value: dict[str, Any] = {"S": "x"}
    for _ in range(levels - 1):
        value = {"M": {"a": value}} if kind == "M" else {"L": [value]}
    return value


def raw_deep(levels: int, kind: str) -> bytes:
    opening, closing = ('{"M":{"a":', "}}") if kind == "M" else ('{"L":[', "]}")
    return (opening * (levels - 1) + '{"S":"x"}' + closing * (levels - 1)).encode()


def answer(endpoint: str, operation: str, body: dict[str, Any] | bytes) -> tuple[int, str, str]:
    response = raw_request(endpoint, operation, body)
    error = response.json()
    return response.status, error.get("__type", ""), error.get("message", error.get("Message", ""))


@pytest.fixture
def unchecked(endpoint: str) -> Any:
    """boto3 without its client-side validation, so it sends what the server must refuse."""
    return boto3.client(
        "dynamodb",
        endpoint_url=endpoint,
        region_name="us-east-1",
        config=Config(retries={"max_attempts": 1}, parameter_validation=False),
    )


def test_create_table_without_key_schema_or_definitions(endpoint: str, unchecked: Any, table_name: str) -> None:
    with pytest.raises(unchecked.exceptions.ClientError) as excinfo:
        unchecked.create_table(TableName=table_name, BillingMode="PAY_PER_REQUEST", AttributeDefinitions=AD)
    assert error_of(excinfo) == ("ValidationException", not_null("keySchema"))
    cases = [
        ({"AttributeDefinitions": AD}, "keySchema"),
        ({"KeySchema": KS}, "attributeDefinitions"),
        ({"KeySchema": None, "AttributeDefinitions": AD}, "keySchema"),
        ({"KeySchema": [None], "AttributeDefinitions": AD}, "keySchema.1.member"),
        ({"KeySchema": KS, "AttributeDefinitions": [AD[0], None]}, "attributeDefinitions.2.member"),
        ({"KeySchema": KS, "AttributeDefinitions": AD, "Tags": [None]}, "tags.1.member"),
        ({"KeySchema": KS, "AttributeDefinitions": AD, "GlobalSecondaryIndexes": [None]}, "globalSecondaryIndexes.1.member"),
    ]
    for members, path in cases:
        body = {"TableName": table_name, "BillingMode": "PAY_PER_REQUEST", **members}
        assert answer(endpoint, "CreateTable", body) == (400, VALIDATE, not_null(path)), members


def test_null_elements_and_values(endpoint: str, hash_table: str) -> None:
    key = {"pk": {"S": "a"}}
    arn = f"arn:aws:dynamodb:us-east-1:000000000000:table/{hash_table}"
    cases: list[tuple[str, dict[str, Any], str]] = [
        ("TransactWriteItems", {"TransactItems": [None]}, "transactItems.1.member"),
        ("TransactGetItems", {"TransactItems": [None]}, "transactItems.1.member"),
        ("BatchWriteItem", {"RequestItems": {hash_table: None}}, f"requestItems.{hash_table}.member"),
        ("BatchWriteItem", {"RequestItems": {hash_table: [None]}}, f"requestItems.{hash_table}.member.1.member"),
        ("BatchGetItem", {"RequestItems": {hash_table: None}}, f"requestItems.{hash_table}.member"),
        ("BatchGetItem", {"RequestItems": {hash_table: {"Keys": [None]}}}, f"requestItems.{hash_table}.member.keys.1.member"),
        ("TagResource", {"ResourceArn": arn, "Tags": [None]}, "tags.1.member"),
        ("UpdateTable", {"TableName": hash_table, "GlobalSecondaryIndexUpdates": [None]}, "globalSecondaryIndexUpdates.1.member"),
        ("PutItem", {"TableName": hash_table, "Item": key, "Expected": {"a": None}}, "expected.a.member"),
        ("UpdateItem", {"TableName": hash_table, "Key": key, "AttributeUpdates": {"a": None}}, "attributeUpdates.a.member"),
        ("Scan", {"TableName": hash_table, "ScanFilter": {"a": None}}, "scanFilter.a.member"),
        (
            "GetItem",
            {"TableName": hash_table, "Key": key, "ProjectionExpression": "#a", "ExpressionAttributeNames": {"#a": None}},
            "expressionAttributeNames.#a.member",
        ),
        ("Scan", {"TableName": hash_table, "AttributesToGet": ["a", None]}, "attributesToGet.2.member"),
    ]
    for operation, body, path in cases:
        assert answer(endpoint, operation, body) == (400, VALIDATE, not_null(path)), operation


def test_fractional_numbers_for_integer_members_are_truncated(unchecked: Any, hash_table: str) -> None:
    for n in range(3):
        unchecked.put_item(TableName=hash_table, Item={"pk": {"S": f"k{n}"}})
    assert unchecked.scan(TableName=hash_table, Limit=1.5)["Count"] == 1
    query = unchecked.query(
        TableName=hash_table,
        KeyConditionExpression="pk = :v",
        ExpressionAttributeValues={":v": {"S": "k1"}},
        Limit=1.9,
    )
    assert query["Count"] == 1
    assert unchecked.scan(TableName=hash_table, Segment=0, TotalSegments=1.5)["Count"] == 3
    with pytest.raises(unchecked.exceptions.ClientError) as excinfo:
        unchecked.scan(TableName=hash_table, Limit=0.5)
    assert error_of(excinfo)[0] == "ValidationException"


def test_integers_beyond_java_range(endpoint: str, hash_table: str) -> None:
    assert answer(endpoint, "Scan", {"TableName": hash_table, "Limit": 2**31}) == (
        400, SERIALIZATION, "NUMBER_VALUE cannot be converted to Integer"
    )
    assert answer(endpoint, "Scan", {"TableName": hash_table, "Limit": 1e300}) == (
        400, SERIALIZATION, "DECIMAL_VALUE cannot be converted to Integer"
    )


def test_numbers_with_enormous_exponents(ddb: Any, hash_table: str) -> None:
    # Exponents Python's Decimal cannot hold: within 64 bits they are out of
    # range by their sign; past 64 bits (recorded, tests/test_recorded_limits.py)
    # they are not numbers at all.
    for number, start in (
        ("1e9000000000000000000", "Number overflow."),
        ("1e-9000000000000000000", "Number underflow."),
        ("1e9999999999999999999", "The parameter cannot be converted to a numeric value: "),
        ("1e-9999999999999999999", "The parameter cannot be converted to a numeric value: "),
    ):
        with pytest.raises(ddb.exceptions.ClientError) as excinfo:
            ddb.put_item(TableName=hash_table, Item={"pk": {"S": "a"}, "n": {"N": number}})
        code, message = error_of(excinfo)
        # PutItem reports a bad number inside the envelope (a 2026 conformance suite; docs/decisions.md).
        assert code == "ValidationException" and message.startswith("1 validation error detected: " + start), message


@pytest.mark.parametrize("levels", [33, 245, 400, 510])
@pytest.mark.parametrize("kind", ["M", "L"])
def test_deep_values_are_refused_with_the_nesting_message(
    endpoint: str, hash_table: str, levels: int, kind: str
) -> None:
    body = b'{"TableName":"' + hash_table.encode() + b'","Item":{"pk":{"S":"a"},"d":' + raw_deep(levels, kind) + b"}}"
    assert answer(endpoint, "PutItem", body) == (400, DYNAMO, NESTING)


def test_a_map_nested_past_what_a_json_writer_takes(endpoint: str) -> None:
    """BatchGetItem's RequestItems is echoed as JSON in its length clause (2026 wording); a value
    nested past what orjson writes (254 levels) made that echo a 500 (found by test_fuzz)."""
    for levels in (253, 254, 300, 1000):
        body = b'{"RequestItems":{"pk":' + b"[" * levels + b"]" * levels + b"}}"
        assert answer(endpoint, "BatchGetItem", body) == (
            400, SERIALIZATION, "Unrecognized collection type class com.amazonaws.dynamodb.v20120810.KeysAndAttributes"
        ), levels
    # A map that deserializes, nested past 254 levels inside a key, is echoed cut short.
    body = b'{"RequestItems":{"pk":{"Keys":[{"k":' + raw_deep(300, "M") + b"}]}}}"
    status, code, message = answer(endpoint, "BatchGetItem", body)
    assert (status, code) == (400, VALIDATE)
    assert message.startswith("1 validation error detected: Value '{\"pk\":{\"Keys\":[{\"k\":{\"M\":{\"a\":")
    assert '"..."' in message
    assert message.endswith(
        "' at 'requestItems' failed to satisfy constraint: Map keys must satisfy constraint: [Member must have "
        "length less than or equal to 255, Member must have length greater than or equal to 3, Member must "
        "satisfy regular expression pattern: [a-zA-Z0-9_.-]+]"
    )


def test_update_that_would_nest_past_32_levels(ddb: Any, hash_table: str) -> None:
    ddb.put_item(TableName=hash_table, Item={"pk": {"S": "deep"}, "d": deep(31)})
    path = "d" + ".a" * 29  # level 30, an M holding a scalar at 31
    ddb.update_item(
        TableName=hash_table,
        Key={"pk": {"S": "deep"}},
        UpdateExpression=f"SET {path} = :v",
        ExpressionAttributeValues={":v": deep(3)},  # leaf at level 32: allowed
    )
    with pytest.raises(ddb.exceptions.ClientError) as excinfo:
        ddb.update_item(
            TableName=hash_table,
            Key={"pk": {"S": "deep"}},
            UpdateExpression=f"SET {path} = :v",
            ExpressionAttributeValues={":v": deep(4)},  # leaf at level 33
        )
    assert error_of(excinfo) == ("ValidationException", NESTING)


def test_deeply_nested_expressions(ddb: Any, hash_table: str) -> None:
    too_deep = "Invalid ConditionExpression: The expression is nested too deeply; nesting depth exceeds 200"
    for expression in (
        "(" * 300 + "a = :v" + ")" * 300,
        "NOT " * 300 + "a = :v",
        "size(" * 600 + "a" + ")" * 600 + " = :v",
    ):
        with pytest.raises(ddb.exceptions.ClientError) as excinfo:
            ddb.put_item(
                TableName=hash_table,
                Item={"pk": {"S": "a"}},
                ConditionExpression=expression,
                ExpressionAttributeValues={":v": {"S": "x"}},
            )
        assert error_of(excinfo) == ("ValidationException", too_deep)


def test_legacy_in_list_past_the_in_limit(ddb: Any, hash_table: str) -> None:
    def scan(count: int) -> dict[str, Any]:
        values = [{"S": str(i)} for i in range(count)]
        return ddb.scan(TableName=hash_table, ScanFilter={"a": {"ComparisonOperator": "IN", "AttributeValueList": values}})

    assert scan(99)["Count"] == 0
    started = time.monotonic()
    with pytest.raises(ddb.exceptions.ClientError) as excinfo:
        scan(600_000)
    assert error_of(excinfo) == (
        "ValidationException",
        "One or more parameter values were invalid: Invalid number of argument(s) for the IN ComparisonOperator",
    )
    assert time.monotonic() - started < 30  # a guard against the old quadratic cost, not a benchmark


def test_huge_requests_get_bounded_error_bodies(endpoint: str, ddb: Any, table_name: str) -> None:
    body = b'{"TransactItems":[' + b",".join([b"{}"] * 1_000_000) + b"]}"
    response = raw_request(endpoint, "TransactWriteItems", body)
    assert response.status == 400
    message = response.json()["message"]
    assert message.startswith("1 validation error detected: Value '[com.amazonaws.dynamodb.v20120810.TransactWriteItem@")
    assert "...' at 'transactItems' failed to satisfy constraint: Member must have length less than or equal to 100" in message
    assert len(response.body) < 10_000

    response = raw_request(endpoint, "DescribeTable", {"TableName": "x" * 15_000_000})
    assert response.status == 400 and len(response.body) < 10_000
    assert response.json()["message"] == (
        "1 validation error detected: Value '" + "x" * 8192 + "...' at 'tableName' failed to satisfy constraint: "
        "Member must have length less than or equal to 255"
    )


def test_many_attribute_definitions_and_tags_stay_cheap(ddb: Any, table_name: str) -> None:
    definitions = [{"AttributeName": f"a{i}", "AttributeType": "S"} for i in range(40_000)]
    with pytest.raises(ddb.exceptions.ClientError) as excinfo:
        ddb.create_table(TableName=table_name, KeySchema=KS, AttributeDefinitions=definitions, BillingMode="PAY_PER_REQUEST")
    code, message = error_of(excinfo)
    assert code == "ValidationException"
    assert message.startswith(
        "One or more parameter values were invalid: Some index key attributes are not defined in "
        "AttributeDefinitions. Keys: [pk], AttributeDefinitions: [a0, a1, "
    )
    assert message.endswith("...]") and len(message) < 9000

    with pytest.raises(ddb.exceptions.ClientError) as excinfo:
        ddb.create_table(
            TableName=table_name, KeySchema=KS, AttributeDefinitions=[*definitions, definitions[7]], BillingMode="PAY_PER_REQUEST"
        )
    assert error_of(excinfo) == ("ValidationException", "Attribute Name is duplicated: a7")

    create_table(ddb, table_name)
    arn = ddb.describe_table(TableName=table_name)["Table"]["TableArn"]
    tags = [{"Key": f"k{i}", "Value": "v"} for i in range(40_000)]
    with pytest.raises(ddb.exceptions.ClientError) as excinfo:
        ddb.tag_resource(ResourceArn=arn, Tags=[*tags, tags[3]])
    assert error_of(excinfo) == (
        "ValidationException", "Duplicate Tag Keys provided as input: Duplicate Tag Key found k3"
    )
    with pytest.raises(ddb.exceptions.ClientError) as excinfo:
        ddb.tag_resource(ResourceArn=arn, Tags=tags)
    assert error_of(excinfo) == ("ValidationException", "Number of Tags exceed the current limit for the provided ResourceArn")
