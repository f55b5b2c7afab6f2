"""Multi-attribute GSI keys (DynamoDB, November 2025), through boto3.

A GSI's KeySchema may list up to 4 HASH then up to 4 RANGE attributes, each of
its own type. The query rules and the gap message are the service's as
recorded against AWS in 2026; the CreateTable wording for the new schema
violations could not be confirmed (see validation/tables.py).
"""

from __future__ import annotations

import random
from decimal import Decimal
from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import error_of
from test_indexes import attr, key, wait_index

INVALID = "One or more parameter values were invalid: "
GAP = (
    "RANGE key attributes {missing} must have equality conditions specified in the query because a "
    "condition is present on key attribute {present}"
)


def schema(hashes: list[str], ranges: list[str]) -> list[dict[str, str]]:
    return [key(h, "HASH") for h in hashes] + [key(r, "RANGE") for r in ranges]


def multi_gsi(name: str, hashes: list[str], ranges: list[str], projection: str = "ALL",
              non_key: list[str] | None = None) -> dict[str, Any]:
    proj: dict[str, Any] = {"ProjectionType": projection}
    if non_key:
        proj["NonKeyAttributes"] = non_key
    return {"IndexName": name, "KeySchema": schema(hashes, ranges), "Projection": proj}


@pytest.fixture
def games(ddb: Any, table_name: str) -> str:
    """Matches keyed by id; GSI "bracket": (tournament S, area N) x (round N, code B, player S)."""
    ddb.create_table(
        TableName=table_name,
        KeySchema=[key("id", "HASH")],
        AttributeDefinitions=[attr("id"), attr("tournament"), attr("area", "N"), attr("round", "N"),
                              attr("code", "B"), attr("player")],
        BillingMode="PAY_PER_REQUEST",
        GlobalSecondaryIndexes=[
            multi_gsi("bracket", ["tournament", "area"], ["round", "code", "player"]),
            multi_gsi("keys", ["tournament", "area"], [], "KEYS_ONLY"),
        ],
    )
    return table_name


def match(i: int, round_: str, code: bytes, player: str, tournament: str = "T", area: str = "1",
          **extra: Any) -> dict[str, Any]:
    item = {"id": {"S": f"m{i:03}"}, "tournament": {"S": tournament}, "area": {"N": area},
            "round": {"N": round_}, "code": {"B": code}, "player": {"S": player}}
    item.update(extra)
    return item


# Rows in the expected (round, code, player) order; numbers compare numerically,
# binary bytewise, strings by UTF-8 bytes.
ORDERED = [
    ("-2.5", b"\x00", "z"),
    ("-2.5", b"\x00\x00", "a"),
    ("-2.5", b"\x01", "a"),
    ("0", b"\x7f", "b"),
    ("1", b"\xff", "a"),
    ("1", b"\xff", "b"),
    ("1", b"\xff", "é"),
    ("10", b"a", "a"),
    ("1E2", b"a", "a"),
]


@pytest.fixture
def loaded(ddb: Any, games: str) -> str:
    items = [match(i, r, c, p) for i, (r, c, p) in enumerate(ORDERED)]
    random.Random(7).shuffle(items)
    for item in items:
        ddb.put_item(TableName=games, Item=item)
    # Other partitions of the index, and items the index skips.
    ddb.put_item(TableName=games, Item=match(100, "1", b"a", "a", area="2"))
    ddb.put_item(TableName=games, Item=match(101, "1", b"a", "a", tournament="U"))
    ddb.put_item(TableName=games, Item={"id": {"S": "m102"}, "tournament": {"S": "T"}, "area": {"N": "1"},
                                        "round": {"N": "1"}, "code": {"B": b"a"}})  # no player
    ddb.put_item(TableName=games, Item={"id": {"S": "m103"}, "tournament": {"S": "T"}})  # no area
    return games


def ids(items: list[dict[str, Any]]) -> list[str]:
    return [i["id"]["S"] for i in items]


def q(ddb: Any, table: str, expression: str, values: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """Query the "bracket" index (`#r` stands for `round`, a reserved word)."""
    if "#r" in expression:
        extra["ExpressionAttributeNames"] = {"#r": "round"}
    return ddb.query(TableName=table, IndexName="bracket", KeyConditionExpression=expression,
                     ExpressionAttributeValues=values, **extra)


PARTITION = {":t": {"S": "T"}, ":g": {"N": "1"}}
EXPECTED = [f"m{i:03}" for i in range(len(ORDERED))]


# --- CreateTable, DescribeTable ---------------------------------------------------------


def test_create_and_describe_multi_attribute_gsi(ddb: Any, games: str) -> None:
    docs = {d["IndexName"]: d for d in ddb.describe_table(TableName=games)["Table"]["GlobalSecondaryIndexes"]}
    assert docs["bracket"]["KeySchema"] == schema(["tournament", "area"], ["round", "code", "player"])
    assert docs["keys"]["KeySchema"] == schema(["tournament", "area"], [])
    assert docs["bracket"]["IndexStatus"] == "ACTIVE"


def test_create_with_four_hash_and_four_range_attributes(ddb: Any, table_name: str) -> None:
    names = [f"h{i}" for i in range(4)] + [f"r{i}" for i in range(4)]
    out = ddb.create_table(
        TableName=table_name, KeySchema=[key("pk", "HASH")], BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[attr("pk")] + [attr(n, "SNB"[i % 3]) for i, n in enumerate(names)],
        GlobalSecondaryIndexes=[multi_gsi("wide", names[:4], names[4:])],
    )
    assert out["TableDescription"]["GlobalSecondaryIndexes"][0]["KeySchema"] == schema(names[:4], names[4:])
    item = {"pk": {"S": "p"}, **{n: ({"S": "x"}, {"N": "1"}, {"B": b"\x00"})[i % 3] for i, n in enumerate(names)}}
    ddb.put_item(TableName=table_name, Item=item)
    expression = " AND ".join(f"{n} = :{n}" for n in names)
    out = ddb.query(TableName=table_name, IndexName="wide", KeyConditionExpression=expression,
                    ExpressionAttributeValues={f":{n}": item[n] for n in names})
    assert out["Items"] == [item]


def _create_error(ddb: Any, table_name: str, key_schema: list[dict[str, str]], defined: list[str],
                  **extra: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        ddb.create_table(
            TableName=table_name, KeySchema=[key("pk", "HASH")], BillingMode="PAY_PER_REQUEST",
            AttributeDefinitions=[attr("pk")] + [attr(n) for n in defined],
            GlobalSecondaryIndexes=[{"IndexName": "gsi", "KeySchema": key_schema,
                                     "Projection": {"ProjectionType": "ALL"}}],
            **extra,
        )
    return error_of(excinfo)


MALFORMED = [
    pytest.param(
        [key("a", "RANGE"), key("b", "HASH")],
        "Invalid KeySchema: The first KeySchemaElement is not a HASH key type", id="first-not-hash"),
    pytest.param(
        [key("a", "RANGE"), key("b", "RANGE"), key("c", "HASH")],
        "Invalid KeySchema: The first KeySchemaElement is not a HASH key type", id="first-not-hash-long"),
    pytest.param(
        [key("a", "HASH"), key("b", "RANGE"), key("c", "HASH")],
        "Invalid KeySchema: A HASH key type KeySchemaElement cannot follow a RANGE key type KeySchemaElement",
        id="hash-after-range"),
    pytest.param(
        schema(["a", "b", "c", "d", "e"], []),
        "Invalid KeySchema: Too many HASH key type KeySchemaElements, a global secondary index key can have "
        "at most 4", id="five-hash"),
    pytest.param(
        schema(["a"], ["b", "c", "d", "e", "f"]),
        "Invalid KeySchema: Too many RANGE key type KeySchemaElements, a global secondary index key can have "
        "at most 4", id="five-range"),
    pytest.param(
        schema(["a", "b", "c", "d", "e"], ["f", "g", "h", "i"]),
        "Invalid KeySchema: Too many HASH key type KeySchemaElements, a global secondary index key can have "
        "at most 4", id="nine-elements"),
    pytest.param(
        [key("a", "HASH"), key("a", "HASH")],
        "Invalid KeySchema: Duplicate KeySchemaElement attribute name: a", id="duplicate-hash"),
    pytest.param(
        [key("a", "HASH"), key("b", "HASH"), key("a", "RANGE")],
        "Invalid KeySchema: Duplicate KeySchemaElement attribute name: a", id="hash-and-range"),
    pytest.param(
        [key("a", "HASH"), key("a", "RANGE")],
        "Both the Hash Key and the Range Key element in the KeySchema have the same name", id="two-same"),
]


@pytest.mark.parametrize(("key_schema", "message"), MALFORMED)
def test_create_table_malformed_gsi_key_schema(ddb: Any, table_name: str, key_schema: list[dict[str, str]],
                                               message: str) -> None:
    defined = sorted({k["AttributeName"] for k in key_schema})
    assert _create_error(ddb, table_name, key_schema, defined) == ("ValidationException", message)
    assert table_name not in ddb.list_tables()["TableNames"]


def test_create_table_undefined_multi_attribute_key(ddb: Any, table_name: str) -> None:
    assert _create_error(ddb, table_name, schema(["a", "b"], ["c"]), ["a", "c"]) == (
        "ValidationException",
        f"{INVALID}Some index key attributes are not defined in AttributeDefinitions. "
        "Keys: [a, b, c], AttributeDefinitions: [pk, a, c]",
    )


def test_tables_and_local_indexes_keep_one_hash_and_one_range(ddb: Any, table_name: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        ddb.create_table(TableName=table_name, KeySchema=schema(["a"], ["b", "c"]), BillingMode="PAY_PER_REQUEST",
                         AttributeDefinitions=[attr("a"), attr("b"), attr("c")])
    code, message = error_of(excinfo)
    assert code == "ValidationException"
    assert message.startswith("1 validation error detected: Value '[com.amazonaws.dynamodb.v20120810.KeySchemaElement@")
    assert message.endswith("' at 'keySchema' failed to satisfy constraint: Member must have length less than or "
                            "equal to 2")
    with pytest.raises(ClientError) as excinfo:
        ddb.create_table(TableName=table_name, KeySchema=schema(["a"], ["b"]), BillingMode="PAY_PER_REQUEST",
                         AttributeDefinitions=[attr("a"), attr("b"), attr("c"), attr("d")],
                         LocalSecondaryIndexes=[{"IndexName": "lsi", "KeySchema": schema(["a"], ["c", "d"]),
                                                 "Projection": {"ProjectionType": "ALL"}}])
    code, message = error_of(excinfo)
    assert code == "ValidationException"
    assert message.endswith("' at 'localSecondaryIndexes.1.member.keySchema' failed to satisfy constraint: "
                            "Member must have length less than or equal to 2")


# --- UpdateTable: online create with backfill -------------------------------------------


def test_update_table_creates_multi_attribute_gsi_with_backfill(ddb: Any, table_name: str) -> None:
    ddb.create_table(TableName=table_name, KeySchema=[key("id", "HASH")], AttributeDefinitions=[attr("id")],
                     BillingMode="PAY_PER_REQUEST")
    before = [match(i, r, c, p) for i, (r, c, p) in enumerate(ORDERED)]
    for item in before:
        ddb.put_item(TableName=table_name, Item=item)
    # Items the backfill skips: a key attribute missing, of another type, or empty.
    ddb.put_item(TableName=table_name, Item={**match(90, "1", b"a", "a"), "player": {"N": "5"}})
    ddb.put_item(TableName=table_name, Item={**match(91, "1", b"a", "a"), "tournament": {"S": ""}})
    ddb.put_item(TableName=table_name, Item={"id": {"S": "m092"}, "tournament": {"S": "T"}})
    ddb.update_table(
        TableName=table_name,
        AttributeDefinitions=[attr("tournament"), attr("area", "N"), attr("round", "N"), attr("code", "B"),
                              attr("player")],
        GlobalSecondaryIndexUpdates=[{"Create": multi_gsi("bracket", ["tournament", "area"],
                                                          ["round", "code", "player"])}],
    )
    doc = wait_index(ddb, table_name, "bracket")
    assert doc is not None
    assert doc["KeySchema"] == schema(["tournament", "area"], ["round", "code", "player"])
    out = q(ddb, table_name, "tournament = :t AND area = :g", PARTITION)
    assert ids(out["Items"]) == EXPECTED
    # And it is maintained from then on.
    ddb.delete_item(TableName=table_name, Key={"id": {"S": "m000"}})
    out = q(ddb, table_name, "tournament = :t AND area = :g", PARTITION)
    assert ids(out["Items"]) == EXPECTED[1:]


@pytest.mark.parametrize(("key_schema", "message"), [
    pytest.param(MALFORMED[2].values[0], MALFORMED[2].values[1], id="hash-after-range"),
    pytest.param(MALFORMED[3].values[0], MALFORMED[3].values[1], id="five-hash"),
    pytest.param(MALFORMED[0].values[0], MALFORMED[0].values[1], id="first-not-hash"),
])
def test_update_table_malformed_gsi_key_schema(ddb: Any, table_name: str, key_schema: list[dict[str, str]],
                                               message: str) -> None:
    ddb.create_table(TableName=table_name, KeySchema=[key("id", "HASH")], AttributeDefinitions=[attr("id")],
                     BillingMode="PAY_PER_REQUEST")
    names = sorted({k["AttributeName"] for k in key_schema})
    with pytest.raises(ClientError) as excinfo:
        ddb.update_table(TableName=table_name, AttributeDefinitions=[attr(n) for n in names],
                         GlobalSecondaryIndexUpdates=[{"Create": {"IndexName": "gsi", "KeySchema": key_schema,
                                                                  "Projection": {"ProjectionType": "ALL"}}}])
    assert error_of(excinfo) == ("ValidationException", message)
    assert "GlobalSecondaryIndexes" not in ddb.describe_table(TableName=table_name)["Table"]


# --- writes: sparse indexing, refusals ----------------------------------------------------


def test_items_missing_any_key_attribute_are_not_indexed(ddb: Any, loaded: str) -> None:
    scanned = ddb.scan(TableName=loaded, IndexName="bracket")["Items"]
    assert sorted(ids(scanned)) == EXPECTED + ["m100", "m101"]
    # The HASH-only index holds m102 (it lacks only a RANGE attribute of the other index).
    keys_only = ddb.scan(TableName=loaded, IndexName="keys")["Items"]
    assert sorted(ids(keys_only)) == EXPECTED + ["m100", "m101", "m102"]
    assert all(set(i) == {"id", "tournament", "area"} for i in keys_only)


@pytest.mark.parametrize(("name", "value", "message"), [
    ("area", {"S": "1"}, f"{INVALID}Type mismatch for Index Key area Expected: N Actual: S IndexName: bracket"),
    ("code", {"S": "x"}, f"{INVALID}Type mismatch for Index Key code Expected: B Actual: S IndexName: bracket"),
    ("player", {"N": "1"}, f"{INVALID}Type mismatch for Index Key player Expected: S Actual: N IndexName: bracket"),
    ("player", {"S": ""},
     "One or more parameter values are not valid. A value specified for a secondary index key is not supported. "
     "The AttributeValue for a key attribute cannot contain an empty string value. IndexName: bracket, "
     "IndexKey: player"),
    ("code", {"B": b""},
     "One or more parameter values are not valid. A value specified for a secondary index key is not supported. "
     "The AttributeValue for a key attribute cannot contain an empty binary value. IndexName: bracket, "
     "IndexKey: code"),
])
def test_wrongly_typed_or_empty_key_attributes_are_refused(ddb: Any, games: str, name: str, value: dict[str, Any],
                                                           message: str) -> None:
    item = {**match(1, "1", b"a", "a"), name: value}
    with pytest.raises(ClientError) as excinfo:
        ddb.put_item(TableName=games, Item=item)
    assert error_of(excinfo) == ("ValidationException", message)
    assert "Item" not in ddb.get_item(TableName=games, Key={"id": item["id"]})
    ddb.put_item(TableName=games, Item=match(1, "1", b"a", "a"))
    with pytest.raises(ClientError) as excinfo:
        ddb.update_item(TableName=games, Key={"id": item["id"]}, UpdateExpression="SET #n = :v",
                        ExpressionAttributeNames={"#n": name}, ExpressionAttributeValues={":v": value})
    assert error_of(excinfo)[0] == "ValidationException"
    assert ddb.get_item(TableName=games, Key={"id": item["id"]})["Item"] == match(1, "1", b"a", "a")


def test_update_item_moves_items_in_and_out_of_the_index(ddb: Any, games: str) -> None:
    item = match(1, "1", b"a", "a")
    del item["player"]
    ddb.put_item(TableName=games, Item=item)
    assert q(ddb, games, "tournament = :t AND area = :g", PARTITION)["Items"] == []
    out = ddb.update_item(TableName=games, Key={"id": item["id"]}, UpdateExpression="SET player = :p",
                          ExpressionAttributeValues={":p": {"S": "a"}}, ReturnConsumedCapacity="INDEXES")
    assert out["ConsumedCapacity"]["GlobalSecondaryIndexes"] == {"bracket": {"CapacityUnits": 1.0}}
    assert ids(q(ddb, games, "tournament = :t AND area = :g", PARTITION)["Items"]) == ["m001"]
    # Changing a RANGE component moves the entry: delete + put.
    out = ddb.update_item(TableName=games, Key={"id": item["id"]}, UpdateExpression="SET player = :p",
                          ExpressionAttributeValues={":p": {"S": "b"}}, ReturnConsumedCapacity="INDEXES")
    assert out["ConsumedCapacity"]["GlobalSecondaryIndexes"] == {"bracket": {"CapacityUnits": 2.0}}
    ddb.update_item(TableName=games, Key={"id": item["id"]}, UpdateExpression="REMOVE area")
    assert q(ddb, games, "tournament = :t AND area = :g", PARTITION)["Items"] == []
    assert ddb.scan(TableName=games, IndexName="bracket")["Items"] == []


# --- Query: ordering, conditions --------------------------------------------------------------


def test_query_orders_by_range_attributes_in_schema_order(ddb: Any, loaded: str) -> None:
    forward = q(ddb, loaded, "tournament = :t AND area = :g", PARTITION)
    assert ids(forward["Items"]) == EXPECTED
    assert forward["Count"] == forward["ScannedCount"] == len(EXPECTED)
    backward = q(ddb, loaded, "area = :g AND tournament = :t", PARTITION, ScanIndexForward=False)
    assert ids(backward["Items"]) == EXPECTED[::-1]


@pytest.mark.parametrize(("expression", "values", "expected"), [
    ("tournament = :t AND area = :g AND #r = :r", {":r": {"N": "-2.50"}}, [0, 1, 2]),
    ("#r = :r AND tournament = :t AND area = :g", {":r": {"N": "100"}}, [8]),
    ("tournament = :t AND area = :g AND #r < :r", {":r": {"N": "1"}}, [0, 1, 2, 3]),
    ("tournament = :t AND area = :g AND #r <= :r", {":r": {"N": "1"}}, [0, 1, 2, 3, 4, 5, 6]),
    ("tournament = :t AND area = :g AND #r > :r", {":r": {"N": "1"}}, [7, 8]),
    ("tournament = :t AND area = :g AND #r >= :r", {":r": {"N": "0"}}, [3, 4, 5, 6, 7, 8]),
    ("tournament = :t AND area = :g AND #r BETWEEN :a AND :b", {":a": {"N": "0"}, ":b": {"N": "10"}},
     [3, 4, 5, 6, 7]),
    ("tournament = :t AND area = :g AND #r = :r AND code = :c", {":r": {"N": "-2.5"}, ":c": {"B": b"\x00"}},
     [0]),
    ("tournament = :t AND area = :g AND #r = :r AND begins_with(code, :c)",
     {":r": {"N": "-2.5"}, ":c": {"B": b"\x00"}}, [0, 1]),
    ("tournament = :t AND area = :g AND #r = :r AND code > :c", {":r": {"N": "-2.5"}, ":c": {"B": b"\x00"}},
     [1, 2]),
    ("player >= :p AND #r = :r AND tournament = :t AND code = :c AND area = :g",
     {":r": {"N": "1"}, ":c": {"B": b"\xff"}, ":p": {"S": "b"}}, [5, 6]),
    ("tournament = :t AND area = :g AND #r = :r AND code = :c AND begins_with(player, :p)",
     {":r": {"N": "1"}, ":c": {"B": b"\xff"}, ":p": {"S": "é"}}, [6]),
    ("tournament = :t AND area = :g AND #r = :r AND code = :c AND player = :p",
     {":r": {"N": "1"}, ":c": {"B": b"\xff"}, ":p": {"S": "b"}}, [5]),
    ("tournament = :t AND area = :g AND #r = :r AND code = :c AND player BETWEEN :a AND :b",
     {":r": {"N": "1"}, ":c": {"B": b"\xff"}, ":a": {"S": "a"}, ":b": {"S": "b"}}, [4, 5]),
])
@pytest.mark.parametrize("forward", [True, False])
def test_query_range_conditions(ddb: Any, loaded: str, expression: str, values: dict[str, Any],
                                expected: list[int], forward: bool) -> None:
    out = q(ddb, loaded, expression, {**PARTITION, **values}, ScanIndexForward=forward)
    want = [EXPECTED[i] for i in expected]
    assert ids(out["Items"]) == (want if forward else want[::-1])


def test_partitions_of_several_hash_attributes_do_not_mix(ddb: Any, table_name: str) -> None:
    ddb.create_table(TableName=table_name, KeySchema=[key("id", "HASH")], BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[attr("id"), attr("a"), attr("b")],
                     GlobalSecondaryIndexes=[multi_gsi("by-ab", ["a", "b"], [])])
    ddb.put_item(TableName=table_name, Item={"id": {"S": "1"}, "a": {"S": "ab"}, "b": {"S": "c"}})
    ddb.put_item(TableName=table_name, Item={"id": {"S": "2"}, "a": {"S": "a"}, "b": {"S": "bc"}})
    ddb.put_item(TableName=table_name, Item={"id": {"S": "3"}, "a": {"S": "a"}, "b": {"S": "bc"}})
    out = ddb.query(TableName=table_name, IndexName="by-ab", KeyConditionExpression="a = :a AND b = :b",
                    ExpressionAttributeValues={":a": {"S": "a"}, ":b": {"S": "bc"}})
    assert sorted(ids(out["Items"])) == ["2", "3"]
    out = ddb.query(TableName=table_name, IndexName="by-ab", KeyConditionExpression="a = :a AND b = :b",
                    ExpressionAttributeValues={":a": {"S": "ab"}, ":b": {"S": "c"}})
    assert ids(out["Items"]) == ["1"]


def _query_error(ddb: Any, table: str, expression: str, values: dict[str, Any], **extra: Any) -> tuple[str, str]:
    text = expression + extra.get("FilterExpression", "")
    used = {name: value for name, value in {**PARTITION, **values}.items() if name in text}
    with pytest.raises(ClientError) as excinfo:
        q(ddb, table, expression, used, **extra)
    return error_of(excinfo)


@pytest.mark.parametrize(("expression", "values", "message"), [
    ("tournament = :t", {}, "Query condition missed key schema element: area"),
    ("area = :g AND #r = :r", {":r": {"N": "1"}}, "Query condition missed key schema element: tournament"),
    ("tournament = :t AND area > :g", {}, "Query key condition not supported"),
    ("tournament = :t AND area BETWEEN :g AND :g2", {":g2": {"N": "2"}}, "Query key condition not supported"),
    ("tournament = :t AND area = :g AND code = :c", {":c": {"B": b"\x00"}},
     GAP.format(missing="round", present="code")),
    ("tournament = :t AND area = :g AND #r = :r AND player = :p", {":r": {"N": "1"}, ":p": {"S": "a"}},
     GAP.format(missing="code", present="player")),
    ("tournament = :t AND area = :g AND #r > :r AND code = :c", {":r": {"N": "1"}, ":c": {"B": b"\x00"}},
     GAP.format(missing="round", present="code")),
    ("tournament = :t AND area = :g AND #r < :r AND player = :p", {":r": {"N": "1"}, ":p": {"S": "a"}},
     GAP.format(missing="round, code", present="player")),
    ("tournament = :t AND area = :g AND #r = :r", {":r": {"S": "1"}},
     f"{INVALID}Condition parameter type does not match schema type"),
    ("tournament = :t AND area = :g AND #r = :r AND begins_with(code, :c)", {":r": {"N": "1"}, ":c": {"S": "a"}},
     f"{INVALID}Condition parameter type does not match schema type"),
    ("tournament = :t AND area = :g AND odd = :o", {":o": {"S": "x"}},
     "Query condition missed key schema element: round"),
    ("tournament = :t AND area = :g AND player = :p AND #r = :r AND code = :c AND odd = :o",
     {":r": {"N": "1"}, ":c": {"B": b"\x00"}, ":p": {"S": "a"}, ":o": {"S": "x"}},
     "Query key condition not supported"),
])
def test_query_key_condition_violations(ddb: Any, loaded: str, expression: str, values: dict[str, Any],
                                        message: str) -> None:
    assert _query_error(ddb, loaded, expression, values) == ("ValidationException", message)


def test_query_on_empty_key_value_and_filters_on_key_attributes(ddb: Any, loaded: str) -> None:
    # Each condition is checked against its attribute before the prefix rule.
    assert _query_error(ddb, loaded, "tournament = :t AND area = :g AND player = :p", {":p": {"S": ""}}) == (
        "ValidationException",
        "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an "
        "empty string value. Key: player",
    )
    assert _query_error(ddb, loaded, "tournament = :e AND area = :g", {":e": {"S": ""}}) == (
        "ValidationException",
        "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an "
        "empty string value. Key: tournament",
    )
    assert _query_error(ddb, loaded, "tournament = :t AND area = :g", {":p": {"S": "a"}},
                        FilterExpression="player = :p") == (
        "ValidationException",
        "Filter Expression can only contain non-primary key attributes: Primary key attribute: player",
    )
    assert _query_error(ddb, loaded, "tournament = :t AND area = :g", {}, ConsistentRead=True) == (
        "ValidationException", "Consistent reads are not supported on global secondary indexes")
    # A filter on other attributes is applied after the key range is read.
    out = q(ddb, loaded, "tournament = :t AND area = :g", {**PARTITION, ":i": {"S": "m004"}},
            FilterExpression="id > :i")
    assert ids(out["Items"]) == EXPECTED[5:] and out["ScannedCount"] == len(EXPECTED)


def test_too_many_conditions_on_single_attribute_keys(ddb: Any, table_name: str) -> None:
    ddb.create_table(TableName=table_name, KeySchema=[key("id", "HASH")], BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[attr("id"), attr("a"), attr("b")],
                     GlobalSecondaryIndexes=[multi_gsi("single", ["a"], ["b"])])
    for extra in ({}, {"IndexName": "single"}):
        with pytest.raises(ClientError) as excinfo:
            ddb.query(TableName=table_name, KeyConditionExpression="a = :a AND b = :a AND y = :a",
                      ExpressionAttributeValues={":a": {"S": "1"}}, **extra)
        assert error_of(excinfo) == ("ValidationException", "Conditions can be of length 1 or 2 only")
    nine = " AND ".join(f"k{i} = :a" for i in range(9))
    with pytest.raises(ClientError) as excinfo:
        ddb.query(TableName="no-such-table", IndexName="any", KeyConditionExpression=nine,
                  ExpressionAttributeValues={":a": {"S": "1"}})
    assert error_of(excinfo) == ("ValidationException", "Conditions can be of length 1 or 2 only")


# --- legacy KeyConditions ---------------------------------------------------------------------


def _legacy(ddb: Any, table: str, conditions: dict[str, tuple[str, list[dict[str, Any]]]], **extra: Any) -> Any:
    return ddb.query(TableName=table, IndexName="bracket", KeyConditions={
        name: {"ComparisonOperator": op, "AttributeValueList": values} for name, (op, values) in conditions.items()
    }, **extra)


def test_legacy_key_conditions(ddb: Any, loaded: str) -> None:
    base = {"tournament": ("EQ", [{"S": "T"}]), "area": ("EQ", [{"N": "1"}])}
    assert ids(_legacy(ddb, loaded, base)["Items"]) == EXPECTED
    out = _legacy(ddb, loaded, {**base, "round": ("EQ", [{"N": "1"}]), "code": ("BEGINS_WITH", [{"B": b"\xff"}])},
                  ScanIndexForward=False)
    assert ids(out["Items"]) == [EXPECTED[6], EXPECTED[5], EXPECTED[4]]
    with pytest.raises(ClientError) as excinfo:
        _legacy(ddb, loaded, {**base, "code": ("GE", [{"B": b"\x00"}])})
    assert error_of(excinfo) == ("ValidationException", GAP.format(missing="round", present="code"))
    with pytest.raises(ClientError) as excinfo:
        _legacy(ddb, loaded, {"tournament": ("EQ", [{"S": "T"}])})
    assert error_of(excinfo) == ("ValidationException", "Query condition missed key schema element: area")
    with pytest.raises(ClientError) as excinfo:
        _legacy(ddb, loaded, {**base, "round": ("NE", [{"N": "1"}])})
    assert error_of(excinfo) == ("ValidationException", "Attempted conditional constraint is not an indexable operation")


# --- pagination -----------------------------------------------------------------------------------


@pytest.mark.parametrize("forward", [True, False])
def test_pagination_carries_table_key_and_every_index_key_attribute(ddb: Any, loaded: str, forward: bool) -> None:
    seen: list[str] = []
    start: dict[str, Any] | None = None
    pages = 0
    while True:
        extra: dict[str, Any] = {"Limit": 2, "ScanIndexForward": forward}
        if start is not None:
            extra["ExclusiveStartKey"] = start
        out = q(ddb, loaded, "tournament = :t AND area = :g AND #r >= :r", {**PARTITION, ":r": {"N": "-2.5"}},
                **extra)
        seen += ids(out["Items"])
        pages += 1
        start = out.get("LastEvaluatedKey")
        if start is None:
            break
        assert set(start) == {"id", "tournament", "area", "round", "code", "player"}
        last = out["Items"][-1]
        assert start == {name: last[name] for name in start}
    assert seen == (EXPECTED if forward else EXPECTED[::-1])
    assert pages == 5


def test_exclusive_start_key_errors(ddb: Any, loaded: str) -> None:
    first = q(ddb, loaded, "tournament = :t AND area = :g", PARTITION, Limit=1)["LastEvaluatedKey"]
    partial = {k: v for k, v in first.items() if k != "player"}
    assert _query_error(ddb, loaded, "tournament = :t AND area = :g", {}, ExclusiveStartKey=partial) == (
        "ValidationException", "The provided starting key is invalid")
    other = {**first, "area": {"N": "2"}}
    assert _query_error(ddb, loaded, "tournament = :t AND area = :g", {}, ExclusiveStartKey=other) == (
        "ValidationException", "The provided starting key is outside query boundaries based on provided conditions")
    assert _query_error(ddb, loaded, "tournament = :t AND area = :g AND #r = :r", {":r": {"N": "1"}},
                        ExclusiveStartKey=first) == (
        "ValidationException", "The provided starting key does not match the range key predicate")
    wrong_type = {**first, "code": {"S": "x"}}
    assert _query_error(ddb, loaded, "tournament = :t AND area = :g", {}, ExclusiveStartKey=wrong_type) == (
        "ValidationException", "The provided key element does not match the schema")


# --- Scan, projections, capacity ---------------------------------------------------------------


def test_scan_of_a_multi_attribute_index_paginates(ddb: Any, loaded: str) -> None:
    everything = ddb.scan(TableName=loaded, IndexName="bracket")["Items"]
    seen: list[dict[str, Any]] = []
    start: dict[str, Any] | None = None
    while True:
        extra: dict[str, Any] = {"Limit": 3}
        if start is not None:
            extra["ExclusiveStartKey"] = start
        out = ddb.scan(TableName=loaded, IndexName="bracket", **extra)
        seen += out["Items"]
        start = out.get("LastEvaluatedKey")
        if start is None:
            break
        assert set(start) == {"id", "tournament", "area", "round", "code", "player"}
    assert seen == everything
    # Within the partition (T, 1) the scan keeps the index's sort order.
    in_partition = [i for i in ids(everything) if i in EXPECTED]
    assert in_partition == EXPECTED


def test_projection_and_capacity(ddb: Any, table_name: str) -> None:
    ddb.create_table(TableName=table_name, KeySchema=[key("id", "HASH")], BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[attr("id"), attr("a"), attr("b", "N"), attr("c")],
                     GlobalSecondaryIndexes=[multi_gsi("inc", ["a"], ["b", "c"], "INCLUDE", ["note"])])
    item = {"id": {"S": "1"}, "a": {"S": "x"}, "b": {"N": "1"}, "c": {"S": "y"}, "note": {"S": "n"},
            "big": {"S": "z" * 5000}}
    out = ddb.put_item(TableName=table_name, Item=item, ReturnConsumedCapacity="INDEXES")
    assert out["ConsumedCapacity"] == {
        "TableName": table_name, "CapacityUnits": 6.0, "Table": {"CapacityUnits": 5.0},
        "GlobalSecondaryIndexes": {"inc": {"CapacityUnits": 1.0}},
    }
    out = ddb.query(TableName=table_name, IndexName="inc", KeyConditionExpression="a = :a AND b = :b AND c = :c",
                    ExpressionAttributeValues={":a": {"S": "x"}, ":b": {"N": "1"}, ":c": {"S": "y"}},
                    ReturnConsumedCapacity="INDEXES")
    assert out["Items"] == [{k: item[k] for k in ("id", "a", "b", "c", "note")}]
    assert out["ConsumedCapacity"] == {
        "TableName": table_name, "CapacityUnits": 0.5, "Table": {"CapacityUnits": 0.0},
        "GlobalSecondaryIndexes": {"inc": {"CapacityUnits": 0.5}},
    }
    with pytest.raises(ClientError) as excinfo:
        ddb.query(TableName=table_name, IndexName="inc", KeyConditionExpression="a = :a",
                  ExpressionAttributeValues={":a": {"S": "x"}}, ProjectionExpression="big")
    assert error_of(excinfo) == ("ValidationException", f"{INVALID}Global secondary index inc does not project [big]")
    out = ddb.query(TableName=table_name, IndexName="inc", KeyConditionExpression="a = :a",
                    ExpressionAttributeValues={":a": {"S": "x"}}, ProjectionExpression="c, note")
    assert out["Items"] == [{"c": {"S": "y"}, "note": {"S": "n"}}]


def test_numbers_in_keys_compare_by_value(ddb: Any, loaded: str) -> None:
    out = q(ddb, loaded, "tournament = :t AND area = :g AND #r = :r", {":t": {"S": "T"}, ":g": {"N": "1.0"},
                                                                      ":r": {"N": "1e0"}})
    assert ids(out["Items"]) == EXPECTED[4:7]
    assert Decimal(out["Items"][0]["round"]["N"]) == 1
