"""CreateTable, DescribeTable, ListTables, DeleteTable against a real server."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import create_table, error_of, raw_request

KEY = [{"AttributeName": "pk", "KeyType": "HASH"}]
DEFS = [{"AttributeName": "pk", "AttributeType": "S"}]


def test_create_describe_delete_round_trip(ddb: Any, table_name: str) -> None:
    created = create_table(ddb, table_name, range_key=("sk", "N"))["TableDescription"]
    assert created["TableName"] == table_name
    assert created["TableStatus"] == "CREATING"
    assert created["KeySchema"] == [
        {"AttributeName": "pk", "KeyType": "HASH"},
        {"AttributeName": "sk", "KeyType": "RANGE"},
    ]
    assert created["TableArn"] == f"arn:aws:dynamodb:us-east-1:000000000000:table/{table_name}"
    assert created["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    assert created["ProvisionedThroughput"] == {
        "NumberOfDecreasesToday": 0,
        "ReadCapacityUnits": 0,
        "WriteCapacityUnits": 0,
    }

    table = ddb.describe_table(TableName=table_name)["Table"]
    assert table["TableStatus"] == "ACTIVE"
    assert table["TableId"] == created["TableId"]
    assert table["ItemCount"] == 0
    assert table["TableSizeBytes"] == 0
    assert table["DeletionProtectionEnabled"] is False
    assert table["TableClassSummary"] == {"TableClass": "STANDARD"}
    assert table["AttributeDefinitions"] == [
        {"AttributeName": "pk", "AttributeType": "S"},
        {"AttributeName": "sk", "AttributeType": "N"},
    ]

    deleted = ddb.delete_table(TableName=table_name)["TableDescription"]
    assert deleted["TableStatus"] == "DELETING"
    with pytest.raises(ClientError) as excinfo:
        ddb.describe_table(TableName=table_name)
    assert error_of(excinfo) == (
        "ResourceNotFoundException",
        f"Requested resource not found: Table: {table_name} not found",
    )


def test_waiters(ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name)
    ddb.get_waiter("table_exists").wait(TableName=table_name, WaiterConfig={"Delay": 1, "MaxAttempts": 5})
    ddb.delete_table(TableName=table_name)
    ddb.get_waiter("table_not_exists").wait(TableName=table_name, WaiterConfig={"Delay": 1, "MaxAttempts": 5})


def test_provisioned_table_reports_throughput(ddb: Any, table_name: str) -> None:
    ddb.create_table(
        TableName=table_name,
        KeySchema=KEY,
        AttributeDefinitions=DEFS,
        ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 7},
        Tags=[{"Key": "team", "Value": "core"}],
        TableClass="STANDARD_INFREQUENT_ACCESS",
        SSESpecification={"Enabled": True},
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"},
    )
    table = ddb.describe_table(TableName=table_name)["Table"]
    assert table["ProvisionedThroughput"]["ReadCapacityUnits"] == 5
    assert table["ProvisionedThroughput"]["WriteCapacityUnits"] == 7
    assert table["BillingModeSummary"]["BillingMode"] == "PROVISIONED"
    assert table["TableClassSummary"] == {"TableClass": "STANDARD_INFREQUENT_ACCESS"}
    assert table["SSEDescription"]["Status"] == "ENABLED"
    assert table["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"}
    assert table["LatestStreamArn"].startswith(table["TableArn"] + "/stream/")


def test_create_existing_table(ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name)
    with pytest.raises(ClientError) as excinfo:
        create_table(ddb, table_name)
    assert error_of(excinfo) == ("ResourceInUseException", f"Table already exists: {table_name}")


def test_table_names_are_case_sensitive(ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name)
    create_table(ddb, table_name.upper())
    assert ddb.describe_table(TableName=table_name.upper())["Table"]["TableName"] == table_name.upper()


def test_deletion_protection(ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name, DeletionProtectionEnabled=True)
    with pytest.raises(ClientError) as excinfo:
        ddb.delete_table(TableName=table_name)
    assert error_of(excinfo) == (
        "ValidationException",
        "Resource cannot be deleted as it is currently protected against deletion. "
        "Disable deletion protection first.",
    )
    assert ddb.describe_table(TableName=table_name)["Table"]["DeletionProtectionEnabled"] is True


def test_delete_missing_table(ddb: Any, table_name: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        ddb.delete_table(TableName=table_name)
    assert error_of(excinfo) == (
        "ResourceNotFoundException",
        f"Requested resource not found: Table: {table_name} not found",
    )


def test_recreated_table_is_empty(ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name)
    ddb.put_item(TableName=table_name, Item={"pk": {"S": "a"}})
    ddb.delete_table(TableName=table_name)
    create_table(ddb, table_name)
    assert "Item" not in ddb.get_item(TableName=table_name, Key={"pk": {"S": "a"}})
    assert ddb.describe_table(TableName=table_name)["Table"]["ItemCount"] == 0


def test_item_count_and_size(ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name)
    ddb.put_item(TableName=table_name, Item={"pk": {"S": "a"}, "v": {"S": "xyz"}})
    ddb.put_item(TableName=table_name, Item={"pk": {"S": "b"}})
    table = ddb.describe_table(TableName=table_name)["Table"]
    assert table["ItemCount"] == 2
    # "pk"+"a" + "v"+"xyz" = 7 bytes; "pk"+"b" = 3 bytes.
    assert table["TableSizeBytes"] == 10


def test_list_tables_pages_in_name_order(endpoint: str) -> None:
    from conftest import client_for, launch

    srv = launch("--in-memory")
    try:
        ddb = client_for(srv.url)
        names = ["b-table", "A-table", "a-table", "c.table", "B_table"]
        for name in names:
            create_table(ddb, name)
        assert ddb.list_tables()["TableNames"] == sorted(names)
        first = ddb.list_tables(Limit=2)
        assert first["TableNames"] == sorted(names)[:2]
        assert first["LastEvaluatedTableName"] == sorted(names)[1]
        rest = ddb.list_tables(ExclusiveStartTableName=first["LastEvaluatedTableName"])
        assert rest["TableNames"] == sorted(names)[2:]
        assert "LastEvaluatedTableName" not in rest
        paginated = [n for page in ddb.get_paginator("list_tables").paginate(PaginationConfig={"PageSize": 2})
                     for n in page["TableNames"]]
        assert paginated == sorted(names)
    finally:
        srv.stop()


BAD_SCHEMAS = [
    (
        {"KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
         "AttributeDefinitions": [{"AttributeName": "other", "AttributeType": "S"}]},
        "One or more parameter values were invalid: Some index key attributes are not defined in "
        "AttributeDefinitions. Keys: [pk], AttributeDefinitions: [other]",
    ),
    (
        {"KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
         "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                                  {"AttributeName": "x", "AttributeType": "S"}]},
        "One or more parameter values were invalid: Number of attributes in KeySchema does not "
        "exactly match number of attributes defined in AttributeDefinitions",
    ),
    (
        {"KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
         "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]},
        "Invalid KeySchema: Some index key attribute have no definition",
    ),
    (
        {"KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "pk", "KeyType": "RANGE"}],
         "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                                  {"AttributeName": "x", "AttributeType": "S"}]},
        "Both the Hash Key and the Range Key element in the KeySchema have the same name",
    ),
    (
        {"KeySchema": [{"AttributeName": "pk", "KeyType": "RANGE"}],
         "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]},
        "Invalid KeySchema: The first KeySchemaElement is not a HASH key type",
    ),
    (
        {"KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "HASH"}],
         "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                                  {"AttributeName": "sk", "AttributeType": "S"}]},
        "Invalid KeySchema: The second KeySchemaElement is not a RANGE key type",
    ),
]


@pytest.mark.parametrize(("schema", "message"), BAD_SCHEMAS)
def test_invalid_key_schemas(ddb: Any, table_name: str, schema: dict[str, Any], message: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        ddb.create_table(TableName=table_name, BillingMode="PAY_PER_REQUEST", **schema)
    assert error_of(excinfo) == ("ValidationException", message)
    with pytest.raises(ClientError) as excinfo:
        ddb.describe_table(TableName=table_name)
    assert error_of(excinfo)[0] == "ResourceNotFoundException"


def test_billing_mode_rules(ddb: Any, table_name: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        ddb.create_table(TableName=table_name, KeySchema=KEY, AttributeDefinitions=DEFS)
    assert error_of(excinfo) == (
        "ValidationException",
        "One or more parameter values were invalid: ReadCapacityUnits and WriteCapacityUnits must "
        "both be specified when BillingMode is PROVISIONED",
    )
    with pytest.raises(ClientError) as excinfo:
        ddb.create_table(
            TableName=table_name, KeySchema=KEY, AttributeDefinitions=DEFS, BillingMode="PAY_PER_REQUEST",
            ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
        )
    assert error_of(excinfo) == (
        "ValidationException",
        "One or more parameter values were invalid: Neither ReadCapacityUnits nor WriteCapacityUnits "
        "can be specified when BillingMode is PAY_PER_REQUEST",
    )


def test_table_name_rules(ddb: Any) -> None:
    with pytest.raises(ClientError) as excinfo:
        ddb.describe_table(TableName="ab")
    assert error_of(excinfo) == (
        "ValidationException",
        "1 validation error detected: Value 'ab' at 'tableName' failed to satisfy constraint: "
        "Member must have length greater than or equal to 3",
    )
    with pytest.raises(ClientError) as excinfo:
        ddb.create_table(TableName="bad name!", KeySchema=KEY, AttributeDefinitions=DEFS,
                         BillingMode="PAY_PER_REQUEST")
    assert error_of(excinfo) == (
        "ValidationException",
        "1 validation error detected: Value 'bad name!' at 'tableName' failed to satisfy constraint: "
        "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+",
    )


def test_bad_attribute_type(ddb: Any, table_name: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        ddb.create_table(TableName=table_name, KeySchema=KEY, BillingMode="PAY_PER_REQUEST",
                         AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "BOOL"}])
    code, message = error_of(excinfo)
    assert code == "ValidationException"
    assert message == (
        "1 validation error detected: Value 'BOOL' at 'attributeDefinitions.1.member.attributeType' "
        "failed to satisfy constraint: Member must satisfy enum value set: [B, N, S]"
    )


def test_catalog_changes_reach_every_worker(start_server: Any, tmp_path: Any) -> None:
    """Tables created or deleted through one worker are seen at once by the others."""
    from conftest import client_for

    server = start_server("--workers", "2", "--data-dir", str(tmp_path / "data"))

    def fresh() -> Any:  # a new client opens new connections, which the kernel spreads over workers
        return client_for(server.url)

    create_table(fresh(), "shared")
    for i in range(12):
        fresh().put_item(TableName="shared", Item={"pk": {"S": f"k{i}"}})
    fresh().delete_table(TableName="shared")
    for _ in range(12):
        with pytest.raises(ClientError) as excinfo:
            fresh().put_item(TableName="shared", Item={"pk": {"S": "x"}})
        assert error_of(excinfo)[0] == "ResourceNotFoundException"
    create_table(fresh(), "shared", hash_key=("id", "N"))
    for i in range(12):
        fresh().put_item(TableName="shared", Item={"id": {"N": str(i)}})
    assert fresh().describe_table(TableName="shared")["Table"]["ItemCount"] == 12


def test_create_table_answer_has_only_dynamodb_members(endpoint: str, table_name: str) -> None:
    # boto3 drops unknown members, so read the raw answer: Partita's bookkeeping stays inside.
    request = {
        "TableName": table_name,
        "BillingMode": "PAY_PER_REQUEST",
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "StreamSpecification": {"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"},
        "Tags": [{"Key": "team", "Value": "data"}],
    }
    created = raw_request(endpoint, "CreateTable", request).json()["TableDescription"]
    described = raw_request(endpoint, "DescribeTable", {"TableName": table_name}).json()["Table"]
    assert [k for k in created if k.startswith("_")] == []
    assert created["TableStatus"] == "CREATING"
    assert set(created) == set(described)
