"""The wire protocol: envelope, errors, headers, and malformed requests."""

from __future__ import annotations

import gzip
import json
import zlib
from typing import Any

import botocore.exceptions
import botocore.session
import pytest
from conftest import create_table, raw_request

CORAL = "com.amazon.coral.service#"
DYNAMO = "com.amazonaws.dynamodb.v20120810#"


def test_health_check(endpoint: str) -> None:
    # DynamoDB's text names the host the client used (http.client sends host:port).
    response = raw_request(endpoint, None, None, method="GET")
    assert response.status == 200
    assert response.body == b"healthy: " + endpoint.removeprefix("http://").encode() + b" "
    response = raw_request(endpoint, None, None, method="GET", headers={"Host": "dynamodb.eu-west-1.amazonaws.com"})
    assert response.body == b"healthy: dynamodb.eu-west-1.amazonaws.com "


def test_response_headers(endpoint: str) -> None:
    response = raw_request(endpoint, "ListTables", {})
    assert response.status == 200
    assert response.headers["content-type"] == "application/x-amz-json-1.0"
    assert int(response.headers["x-amz-crc32"]) == zlib.crc32(response.body)
    request_id = response.headers["x-amzn-requestid"]
    assert len(request_id) == 52 and request_id.isalnum() and request_id.upper() == request_id


def test_unknown_operation(endpoint: str) -> None:
    response = raw_request(endpoint, "FlyToTheMoon", {})
    assert response.status == 400
    assert response.json() == {"__type": CORAL + "UnknownOperationException"}


@pytest.mark.parametrize("service", ["dynamodb", "dynamodbstreams"])
def test_every_model_operation_is_served(endpoint: str, service: str) -> None:
    # Every operation in botocore's service model reaches a handler: an empty request gets a
    # validation or lookup answer, never UnknownOperationException (which an operation DynamoDB
    # has but Partita lacked would get, naming itself).
    model = botocore.session.get_session().get_service_model(service)
    prefix = "DynamoDB_20120810" if service == "dynamodb" else "DynamoDBStreams_20120810"
    unserved = []
    for operation in model.operation_names:
        response = raw_request(endpoint, None, {}, headers={"X-Amz-Target": f"{prefix}.{operation}"})
        if response.status != 200 and "UnknownOperationException" in response.json().get("__type", ""):
            unserved.append(operation)
    assert unserved == []


def test_missing_and_foreign_target(endpoint: str) -> None:
    for target in (None, "DynamoDBStreams_20120810", "ListTables", "DynamoDB_20120810", "Kinesis_20131202.ListStreams"):
        response = raw_request(endpoint, None, {}, headers={"X-Amz-Target": target})
        assert response.status == 400, target
        assert response.json() == {"__type": CORAL + "UnknownOperationException"}, target


def test_malformed_json(endpoint: str) -> None:
    for body in (b"{", b"not json", b'{"TableName": "abc",}', b"\xff\xfe{}"):
        response = raw_request(endpoint, "ListTables", body)
        assert response.status == 400, body
        assert response.json() == {"__type": CORAL + "SerializationException"}, body


def test_empty_body(endpoint: str) -> None:
    response = raw_request(endpoint, "ListTables", b"")
    assert response.status == 400
    assert response.json() == {"__type": CORAL + "SerializationException"}


def test_missing_authentication(endpoint: str) -> None:
    response = raw_request(endpoint, "ListTables", {}, headers={"Authorization": None})
    assert response.status == 400
    assert response.json() == {
        "__type": CORAL + "MissingAuthenticationTokenException",
        "message": "Request is missing Authentication Token",
    }


def test_wrong_content_type(endpoint: str) -> None:
    response = raw_request(endpoint, "ListTables", {}, headers={"Content-Type": "text/plain"})
    assert response.status == 404
    assert response.body == b"<UnknownOperationException/>\n"


def test_application_json_is_accepted(endpoint: str) -> None:
    response = raw_request(endpoint, "ListTables", {}, headers={"Content-Type": "application/json"})
    assert response.status == 200
    assert response.headers["content-type"] == "application/json"


def test_gzip_request_body(endpoint: str) -> None:
    body = gzip.compress(json.dumps({"Limit": 1}).encode())
    response = raw_request(endpoint, "ListTables", body, headers={"Content-Encoding": "gzip"})
    assert response.status == 200
    assert "TableNames" in response.json()


def test_oversized_body(endpoint: str) -> None:
    response = raw_request(endpoint, "PutItem", b"{" + b" " * (16 * 1024 * 1024) + b"}")
    assert response.status == 413


def test_non_object_bodies(endpoint: str) -> None:
    for body in (b"[]", b"5", b'"x"', b"null"):
        response = raw_request(endpoint, "ListTables", body)
        assert response.status == 400, body
        assert response.json()["__type"] == CORAL + "SerializationException", body


def test_wrong_json_types_are_serialization_errors(endpoint: str, ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name)
    cases = [
        {"TableName": 5},
        {"TableName": table_name, "Item": []},
        {"TableName": table_name, "Item": {"pk": {"S": 5}}},
        {"TableName": table_name, "Item": {"pk": "x"}},
        {"TableName": table_name, "Item": {"pk": {"S": "a"}, "l": {"L": {}}}},
    ]
    for body in cases:
        response = raw_request(endpoint, "PutItem", body)
        assert response.status == 400, body
        assert response.json()["__type"] == CORAL + "SerializationException", (body, response.json())
    assert ddb.describe_table(TableName=table_name)["Table"]["ItemCount"] == 0


def test_attribute_value_with_no_or_many_types(endpoint: str, ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name)
    response = raw_request(endpoint, "PutItem", {"TableName": table_name, "Item": {"pk": {"S": "a"}, "x": {}}})
    assert response.json() == {
        "__type": DYNAMO + "ValidationException",
        "message": "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes",
    }
    response = raw_request(
        endpoint, "PutItem", {"TableName": table_name, "Item": {"pk": {"S": "a"}, "x": {"S": "a", "N": "1"}}}
    )
    assert response.json() == {
        "__type": DYNAMO + "ValidationException",
        "message": "Supplied AttributeValue has more than one datatypes set, must contain exactly one of the "
        "supported datatypes",
    }


def test_deep_nesting(endpoint: str, ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name)
    value: dict[str, Any] = {"S": "leaf"}
    for _ in range(40):
        value = {"L": [value]}
    response = raw_request(endpoint, "PutItem", {"TableName": table_name, "Item": {"pk": {"S": "a"}, "deep": value}})
    assert response.status == 400
    assert response.json()["__type"] == DYNAMO + "ValidationException"
    # Very deep JSON must not crash the server either.
    body = b'{"TableName": "' + table_name.encode() + b'", "Item": ' + b'{"a": ' * 5000 + b"1" + b"}" * 5001
    response = raw_request(endpoint, "PutItem", body)
    assert response.status == 400
    assert ddb.describe_table(TableName=table_name)["Table"]["ItemCount"] == 0


def test_non_utf8_string_value(endpoint: str, ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name)
    body = b'{"TableName": "' + table_name.encode() + b'", "Item": {"pk": {"S": "\xc3\x28"}}}'
    response = raw_request(endpoint, "PutItem", body)
    assert response.status == 400
    assert response.json()["__type"] == CORAL + "SerializationException"
