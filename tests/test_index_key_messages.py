"""Index key faults on every write path, as recorded on AWS in 2026 (issue 26, classes 3 and 4).

A table whose GSIs and LSIs share a key attribute: a wrong value names the
first global index (gsi1), not the local one, on PutItem, BatchWriteItem and
TransactWriteItems (where a wrong type is the action's cancellation reason).
A SET of an empty S or B on an index key is the update-expression sentence
without IndexName, on UpdateItem and as a top-level ValidationException in
TransactWriteItems. BatchWriteItem's DeleteRequest words an empty key value
"are not valid." (a 2026 conformance suite, four regions).
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import error_of

INVALID = "One or more parameter values were invalid: "
NOT_VALID = "One or more parameter values are not valid. "
UPDATE_EMPTY = (NOT_VALID + "The update expression attempted to update a secondary index key to a value that is "
                "not supported. The AttributeValue for a key attribute cannot contain an empty {} value.")
PUT_EMPTY = (NOT_VALID + "A value specified for a secondary index key is not supported. The AttributeValue for a "
             "key attribute cannot contain an empty {} value. IndexName: {}, IndexKey: {}")


def _index(name: str, *keys: str) -> dict[str, Any]:
    kinds = ("HASH", "RANGE")
    return {"IndexName": name, "KeySchema": [{"AttributeName": k, "KeyType": t} for k, t in zip(keys, kinds[:len(keys)], strict=True)],
            "Projection": {"ProjectionType": "ALL"}}


@pytest.fixture(scope="module")
def tables(ddb: Any) -> tuple[str, str]:
    """(composite: gsi1, gsi2 and lsi1, lsi2 over lsi1sk/lsi2sk; binary: gsib over a B attribute)."""
    suffix = uuid.uuid4().hex[:8]
    composite, binary = f"idx-msg-{suffix}", f"idx-msg-b-{suffix}"
    ddb.create_table(
        TableName=composite, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"} for a in ("pk", "sk", "lsi1sk", "lsi2sk")],
        LocalSecondaryIndexes=[_index("lsi1", "pk", "lsi1sk"), _index("lsi2", "pk", "lsi2sk")],
        GlobalSecondaryIndexes=[_index("gsi1", "lsi1sk"), _index("gsi2", "lsi1sk", "lsi2sk")],
    )
    ddb.create_table(
        TableName=binary, BillingMode="PAY_PER_REQUEST", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "B"}, {"AttributeName": "bidx", "AttributeType": "B"}],
        GlobalSecondaryIndexes=[_index("gsib", "bidx")],
    )
    return composite, binary


def _refused(call: Any, **request: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        call(**request)
    return error_of(excinfo)


def _reason(ddb: Any, action: dict[str, Any]) -> dict[str, Any]:
    with pytest.raises(ClientError) as excinfo:
        ddb.transact_write_items(TransactItems=[action])
    assert excinfo.value.response["Error"]["Code"] == "TransactionCanceledException"
    reasons: list[dict[str, Any]] = excinfo.value.response["CancellationReasons"]
    return reasons[0]


@pytest.mark.parametrize("value, actual", [({"N": "5"}, "N"), ({"L": [{"S": "x"}]}, "L")])
def test_a_wrong_index_key_names_the_global_index(ddb: Any, tables: tuple[str, str], value: Any, actual: str) -> None:
    table = tables[0]
    item = {"pk": {"S": "a"}, "sk": {"S": "a"}, "lsi1sk": value}
    expected = f"{INVALID}Type mismatch for Index Key lsi1sk Expected: S Actual: {actual} IndexName: gsi1"
    assert _refused(ddb.put_item, TableName=table, Item=item) == ("ValidationException", expected)
    assert _refused(ddb.batch_write_item, RequestItems={table: [{"PutRequest": {"Item": item}}]}) == (
        "ValidationException", expected)
    assert _reason(ddb, {"Put": {"TableName": table, "Item": item}}) == {"Code": "ValidationError", "Message": expected}
    update = {"Update": {"TableName": table, "Key": {"pk": {"S": "a"}, "sk": {"S": "b"}},
                         "UpdateExpression": "SET lsi1sk = :v", "ExpressionAttributeValues": {":v": value}}}
    assert _reason(ddb, update) == {"Code": "ValidationError", "Message": expected}


def test_an_empty_index_key_in_an_item_names_the_global_index(ddb: Any, tables: tuple[str, str]) -> None:
    table = tables[0]
    item = {"pk": {"S": "a"}, "sk": {"S": "a"}, "lsi1sk": {"S": ""}}
    expected = PUT_EMPTY.format("string", "gsi1", "lsi1sk")
    assert _refused(ddb.put_item, TableName=table, Item=item) == ("ValidationException", expected)
    assert _refused(ddb.batch_write_item, RequestItems={table: [{"PutRequest": {"Item": item}}]}) == (
        "ValidationException", expected)
    assert _refused(ddb.transact_write_items, TransactItems=[{"Put": {"TableName": table, "Item": item}}]) == (
        "ValidationException", expected)


@pytest.mark.parametrize("which", ["string", "binary"])
def test_setting_an_index_key_to_an_empty_value(ddb: Any, tables: tuple[str, str], which: str) -> None:
    if which == "string":
        table, key, name, value = tables[0], {"pk": {"S": "e"}, "sk": {"S": "c"}}, "lsi1sk", {"S": ""}
    else:
        table, key, name, value = tables[1], {"pk": {"B": b"e"}}, "bidx", {"B": b""}
    update = {"TableName": table, "Key": key, "UpdateExpression": f"SET {name} = :v",
              "ExpressionAttributeValues": {":v": value}}
    expected = ("ValidationException", UPDATE_EMPTY.format(which))
    assert _refused(ddb.update_item, **update) == expected
    assert _refused(ddb.transact_write_items, TransactItems=[{"Update": update}]) == expected
    assert "Item" not in ddb.get_item(TableName=table, Key=key)


def test_an_empty_key_in_a_batch_delete(ddb: Any, tables: tuple[str, str]) -> None:
    assert _refused(ddb.batch_write_item, RequestItems={tables[1]: [{"DeleteRequest": {"Key": {"pk": {"B": b""}}}}]}) == (
        "ValidationException",
        NOT_VALID + "The AttributeValue for a key attribute cannot contain an empty binary value. Key: pk")
    # A Key parameter words it the same way (the 2026 conformance records of DeleteItem).
    assert _refused(ddb.delete_item, TableName=tables[1], Key={"pk": {"B": b""}}) == (
        "ValidationException",
        NOT_VALID + "The AttributeValue for a key attribute cannot contain an empty binary value. Key: pk")
