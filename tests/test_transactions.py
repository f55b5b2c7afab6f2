"""TransactWriteItems and TransactGetItems against a real server.

Wire shapes and messages: the cancellation body is the one quoted from the
service in aws-sdk-net#1292 and PynamoDB#1144; the other messages are moto's
AWS-verified transaction tests unless a test says otherwise.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import Server, client_for, create_table, durable_store, raw_request
from test_batch import S, create_two_tables, failure
from test_indexes import attr, create_indexed, gsi, lsi

from partita.engine.engine import Engine
from partita.engine.expressions import parse_update
from partita.engine.items.single import prepare_update
from partita.engine.items.transactions import (
    ClientToken,
    IdempotentParameterMismatchException,
    TransactionOps,
)
from partita.engine.items.updates import bind_update
from partita.engine.items.writes import WriteRules
from partita.storage.sqlite import SQLiteStore

CANCELLED = "Transaction cancelled, please refer cancellation reasons for specific reasons [{}]"
CONDITION_FAILED = {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"}
NONE = {"Code": "None"}
DUPLICATE = ("ValidationException", "Transaction request cannot include multiple operations on one item")
NOT_FOUND = ("ResourceNotFoundException", "Requested resource not found")


def N(value: int | str) -> dict[str, str]:  # noqa: N802
    return {"N": str(value)}


def key(pk: str) -> dict[str, Any]:
    return {"pk": S(pk)}


def put(table: str, pk: str, **attrs: Any) -> dict[str, Any]:
    return {"Put": {"TableName": table, "Item": {"pk": S(pk), **attrs}}}


def add(table: str, pk: str, amount: int, condition: str | None = None, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "TableName": table,
        "Key": key(pk),
        "UpdateExpression": "ADD n :a",
        "ExpressionAttributeValues": {":a": N(amount)},
        **extra,
    }
    if condition is not None:
        body["ConditionExpression"] = condition
    return {"Update": body}


def check(table: str, pk: str, condition: str, **extra: Any) -> dict[str, Any]:
    return {"ConditionCheck": {"TableName": table, "Key": key(pk), "ConditionExpression": condition, **extra}}


def cancelled(ddb: Any, items: list[dict[str, Any]], **extra: Any) -> tuple[str, list[dict[str, Any]]]:
    with pytest.raises(ClientError) as excinfo:
        ddb.transact_write_items(TransactItems=items, **extra)
    response = excinfo.value.response
    assert response["Error"]["Code"] == "TransactionCanceledException"
    return response["Error"]["Message"], response["CancellationReasons"]


def scan(ddb: Any, table: str) -> list[dict[str, Any]]:
    return sorted(ddb.scan(TableName=table, ConsistentRead=True)["Items"], key=lambda item: item["pk"]["S"])


@pytest.fixture
def tables(ddb: Any, table_name: str) -> tuple[str, str]:
    return create_two_tables(ddb, table_name)


# -- TransactWriteItems ----------------------------------------------------------------------


def test_every_action_kind_across_tables(ddb: Any, tables: tuple[str, str]) -> None:
    a, b = tables
    ddb.put_item(TableName=a, Item={"pk": S("acct"), "n": N(10)})
    ddb.put_item(TableName=b, Item={"pk": S("old")})
    ddb.put_item(TableName=b, Item={"pk": S("guard"), "open": {"BOOL": True}})
    out = ddb.transact_write_items(TransactItems=[
        add(a, "acct", -3, "n >= :min", ExpressionAttributeValues={":a": N(-3), ":min": N(3)}),
        put(a, "new", v=S("x")),
        {"Delete": {"TableName": b, "Key": key("old"), "ConditionExpression": "attribute_exists(pk)"}},
        check(b, "guard", "#o = :t", ExpressionAttributeNames={"#o": "open"},
              ExpressionAttributeValues={":t": {"BOOL": True}}),
    ])
    assert set(out) == {"ResponseMetadata"}
    assert scan(ddb, a) == [{"pk": S("acct"), "n": N(7)}, {"pk": S("new"), "v": S("x")}]
    assert scan(ddb, b) == [{"pk": S("guard"), "open": {"BOOL": True}}]


def test_failed_condition_cancels_everything(ddb: Any, tables: tuple[str, str]) -> None:
    a, b = tables
    ddb.put_item(TableName=a, Item={"pk": S("acct"), "n": N(1)})
    items = [put(b, "x"), add(a, "acct", -5, "n >= :five", ExpressionAttributeValues={":a": N(-5), ":five": N(5)})]
    message, reasons = cancelled(ddb, items)
    assert message == CANCELLED.format("None, ConditionalCheckFailed")
    assert reasons == [NONE, CONDITION_FAILED]
    assert scan(ddb, a) == [{"pk": S("acct"), "n": N(1)}]
    assert scan(ddb, b) == []


def test_every_failure_is_reported_in_order(ddb: Any, tables: tuple[str, str]) -> None:
    a, _ = tables
    ddb.put_item(TableName=a, Item={"pk": S("1"), "n": N(1)})
    items = [
        check(a, "1", "attribute_not_exists(pk)"),
        put(a, "2"),
        check(a, "3", "attribute_exists(pk)"),
        {"Update": {"TableName": a, "Key": key("4"), "UpdateExpression": "SET n = absent + :one",
                    "ExpressionAttributeValues": {":one": N(1)}}},
    ]
    message, reasons = cancelled(ddb, items)
    assert message == CANCELLED.format("ConditionalCheckFailed, None, ConditionalCheckFailed, ValidationError")
    assert reasons == [
        CONDITION_FAILED,
        NONE,
        CONDITION_FAILED,
        {"Code": "ValidationError",
         "Message": "The provided expression refers to an attribute that does not exist in the item"},
    ]
    assert scan(ddb, a) == [{"pk": S("1"), "n": N(1)}]


@pytest.mark.parametrize("kind", ["ConditionCheck", "Put", "Delete", "Update"])
def test_all_old_returns_the_item_with_the_reason(ddb: Any, table_name: str, kind: str) -> None:
    create_table(ddb, table_name)
    ddb.put_item(TableName=table_name, Item={"pk": S("there"), "v": S("old")})
    items = []
    for pk in ("there", "absent"):
        body: dict[str, Any] = {"TableName": table_name, "Key": key(pk), "ConditionExpression": "v = :new",
                                "ExpressionAttributeValues": {":new": S("new")},
                                "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}
        if kind == "Put":
            body["Item"] = {**body.pop("Key"), "v": S("new")}
        elif kind == "Update":
            body["UpdateExpression"] = "SET v = :new"
        items.append({kind: body})
    message, reasons = cancelled(ddb, items)
    assert message == CANCELLED.format("ConditionalCheckFailed, ConditionalCheckFailed")
    # The item only when it exists.
    assert reasons == [{**CONDITION_FAILED, "Item": {"pk": S("there"), "v": S("old")}}, CONDITION_FAILED]
    assert scan(ddb, table_name) == [{"pk": S("there"), "v": S("old")}]


def test_update_that_cannot_apply_is_a_validation_reason(ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name)
    ddb.put_item(TableName=table_name, Item={"pk": S("a"), "s": S("text")})
    items = [put(table_name, "b"), add(table_name, "a", 1)]
    items[1]["Update"]["UpdateExpression"] = "ADD s :a"
    message, reasons = cancelled(ddb, items)
    assert message == CANCELLED.format("None, ValidationError")
    assert reasons[1] == {"Code": "ValidationError",
                          "Message": "An operand in the update expression has an incorrect data type"}
    big = {"Update": {"TableName": table_name, "Key": key("a"), "UpdateExpression": "SET f = :f",
                      "ExpressionAttributeValues": {":f": S("x" * 409_600)}}}
    message, reasons = cancelled(ddb, [big])
    assert reasons == [{"Code": "ValidationError", "Message": "Item size to update has exceeded the maximum allowed size"}]
    assert scan(ddb, table_name) == [{"pk": S("a"), "s": S("text")}]


def test_one_item_at_most_once(ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name, range_key=("sk", "S"))
    item = {"pk": S("p"), "sk": S("s")}
    twice = [
        {"Put": {"TableName": table_name, "Item": {**item, "v": S("x")}}},
        {"Delete": {"TableName": table_name, "Key": {"sk": S("s"), "pk": S("p")}}},
    ]
    assert failure(ddb.transact_write_items, TransactItems=twice) == DUPLICATE
    checked = {"ConditionCheck": {"TableName": table_name, "Key": item, "ConditionExpression": "attribute_exists(pk)"}}
    assert failure(ddb.transact_write_items, TransactItems=[checked, twice[0]]) == DUPLICATE
    assert scan(ddb, table_name) == []
    # The same key in another table is another item.
    create_table(ddb, table_name + "-2", range_key=("sk", "S"))
    ddb.transact_write_items(TransactItems=[
        twice[0], {"Put": {"TableName": table_name + "-2", "Item": item}}])


def test_mixed_up_action_shapes(endpoint: str, ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name)
    both = {"Put": {"TableName": table_name, "Item": key("a")}, "Delete": {"TableName": table_name, "Key": key("a")}}
    for entry in (both, {}):
        response = raw_request(endpoint, "TransactWriteItems", {"TransactItems": [put(table_name, "b"), entry]})
        assert response.json() == {
            "__type": "com.amazonaws.dynamodb.v20120810#ValidationException",
            "message": "TransactItems can only contain one of Check, Put, Update or Delete",
        }
    response = raw_request(endpoint, "TransactWriteItems", {"TransactItems": []})
    assert response.json()["message"] == (
        "1 validation error detected: Value '[]' at 'transactItems' failed to satisfy constraint: "
        "Member must have length greater than or equal to 1"
    )
    response = raw_request(endpoint, "TransactWriteItems", {"TransactItems": [{"Update": {
        "TableName": table_name, "Key": key("a")}}]})
    assert response.json()["message"] == (
        "1 validation error detected: Value null at 'transactItems.1.member.update.updateExpression' failed to "
        "satisfy constraint: Member must not be null"
    )
    assert scan(ddb, table_name) == []


def test_at_most_100_actions(ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name)
    ddb.transact_write_items(TransactItems=[put(table_name, str(i)) for i in range(100)])
    code, message = failure(ddb.transact_write_items, TransactItems=[put(table_name, f"x{i}") for i in range(101)])
    assert code == "ValidationException"
    assert re.fullmatch(
        r"1 validation error detected: Value '\[(com\.amazonaws\.dynamodb\.v20120810\.TransactWriteItem@[0-9a-f]+"
        r"(, )?){101}\]' at 'transactItems' failed to satisfy constraint: Member must have length less than or "
        r"equal to 100",
        message,
    )
    assert ddb.scan(TableName=table_name, Select="COUNT")["Count"] == 100


def test_at_most_4_mb(ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name)
    filler = S("x" * 380_000)
    ddb.transact_write_items(TransactItems=[put(table_name, str(i), f=filler) for i in range(11)])
    code, message = failure(ddb.transact_write_items,
                            TransactItems=[put(table_name, f"x{i}", f=filler) for i in range(12)])
    assert (code, message) == (
        "ValidationException",
        "Collection size of items exceeded, which can also be caused by the aggregate size of the items in the "
        "transaction exceeding the 4MB limit",
    )
    assert "Item" in ddb.get_item(TableName=table_name, Key=key("10"))
    assert "Item" not in ddb.get_item(TableName=table_name, Key=key("x0"))


def test_validation_errors_write_nothing(ddb: Any, tables: tuple[str, str]) -> None:
    a, b = tables
    first = put(b, "first")
    cases: list[tuple[dict[str, Any], tuple[str, str]]] = [
        (put(a + "-nope", "x"), NOT_FOUND),
        # A key that does not fit the schema is a cancellation reason, not one of these
        # (test_schema_errors_are_cancellation_reasons; this list held two such cases,
        # answered as plain ValidationExceptions, which DynamoDB does not do).
        ({"Update": {"TableName": a, "Key": key(""), "UpdateExpression": "SET v = :v",
                     "ExpressionAttributeValues": {":v": N(0)}}},
         ("ValidationException", "One or more parameter values are not valid. The AttributeValue for a key "
                                 "attribute cannot contain an empty string value. Key: pk")),
        ({"Put": {"TableName": a, "Item": key("x"), "ConditionExpression": "attribute_not_exists(#n0)",
                  "ExpressionAttributeNames": {"#n0": "pk"}, "ExpressionAttributeValues": {}}},
         ("ValidationException", "ExpressionAttributeValues must not be empty")),
        ({"Update": {"TableName": a, "Key": key("x"), "UpdateExpression": "SET pk = :v",
                     "ExpressionAttributeValues": {":v": S("y")}}},
         ("ValidationException", "One or more parameter values were invalid: Cannot update attribute pk. "
                                 "This attribute is part of the key")),
        (check(a, "x", "v = :v", ExpressionAttributeValues={":v": S("1"), ":w": S("2")}),
         ("ValidationException", "Value provided in ExpressionAttributeValues unused in expressions: keys: {:w}")),
        ({"Put": {"TableName": a, "Item": {"pk": S("x"), "f": S("x" * 409_600)}}},
         ("ValidationException", "Item size has exceeded the maximum allowed size")),
    ]
    for bad, expected in cases:
        assert failure(ddb.transact_write_items, TransactItems=[first, bad]) == expected, bad
    assert scan(ddb, a) == [] and scan(ddb, b) == []


def test_deserialization_errors_come_first(endpoint: str, table_name: str) -> None:
    body = {"TransactItems": [
        {"Put": {"TableName": table_name, "Item": {"pk": S("x"), "s": {"SS": []}}}},
        {"Put": {"TableName": table_name, "Item": {"pk": S("y"), "n": {"N": 1}}}},
    ]}
    assert raw_request(endpoint, "TransactWriteItems", body).json() == {
        "__type": "com.amazon.coral.service#SerializationException",
        "Message": "NUMBER_VALUE cannot be converted to String",
    }


def test_capacity_is_doubled_per_table_with_indexes(ddb: Any, table_name: str) -> None:
    create_indexed(ddb, table_name, AttributeDefinitions=[attr("pk"), attr("sk"), attr("g")],
                   GlobalSecondaryIndexes=[gsi("by-g", "g")])
    create_table(ddb, table_name + "-2")
    out = ddb.transact_write_items(
        TransactItems=[
            {"Put": {"TableName": table_name, "Item": {"pk": S("a"), "sk": S("1"), "g": S("G"), "f": S("x" * 1500)}}},
            put(table_name + "-2", "b"),
            {"Put": {"TableName": table_name, "Item": {"pk": S("a"), "sk": S("2")}}},
        ],
        ReturnConsumedCapacity="INDEXES",
    )
    assert out["ConsumedCapacity"] == [
        {
            "TableName": table_name,
            "CapacityUnits": 10.0,
            "WriteCapacityUnits": 10.0,
            "Table": {"CapacityUnits": 6.0, "WriteCapacityUnits": 6.0},
            "GlobalSecondaryIndexes": {"by-g": {"CapacityUnits": 4.0, "WriteCapacityUnits": 4.0}},
        },
        {"TableName": table_name + "-2", "CapacityUnits": 2.0, "WriteCapacityUnits": 2.0,
         "Table": {"CapacityUnits": 2.0, "WriteCapacityUnits": 2.0}},
    ]
    # A condition check is charged like a write of the item it reads.
    out = ddb.transact_write_items(
        TransactItems=[{"ConditionCheck": {"TableName": table_name + "-2", "Key": key("b"),
                                           "ConditionExpression": "attribute_exists(pk)"}}],
        ReturnConsumedCapacity="TOTAL",
    )
    assert out["ConsumedCapacity"] == [{"TableName": table_name + "-2", "CapacityUnits": 2.0, "WriteCapacityUnits": 2.0}]
    # The GSI followed the transaction.
    assert ddb.query(TableName=table_name, IndexName="by-g", KeyConditionExpression="g = :g",
                     ExpressionAttributeValues={":g": S("G")})["Count"] == 1


def test_item_collection_metrics(ddb: Any, table_name: str) -> None:
    create_indexed(ddb, table_name, AttributeDefinitions=[attr("pk"), attr("sk"), attr("l", "N")],
                   LocalSecondaryIndexes=[lsi("by-l", "l")])
    out = ddb.transact_write_items(TransactItems=[
        {"Put": {"TableName": table_name, "Item": {"pk": S("p"), "sk": S("1"), "l": N(1)}}},
        {"Put": {"TableName": table_name, "Item": {"pk": S("q"), "sk": S("1")}}},
    ], ReturnItemCollectionMetrics="SIZE")
    assert out["ItemCollectionMetrics"] == {table_name: [
        {"ItemCollectionKey": {"pk": S("p")}, "SizeEstimateRangeGB": [0.0, 1.0]},
        {"ItemCollectionKey": {"pk": S("q")}, "SizeEstimateRangeGB": [0.0, 1.0]},
    ]}


def test_item_collection_limit_cancels(start_server: Callable[..., Server]) -> None:
    server = start_server("--in-memory", "--item-collection-limit", "2000")
    ddb = client_for(server.url)
    create_indexed(ddb, "capped", AttributeDefinitions=[attr("pk"), attr("sk"), attr("l")],
                   LocalSecondaryIndexes=[lsi("by-l", "l")])
    filler = S("x" * 400)
    items = [{"Put": {"TableName": "capped", "Item": {"pk": S("p"), "sk": S(str(i)), "l": S("y"), "f": filler}}}
             for i in range(3)]
    message, reasons = cancelled(ddb, items)
    assert message == CANCELLED.format("None, None, ItemCollectionSizeLimitExceeded")
    assert reasons[2] == {"Code": "ItemCollectionSizeLimitExceeded", "Message": "Collection size exceeded."}
    assert ddb.scan(TableName="capped")["Count"] == 0


# -- ClientRequestToken ----------------------------------------------------------------------


def test_token_makes_a_repeat_a_no_op(ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name)
    token = str(uuid.uuid4())
    request = {"TransactItems": [add(table_name, "counter", 1)], "ClientRequestToken": token}
    first = ddb.transact_write_items(**request, ReturnConsumedCapacity="TOTAL")
    assert first["ConsumedCapacity"] == [{"TableName": table_name, "CapacityUnits": 2.0, "WriteCapacityUnits": 2.0}]
    again = ddb.transact_write_items(**request, ReturnConsumedCapacity="TOTAL")
    # A repeat reads the item instead of writing it (the documented charge).
    assert again["ConsumedCapacity"] == [{"TableName": table_name, "CapacityUnits": 2.0, "ReadCapacityUnits": 2.0}]
    ddb.transact_write_items(**request)
    assert ddb.get_item(TableName=table_name, Key=key("counter"))["Item"]["n"] == N(1)
    code, message = failure(ddb.transact_write_items, TransactItems=[add(table_name, "counter", 2)],
                            ClientRequestToken=token)
    assert code == "IdempotentParameterMismatchException"
    assert message == (
        "DynamoDB rejected the request because you retried a request with a different payload but with an "
        "idempotent token that was already used."
    )
    assert ddb.get_item(TableName=table_name, Key=key("counter"))["Item"]["n"] == N(1)
    # Without a token every call writes.
    ddb.transact_write_items(TransactItems=[add(table_name, "counter", 1)])
    ddb.transact_write_items(TransactItems=[add(table_name, "counter", 1)])
    assert ddb.get_item(TableName=table_name, Key=key("counter"))["Item"]["n"] == N(3)


def test_cancelled_transaction_does_not_use_its_token(ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name)
    token = str(uuid.uuid4())
    request = {"TransactItems": [add(table_name, "c", 1, "attribute_exists(pk)")], "ClientRequestToken": token}
    cancelled(ddb, request["TransactItems"], ClientRequestToken=token)
    ddb.put_item(TableName=table_name, Item={"pk": S("c"), "n": N(0)})
    ddb.transact_write_items(**request)
    ddb.transact_write_items(**request)
    assert ddb.get_item(TableName=table_name, Key=key("c"))["Item"]["n"] == N(1)


def test_token_survives_a_restart(start_server: Callable[..., Server], tmp_path: Path) -> None:
    store = durable_store(tmp_path / "data")
    server = start_server(*store)
    ddb = client_for(server.url)
    create_table(ddb, "tokens")
    request = {"TransactItems": [add("tokens", "c", 1)], "ClientRequestToken": "restart-token"}
    ddb.transact_write_items(**request)
    server.kill()
    ddb = client_for(start_server(*store).url)
    ddb.transact_write_items(**request)
    assert ddb.get_item(TableName="tokens", Key=key("c"))["Item"]["n"] == N(1)
    code, _ = failure(ddb.transact_write_items, TransactItems=[add("tokens", "c", 5)],
                      ClientRequestToken="restart-token")
    assert code == "IdempotentParameterMismatchException"


def test_token_expires_after_its_window() -> None:
    """The 10-minute window, on the server clock: an expired token is a new request (engine level)."""
    store = SQLiteStore(None)
    engine = Engine(store)
    engine.tables.create({
        "TableName": "t", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}], "BillingMode": "PAY_PER_REQUEST",
    })
    ops = TransactionOps(store, WriteRules(), engine.clock)
    table = engine.tables.get("t")
    update = bind_update(parse_update("ADD n :one"), {}, {":one": N(1)})
    token = ClientToken("tok", "digest")

    def run() -> bool:
        return ops.write([prepare_update(table, key("c"), update)], token).replayed

    assert run() is False
    engine.clock.advance(590)  # the server clock: a slow machine cannot expire the token early
    assert run() is True
    engine.clock.advance(11)
    assert run() is False
    item, _ = engine.items.get("t", key("c"), True)
    assert item is not None and item["n"] == N(2)
    with pytest.raises(IdempotentParameterMismatchException):
        ops.write([prepare_update(table, key("d"), update)], ClientToken("tok", "other"))
    engine.close()


# -- TransactGetItems ------------------------------------------------------------------------


def test_transact_get_items(ddb: Any, tables: tuple[str, str]) -> None:
    a, b = tables
    ddb.put_item(TableName=a, Item={"pk": S("1"), "v": S("x"), "w": S("y")})
    ddb.put_item(TableName=b, Item={"pk": S("1"), "f": S("x" * 5000)})
    out = ddb.transact_get_items(
        TransactItems=[
            {"Get": {"TableName": a, "Key": key("1"), "ProjectionExpression": "#v", "ExpressionAttributeNames": {"#v": "v"}}},
            {"Get": {"TableName": a, "Key": key("missing")}},
            {"Get": {"TableName": b, "Key": key("1")}},
        ],
        ReturnConsumedCapacity="TOTAL",
    )
    assert out["Responses"] == [{"Item": {"v": S("x")}}, {}, {"Item": {"pk": S("1"), "f": S("x" * 5000)}}]
    # 2 units per 4 KB read, per item (a missing item too).
    assert out["ConsumedCapacity"] == [
        {"TableName": a, "CapacityUnits": 4.0, "ReadCapacityUnits": 4.0},
        {"TableName": b, "CapacityUnits": 4.0, "ReadCapacityUnits": 4.0},
    ]


def test_transact_get_bad_requests(ddb: Any, tables: tuple[str, str]) -> None:
    a, _ = tables
    get = {"Get": {"TableName": a, "Key": key("1")}}
    assert failure(ddb.transact_get_items, TransactItems=[get, get]) == DUPLICATE
    assert failure(ddb.transact_get_items, TransactItems=[get, {"Get": {"TableName": a + "-x", "Key": key("1")}}]) == NOT_FOUND
    # A Key of another shape cancels the transaction (see test_transact_get_key_errors_are_cancellation_reasons).
    with pytest.raises(ClientError) as excinfo:
        ddb.transact_get_items(TransactItems=[{"Get": {"TableName": a, "Key": {"x": S("1")}}}])
    assert excinfo.value.response["CancellationReasons"] == [
        {"Code": "ValidationError", "Message": "The provided key element does not match the schema"}]
    code, message = failure(ddb.transact_get_items,
                            TransactItems=[{"Get": {"TableName": a, "Key": key(str(i))}} for i in range(101)])
    assert code == "ValidationException"
    assert message.endswith(
        "at 'transactItems' failed to satisfy constraint: Member must have length less than or equal to 100")


def test_transact_get_at_most_4_mb(ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name)
    for i in range(11):
        ddb.put_item(TableName=table_name, Item={"pk": S(str(i)), "f": S("x" * 390_000)})
    gets = [{"Get": {"TableName": table_name, "Key": key(str(i))}} for i in range(11)]
    assert len(ddb.transact_get_items(TransactItems=gets[:10])["Responses"]) == 10
    code, message = failure(ddb.transact_get_items, TransactItems=gets)
    assert code == "ValidationException"
    assert message.endswith("exceeding the 4MB limit")
