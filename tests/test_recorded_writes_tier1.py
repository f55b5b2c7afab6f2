"""Write answers as tier-1/tier-2 conformance suites recorded them on DynamoDB.

Evidence: Ketlark/dynamodb-conformance tests/tier1/{putItem,updateItem,deleteItem,
batchWriteItem}/*.test.ts and tests/tier2/transactions/*.test.ts, and
nubo-db/dynamodb-conformance tests/tier1/putItem/indexConsumedCapacity.test.ts (index
write units measured in eu-west-2). One module-scoped set of tables keeps the file fast.
Every case here agreed before this file except TransactGetItems' projection that
matches nothing, which AWS answers with no Item at all.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import create_table

Item = dict[str, Any]


def _s(**values: str) -> Item:
    return {name: {"S": value} for name, value in values.items()}


@pytest.fixture(scope="module")
def tables(ddb: Any) -> Iterator[dict[str, str]]:
    """hash (pk S), numeric sort key, and the suite's GSI INCLUDE + LSI ALL table."""
    tag = uuid.uuid4().hex[:8]
    names = {"hash": f"rw-h-{tag}", "num": f"rw-n-{tag}", "idx": f"rw-i-{tag}"}
    create_table(ddb, names["hash"])
    create_table(ddb, names["num"], range_key=("sk", "N"))
    ddb.create_table(
        TableName=names["idx"],
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"} for a in ("pk", "sk", "gsiPk", "lsiSk")],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        BillingMode="PAY_PER_REQUEST",
        GlobalSecondaryIndexes=[{
            "IndexName": "gsi-inc",
            "KeySchema": [{"AttributeName": "gsiPk", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["proj"]},
        }],
        LocalSecondaryIndexes=[{
            "IndexName": "lsi1",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "lsiSk", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"},
        }],
    )
    yield names
    for name in names.values():
        ddb.delete_table(TableName=name)


# -- Fixed: TransactGetItems -------------------------------------------------------------


def test_transact_get_projection_matching_nothing_omits_item(ddb: Any, tables: dict[str, str]) -> None:
    table = tables["hash"]
    ddb.put_item(TableName=table, Item=_s(pk="tg-proj", real="here"))
    ddb.put_item(TableName=table, Item=_s(pk="tg-proj2", real="here"))
    got = ddb.transact_get_items(TransactItems=[
        {"Get": {"TableName": table, "Key": _s(pk="tg-proj"),
                 "ProjectionExpression": "#x", "ExpressionAttributeNames": {"#x": "doesNotExist"}}},
        {"Get": {"TableName": table, "Key": _s(pk="tg-proj2"), "ProjectionExpression": "#r",
                 "ExpressionAttributeNames": {"#r": "real"}}},
        {"Get": {"TableName": table, "Key": _s(pk="tg-absent")}},
    ])
    assert got["Responses"] == [{}, {"Item": _s(real="here")}, {}]


# -- Pinned agreements: number formats -----------------------------------------------------

ACCEPTED = [("+5", "5"), ("+1.5", "1.5"), ("+0", "0"), ("-0", "0"), ("+0.0", "0"), ("+1e2", "100"),
            ("1e+2", "100"), ("1.5E+3", "1500"), ("+.5", "0.5"), (".5", "0.5"), ("5.", "5"), ("1.", "1"),
            ("1.e5", "100000"), ("00042", "42"), ("+1e-2", "0.01"), ("1.23E10", "12300000000"),
            ("12345678901234567890123456789012345678", "12345678901234567890123456789012345678")]
REJECTED = ["+e2", "e2", "+1+2", "1+2", "+1.2.3", "1.2.3", "++5", "+-5", "-+5", "+", "-", "1e", "1e+", ".",
            "1.2e3.4", "0x5", "NaN", "Infinity", "1_000", " 5", "5 ", "1 5"]


def test_number_formats_store_normalised(ddb: Any, tables: dict[str, str]) -> None:
    table = tables["hash"]
    for i, (written, _) in enumerate(ACCEPTED):
        ddb.put_item(TableName=table, Item={"pk": {"S": f"num-{i}"}, "val": {"N": written}})
    stored = [ddb.get_item(TableName=table, Key=_s(pk=f"num-{i}"), ConsistentRead=True)["Item"]["val"]["N"]
              for i in range(len(ACCEPTED))]
    assert stored == [want for _, want in ACCEPTED]


@pytest.mark.parametrize("written", REJECTED)
def test_number_formats_rejected(ddb: Any, tables: dict[str, str], written: str) -> None:
    with pytest.raises(ClientError) as caught:
        ddb.put_item(TableName=tables["hash"], Item={"pk": {"S": "bad"}, "val": {"N": written}})
    error = caught.value.response["Error"]
    assert (error["Code"], error["Message"]) == (
        "ValidationException",
        f"1 validation error detected: The parameter cannot be converted to a numeric value: {written}")


def test_plus_sign_numeric_sort_key_is_the_bare_key(ddb: Any, tables: dict[str, str]) -> None:
    table = tables["num"]
    ddb.put_item(TableName=table, Item={"pk": {"S": "p"}, "sk": {"N": "+5"}, "value": {"S": "plus"}})
    got = ddb.get_item(TableName=table, Key={"pk": {"S": "p"}, "sk": {"N": "5"}}, ConsistentRead=True)
    assert got["Item"] == {"pk": {"S": "p"}, "sk": {"N": "5"}, "value": {"S": "plus"}}


# -- Pinned agreements: index write units (nubo-db indexConsumedCapacity) ------------------

FULL = {"gsiPk": "g", "lsiSk": "L1", "proj": "p", "other": "o"}


def _arms(table: str, total: int, base: int, gsi: int | None = None, lsi: int | None = None) -> Item:
    want: Item = {"TableName": table, "CapacityUnits": float(total), "Table": {"CapacityUnits": float(base)}}
    if lsi is not None:
        want["LocalSecondaryIndexes"] = {"lsi1": {"CapacityUnits": float(lsi)}}
    if gsi is not None:
        want["GlobalSecondaryIndexes"] = {"gsi-inc": {"CapacityUnits": float(gsi)}}
    return want


@pytest.mark.parametrize(("attributes", "units"), [
    ({"gsiPk": "g1", "proj": "p"}, (2, 1, 1, None)),
    ({"other": "o"}, (1, 1, None, None)),
    ({"lsiSk": "L1"}, (2, 1, None, 1)),
    ({"gsiPk": "g3", "lsiSk": "L1", "proj": "p"}, (3, 1, 1, 1)),
])
def test_put_index_units(ddb: Any, tables: dict[str, str], attributes: dict[str, str],
                         units: tuple[int, int, int | None, int | None]) -> None:
    table = tables["idx"]
    got = ddb.put_item(TableName=table, Item=_s(pk=uuid.uuid4().hex, sk="1", **attributes),
                       ReturnConsumedCapacity="INDEXES")
    assert got["ConsumedCapacity"] == _arms(table, *units)


def test_identical_overwrite_charges_no_index(ddb: Any, tables: dict[str, str]) -> None:
    table = tables["idx"]
    item = _s(pk=uuid.uuid4().hex, sk="1", **FULL)
    ddb.put_item(TableName=table, Item=item)
    got = ddb.put_item(TableName=table, Item=item, ReturnConsumedCapacity="INDEXES")
    assert got["ConsumedCapacity"] == _arms(table, 1, 1)


@pytest.mark.parametrize(("expression", "values", "units"), [
    ("SET #o = :v", {":v": "o2"}, (2, 1, None, 1)),
    ("SET proj = :v", {":v": "p2"}, (3, 1, 1, 1)),
    ("SET gsiPk = :v", {":v": "g-moved"}, (4, 1, 2, 1)),
    ("REMOVE gsiPk", {}, (3, 1, 1, 1)),
    ("SET lsiSk = :v", {":v": "L2"}, (3, 1, None, 2)),
])
def test_update_index_units(ddb: Any, tables: dict[str, str], expression: str, values: dict[str, str],
                            units: tuple[int, int, int | None, int | None]) -> None:
    table = tables["idx"]
    pk = uuid.uuid4().hex
    ddb.put_item(TableName=table, Item=_s(pk=pk, sk="1", **FULL))
    extra: Item = {"ExpressionAttributeValues": _s(**values)} if values else {}
    if "#o" in expression:
        extra["ExpressionAttributeNames"] = {"#o": "other"}
    got = ddb.update_item(TableName=table, Key=_s(pk=pk, sk="1"), UpdateExpression=expression,
                          ReturnConsumedCapacity="INDEXES", **extra)
    assert got["ConsumedCapacity"] == _arms(table, *units)


def test_delete_and_batch_index_units(ddb: Any, tables: dict[str, str]) -> None:
    table = tables["idx"]
    pk = uuid.uuid4().hex
    ddb.put_item(TableName=table, Item=_s(pk=pk, sk="1", gsiPk="g", lsiSk="L1", proj="p"))
    got = ddb.delete_item(TableName=table, Key=_s(pk=pk, sk="1"), ReturnConsumedCapacity="INDEXES")
    assert got["ConsumedCapacity"] == _arms(table, 3, 1, gsi=1, lsi=1)
    batch = ddb.batch_write_item(RequestItems={table: [
        {"PutRequest": {"Item": _s(pk=uuid.uuid4().hex, sk="1", gsiPk="g-batch", proj="p")}},
        {"PutRequest": {"Item": _s(pk=uuid.uuid4().hex, sk="1", other="o")}},
    ]}, ReturnConsumedCapacity="INDEXES")
    assert batch["UnprocessedItems"] == {}
    assert batch["ConsumedCapacity"] == [_arms(table, 3, 2, gsi=1)]


# -- Pinned agreements: ReturnValues, conditions and transactions ---------------------------


def test_update_return_values(ddb: Any, tables: dict[str, str]) -> None:
    table = tables["hash"]
    ddb.put_item(TableName=table, Item={"pk": {"S": "rv"}, "a": {"M": {"keep": {"S": "k"}}}, "y": {"S": "d"}})
    key = _s(pk="rv")
    nested = ddb.update_item(TableName=table, Key=key, UpdateExpression="SET a.b = :x, a.c = :y",
                             ExpressionAttributeValues=_s(**{":x": "x", ":y": "y"}), ReturnValues="UPDATED_NEW")
    assert nested["Attributes"] == {"a": {"M": _s(b="x", c="y")}}
    removed = ddb.update_item(TableName=table, Key=key, UpdateExpression="REMOVE y", ReturnValues="UPDATED_NEW")
    assert "Attributes" not in removed
    created = ddb.update_item(TableName=table, Key=_s(pk="rv-new"), UpdateExpression="SET a = :a",
                              ExpressionAttributeValues=_s(**{":a": "x"}), ReturnValues="UPDATED_NEW")
    assert created["Attributes"] == _s(a="x")


def test_failed_update_on_missing_item_returns_no_item(ddb: Any, tables: dict[str, str]) -> None:
    table = tables["hash"]
    with pytest.raises(ClientError) as caught:
        ddb.update_item(TableName=table, Key=_s(pk="ghost"), UpdateExpression="ADD hits :one",
                        ConditionExpression="attribute_exists(pk)", ExpressionAttributeValues={":one": {"N": "1"}},
                        ReturnValuesOnConditionCheckFailure="ALL_OLD")
    assert caught.value.response["Error"]["Code"] == "ConditionalCheckFailedException"
    assert "Item" not in caught.value.response
    assert "Item" not in ddb.get_item(TableName=table, Key=_s(pk="ghost"), ConsistentRead=True)


def test_transaction_units_and_reasons(ddb: Any, tables: dict[str, str]) -> None:
    table = tables["hash"]
    written = ddb.transact_write_items(ReturnConsumedCapacity="TOTAL", TransactItems=[
        {"Put": {"TableName": table, "Item": _s(pk="tw-1")}}, {"Put": {"TableName": table, "Item": _s(pk="tw-2")}}])
    assert written["ConsumedCapacity"] == [{"TableName": table, "CapacityUnits": 4.0, "WriteCapacityUnits": 4.0}]
    read = ddb.transact_get_items(ReturnConsumedCapacity="TOTAL", TransactItems=[
        {"Get": {"TableName": table, "Key": _s(pk="tw-1")}}, {"Get": {"TableName": table, "Key": _s(pk="tw-none")}}])
    assert read["ConsumedCapacity"] == [{"TableName": table, "CapacityUnits": 4.0, "ReadCapacityUnits": 4.0}]
    with pytest.raises(ClientError) as caught:
        ddb.transact_write_items(TransactItems=[
            {"Put": {"TableName": table, "Item": _s(pk="tw-1", data="new"),
                     "ConditionExpression": "attribute_not_exists(pk)",
                     "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}}])
    reasons = caught.value.response["CancellationReasons"]
    assert [(r["Code"], r["Item"]) for r in reasons] == [("ConditionalCheckFailed", _s(pk="tw-1"))]
    with pytest.raises(ClientError) as caught:
        ddb.transact_write_items(TransactItems=[{"Put": {"TableName": table, "Item": {"pk": {"N": "5"}}}}])
    assert caught.value.response["Error"]["Code"] == "TransactionCanceledException"
    assert [r["Code"] for r in caught.value.response["CancellationReasons"]] == ["ValidationError"]
