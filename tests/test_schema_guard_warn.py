"""The schema guard in warn mode: nothing refused, every violating write recorded exactly once.

A violation is a finding (`GET /partita/v1/schema/violations`), counted in
`/metrics` (`partita_schema_violations_total`) and listed by the console.
Only writes that happened are recorded: the record is a row in the write's
own commit.
"""

from __future__ import annotations

import re
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import Server, client_for, error_of
from guard_helpers import get_json, guard_server, keyed_table

SHOP, OTHER = "Shop", "Other"
SCHEMA = {
    "mode": "warn",
    "entities": [
        {"name": "Customer", "table": SHOP, "match": {"pk": "CLIENTE#*", "sk": "PERFIL"}, "schema": {
            "type": "object", "required": ["email", "name"],
            "properties": {"email": {"type": "string"}, "age": {"type": "integer"}, "vip": {"type": "boolean"}}}},
        {"name": "Thing", "table": OTHER, "schema": {"required": ["v"]}},
    ],
}
LESSON = ("DynamoDB enforces no schema beyond the key: an item that breaks its entity's shape is stored "
          "as written, and every reader of the table meets it.")


@pytest.fixture(scope="module")
def warned(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = guard_server(tmp_path_factory.mktemp("warn"), SCHEMA)
    ddb = client_for(srv.url)
    keyed_table(ddb, SHOP)
    keyed_table(ddb, OTHER, sort=None)
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def w(warned: Server) -> Any:
    return client_for(warned.url)


def key(n: str) -> dict[str, Any]:
    return {"pk": {"S": f"CLIENTE#{n}"}, "sk": {"S": "PERFIL"}}


def violations(srv: Server, query: str = "") -> dict[str, Any]:
    doc: dict[str, Any] = get_json(srv.url + "/partita/v1/schema/violations" + query)
    return doc


def now(srv: Server) -> float:
    return float(get_json(srv.url + "/partita/v1/clock")["now"])


def finding(table: str, entity: str, write: str, item_key: dict[str, Any], errors: list[str], at: float) -> dict[str, Any]:
    return {
        "kind": "schema-violation", "table": table, "index": None,
        "evidence": {"entity": entity, "write": write, "key": item_key, "errors": errors, "at": at},
        "lesson": LESSON,
        "fix": (f"Correct the code behind this {write.lower()} on {table}, or the {entity} schema if the "
                "item is right; the guard's reject mode makes such a write fail in tests."),
    }


def metric(srv: Server, entity: str, table: str) -> float:
    with urllib.request.urlopen(srv.url + "/metrics", timeout=30) as response:
        text = response.read().decode()
    found = re.search(rf'^partita_schema_violations_total{{entity="{entity}",table="{table}"}} (\S+)$', text, re.M)
    assert found is not None, text
    return float(found.group(1))


def test_a_violating_put_is_written_and_recorded_with_its_key_and_first_errors(warned: Server, w: Any) -> None:
    before = violations(warned)["total"]
    start = now(warned)
    item = {**key("1"), "age": {"S": "old"}, "vip": {"N": "1"}}
    w.put_item(TableName=SHOP, Item=item)
    end = now(warned)
    assert w.get_item(TableName=SHOP, Key=key("1"), ConsistentRead=True)["Item"] == item
    doc = violations(warned, "?limit=1")
    assert doc["mode"] == "warn" and doc["total"] == before + 1
    (found,) = doc["findings"]
    at = found["evidence"]["at"]
    assert start <= at <= end
    # The first three errors, in the schema's order: required, then properties.
    assert found == finding(SHOP, "Customer", "Put", key("1"), [
        "'email' is a required property", "'name' is a required property", "at age: 'old' is not of type 'integer'",
    ], at)


def test_every_write_path_records_its_violations(warned: Server, w: Any) -> None:
    before = violations(warned)["total"]
    w.put_item(TableName=SHOP, Item={**key("2"), "email": {"S": "e"}, "name": {"S": "n"}})  # valid: nothing
    w.update_item(TableName=SHOP, Key=key("2"), UpdateExpression="REMOVE #n", ExpressionAttributeNames={"#n": "name"})
    w.batch_write_item(RequestItems={SHOP: [
        {"PutRequest": {"Item": {**key("3"), "email": {"N": "3"}, "name": {"S": "n"}}}},
        {"PutRequest": {"Item": {**key("4"), "email": {"S": "ok"}, "name": {"S": "n"}}}},
        {"DeleteRequest": {"Key": key("1")}},
    ]})
    w.transact_write_items(TransactItems=[
        {"Put": {"TableName": OTHER, "Item": {"pk": {"S": "t1"}}}},
        {"Update": {"TableName": SHOP, "Key": key("4"), "UpdateExpression": "SET vip = :v",
                    "ExpressionAttributeValues": {":v": {"S": "yes"}}}},
    ])
    w.execute_statement(Statement=f"INSERT INTO {SHOP} VALUE {{'pk': 'CLIENTE#5', 'sk': 'PERFIL', 'name': 'x'}}")
    doc = violations(warned, "?limit=5")
    assert doc["total"] == before + 5
    got = [(f["table"], f["evidence"]["write"], f["evidence"]["key"], f["evidence"]["errors"]) for f in doc["findings"]]
    assert got == [
        (SHOP, "Put", key("5"), ["'email' is a required property"]),
        (SHOP, "Update", key("4"), ["at vip: 'yes' is not of type 'boolean'"]),
        (OTHER, "Put", {"pk": {"S": "t1"}}, ["'v' is a required property"]),
        (SHOP, "Put", key("3"), ["at email: 3 is not of type 'string'"]),
        (SHOP, "Update", key("2"), ["'name' is a required property"]),
    ]
    # Nothing was refused: every item is there as written.
    assert w.get_item(TableName=SHOP, Key=key("4"), ConsistentRead=True)["Item"]["vip"] == {"S": "yes"}
    assert "Item" in w.get_item(TableName=OTHER, Key={"pk": {"S": "t1"}}, ConsistentRead=True)
    # ?table= keeps one table's findings, and its total.
    other = violations(warned, f"?table={OTHER}")
    assert other["total"] >= 1 and {f["table"] for f in other["findings"]} == {OTHER}


def test_a_write_that_did_not_happen_records_nothing(warned: Server, w: Any) -> None:
    before = violations(warned)["total"]
    bad = {**key("6"), "email": {"N": "6"}}
    with pytest.raises(ClientError) as caught:
        w.put_item(TableName=SHOP, Item=bad, ConditionExpression="attribute_exists(pk)")
    assert error_of(caught) == ("ConditionalCheckFailedException", "The conditional request failed")
    with pytest.raises(ClientError) as caught:
        w.transact_write_items(TransactItems=[
            {"Put": {"TableName": SHOP, "Item": bad}},
            {"ConditionCheck": {"TableName": OTHER, "Key": {"pk": {"S": "absent"}},
                                "ConditionExpression": "attribute_exists(pk)"}},
        ])
    assert caught.value.response["CancellationReasons"] == [
        {"Code": "None"}, {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"}]
    with pytest.raises(ClientError) as caught:  # a batch refused as a whole (one item twice)
        w.batch_write_item(RequestItems={SHOP: [{"PutRequest": {"Item": bad}}, {"PutRequest": {"Item": bad}}]})
    assert error_of(caught) == ("ValidationException", "Provided list of item keys contains duplicates")
    assert violations(warned)["total"] == before
    assert "Item" not in w.get_item(TableName=SHOP, Key=key("6"), ConsistentRead=True)


def test_metrics_count_the_violations_of_each_entity(warned: Server, w: Any) -> None:
    shop, other = metric(warned, "Customer", SHOP), metric(warned, "Thing", OTHER)
    w.put_item(TableName=OTHER, Item={"pk": {"S": "m1"}})
    w.put_item(TableName=OTHER, Item={"pk": {"S": "m2"}})
    w.put_item(TableName=OTHER, Item={"pk": {"S": "m3"}, "v": {"NULL": True}})  # valid
    assert metric(warned, "Thing", OTHER) == other + 2
    assert metric(warned, "Customer", SHOP) == shop
    assert violations(warned, f"?table={OTHER}")["total"] == other + 2


def test_the_admin_api_refuses_bad_queries(warned: Server) -> None:
    for query, status, message in (("?limit=0", 400, "limit must be a whole number from 1 to 1000"),
                                   ("?limit=x", 400, "limit must be a whole number from 1 to 1000")):
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(warned.url + "/partita/v1/schema/violations" + query, timeout=30)
        assert caught.value.code == status
        assert caught.value.read() == b'{"error":"' + message.encode() + b'"}'


def test_a_server_without_a_schema_says_so(endpoint: str) -> None:
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(endpoint + "/partita/v1/schema/violations", timeout=30)
    assert caught.value.code == 404
    assert caught.value.read() == b'{"error":"no schema is loaded (partita serve --schema FILE)"}'
    with urllib.request.urlopen(endpoint + "/metrics", timeout=30) as response:
        assert b"partita_schema_violations" not in response.read()
