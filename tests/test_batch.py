"""BatchWriteItem and BatchGetItem against a real server, with DynamoDB's messages.

Expected messages come from dynalite's suite (recorded against the service)
unless a test says otherwise. A rejected batch must write nothing.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import create_table, error_of, raw_request
from test_indexes import attr, create_indexed, gsi, lsi

DUPLICATES = "Provided list of item keys contains duplicates"
SCHEMA = "The provided key element does not match the schema"
NOT_FOUND = ("ResourceNotFoundException", "Requested resource not found")
NOT_ONE = (
    "Supplied AttributeValue has more than one datatypes set, must contain exactly one of the "
    "supported datatypes"
)
TABLE_NAME_RULES = (
    "[Member must have length less than or equal to 255, Member must have length greater than or "
    "equal to 3, Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+]"
)


def S(value: str) -> dict[str, str]:  # noqa: N802 - reads like the wire type
    return {"S": value}


def put(pk: str, **attrs: Any) -> dict[str, Any]:
    return {"PutRequest": {"Item": {"pk": S(pk), **attrs}}}


def delete(pk: str) -> dict[str, Any]:
    return {"DeleteRequest": {"Key": {"pk": S(pk)}}}


def failure(call: Any, **params: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        call(**params)
    return error_of(excinfo)


def raw_failure(endpoint: str, operation: str, body: dict[str, Any]) -> tuple[str, str]:
    response = raw_request(endpoint, operation, body)
    assert response.status == 400, response.body
    doc = response.json()
    return doc["__type"].split("#")[-1], doc.get("message", doc.get("Message", ""))


def count(ddb: Any, table: str) -> int:
    return int(ddb.scan(TableName=table, Select="COUNT")["Count"])


def create_two_tables(ddb: Any, name: str) -> tuple[str, str]:
    create_table(ddb, name)
    create_table(ddb, name + "-2")
    return name, name + "-2"


@pytest.fixture
def two_tables(ddb: Any, table_name: str) -> tuple[str, str]:
    return create_two_tables(ddb, table_name)


# -- BatchWriteItem ------------------------------------------------------------------------


def test_batch_write_puts_and_deletes_across_tables(ddb: Any, two_tables: tuple[str, str]) -> None:
    a, b = two_tables
    ddb.put_item(TableName=b, Item={"pk": S("gone")})
    out = ddb.batch_write_item(RequestItems={a: [put("1", v=S("x")), put("2")], b: [delete("gone"), put("3")]})
    assert out["UnprocessedItems"] == {}
    assert set(out) == {"UnprocessedItems", "ResponseMetadata"}
    assert ddb.get_item(TableName=a, Key={"pk": S("1")})["Item"] == {"pk": S("1"), "v": S("x")}
    assert "Item" not in ddb.get_item(TableName=b, Key={"pk": S("gone")})
    assert count(ddb, a) == 2 and count(ddb, b) == 1


def test_batch_write_25_requests_is_the_limit(ddb: Any, two_tables: tuple[str, str], endpoint: str) -> None:
    a, b = two_tables
    ddb.batch_write_item(RequestItems={a: [put(str(i)) for i in range(25)]})
    assert count(ddb, a) == 25
    # 26 over two tables: the service's own count check.
    code, message = failure(
        ddb.batch_write_item, RequestItems={a: [put(f"x{i}") for i in range(13)], b: [put(str(i)) for i in range(13)]}
    )
    assert (code, message) == ("ValidationException", "Too many items requested for the BatchWriteItem call")
    # 26 in one table: the request shape's constraint on the map's values, each put echoed as
    # AWS records it in eu-west-2 (2026), no longer as a bare WriteRequest@hash.
    code, message = raw_failure(endpoint, "BatchWriteItem", {"RequestItems": {b: [put(str(i)) for i in range(26)]}})
    assert code == "ValidationException"
    assert re.fullmatch(
        r"1 validation error detected: Value '\{" + re.escape(b) + r"=\[(WriteRequest\(putRequest=PutRequest\(item="
        r"\{pk=com\.amazonaws\.dynamodb\.v20120810\.AttributeValue@[0-9a-f]+\}, workloadProfileName=null\), "
        r"deleteRequest=null\)(, )?){26}\]\}' at 'requestItems' failed to satisfy constraint: Map value must "
        r"satisfy constraint: \[Member must have length less than or equal to 25, Member must have length greater "
        r"than or equal to 1\]",
        message,
    ), message
    assert count(ddb, a) == 25 and count(ddb, b) == 0


def test_batch_write_request_shape_errors(endpoint: str, table_name: str) -> None:
    # Empty RequestItems: the validation framework's clause, as BatchGetItem's (a 2026 conformance
    # suite records eu-west-2 answering it since 2026-10-03; its other answer is the older
    # "The requestItems parameter is required for BatchWriteItem", never coral's echo of '{}').
    assert raw_failure(endpoint, "BatchWriteItem", {"RequestItems": {}}) == (
        "ValidationException",
        "1 validation error detected: Value at 'RequestItems' failed to satisfy constraint: "
        "Member must have length greater than or equal to 1",
    )
    assert raw_failure(endpoint, "BatchWriteItem", {"RequestItems": {"a": []}}) == (
        "ValidationException",
        "2 validation errors detected: "
        f"Value '{{a=[]}}' at 'requestItems' failed to satisfy constraint: Map keys must satisfy constraint: "
        f"{TABLE_NAME_RULES}; "
        "Value '{a=[]}' at 'requestItems' failed to satisfy constraint: Map value must satisfy constraint: "
        "[Member must have length less than or equal to 25, Member must have length greater than or equal to 1]",
    )
    code, message = raw_failure(endpoint, "BatchWriteItem", {"RequestItems": {"a;": [put("1")]}})
    assert code == "ValidationException"
    assert message.endswith(f"at 'requestItems' failed to satisfy constraint: Map keys must satisfy constraint: {TABLE_NAME_RULES}")
    for request in ({}, {"PutRequest": {"Item": {"pk": S("1")}}, "DeleteRequest": {"Key": {"pk": S("1")}}}):
        body = {"RequestItems": {table_name: [put("ok"), request]}}
        assert raw_failure(endpoint, "BatchWriteItem", body) == ("ValidationException", NOT_ONE)


def test_batch_write_duplicate_keys_write_nothing(ddb: Any, two_tables: tuple[str, str]) -> None:
    a, b = two_tables
    for requests in ([put("k"), delete("k")], [delete("k"), put("k")], [put("k", v=S("1")), put("k", v=S("2"))]):
        code, message = failure(ddb.batch_write_item, RequestItems={b: [put("other")], a: [put("x"), *requests]})
        assert (code, message) == ("ValidationException", DUPLICATES)
    assert count(ddb, a) == 0 and count(ddb, b) == 0
    # The same key in two tables is two items.
    ddb.batch_write_item(RequestItems={a: [put("k")], b: [put("k")]})
    assert count(ddb, a) == 1 and count(ddb, b) == 1


def test_batch_write_numbers_compare_by_value(ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name, hash_key=("id", "N"))
    requests = [{"PutRequest": {"Item": {"id": {"N": "1000"}}}}, {"PutRequest": {"Item": {"id": {"N": "1e3"}}}}]
    assert failure(ddb.batch_write_item, RequestItems={table_name: requests}) == ("ValidationException", DUPLICATES)


def test_batch_write_unknown_table_writes_nothing(ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name)
    code_message = failure(ddb.batch_write_item, RequestItems={table_name: [put("1")], table_name + "-nope": [put("1")]})
    assert code_message == NOT_FOUND
    assert count(ddb, table_name) == 0


def test_batch_write_items_validated_as_put_item(ddb: Any, endpoint: str, table_name: str) -> None:
    create_indexed(ddb, table_name, AttributeDefinitions=[attr("pk"), attr("sk"), attr("g")],
                   GlobalSecondaryIndexes=[gsi("by-g", "g")])
    good = {"PutRequest": {"Item": {"pk": S("a"), "sk": S("1")}}}

    def bad(request: dict[str, Any]) -> tuple[str, str]:
        return failure(ddb.batch_write_item, RequestItems={table_name: [good, request]})

    # A missing or mistyped key is a schema mismatch here (PutItem says "Missing the key ...").
    assert bad({"PutRequest": {"Item": {"pk": S("b")}}}) == ("ValidationException", SCHEMA)
    assert bad({"PutRequest": {"Item": {"pk": S("b"), "sk": {"N": "1"}}}}) == ("ValidationException", SCHEMA)
    assert bad({"DeleteRequest": {"Key": {"pk": S("b")}}}) == ("ValidationException", SCHEMA)
    assert bad({"PutRequest": {"Item": {"pk": S("b"), "sk": S("1"), "g": {"N": "1"}}}}) == (
        "ValidationException",
        "One or more parameter values were invalid: Type mismatch for Index Key g Expected: S Actual: N "
        "IndexName: by-g",
    )
    assert bad({"PutRequest": {"Item": {"pk": S(""), "sk": S("1")}}}) == (
        "ValidationException",
        "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an "
        "empty string value. Key: pk",
    )
    assert bad({"PutRequest": {"Item": {"pk": S("b"), "sk": S("1"), "s": {"SS": []}}}}) == (
        "ValidationException",
        "One or more parameter values were invalid: An string set  may not be empty",
    )
    # Item size is checked before the table is looked up.
    huge = {"PutRequest": {"Item": {"pk": S("b"), "sk": S("1"), "f": S("x" * 409_600)}}}
    assert failure(ddb.batch_write_item, RequestItems={table_name + "-nope": [huge]}) == (
        "ValidationException",
        "Item size has exceeded the maximum allowed size",
    )
    # A deserialization error anywhere beats a validation error earlier in the request.
    body = {"RequestItems": {table_name: [
        {"PutRequest": {"Item": {"pk": S("b"), "sk": S("1"), "s": {"SS": []}}}},
        {"PutRequest": {"Item": {"pk": S("c"), "sk": S("1"), "n": {"N": 5}}}},
    ]}}
    response = raw_request(endpoint, "BatchWriteItem", body)
    assert response.json() == {
        "__type": "com.amazon.coral.service#SerializationException",
        "Message": "NUMBER_VALUE cannot be converted to String",
    }
    assert count(ddb, table_name) == 0


def test_batch_write_capacity_per_table_with_indexes(ddb: Any, table_name: str) -> None:
    create_indexed(ddb, table_name, AttributeDefinitions=[attr("pk"), attr("sk"), attr("g")],
                   GlobalSecondaryIndexes=[gsi("by-g", "g")])
    create_table(ddb, table_name + "-2")
    item = {"pk": S("a"), "sk": S("1"), "g": S("G"), "f": S("x" * 1500)}
    out = ddb.batch_write_item(
        RequestItems={
            table_name: [{"PutRequest": {"Item": item}}, {"PutRequest": {"Item": {"pk": S("a"), "sk": S("2")}}}],
            table_name + "-2": [put("1")],
        },
        ReturnConsumedCapacity="INDEXES",
    )
    assert out["ConsumedCapacity"] == [
        {
            "TableName": table_name,
            "CapacityUnits": 5.0,
            "Table": {"CapacityUnits": 3.0},
            "GlobalSecondaryIndexes": {"by-g": {"CapacityUnits": 2.0}},
        },
        {"TableName": table_name + "-2", "CapacityUnits": 1.0, "Table": {"CapacityUnits": 1.0}},
    ]
    out = ddb.batch_write_item(RequestItems={table_name: [
        {"DeleteRequest": {"Key": {"pk": S("a"), "sk": S("1")}}}]}, ReturnConsumedCapacity="TOTAL")
    assert out["ConsumedCapacity"] == [{"TableName": table_name, "CapacityUnits": 4.0}]
    # The index followed: only the item without g is left, and the GSI is empty.
    query = ddb.query(TableName=table_name, IndexName="by-g", KeyConditionExpression="g = :g",
                      ExpressionAttributeValues={":g": S("G")})
    assert query["Count"] == 0


def test_batch_write_item_collection_metrics(ddb: Any, table_name: str) -> None:
    create_indexed(ddb, table_name, AttributeDefinitions=[attr("pk"), attr("sk"), attr("l", "N")],
                   LocalSecondaryIndexes=[lsi("by-l", "l")])
    out = ddb.batch_write_item(
        RequestItems={table_name: [
            {"PutRequest": {"Item": {"pk": S("p"), "sk": S(str(i)), "l": {"N": str(i)}}}} for i in range(3)
        ] + [{"PutRequest": {"Item": {"pk": S("q"), "sk": S("1")}}}]},
        ReturnItemCollectionMetrics="SIZE",
    )
    assert out["ItemCollectionMetrics"] == {table_name: [
        {"ItemCollectionKey": {"pk": S("p")}, "SizeEstimateRangeGB": [0.0, 1.0]},
        {"ItemCollectionKey": {"pk": S("q")}, "SizeEstimateRangeGB": [0.0, 1.0]},
    ]}


# -- BatchGetItem --------------------------------------------------------------------------


def test_batch_get_across_tables(ddb: Any, two_tables: tuple[str, str]) -> None:
    a, b = two_tables
    ddb.batch_write_item(RequestItems={a: [put("1", v=S("x")), put("2")], b: [put("3")]})
    out = ddb.batch_get_item(RequestItems={
        a: {"Keys": [{"pk": S("1")}, {"pk": S("nope")}, {"pk": S("2")}]},
        b: {"Keys": [{"pk": S("missing")}]},
    })
    assert sorted(out["Responses"][a], key=lambda item: item["pk"]["S"]) == [{"pk": S("1"), "v": S("x")}, {"pk": S("2")}]
    assert out["Responses"][b] == []
    assert out["UnprocessedKeys"] == {}


def test_batch_get_projections(ddb: Any, two_tables: tuple[str, str]) -> None:
    a, b = two_tables
    ddb.batch_write_item(RequestItems={a: [put("1", v=S("x"), w=S("y"))], b: [put("1", v=S("x"), w=S("y"))]})
    projected = {"Keys": [{"pk": S("1")}], "ProjectionExpression": "#v", "ExpressionAttributeNames": {"#v": "v"}}
    listed = {"Keys": [{"pk": S("1")}], "AttributesToGet": ["w", "pk"]}
    assert ddb.batch_get_item(RequestItems={a: projected, b: projected})["Responses"] == {
        a: [{"v": S("x")}], b: [{"v": S("x")}]}
    assert ddb.batch_get_item(RequestItems={a: listed, b: listed})["Responses"] == {
        a: [{"w": S("y"), "pk": S("1")}], b: [{"w": S("y"), "pk": S("1")}]}
    # One table's ProjectionExpression and another's AttributesToGet: AWS refuses the request (2026).
    assert failure(ddb.batch_get_item, RequestItems={a: projected, b: listed})[0] == "ValidationException"
    code, message = failure(ddb.batch_get_item, RequestItems={
        a: {"Keys": [{"pk": S("1")}], "ProjectionExpression": "v", "AttributesToGet": ["v"]}})
    assert (code, message) == (
        "ValidationException",
        "Can not use both expression and non-expression parameters in the same request: "
        "Non-expression parameters: {AttributesToGet} Expression parameters: {ProjectionExpression}",
    )
    assert failure(ddb.batch_get_item, RequestItems={a: {"Keys": [{"pk": S("1")}], "AttributesToGet": ["v", "v"]}}) == (
        "ValidationException",
        "One or more parameter values were invalid: Duplicate value in attribute name: v",
    )


def test_batch_get_capacity_per_table(ddb: Any, two_tables: tuple[str, str]) -> None:
    a, b = two_tables
    ddb.batch_write_item(RequestItems={a: [put("big", f=S("x" * 5000)), put("small")]})
    keys = {"Keys": [{"pk": S("big")}, {"pk": S("small")}, {"pk": S("none")}]}
    out = ddb.batch_get_item(RequestItems={a: keys, b: {"Keys": [{"pk": S("x")}]}}, ReturnConsumedCapacity="TOTAL")
    # Eventually consistent: 1 (two 4 KB units, halved) + 0.5 + 0.5 for the missing item.
    assert out["ConsumedCapacity"] == [{"TableName": a, "CapacityUnits": 2.0}, {"TableName": b, "CapacityUnits": 0.5}]
    out = ddb.batch_get_item(
        RequestItems={a: {**keys, "ConsistentRead": True}, b: {"Keys": [{"pk": S("x")}]}},
        ReturnConsumedCapacity="INDEXES",
    )
    assert out["ConsumedCapacity"] == [
        {"TableName": a, "CapacityUnits": 4.0, "Table": {"CapacityUnits": 4.0}},
        {"TableName": b, "CapacityUnits": 0.5, "Table": {"CapacityUnits": 0.5}},
    ]


def test_batch_get_bad_requests(ddb: Any, two_tables: tuple[str, str]) -> None:
    a, b = two_tables
    key = {"pk": S("1")}
    assert failure(ddb.batch_get_item, RequestItems={a: {"Keys": [key, {"pk": S("2")}, key]}}) == (
        "ValidationException", DUPLICATES)
    code, message = failure(ddb.batch_get_item, RequestItems={
        a: {"Keys": [{"pk": S(str(i))} for i in range(100)]}, b: {"Keys": [key]}})
    assert (code, message) == ("ValidationException", "Too many items requested for the BatchGetItem call")
    # The 2026 wording: no echo, the member named as sent (a 2026 conformance suite's exact answer).
    assert failure(ddb.batch_get_item, RequestItems={a: {"Keys": [{"pk": S(str(i))} for i in range(101)]}}) == (
        "ValidationException",
        f"1 validation error detected: Value at 'RequestItems.{a}.member.Keys' failed to satisfy constraint: "
        "Member must have length less than or equal to 100")
    assert failure(ddb.batch_get_item, RequestItems={a: {"Keys": [key]}, a + "-nope": {"Keys": [key]}}) == NOT_FOUND
    assert failure(ddb.batch_get_item, RequestItems={a: {"Keys": [{"nope": S("1")}]}}) == ("ValidationException", SCHEMA)
    assert failure(ddb.batch_get_item, RequestItems={a: {"Keys": [{"pk": {"N": "1"}}]}}) == (
        "ValidationException", SCHEMA)


def test_batch_get_numbers_are_duplicates_only_as_sent(ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name, hash_key=("id", "N"))
    ddb.put_item(TableName=table_name, Item={"id": {"N": "1000"}})
    same = {"Keys": [{"id": {"N": "1000"}}, {"id": {"N": "1000"}}]}
    assert failure(ddb.batch_get_item, RequestItems={table_name: same}) == ("ValidationException", DUPLICATES)
    out = ddb.batch_get_item(RequestItems={table_name: {"Keys": [{"id": {"N": "1000"}}, {"id": {"N": "1e3"}}]}})
    assert out["Responses"][table_name] == [{"id": {"N": "1000"}}, {"id": {"N": "1000"}}]


def test_batch_get_answers_at_most_16_mb(ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name)
    filler = "x" * 390_000
    keys = [{"pk": S(f"{i:02}")} for i in range(45)]
    for start in range(0, 45, 15):
        ddb.batch_write_item(RequestItems={table_name: [
            {"PutRequest": {"Item": {**key, "f": S(filler)}}} for key in keys[start:start + 15]]})
    request = {"Keys": keys, "ConsistentRead": True, "ProjectionExpression": "pk"}
    out = ddb.batch_get_item(RequestItems={table_name: request}, ReturnConsumedCapacity="TOTAL")
    got = out["Responses"][table_name]
    rest = out["UnprocessedKeys"][table_name]
    # 43 items of ~381 KiB fit in 16 MiB; the rest comes back with the table's other parameters.
    assert len(got) == 43
    assert rest == {"Keys": keys[43:], "ConsistentRead": True, "ProjectionExpression": "pk"}
    assert got == [{"pk": key["pk"]} for key in keys[:43]]
    assert out["ConsumedCapacity"] == [{"TableName": table_name, "CapacityUnits": 43 * 96.0}]
    again = ddb.batch_get_item(RequestItems={table_name: rest})
    assert again["Responses"][table_name] == [{"pk": key["pk"]} for key in keys[43:]]
    assert again["UnprocessedKeys"] == {}


def test_batch_get_request_shape_errors(endpoint: str, table_name: str) -> None:
    # The 2026 wording (a 2026 conformance suite: empty RequestItems in every region but one by
    # 2026-09-02; a malformed table name echoes the map as JSON, us-east-1 and eu-west-2, 2026-10-09).
    assert raw_failure(endpoint, "BatchGetItem", {"RequestItems": {}}) == (
        "ValidationException",
        "1 validation error detected: Value at 'RequestItems' failed to satisfy constraint: "
        "Member must have length greater than or equal to 1",
    )
    assert raw_failure(endpoint, "BatchGetItem", {"RequestItems": {"bad!name": {"Keys": [{"pk": {"S": "a"}}]}}}) == (
        "ValidationException",
        """1 validation error detected: Value '{"bad!name":{"Keys":[{"pk":{"S":"a"}}]}}' at 'requestItems' """
        "failed to satisfy constraint: Map keys must satisfy constraint: " + TABLE_NAME_RULES,
    )
    assert raw_failure(endpoint, "BatchGetItem", {"RequestItems": {"a": {"Keys": []}}}) == (
        "ValidationException",
        """2 validation errors detected: Value '{"a":{"Keys":[]}}' at 'requestItems' failed to satisfy constraint: """
        "Map keys must satisfy constraint: " + TABLE_NAME_RULES + "; Value at 'RequestItems.a.member.Keys' failed to "
        "satisfy constraint: Member must have length greater than or equal to 1",
    )
