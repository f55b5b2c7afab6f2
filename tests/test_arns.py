"""A table ARN in place of TableName, and ARNs that tagging refuses."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import create_table, error_of


@pytest.fixture
def arn(ddb: Any, table_name: str) -> str:
    return str(create_table(ddb, table_name)["TableDescription"]["TableArn"])


def test_data_plane_accepts_a_table_arn(ddb: Any, arn: str, table_name: str) -> None:
    ddb.put_item(TableName=arn, Item={"pk": {"S": "a"}, "v": {"N": "1"}})
    assert ddb.get_item(TableName=arn, Key={"pk": {"S": "a"}})["Item"]["v"] == {"N": "1"}
    ddb.update_item(TableName=arn, Key={"pk": {"S": "a"}}, UpdateExpression="SET v = :v",
                    ExpressionAttributeValues={":v": {"N": "2"}})
    assert ddb.query(TableName=arn, KeyConditionExpression="pk = :p",
                     ExpressionAttributeValues={":p": {"S": "a"}})["Count"] == 1
    assert ddb.scan(TableName=arn)["Items"] == [{"pk": {"S": "a"}, "v": {"N": "2"}}]
    assert ddb.describe_table(TableName=arn)["Table"]["TableName"] == table_name
    ddb.delete_item(TableName=arn, Key={"pk": {"S": "a"}})
    assert ddb.scan(TableName=table_name)["Count"] == 0


def test_batches_and_transactions_accept_a_table_arn(ddb: Any, arn: str, table_name: str) -> None:
    ddb.batch_write_item(RequestItems={arn: [{"PutRequest": {"Item": {"pk": {"S": "b"}}}}]})
    got = ddb.batch_get_item(RequestItems={arn: {"Keys": [{"pk": {"S": "b"}}]}})["Responses"]
    assert got == {table_name: [{"pk": {"S": "b"}}]}
    ddb.transact_write_items(TransactItems=[{"Put": {"TableName": arn, "Item": {"pk": {"S": "c"}}}}])
    got = ddb.transact_get_items(TransactItems=[{"Get": {"TableName": arn, "Key": {"pk": {"S": "c"}}}}])
    assert got["Responses"] == [{"Item": {"pk": {"S": "c"}}}]


def test_control_plane_accepts_a_table_arn(ddb: Any, arn: str) -> None:
    ddb.update_table(TableName=arn, DeletionProtectionEnabled=True)
    ddb.update_table(TableName=arn, DeletionProtectionEnabled=False)
    ddb.update_continuous_backups(TableName=arn, PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})
    assert ddb.describe_continuous_backups(TableName=arn)["ContinuousBackupsDescription"][
        "PointInTimeRecoveryDescription"]["PointInTimeRecoveryStatus"] == "ENABLED"
    assert ddb.delete_table(TableName=arn)["TableDescription"]["TableStatus"] == "DELETING"


def test_missing_table_by_arn(ddb: Any, arn: str, table_name: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        ddb.describe_table(TableName=arn + "x")
    assert error_of(excinfo) == ("ResourceNotFoundException", f"Requested resource not found: Table: {table_name}x not found")


@pytest.mark.parametrize("suffix", ["/index/by-x", "/stream/2026-01-01T00:00:00.000"])
def test_index_or_stream_arn_is_not_a_table_name(ddb: Any, arn: str, suffix: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        ddb.get_item(TableName=arn + suffix, Key={"pk": {"S": "a"}})
    assert error_of(excinfo) == ("ValidationException", f"Invalid TableArn: Invalid ResourceArn provided as input {arn}{suffix}")


def test_foreign_arn_is_not_a_table_name(ddb: Any, table_name: str) -> None:
    foreign = f"arn:aws:dynamodb:eu-west-1:123456789012:table/{table_name}"
    with pytest.raises(ClientError) as excinfo:
        ddb.describe_table(TableName=foreign)
    assert error_of(excinfo) == ("ValidationException", f"Invalid TableArn: Invalid ResourceArn provided as input {foreign}")


def test_tagging_an_index_arn_is_refused(ddb: Any, table_name: str) -> None:
    created = ddb.create_table(
        TableName=table_name, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexes=[{"IndexName": "gsi", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}],
    )["TableDescription"]
    index_arn = created["GlobalSecondaryIndexes"][0]["IndexArn"]
    # The 2026 wording (ack-api-quirks DDB-TABLE-442); older records had "Invalid TableArn: ...".
    message = ("One or more parameter values were invalid: Invalid resource arn provided, only table or stream is "
               f"accepted. Provided resource arn: {index_arn}")
    with pytest.raises(ClientError) as excinfo:
        ddb.list_tags_of_resource(ResourceArn=index_arn)
    assert error_of(excinfo) == ("ValidationException", message)
    with pytest.raises(ClientError) as excinfo:
        ddb.tag_resource(ResourceArn=index_arn, Tags=[{"Key": "a", "Value": "b"}])
    assert error_of(excinfo) == ("ValidationException", message)
    with pytest.raises(ClientError) as excinfo:
        ddb.untag_resource(ResourceArn=index_arn, TagKeys=["a"])
    assert error_of(excinfo) == ("ValidationException", message)


@pytest.mark.parametrize("tag", [{"Key": "ok", "Value": "#!%^$&"}, {"Key": "->>;-)])", "Value": "ok"}])
def test_forbidden_tag_characters(ddb: Any, arn: str, tag: dict[str, str]) -> None:
    with pytest.raises(ClientError) as excinfo:
        ddb.tag_resource(ResourceArn=arn, Tags=[tag])
    assert error_of(excinfo)[0] == "ValidationException"
    assert ddb.list_tags_of_resource(ResourceArn=arn)["Tags"] == []


def test_allowed_tag_characters(ddb: Any, arn: str) -> None:
    tags = [{"Key": "a b_.:/=+-@", "Value": ""}, {"Key": "законные буквы", "Value": "ѮѮ 7"}]
    ddb.tag_resource(ResourceArn=arn, Tags=tags)
    assert ddb.list_tags_of_resource(ResourceArn=arn)["Tags"] == tags


def test_too_long_tag_key_and_value(ddb: Any, arn: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        ddb.tag_resource(ResourceArn=arn, Tags=[{"Key": "k" * 129, "Value": "v"}])
    # The tag validator's words, not a shape clause (ack-api-quirks DDB-TABLE-107, 2026-10-08).
    assert error_of(excinfo) == ("ValidationException", "The Tag Key provided is invalid, Key: " + "k" * 129)
    with pytest.raises(ClientError) as excinfo:
        ddb.tag_resource(ResourceArn=arn, Tags=[{"Key": "k", "Value": "v" * 257}])
    assert error_of(excinfo) == ("ValidationException", "The Tag Value provided is invalid, Value: " + "v" * 257)


@pytest.mark.parametrize("tags, message", [
    ([{"Key": "aws:x", "Value": "v"}], "Tag Key cannot be prefixed with aws:, Key: aws:x"),
    ([{"Key": "a", "Value": "1"}, {"Key": "a", "Value": "2"}],
     "Duplicate Tag Keys provided as input: Duplicate Tag Key found a"),
    ([{"Key": f"k{i}", "Value": "v"} for i in range(51)],
     "Number of Tags exceed the current limit for the provided ResourceArn"),
])
def test_create_table_checks_its_tags(ddb: Any, table_name: str, tags: list[dict[str, str]], message: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        create_table(ddb, table_name, Tags=tags)
    assert error_of(excinfo) == ("ValidationException", message)
    with pytest.raises(ClientError) as excinfo:
        ddb.describe_table(TableName=table_name)
    assert error_of(excinfo)[0] == "ResourceNotFoundException"
