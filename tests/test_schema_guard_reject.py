"""The schema guard in reject mode (`--schema`), on every write path, over HTTP.

The refusal's wording is Partita's own (DynamoDB has no schema guard):
"Schema guard: the item does not match schema <entity>: [at <path>: ]<first
error>", the error being jsonschema's message for the first failing keyword.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import Server, client_for, error_of
from guard_helpers import REJECTED, get_json, guard_server, keyed_table
from hypothesis import given, settings
from hypothesis import strategies as st

SHOP, TYPED, BINARY, OPEN, FREE = "Shop", "Typed", "Binary", "Open", "Free"

CUSTOMER = {
    "type": "object",
    "required": ["email"],
    "properties": {
        "email": {"type": "string"},
        "age": {"type": "integer", "minimum": 0},
        "address": {"type": "object", "properties": {"city": {"type": "string"}}},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
}
SCHEMA = {
    "mode": "reject",
    "entities": [
        {"name": "Customer", "table": SHOP, "match": {"pk": "CLIENTE#*", "sk": "PERFIL"}, "schema": CUSTOMER},
        # Never applied: Customer comes first in the file and matches the same items.
        {"name": "Shadow", "table": SHOP, "match": {"pk": "CLIENTE#*", "sk": "PERFIL"}, "schema": False},
        {"name": "Order", "table": SHOP, "match": {"pk": "CLIENTE#*", "sk": "PEDIDO#[0-9]*"},
         "schema": {"required": ["total"],
                    "properties": {"total": {"type": "number", "multipleOf": 0.01, "minimum": 0,
                                             "maximum": 99999999999999999999999999999999999999}}}},
        {"name": "Reading", "table": TYPED, "match": {"pk": "4*"}, "schema": {
            "type": "object",
            "properties": {
                "pk": {"type": "integer"}, "s": {"type": "string"}, "n": {"type": "number"},
                "b": {"type": "string", "const": "AQID"}, "yes": {"type": "boolean"}, "nothing": {"type": "null"},
                "l": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "number"}]},
                "m": {"type": "object", "required": ["x"]},
                "ss": {"type": "array", "items": {"type": "string"}},
                "ns": {"type": "array", "items": {"type": "number"}},
                "bs": {"type": "array", "items": {"type": "string"}},
            },
            "additionalProperties": False}},
        {"name": "Blob", "table": BINARY, "match": {"pk": "AQ*"}, "schema": {"required": ["v"]}},
        {"name": "Anything", "table": OPEN, "schema": {"required": ["v"]}},
        {"name": "Prop", "table": FREE, "match": {"pk": "P#*"}, "schema": {"type": "object"}},
    ],
}


def rejected(entity: str, error: str) -> str:
    return REJECTED.format(entity=entity, error=error)


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = guard_server(tmp_path_factory.mktemp("guard"), SCHEMA)
    ddb = client_for(srv.url)
    keyed_table(ddb, SHOP)
    keyed_table(ddb, TYPED, sort=None, hash_key=("pk", "N"))
    keyed_table(ddb, BINARY, sort=None, hash_key=("pk", "B"))
    keyed_table(ddb, OPEN, sort=None)
    keyed_table(ddb, FREE, sort=None)
    keyed_table(ddb, "Unguarded", sort=None)
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def g(guarded: Server) -> Any:
    return client_for(guarded.url)


def customer(n: str, **attrs: Any) -> dict[str, Any]:
    return {"pk": {"S": f"CLIENTE#{n}"}, "sk": {"S": "PERFIL"}, **attrs}


def key(n: str, sk: str = "PERFIL") -> dict[str, Any]:
    return {"pk": {"S": f"CLIENTE#{n}"}, "sk": {"S": sk}}


def refused(call: Any, **kwargs: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as caught:
        call(**kwargs)
    return error_of(caught)


def test_put_item_missing_a_required_attribute_is_refused_and_nothing_is_written(g: Any) -> None:
    assert refused(g.put_item, TableName=SHOP, Item=customer("1")) == (
        "ValidationException", rejected("Customer", "'email' is a required property"))
    assert "Item" not in g.get_item(TableName=SHOP, Key=key("1"), ConsistentRead=True)
    g.put_item(TableName=SHOP, Item=customer("1", email={"S": "ana@example.com"}))
    assert g.get_item(TableName=SHOP, Key=key("1"))["Item"]["email"] == {"S": "ana@example.com"}


def test_the_first_error_names_its_path_in_document_path_notation(g: Any) -> None:
    base = {"email": {"S": "e"}}
    cases = [
        ({"email": {"N": "5"}}, "at email: 5 is not of type 'string'"),
        ({**base, "age": {"N": "-3"}}, "at age: -3 is less than the minimum of 0"),
        ({**base, "age": {"N": "1.5"}}, "at age: 1.5 is not of type 'integer'"),
        ({**base, "address": {"M": {"city": {"N": "3"}}}}, "at address.city: 3 is not of type 'string'"),
        ({**base, "tags": {"L": [{"S": "a"}, {"BOOL": True}]}}, "at tags[1]: True is not of type 'string'"),
    ]
    for attrs, error in cases:
        assert refused(g.put_item, TableName=SHOP, Item=customer("2", **attrs)) == (
            "ValidationException", rejected("Customer", error))
    assert "Item" not in g.get_item(TableName=SHOP, Key=key("2"), ConsistentRead=True)


def test_only_items_matching_an_entity_are_checked(g: Any) -> None:
    g.put_item(TableName=SHOP, Item={"pk": {"S": "PROVEEDOR#1"}, "sk": {"S": "PERFIL"}})  # no entity's pk
    g.put_item(TableName=SHOP, Item={"pk": {"S": "CLIENTE#3"}, "sk": {"S": "PERFILES"}})  # no entity's sk
    g.put_item(TableName=SHOP, Item={"pk": {"S": "CLIENTE#3"}, "sk": {"S": "PEDIDO#x"}})  # [0-9] fails
    g.put_item(TableName="Unguarded", Item={"pk": {"S": "CLIENTE#3"}, "sk": {"S": "PERFIL"}})
    g.put_item(TableName=FREE, Item={"pk": {"S": "Q#1"}})
    assert g.scan(TableName=SHOP, ConsistentRead=True)["Count"] >= 3
    # An entity without `match` covers every item of its table.
    assert refused(g.put_item, TableName=OPEN, Item={"pk": {"S": "anything"}}) == (
        "ValidationException", rejected("Anything", "'v' is a required property"))


def test_the_first_entity_in_file_order_is_the_items_entity(g: Any) -> None:
    # Shadow (schema false) matches the same items but comes after Customer: never applied.
    g.put_item(TableName=SHOP, Item=customer("4", email={"S": "x@y"}))


def test_numbers_are_compared_exactly(g: Any) -> None:
    order = {"pk": {"S": "CLIENTE#5"}, "sk": {"S": "PEDIDO#1"}}
    for total in ("19.99", "0", "123456789012345678901234567890.01", "99999999999999999999999999999999999999"):
        g.put_item(TableName=SHOP, Item={**order, "total": {"N": total}})
    cases = [
        ("19.999", "at total: 19.999 is not a multiple of 0.01"),
        ("-0.01", "at total: -0.01 is less than the minimum of 0"),
        ("1E+38", "at total: 100000000000000000000000000000000000000 is greater than the maximum of "
                  "99999999999999999999999999999999999999"),
    ]
    for total, error in cases:
        assert refused(g.put_item, TableName=SHOP, Item={**order, "total": {"N": total}}) == (
            "ValidationException", rejected("Order", error))
    assert g.get_item(TableName=SHOP, Key=order, ConsistentRead=True)["Item"]["total"] == {
        "N": "99999999999999999999999999999999999999"}


def test_every_type_has_its_plain_json_form(g: Any) -> None:
    item = {
        "pk": {"N": "42"}, "s": {"S": "text"}, "n": {"N": "-1.5"}, "b": {"B": b"\x01\x02\x03"},
        "yes": {"BOOL": False}, "nothing": {"NULL": True}, "l": {"L": [{"S": "a"}, {"N": "1"}]},
        "m": {"M": {"x": {"NULL": True}}}, "ss": {"SS": ["a", "b"]}, "ns": {"NS": ["1", "2.5"]},
        "bs": {"BS": [b"\x00", b"\x01"]},
    }
    g.put_item(TableName=TYPED, Item=item)
    cases = [
        ("s", {"N": "1"}, "at s: 1 is not of type 'string'"),
        ("n", {"S": "1"}, "at n: '1' is not of type 'number'"),
        ("b", {"B": b"\x01\x02"}, "at b: 'AQID' was expected"),
        ("yes", {"S": "true"}, "at yes: 'true' is not of type 'boolean'"),
        ("nothing", {"BOOL": False}, "at nothing: False is not of type 'null'"),
        ("l", {"L": [{"N": "1"}]}, "at l[0]: 1 is not of type 'string'"),
        ("m", {"M": {}}, "at m: 'x' is a required property"),
        ("ss", {"NS": ["1"]}, "at ss[0]: 1 is not of type 'string'"),
        ("ns", {"SS": ["1"]}, "at ns[0]: '1' is not of type 'number'"),
        ("bs", {"NS": ["7"]}, "at bs[0]: 7 is not of type 'string'"),
        ("extra", {"S": "x"}, "Additional properties are not allowed ('extra' was unexpected)"),
    ]
    for name, value, error in cases:
        assert refused(g.put_item, TableName=TYPED, Item={**item, name: value}) == (
            "ValidationException", rejected("Reading", error)), name
    # A number key matches on its digits: 5 is not "4*", so no entity checks it.
    g.put_item(TableName=TYPED, Item={"pk": {"N": "5"}, "extra": {"S": "x"}})
    # The first error follows the schema's keywords in the file's order: properties before additionalProperties.
    assert refused(g.put_item, TableName=TYPED, Item={"pk": {"N": "4.5"}, "extra": {"S": "x"}}) == (
        "ValidationException", rejected("Reading", "at pk: 4.5 is not of type 'integer'"))


def test_a_binary_key_matches_on_its_base64_text(g: Any) -> None:
    assert base64.b64encode(b"\x01\x02").decode() == "AQI="
    assert refused(g.put_item, TableName=BINARY, Item={"pk": {"B": b"\x01\x02"}}) == (
        "ValidationException", rejected("Blob", "'v' is a required property"))
    g.put_item(TableName=BINARY, Item={"pk": {"B": b"\x02"}})  # "Ag==": not "AQ*"


def test_update_item_is_checked_on_the_item_after_the_update(g: Any) -> None:
    g.put_item(TableName=SHOP, Item=customer("6", email={"S": "e@x"}, age={"N": "30"}))
    cases = [
        ("SET email = :v", {":v": {"N": "5"}}, "at email: 5 is not of type 'string'"),
        ("REMOVE email", None, "'email' is a required property"),
        ("SET age = age - :v", {":v": {"N": "31"}}, "at age: -1 is less than the minimum of 0"),
        ("SET address.city = :v", {":v": {"S": "x"}}, None),  # DynamoDB's own error comes first
    ]
    for expression, values, error in cases:
        extra = {"ExpressionAttributeValues": values} if values else {}
        code, message = refused(g.update_item, TableName=SHOP, Key=key("6"), UpdateExpression=expression, **extra)
        if error is None:
            assert (code, message) == ("ValidationException",
                                       "The document path provided in the update expression is invalid for update")
        else:
            assert (code, message) == ("ValidationException", rejected("Customer", error))
    assert g.get_item(TableName=SHOP, Key=key("6"), ConsistentRead=True)["Item"] == customer(
        "6", email={"S": "e@x"}, age={"N": "30"})
    answer = g.update_item(TableName=SHOP, Key=key("6"), UpdateExpression="SET age = age + :v",
                           ExpressionAttributeValues={":v": {"N": "1"}}, ReturnValues="UPDATED_NEW")
    assert answer["Attributes"] == {"age": {"N": "31"}}
    # An update that creates the item: the new item is the key plus the update.
    assert refused(g.update_item, TableName=SHOP, Key=key("7"), UpdateExpression="SET age = :v",
                   ExpressionAttributeValues={":v": {"N": "1"}}) == (
        "ValidationException", rejected("Customer", "'email' is a required property"))
    assert "Item" not in g.get_item(TableName=SHOP, Key=key("7"), ConsistentRead=True)
    g.update_item(TableName=SHOP, Key=key("7"), UpdateExpression="SET email = :v",
                  ExpressionAttributeValues={":v": {"S": "new@x"}})
    # Removing from an item that is absent creates nothing: nothing to check.
    g.update_item(TableName=SHOP, Key=key("8"), UpdateExpression="REMOVE email")
    assert "Item" not in g.get_item(TableName=SHOP, Key=key("8"), ConsistentRead=True)


def test_dynamodbs_condition_is_checked_before_the_schema(g: Any) -> None:
    assert refused(g.put_item, TableName=SHOP, Item=customer("9"), ConditionExpression="attribute_exists(pk)") == (
        "ConditionalCheckFailedException", "The conditional request failed")


def test_delete_item_is_never_checked(g: Any) -> None:
    g.put_item(TableName=SHOP, Item=customer("10", email={"S": "e"}))
    g.delete_item(TableName=SHOP, Key=key("10"))
    assert "Item" not in g.get_item(TableName=SHOP, Key=key("10"), ConsistentRead=True)


def test_batch_write_item_with_one_violating_item_fails_whole(g: Any) -> None:
    requests = [
        {"PutRequest": {"Item": customer("11", email={"S": "a"})}},
        {"PutRequest": {"Item": customer("12", email={"BOOL": True})}},
        {"PutRequest": {"Item": customer("13", email={"S": "c"})}},
    ]
    assert refused(g.batch_write_item, RequestItems={SHOP: requests}) == (
        "ValidationException", rejected("Customer", "at email: True is not of type 'string'"))
    for n in ("11", "12", "13"):
        assert "Item" not in g.get_item(TableName=SHOP, Key=key(n), ConsistentRead=True)


def test_transact_write_items_is_cancelled_with_the_violation_as_its_reason(g: Any) -> None:
    g.put_item(TableName=SHOP, Item=customer("14", email={"S": "a"}))
    g.put_item(TableName=SHOP, Item=customer("14b", email={"S": "a"}))
    with pytest.raises(ClientError) as caught:
        g.transact_write_items(TransactItems=[
            {"Put": {"TableName": SHOP, "Item": customer("15", email={"S": "b"})}},
            {"Update": {"TableName": SHOP, "Key": key("14"), "UpdateExpression": "REMOVE email"}},
            {"Put": {"TableName": SHOP, "Item": {**key("16", "PEDIDO#1"), "total": {"S": "1"}}}},
            {"ConditionCheck": {"TableName": SHOP, "Key": key("14b"), "ConditionExpression": "attribute_exists(pk)"}},
        ])
    assert error_of(caught) == ("TransactionCanceledException",
                                "Transaction cancelled, please refer cancellation reasons for specific reasons "
                                "[None, ValidationError, ValidationError, None]")
    assert caught.value.response["CancellationReasons"] == [
        {"Code": "None"},
        {"Code": "ValidationError", "Message": rejected("Customer", "'email' is a required property")},
        {"Code": "ValidationError", "Message": rejected("Order", "at total: '1' is not of type 'number'")},
        {"Code": "None"},
    ]
    assert "Item" not in g.get_item(TableName=SHOP, Key=key("15"), ConsistentRead=True)
    assert g.get_item(TableName=SHOP, Key=key("14"), ConsistentRead=True)["Item"]["email"] == {"S": "a"}


def test_partiql_writes_are_checked(g: Any) -> None:
    assert refused(g.execute_statement, Statement=f"INSERT INTO {SHOP} VALUE {{'pk': 'CLIENTE#17', 'sk': 'PERFIL'}}") == (
        "ValidationException", rejected("Customer", "'email' is a required property"))
    g.execute_statement(Statement=f"INSERT INTO {SHOP} VALUE {{'pk': 'CLIENTE#17', 'sk': 'PERFIL', 'email': 'e'}}")
    assert refused(g.execute_statement,
                   Statement=f"UPDATE {SHOP} SET email = 7 WHERE pk = 'CLIENTE#17' AND sk = 'PERFIL'") == (
        "ValidationException", rejected("Customer", "at email: 7 is not of type 'string'"))
    answer = g.batch_execute_statement(Statements=[
        {"Statement": f"INSERT INTO {SHOP} VALUE {{'pk': 'CLIENTE#18', 'sk': 'PERFIL', 'email': 'e'}}"},
        {"Statement": f"INSERT INTO {SHOP} VALUE {{'pk': 'CLIENTE#19', 'sk': 'PERFIL'}}"},
    ])
    assert answer["Responses"] == [
        {"TableName": SHOP},
        {"TableName": SHOP, "Error": {"Code": "ValidationError",
                                      "Message": rejected("Customer", "'email' is a required property")}},
    ]
    with pytest.raises(ClientError) as caught:
        g.execute_transaction(TransactStatements=[
            {"Statement": f"INSERT INTO {SHOP} VALUE {{'pk': 'CLIENTE#20', 'sk': 'PERFIL', 'email': 'e'}}"},
            {"Statement": f"UPDATE {SHOP} REMOVE email WHERE pk = 'CLIENTE#17' AND sk = 'PERFIL'"},
        ])
    assert caught.value.response["CancellationReasons"] == [
        {"Code": "None"},
        {"Code": "ValidationError", "Message": rejected("Customer", "'email' is a required property")},
    ]
    for n, present in (("17", True), ("18", True), ("19", False), ("20", False)):
        assert ("Item" in g.get_item(TableName=SHOP, Key=key(n), ConsistentRead=True)) is present, n


def test_the_admin_api_shows_the_loaded_schema(guarded: Server) -> None:
    doc = get_json(guarded.url + "/partita/v1/schema")
    assert doc["mode"] == "reject"
    assert doc["source"].endswith(".json")
    assert [(e["name"], e["table"], e["match"], e["violations"]) for e in doc["entities"]][:2] == [
        ("Customer", SHOP, {"pk": "CLIENTE#*", "sk": "PERFIL"}, 0),
        ("Shadow", SHOP, {"pk": "CLIENTE#*", "sk": "PERFIL"}, 0),
    ]
    assert doc["entities"][0]["schema"] == CUSTOMER
    assert get_json(guarded.url + "/partita/v1/schema/violations") == {"mode": "reject", "total": 0, "findings": []}


# -- the plain JSON form, as a property: every value is seen as the schema's JSON ------------------

_names = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=6)
_numbers = st.decimals(min_value=Decimal("-1e20"), max_value=Decimal("1e20"), allow_nan=False,
                       allow_infinity=False, places=3)
_scalars = st.one_of(
    st.text(max_size=8).map(lambda s: ({"S": s}, s)),
    _numbers.map(lambda d: ({"N": str(d)}, d)),
    st.booleans().map(lambda b: ({"BOOL": b}, b)),
    st.just(({"NULL": True}, None)),
    st.binary(min_size=1, max_size=6).map(lambda b: ({"B": b}, base64.b64encode(b).decode())),
    # One member: a set's order is DynamoDB's, not the writer's (a schema should not rely on it).
    st.text(min_size=1, max_size=5).map(lambda m: ({"SS": [m]}, [m])),
    st.integers(-1000, 1000).map(lambda n: ({"NS": [str(n)]}, [Decimal(n)])),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(lambda pairs: ({"L": [p[0] for p in pairs]}, [p[1] for p in pairs])),
        st.dictionaries(_names, inner, max_size=3).map(
            lambda d: ({"M": {k: p[0] for k, p in d.items()}}, {k: p[1] for k, p in d.items()})),
    ),
    max_leaves=6,
)


def _expected(value: Any) -> Any:
    """The plain value the schema states: an integral number as an int, others exact decimals."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else value
    if isinstance(value, list):
        return [_expected(v) for v in value]
    if isinstance(value, dict):
        return {k: _expected(v) for k, v in value.items()}
    return value


def _shown(value: Any) -> str:
    """How jsonschema's message prints a value (Python's repr, numbers as their digits)."""
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_shown(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_shown(v)}" for k, v in value.items()) + "}"
    return repr(value)


@settings(max_examples=25, deadline=None)
@given(value=_values)
def test_property_a_value_is_checked_as_its_plain_json_form(value: tuple[Any, Any]) -> None:
    """`const` with the value's plain form holds for the value and fails for another, naming the path.

    One in-process server per example (local() starts in milliseconds), the schema given as a dict.
    """
    from partita.testing import local

    wire, plain = value
    expected = _expected(plain)
    schema = {"entities": [{"name": "P", "table": "Prop", "schema": {"properties": {"v": {"const": expected}}}}]}
    with local(schema=schema, env=False) as server:
        ddb = server.client()
        keyed_table(ddb, "Prop", sort=None)
        ddb.put_item(TableName="Prop", Item={"pk": {"S": "a"}, "v": wire})
        other = {"S": "\x00other"} if expected != "\x00other" else {"N": "0"}
        assert refused(ddb.put_item, TableName="Prop", Item={"pk": {"S": "b"}, "v": other}) == (
            "ValidationException", rejected("P", f"at v: {_shown(expected)} was expected"))
