"""Version 2017.11.29 (legacy) and replica auto scaling, as DynamoDB answers them in 2026.

Recorded against the service by the ack-api-quirks lab (DDB-GLOBALTABLE-001
to 004, DDB-TABLE-187/190/232/254; docs/decisions.md): no legacy global table
can be created any more, so none is ever found or listed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from conftest import Server, error_of
from region_helpers import clients, key_table, launch_regions, settle

LEGACY = ("ValidationException",
          "One or more parameter values were invalid: DynamoDB global tables version 2017.11.29 is not supported. "
          "We recommend using DynamoDB global tables version 2019.11.21, instead of version 2017.11.29 (Legacy).")
DISABLED = {"AutoScalingDisabled": True, "ScalingPolicies": []}


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = launch_regions(tmp_path_factory.mktemp("legacy"), "--replica-phase-ms", "0")
    yield server
    server.stop()


def _refused(call: Any, **request: Any) -> tuple[str, str]:
    with pytest.raises(Exception) as excinfo:
        call(**request)
    return error_of(excinfo)


@pytest.mark.parametrize("kind", ["missing", "regional", "2019.11.21"])
def test_no_legacy_global_table_exists(srv: Server, table_name: str, kind: str) -> None:
    ddbs = clients(srv.url)
    us = ddbs["us-east-1"]
    if kind != "missing":
        key_table(us, table_name, StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"})
        key_table(ddbs["eu-west-1"], table_name,
                  StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"})
    if kind == "2019.11.21":
        ddbs["eu-west-1"].delete_table(TableName=table_name)
        us.update_table(TableName=table_name, ReplicaUpdates=[{"Create": {"RegionName": "eu-west-1"}}])
        settle(srv.url)
    assert _refused(us.create_global_table, GlobalTableName=table_name,
                    ReplicationGroup=[{"RegionName": "us-east-1"}, {"RegionName": "eu-west-1"}]) == LEGACY
    assert _refused(us.update_global_table, GlobalTableName=table_name,
                    ReplicaUpdates=[{"Create": {"RegionName": "ap-south-1"}}]) == LEGACY
    missing = ("GlobalTableNotFoundException", f"Global table with name: '{table_name}' does not exist.")
    assert _refused(us.describe_global_table, GlobalTableName=table_name) == (
        "GlobalTableNotFoundException", f"Global table not found: Global table with name: '{table_name}' does not exist.")
    assert _refused(us.describe_global_table_settings, GlobalTableName=table_name) == missing
    assert _refused(us.update_global_table_settings, GlobalTableName=table_name,
                    GlobalTableBillingMode="PAY_PER_REQUEST") == missing
    assert _refused(us.update_global_table, GlobalTableName=table_name,
                    ReplicaUpdates=[{"Delete": {"RegionName": "eu-west-1"}}]) == missing
    listed = us.list_global_tables()
    assert (listed["GlobalTables"], "LastEvaluatedGlobalTableName" in listed) == ([], False)


def test_replica_auto_scaling_is_a_global_tables(srv: Server, table_name: str) -> None:
    ddbs = clients(srv.url)
    us = ddbs["us-east-1"]
    key_table(us, table_name)
    missing = ("ResourceNotFoundException", f"Global table with name: '{table_name}' does not exist.")
    assert _refused(us.describe_table_replica_auto_scaling, TableName=table_name) == missing
    us.update_table(TableName=table_name, ReplicaUpdates=[{"Create": {"RegionName": "eu-west-1"}}])
    settle(srv.url)
    described = ddbs["eu-west-1"].describe_table_replica_auto_scaling(TableName=table_name)[
        "TableAutoScalingDescription"]
    assert described == {"TableName": table_name, "TableStatus": "ACTIVE", "Replicas": [
        {"RegionName": region, "GlobalSecondaryIndexes": [], "ReplicaProvisionedReadCapacityAutoScalingSettings":
         DISABLED, "ReplicaProvisionedWriteCapacityAutoScalingSettings": DISABLED, "ReplicaStatus": "ACTIVE"}
        for region in ("eu-west-1", "us-east-1")]}
    assert us.update_table_replica_auto_scaling(
        TableName=table_name, ProvisionedWriteCapacityAutoScalingUpdate={"AutoScalingDisabled": True},
    )["TableAutoScalingDescription"] == described
    assert _refused(us.update_table_replica_auto_scaling, TableName=table_name,
                    ProvisionedWriteCapacityAutoScalingUpdate={"MinimumUnits": 1, "MaximumUnits": 10}) == (
        "ValidationException", f"Failed to update global table with name \u2018{table_name}\u2018. Replicas "
        "'EU-WEST-1', 'US-EAST-1' BillingMode is PayPerRequest. You must convert table's BillingMode to PROVISIONED "
        "to set parameters: 'GlobalTableProvisionedWriteCapacityAutoScalingSettingsUpdate'.")
