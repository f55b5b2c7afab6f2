"""UpdateItem on a missing item whose actions only delete: nothing is created (issue 26, fact U1).

DynamoDB documents it for AttributeUpdates ("If no item with the specified Key
is found: ... DELETE - Nothing happens; there is no attribute to delete",
AttributeValueUpdate in the API reference) and does the same for REMOVE and a
set DELETE (observed on the service; Alternator's AWS-checked
test_update_item_non_existent and test_update_item_returnvalues_all_new).
An update that sets anything, an empty AttributeUpdates and an UpdateItem
without any update still create the item from its key. The write is still
charged as DynamoDB documents: the larger of the item before and after, at
least one unit, so a no-op costs one write unit (two in a transaction).
"""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import create_table, error_of
from streams_helpers import read_stream, streams_client

KEY = {"pk": {"S": "k"}}
ONE_PARTITION = {"BillingMode": "PROVISIONED", "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}}

#: Every way an update can only delete: (UpdateItem parameters, what it would touch).
DELETE_ONLY: list[dict[str, Any]] = [
    {"AttributeUpdates": {"a": {"Action": "DELETE"}}},
    {"AttributeUpdates": {"a": {"Action": "DELETE", "Value": {"NS": ["4"]}}}},
    {"AttributeUpdates": {"a": {"Action": "DELETE"}, "b": {"Action": "DELETE", "Value": {"SS": ["x"]}}}},
    {"UpdateExpression": "REMOVE a"},
    {"UpdateExpression": "REMOVE a, b"},
    {"UpdateExpression": "DELETE s :v", "ExpressionAttributeValues": {":v": {"SS": ["x"]}}},
    {"UpdateExpression": "REMOVE a DELETE s :v", "ExpressionAttributeValues": {":v": {"NS": ["1"]}}},
    # The paths are not even looked at: on an existing item without `a` these are errors.
    {"UpdateExpression": "REMOVE a.b, c[0]"},
    {"UpdateExpression": "DELETE a.b :v", "ExpressionAttributeValues": {":v": {"BS": ["AQ=="]}}},
]


def _get(ddb: Any, table: str) -> dict[str, Any] | None:
    return ddb.get_item(TableName=table, Key=KEY, ConsistentRead=True).get("Item")


@pytest.mark.parametrize("params", DELETE_ONLY)
@pytest.mark.parametrize("mode", ["NONE", "ALL_NEW", "ALL_OLD", "UPDATED_NEW", "UPDATED_OLD"])
def test_deletions_on_a_missing_item_create_nothing(
    ddb: Any, hash_table: str, params: dict[str, Any], mode: str
) -> None:
    out = ddb.update_item(TableName=hash_table, Key=KEY, ReturnValues=mode, ReturnConsumedCapacity="TOTAL", **params)
    assert "Attributes" not in out
    assert out["ConsumedCapacity"] == {"TableName": hash_table, "CapacityUnits": 1.0}
    assert _get(ddb, hash_table) is None


def test_a_passing_condition_still_creates_nothing_and_a_failing_one_fails(ddb: Any, hash_table: str) -> None:
    ddb.update_item(TableName=hash_table, Key=KEY, UpdateExpression="REMOVE a",
                    ConditionExpression="attribute_not_exists(pk)")
    assert _get(ddb, hash_table) is None
    with pytest.raises(ClientError) as excinfo:
        ddb.update_item(TableName=hash_table, Key=KEY, AttributeUpdates={"a": {"Action": "DELETE"}},
                        Expected={"pk": {"Exists": True, "Value": {"S": "k"}}})
    assert error_of(excinfo) == ("ConditionalCheckFailedException", "The conditional request failed")
    assert _get(ddb, hash_table) is None


@pytest.mark.parametrize("params", [
    {"AttributeUpdates": {}},
    {},
])
def test_an_update_without_actions_creates_the_key(ddb: Any, hash_table: str, params: dict[str, Any]) -> None:
    out = ddb.update_item(TableName=hash_table, Key=KEY, ReturnValues="ALL_NEW", ReturnConsumedCapacity="TOTAL",
                          **params)
    assert out["Attributes"] == KEY
    assert out["ConsumedCapacity"] == {"TableName": hash_table, "CapacityUnits": 1.0}
    assert _get(ddb, hash_table) == KEY


@pytest.mark.parametrize(("params", "item"), [
    ({"AttributeUpdates": {"a": {"Action": "PUT", "Value": {"N": "1"}}, "b": {"Action": "DELETE"}}},
     {**KEY, "a": {"N": "1"}}),
    ({"AttributeUpdates": {"n": {"Action": "ADD", "Value": {"N": "2"}}}}, {**KEY, "n": {"N": "2"}}),
    ({"UpdateExpression": "SET a = :v REMOVE b", "ExpressionAttributeValues": {":v": {"S": "x"}}},
     {**KEY, "a": {"S": "x"}}),
    ({"UpdateExpression": "ADD s :v DELETE t :v", "ExpressionAttributeValues": {":v": {"SS": ["x"]}}},
     {**KEY, "s": {"SS": ["x"]}}),
])
def test_an_update_that_sets_anything_creates_the_item(
    ddb: Any, hash_table: str, params: dict[str, Any], item: dict[str, Any]
) -> None:
    assert ddb.update_item(TableName=hash_table, Key=KEY, ReturnValues="ALL_NEW", **params)["Attributes"] == item
    assert _get(ddb, hash_table) == item


@pytest.mark.parametrize("params", [
    {"AttributeUpdates": {"a": {"Action": "DELETE"}}},
    {"UpdateExpression": "REMOVE a"},
])
def test_deleting_the_last_attribute_of_an_existing_item_keeps_its_key(
    ddb: Any, hash_table: str, params: dict[str, Any]
) -> None:
    ddb.put_item(TableName=hash_table, Item={**KEY, "a": {"S": "x" * 2000}})
    out = ddb.update_item(TableName=hash_table, Key=KEY, ReturnValues="ALL_NEW", ReturnConsumedCapacity="TOTAL",
                          **params)
    assert out["Attributes"] == KEY
    # The larger of the item before (2,007 bytes) and after: two units.
    assert out["ConsumedCapacity"] == {"TableName": hash_table, "CapacityUnits": 2.0}
    assert _get(ddb, hash_table) == KEY


def test_no_stream_record_for_deletions_on_a_missing_item(ddb: Any, endpoint: str, table_name: str) -> None:
    out = create_table(ddb, table_name, StreamSpecification={"StreamEnabled": True,
                                                             "StreamViewType": "NEW_AND_OLD_IMAGES"},
                       **ONE_PARTITION)
    for params in DELETE_ONLY:
        ddb.update_item(TableName=table_name, Key=KEY, **params)
    ddb.update_item(TableName=table_name, Key=KEY, AttributeUpdates={"a": {"Action": "PUT", "Value": {"N": "1"}}})
    ddb.update_item(TableName=table_name, Key=KEY, UpdateExpression="REMOVE a")
    records = read_stream(streams_client(endpoint), out["TableDescription"]["LatestStreamArn"])
    assert [r["eventName"] for r in records] == ["INSERT", "MODIFY"]
    assert records[1]["dynamodb"]["OldImage"] == {**KEY, "a": {"N": "1"}}
    assert records[1]["dynamodb"]["NewImage"] == KEY


def test_a_transaction_update_that_only_deletes_creates_nothing(ddb: Any, hash_table: str) -> None:
    out = ddb.transact_write_items(TransactItems=[
        {"Update": {"TableName": hash_table, "Key": KEY, "UpdateExpression": "REMOVE a"}},
        {"Update": {"TableName": hash_table, "Key": {"pk": {"S": "other"}}, "UpdateExpression": "SET a = :v",
                    "ExpressionAttributeValues": {":v": {"N": "1"}}}},
    ], ReturnConsumedCapacity="TOTAL")
    assert out["ConsumedCapacity"] == [{"TableName": hash_table, "CapacityUnits": 4.0, "WriteCapacityUnits": 4.0}]
    assert _get(ddb, hash_table) is None
    assert ddb.get_item(TableName=hash_table, Key={"pk": {"S": "other"}})["Item"] == {
        "pk": {"S": "other"}, "a": {"N": "1"},
    }


def test_on_a_table_with_a_local_index_no_entry_is_written(ddb: Any, table_name: str) -> None:
    ddb.create_table(
        TableName=table_name, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "S"},
                              {"AttributeName": "l", "AttributeType": "S"}],
        LocalSecondaryIndexes=[{"IndexName": "byL", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                                                 {"AttributeName": "l", "KeyType": "RANGE"}],
                                "Projection": {"ProjectionType": "ALL"}}],
    )
    key = {"pk": {"S": "k"}, "sk": {"S": "s"}}
    ddb.update_item(TableName=table_name, Key=key, UpdateExpression="REMOVE l")
    assert "Item" not in ddb.get_item(TableName=table_name, Key=key, ConsistentRead=True)
    assert ddb.query(TableName=table_name, IndexName="byL", KeyConditionExpression="pk = :p",
                     ExpressionAttributeValues={":p": {"S": "k"}})["Items"] == []
