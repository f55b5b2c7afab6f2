"""What infrastructure tools read on every refresh: throughput settings, endpoints, limits, backups."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from botocore.exceptions import ClientError
from conftest import client_for, create_table, durable_store, error_of

INVALID = "One or more parameter values were invalid: "
ON_DEMAND_WARM = {"ReadUnitsPerSecond": 12000, "WriteUnitsPerSecond": 4000, "Status": "ACTIVE"}


def gsi(name: str, **extra: Any) -> dict[str, Any]:
    return {"IndexName": name, "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"}, **extra}


def with_gsi_definitions() -> dict[str, Any]:
    return {"AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                                     {"AttributeName": "g", "AttributeType": "S"}]}


def create_with_gsi(ddb: Any, name: str, **extra: Any) -> dict[str, Any]:
    return ddb.create_table(
        TableName=name, KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}], **with_gsi_definitions(), **extra
    )["TableDescription"]


def test_on_demand_table_reports_default_warm_throughput(ddb: Any, table_name: str) -> None:
    created = create_with_gsi(ddb, table_name, BillingMode="PAY_PER_REQUEST", GlobalSecondaryIndexes=[gsi("by-g")])
    assert created["WarmThroughput"] == ON_DEMAND_WARM
    table = ddb.describe_table(TableName=table_name)["Table"]
    assert table["WarmThroughput"] == ON_DEMAND_WARM
    assert table["GlobalSecondaryIndexes"][0]["WarmThroughput"] == ON_DEMAND_WARM
    assert "OnDemandThroughput" not in table


def test_provisioned_table_warm_throughput_is_its_capacity(ddb: Any, table_name: str) -> None:
    create_with_gsi(
        ddb, table_name, ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 7},
        GlobalSecondaryIndexes=[gsi("by-g", ProvisionedThroughput={"ReadCapacityUnits": 3, "WriteCapacityUnits": 2})],
    )
    table = ddb.describe_table(TableName=table_name)["Table"]
    assert table["WarmThroughput"] == {"ReadUnitsPerSecond": 5, "WriteUnitsPerSecond": 7, "Status": "ACTIVE"}
    assert table["GlobalSecondaryIndexes"][0]["WarmThroughput"] == {
        "ReadUnitsPerSecond": 3, "WriteUnitsPerSecond": 2, "Status": "ACTIVE"}
    # Raising provisioned capacity past the warm value raises the warm value.
    ddb.update_table(TableName=table_name, ProvisionedThroughput={"ReadCapacityUnits": 50, "WriteCapacityUnits": 7})
    table = ddb.describe_table(TableName=table_name)["Table"]
    assert table["WarmThroughput"] == {"ReadUnitsPerSecond": 50, "WriteUnitsPerSecond": 7, "Status": "ACTIVE"}
    # ... and lowering it does not lower warm throughput.
    ddb.update_table(TableName=table_name, ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1})
    assert ddb.describe_table(TableName=table_name)["Table"]["WarmThroughput"]["ReadUnitsPerSecond"] == 50


def test_warm_and_on_demand_throughput_given_at_creation(ddb: Any, table_name: str) -> None:
    create_with_gsi(
        ddb, table_name, BillingMode="PAY_PER_REQUEST",
        WarmThroughput={"ReadUnitsPerSecond": 15000, "WriteUnitsPerSecond": 20000},
        OnDemandThroughput={"MaxReadRequestUnits": 100, "MaxWriteRequestUnits": 50},
        GlobalSecondaryIndexes=[gsi("by-g", OnDemandThroughput={"MaxReadRequestUnits": 10},
                                    WarmThroughput={"WriteUnitsPerSecond": 6000})],
    )
    table = ddb.describe_table(TableName=table_name)["Table"]
    assert table["WarmThroughput"] == {"ReadUnitsPerSecond": 15000, "WriteUnitsPerSecond": 20000, "Status": "ACTIVE"}
    assert table["OnDemandThroughput"] == {"MaxReadRequestUnits": 100, "MaxWriteRequestUnits": 50}
    index = table["GlobalSecondaryIndexes"][0]
    assert index["OnDemandThroughput"] == {"MaxReadRequestUnits": 10}
    assert index["WarmThroughput"] == {"ReadUnitsPerSecond": 12000, "WriteUnitsPerSecond": 6000, "Status": "ACTIVE"}


def test_update_table_changes_and_removes_on_demand_maximum(ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name, OnDemandThroughput={"MaxReadRequestUnits": 100, "MaxWriteRequestUnits": 50})
    ddb.update_table(TableName=table_name, OnDemandThroughput={"MaxReadRequestUnits": -1, "MaxWriteRequestUnits": 70})
    assert ddb.describe_table(TableName=table_name)["Table"]["OnDemandThroughput"] == {"MaxWriteRequestUnits": 70}
    ddb.update_table(TableName=table_name, OnDemandThroughput={"MaxWriteRequestUnits": -1})
    assert "OnDemandThroughput" not in ddb.describe_table(TableName=table_name)["Table"]


def test_update_table_raises_warm_throughput(ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name)
    answer = ddb.update_table(TableName=table_name, WarmThroughput={"ReadUnitsPerSecond": 30000})
    assert answer["TableDescription"]["WarmThroughput"] == {
        "ReadUnitsPerSecond": 30000, "WriteUnitsPerSecond": 4000, "Status": "UPDATING"}
    assert ddb.describe_table(TableName=table_name)["Table"]["WarmThroughput"] == {
        "ReadUnitsPerSecond": 30000, "WriteUnitsPerSecond": 4000, "Status": "ACTIVE"}
    with pytest.raises(ClientError) as excinfo:
        ddb.update_table(TableName=table_name, WarmThroughput={"ReadUnitsPerSecond": 20000})
    assert error_of(excinfo) == ("ValidationException", (
        f"{INVALID}Requested ReadUnitsPerSecond for WarmThroughput for table is lower than the current value "
        "30000; warm throughput can only be increased"))


def test_gsi_update_action_with_only_warm_or_on_demand_throughput(ddb: Any, table_name: str) -> None:
    create_with_gsi(ddb, table_name, BillingMode="PAY_PER_REQUEST", GlobalSecondaryIndexes=[gsi("by-g")])
    ddb.update_table(TableName=table_name, GlobalSecondaryIndexUpdates=[
        {"Update": {"IndexName": "by-g", "WarmThroughput": {"ReadUnitsPerSecond": 13000}}}])
    ddb.update_table(TableName=table_name, GlobalSecondaryIndexUpdates=[
        {"Update": {"IndexName": "by-g", "OnDemandThroughput": {"MaxWriteRequestUnits": 9}}}])
    index = ddb.describe_table(TableName=table_name)["Table"]["GlobalSecondaryIndexes"][0]
    assert index["WarmThroughput"] == {"ReadUnitsPerSecond": 13000, "WriteUnitsPerSecond": 4000, "Status": "ACTIVE"}
    assert index["OnDemandThroughput"] == {"MaxWriteRequestUnits": 9}
    with pytest.raises(ClientError) as excinfo:
        ddb.update_table(TableName=table_name, GlobalSecondaryIndexUpdates=[
            {"Update": {"IndexName": "by-g", "OnDemandThroughput": {"MaxReadRequestUnits": 0}}}])
    assert error_of(excinfo) == ("ValidationException", (
        f"{INVALID}Requested MaxReadRequestUnits for OnDemandThroughput for index is outside of valid range"))


def test_online_gsi_create_gets_warm_throughput(ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name)
    ddb.update_table(TableName=table_name, **with_gsi_definitions(), GlobalSecondaryIndexUpdates=[
        {"Create": gsi("by-g", WarmThroughput={"ReadUnitsPerSecond": 14000})}])
    index = ddb.describe_table(TableName=table_name)["Table"]["GlobalSecondaryIndexes"][0]
    assert index["WarmThroughput"]["ReadUnitsPerSecond"] == 14000
    assert index["WarmThroughput"]["WriteUnitsPerSecond"] == 4000


@pytest.mark.parametrize("value", [0, -2])
def test_on_demand_maximum_out_of_range(ddb: Any, table_name: str, value: int) -> None:
    with pytest.raises(ClientError) as excinfo:
        create_table(ddb, table_name, OnDemandThroughput={"MaxWriteRequestUnits": value})
    assert error_of(excinfo) == ("ValidationException", (
        f"{INVALID}Requested MaxWriteRequestUnits for OnDemandThroughput for table is outside of valid range"))
    with pytest.raises(ClientError) as excinfo:
        ddb.describe_table(TableName=table_name)
    assert error_of(excinfo)[0] == "ResourceNotFoundException"


def test_warm_throughput_below_the_start_is_refused(ddb: Any, table_name: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        create_table(ddb, table_name, WarmThroughput={"WriteUnitsPerSecond": 100})
    assert error_of(excinfo) == ("ValidationException", (
        f"{INVALID}Requested WriteUnitsPerSecond for WarmThroughput for table is lower than the current value "
        "4000; warm throughput can only be increased"))


def test_describe_limits(ddb: Any) -> None:
    limits = ddb.describe_limits()
    del limits["ResponseMetadata"]
    assert limits == {
        "AccountMaxReadCapacityUnits": 80000, "AccountMaxWriteCapacityUnits": 80000,
        "TableMaxReadCapacityUnits": 40000, "TableMaxWriteCapacityUnits": 40000,
    }


def test_describe_endpoints_names_the_address_the_client_used(ddb: Any, endpoint: str) -> None:
    endpoints = ddb.describe_endpoints()["Endpoints"]
    assert endpoints == [{"Address": urlparse(endpoint).netloc, "CachePeriodInMinutes": 1440}]


def test_describe_limits_through_the_aws_cli(endpoint: str) -> None:
    cli = Path(sys.executable).with_name("aws")
    out = subprocess.run([str(cli), "dynamodb", "describe-limits", "--endpoint-url", endpoint, "--output", "json"],
                         capture_output=True, text=True, timeout=60, check=True).stdout
    assert json.loads(out)["TableMaxReadCapacityUnits"] == 40000


def test_continuous_backups_round_trip(ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name)
    # A new table: continuous backups DISABLED, and the PITR part holds nothing else (observed on DynamoDB).
    assert ddb.describe_continuous_backups(TableName=table_name)["ContinuousBackupsDescription"] == {
        "ContinuousBackupsStatus": "DISABLED",
        "PointInTimeRecoveryDescription": {"PointInTimeRecoveryStatus": "DISABLED"},
    }
    before = time.time()
    answer = ddb.update_continuous_backups(
        TableName=table_name, PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})
    assert answer["ContinuousBackupsDescription"]["ContinuousBackupsStatus"] == "ENABLED"
    pitr = answer["ContinuousBackupsDescription"]["PointInTimeRecoveryDescription"]
    assert pitr["PointInTimeRecoveryStatus"] == "ENABLED"
    assert pitr["RecoveryPeriodInDays"] == 35
    earliest = pitr["EarliestRestorableDateTime"].timestamp()
    assert before - 1 <= earliest <= time.time() + 1
    assert pitr["LatestRestorableDateTime"].timestamp() >= earliest
    ddb.update_continuous_backups(
        TableName=table_name,
        PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True, "RecoveryPeriodInDays": 7})
    described = ddb.describe_continuous_backups(TableName=table_name)["ContinuousBackupsDescription"]
    assert described["ContinuousBackupsStatus"] == "ENABLED"
    assert described["PointInTimeRecoveryDescription"]["RecoveryPeriodInDays"] == 7
    assert described["PointInTimeRecoveryDescription"]["EarliestRestorableDateTime"].timestamp() == earliest
    ddb.update_continuous_backups(
        TableName=table_name, PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": False})
    assert ddb.describe_continuous_backups(TableName=table_name)["ContinuousBackupsDescription"] == {
        "ContinuousBackupsStatus": "DISABLED",
        "PointInTimeRecoveryDescription": {"PointInTimeRecoveryStatus": "DISABLED"},
    }


def test_continuous_backups_of_a_missing_table(ddb: Any, table_name: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        ddb.describe_continuous_backups(TableName=table_name)
    assert error_of(excinfo) == ("TableNotFoundException", f"Table not found: {table_name}")
    with pytest.raises(ClientError) as excinfo:
        ddb.update_continuous_backups(
            TableName=table_name, PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})
    assert error_of(excinfo) == ("TableNotFoundException", f"Table not found: {table_name}")


def test_recovery_period_out_of_range_is_a_shape_error(ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name)
    with pytest.raises(ClientError) as excinfo:
        ddb.update_continuous_backups(
            TableName=table_name,
            PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True, "RecoveryPeriodInDays": 36})
    code, message = error_of(excinfo)
    assert code == "ValidationException"
    assert "recoveryPeriodInDays" in message or "RecoveryPeriodInDays" in message


def test_backup_flag_survives_a_restart(start_server: Any, tmp_path: Path) -> None:
    store = durable_store(tmp_path)
    server = start_server(*store)
    ddb = client_for(server.url)
    create_table(ddb, "kept")
    ddb.update_continuous_backups(
        TableName="kept", PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True,
                                                            "RecoveryPeriodInDays": 3})
    server.kill()
    ddb = client_for(start_server(*store).url)
    pitr = ddb.describe_continuous_backups(TableName="kept")["ContinuousBackupsDescription"][
        "PointInTimeRecoveryDescription"]
    assert (pitr["PointInTimeRecoveryStatus"], pitr["RecoveryPeriodInDays"]) == ("ENABLED", 3)


def test_delete_table_answer_leaves_out_schema_and_indexes(ddb: Any, table_name: str) -> None:
    create_with_gsi(ddb, table_name, BillingMode="PAY_PER_REQUEST", GlobalSecondaryIndexes=[gsi("by-g")])
    deleted = ddb.delete_table(TableName=table_name)["TableDescription"]
    assert deleted["TableStatus"] == "DELETING"
    assert deleted["TableName"] == table_name
    for member in ("TableArn", "TableId", "BillingModeSummary", "ProvisionedThroughput", "ItemCount",
                   "TableSizeBytes"):
        assert member in deleted
    for member in ("KeySchema", "AttributeDefinitions", "CreationDateTime", "GlobalSecondaryIndexes",
                   "LocalSecondaryIndexes"):
        assert member not in deleted
