"""On-demand backups: CreateBackup, DescribeBackup, ListBackups, DeleteBackup, RestoreTableFromBackup."""

from __future__ import annotations

from typing import Any

import pytest
from backup_helpers import contents, every_type_item, indexed_table, wait_active, wait_backup
from botocore.exceptions import ClientError
from conftest import create_table, error_of


def test_backup_and_restore_equal_the_table_at_backup_time(ddb: Any, table_name: str) -> None:
    indexed_table(ddb, table_name)
    for i in range(60):
        ddb.put_item(TableName=table_name, Item=every_type_item(i))
    before = contents(ddb, table_name)
    details = ddb.create_backup(TableName=table_name, BackupName="first")["BackupDetails"]
    assert details["BackupName"] == "first" and details["BackupType"] == "USER"
    assert details["BackupStatus"] in ("CREATING", "AVAILABLE")
    assert details["BackupArn"].startswith(f"arn:aws:dynamodb:us-east-1:000000000000:table/{table_name}/backup/")
    # Writes after the backup's instant are not in it.
    ddb.put_item(TableName=table_name, Item=every_type_item(1000))
    ddb.delete_item(TableName=table_name, Key={"pk": {"S": "p1"}, "sk": {"N": "1"}})
    ddb.update_item(TableName=table_name, Key={"pk": {"S": "p2"}, "sk": {"N": "2"}},
                    UpdateExpression="SET g = :g", ExpressionAttributeValues={":g": {"S": "changed"}})
    doc = wait_backup(ddb, details["BackupArn"])
    source = doc["SourceTableDetails"]
    assert source["TableName"] == table_name and source["ItemCount"] == 60
    assert doc["BackupDetails"]["BackupSizeBytes"] == source["TableSizeBytes"] > 0
    features = doc["SourceTableFeatureDetails"]
    assert [i["IndexName"] for i in features["GlobalSecondaryIndexes"]] == ["by-g"]
    assert [i["IndexName"] for i in features["LocalSecondaryIndexes"]] == ["by-l"]

    restored = table_name + "-r"
    out = ddb.restore_table_from_backup(TargetTableName=restored, BackupArn=details["BackupArn"])["TableDescription"]
    assert out["TableName"] == restored
    assert out["RestoreSummary"]["SourceBackupArn"] == details["BackupArn"]
    assert out["RestoreSummary"]["RestoreInProgress"] is True
    table = wait_active(ddb, restored)
    assert table["RestoreSummary"]["RestoreInProgress"] is False
    assert table["RestoreSummary"]["SourceTableArn"] == source["TableArn"]
    assert contents(ddb, restored) == before
    assert table["ItemCount"] == 60


def test_backup_survives_delete_table(ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name)
    for i in range(20):
        ddb.put_item(TableName=table_name, Item={"pk": {"S": f"k{i}"}, "v": {"N": str(i)}})
    arn = ddb.create_backup(TableName=table_name, BackupName="keep")["BackupDetails"]["BackupArn"]
    ddb.delete_table(TableName=table_name)  # even while the backup may still be CREATING
    doc = wait_backup(ddb, arn)
    assert doc["SourceTableDetails"]["ItemCount"] == 20
    ddb.restore_table_from_backup(TargetTableName=table_name, BackupArn=arn)
    wait_active(ddb, table_name)
    assert ddb.scan(TableName=table_name, Select="COUNT")["Count"] == 20


def test_list_backups_filters_and_pages(ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name)
    other = table_name + "-other"
    create_table(ddb, other)
    arns = [ddb.create_backup(TableName=table_name, BackupName=f"bk-{i}")["BackupDetails"]["BackupArn"] for i in range(3)]
    ddb.create_backup(TableName=other, BackupName="other")
    listed = ddb.list_backups(TableName=table_name)["BackupSummaries"]
    assert [b["BackupArn"] for b in listed] == arns
    assert {b["TableName"] for b in listed} == {table_name}
    page = ddb.list_backups(TableName=table_name, Limit=2)
    assert [b["BackupArn"] for b in page["BackupSummaries"]] == arns[:2]
    assert page["LastEvaluatedBackupArn"] == arns[1]
    rest = ddb.list_backups(TableName=table_name, ExclusiveStartBackupArn=page["LastEvaluatedBackupArn"])
    assert [b["BackupArn"] for b in rest["BackupSummaries"]] == arns[2:]
    assert "LastEvaluatedBackupArn" not in rest
    assert ddb.list_backups(TableName=table_name, BackupType="SYSTEM")["BackupSummaries"] == []
    created = listed[0]["BackupCreationDateTime"]
    later = ddb.list_backups(TableName=table_name, TimeRangeLowerBound=created)["BackupSummaries"]
    assert len(later) == 3
    assert ddb.list_backups(TableName=table_name, TimeRangeUpperBound=created)["BackupSummaries"] == []


def test_delete_backup(ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name)
    arn = ddb.create_backup(TableName=table_name, BackupName="gone")["BackupDetails"]["BackupArn"]
    wait_backup(ddb, arn)
    doc = ddb.delete_backup(BackupArn=arn)["BackupDescription"]
    assert doc["BackupDetails"]["BackupStatus"] == "DELETED"
    with pytest.raises(ClientError) as excinfo:
        ddb.describe_backup(BackupArn=arn)
    assert error_of(excinfo) == ("BackupNotFoundException", f"Backup not found: {arn}")
    with pytest.raises(ClientError) as excinfo:
        ddb.delete_backup(BackupArn=arn)
    assert error_of(excinfo) == ("BackupNotFoundException", f"Backup not found: {arn}")


def test_backup_errors(ddb: Any, table_name: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        ddb.create_backup(TableName=table_name, BackupName="xxx")
    assert error_of(excinfo) == ("TableNotFoundException", f"Table not found: {table_name}")
    missing = f"arn:aws:dynamodb:us-east-1:000000000000:table/{table_name}/backup/01234567890123-abcdef01"
    with pytest.raises(ClientError) as excinfo:
        ddb.restore_table_from_backup(TargetTableName=table_name, BackupArn=missing)
    assert error_of(excinfo) == ("BackupNotFoundException", f"Backup not found: {missing}")
    create_table(ddb, table_name)
    arn = ddb.create_backup(TableName=table_name, BackupName="xxx")["BackupDetails"]["BackupArn"]
    wait_backup(ddb, arn)
    with pytest.raises(ClientError) as excinfo:
        ddb.restore_table_from_backup(TargetTableName=table_name, BackupArn=arn)
    assert error_of(excinfo) == ("TableAlreadyExistsException", f"Table already exists: {table_name}")
    # A bad override is judged as CreateTable judges it, and creates nothing.
    with pytest.raises(ClientError) as excinfo:
        ddb.restore_table_from_backup(TargetTableName=table_name + "-p", BackupArn=arn,
                                      BillingModeOverride="PROVISIONED")
    assert error_of(excinfo)[0] == "ValidationException"
    with pytest.raises(ClientError) as excinfo:
        ddb.describe_table(TableName=table_name + "-p")
    assert error_of(excinfo)[0] == "ResourceNotFoundException"


def test_restore_overrides(ddb: Any, table_name: str) -> None:
    indexed_table(ddb, table_name)
    for i in range(10):
        ddb.put_item(TableName=table_name, Item=every_type_item(i))
    arn = ddb.create_backup(TableName=table_name, BackupName="other")["BackupDetails"]["BackupArn"]
    wait_backup(ddb, arn)
    restored = table_name + "-o"
    ddb.restore_table_from_backup(
        TargetTableName=restored, BackupArn=arn, BillingModeOverride="PROVISIONED",
        ProvisionedThroughputOverride={"ReadCapacityUnits": 5, "WriteCapacityUnits": 6},
        GlobalSecondaryIndexOverride=[], LocalSecondaryIndexOverride=[],
        SSESpecificationOverride={"Enabled": True, "SSEType": "KMS"},
    )
    table = wait_active(ddb, restored)
    assert table["BillingModeSummary"]["BillingMode"] == "PROVISIONED"
    assert table["ProvisionedThroughput"]["ReadCapacityUnits"] == 5
    assert "GlobalSecondaryIndexes" not in table and "LocalSecondaryIndexes" not in table
    assert table["SSEDescription"]["Status"] == "ENABLED"
    assert table["ItemCount"] == 10
