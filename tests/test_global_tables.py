"""Global tables version 2019.11.21: UpdateTable ReplicaUpdates, replica phases, DescribeTable in every region.

The server's replica phases last a minute of server clock (`--replica-phase-ms
60000`) and replication a minute too, so every state is seen and tests move
on by advancing the clock and settling (never by sleeping). Messages are
DynamoDB's as recorded by the ack-api-quirks lab (docs/decisions.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import Server, error_of
from region_helpers import REGIONS, client, clients, key_table, launch_regions, replicas, settle

PHASE = 60.0
NEW_AND_OLD = {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
WARM = {"ReadUnitsPerSecond": 12000, "WriteUnitsPerSecond": 4000, "Status": "ACTIVE"}


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = launch_regions(tmp_path_factory.mktemp("gt"), "--replica-phase-ms", "60000",
                            "--replication-lag-ms", "60000")
    yield server
    server.stop()


@pytest.fixture
def ddbs(srv: Server) -> dict[str, Any]:
    return clients(srv.url)


def _entry(region: str, status: str) -> dict[str, Any]:
    return {"RegionName": region, "ReplicaStatus": status, "WarmThroughput": WARM,
            "GlobalTableSettingsReplicationMode": "ENABLED_WITH_OVERRIDES"}


def _refused(call: Any, **request: Any) -> tuple[str, str]:
    with pytest.raises(Exception) as excinfo:
        call(**request)
    return error_of(excinfo)


def _global(srv: Server, ddbs: dict[str, Any], name: str, *regions: str) -> None:
    """`name` in us-east-1 with replicas in `regions`, all ACTIVE."""
    us = ddbs["us-east-1"]
    if name not in us.list_tables()["TableNames"]:
        key_table(us, name)
    for region in regions:
        us.update_table(TableName=name, ReplicaUpdates=[{"Create": {"RegionName": region}}])
        settle(srv.url, PHASE + 1)


def test_creating_a_replica_copies_the_table_and_moves_through_its_phases(
    srv: Server, ddbs: dict[str, Any], table_name: str
) -> None:
    us, eu = ddbs["us-east-1"], ddbs["eu-west-1"]
    key_table(us, table_name, GlobalSecondaryIndexes=[{
        "IndexName": "by-pk", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "Projection": {"ProjectionType": "ALL"}}])
    for i in range(3):
        us.put_item(TableName=table_name, Item={"pk": {"S": f"k{i}"}, "n": {"N": str(i)}})
    before = us.describe_table(TableName=table_name)["Table"]
    assert not {"Replicas", "GlobalTableVersion", "StreamSpecification"} & set(before)

    answer = us.update_table(TableName=table_name, ReplicaUpdates=[{"Create": {"RegionName": "eu-west-1"}}])[
        "TableDescription"]
    # The answer: UPDATING, the version, no replica yet, and a stream DynamoDB enabled itself.
    assert answer["TableStatus"] == "UPDATING"
    assert answer["GlobalTableVersion"] == "2019.11.21"
    assert answer["Replicas"] == []
    assert answer["StreamSpecification"] == NEW_AND_OLD
    assert answer["LatestStreamArn"].startswith(f"arn:aws:dynamodb:us-east-1:000000000000:table/{table_name}/stream/")

    settle(srv.url)  # the copy runs; the phase has not passed
    table = us.describe_table(TableName=table_name)["Table"]
    assert table["TableStatus"] == "UPDATING"
    assert table["Replicas"] == [{**_entry("eu-west-1", "CREATING"), "ReplicaStatusPercentProgress": "100"}]
    assert table["GlobalTableSettingsReplicationMode"] == "ENABLED_WITH_OVERRIDES"
    replica = eu.describe_table(TableName=table_name)["Table"]
    assert replica["TableStatus"] == "CREATING"
    assert replica["Replicas"] == [_entry("us-east-1", "ACTIVE")]
    assert replica["TableArn"] == f"arn:aws:dynamodb:eu-west-1:000000000000:table/{table_name}"
    assert replica["TableId"] != table["TableId"]
    assert replica["StreamSpecification"] == NEW_AND_OLD
    assert replica["LatestStreamArn"].startswith(f"arn:aws:dynamodb:eu-west-1:000000000000:table/{table_name}/stream/")
    assert replica["GlobalSecondaryIndexes"][0]["IndexArn"] == (
        f"arn:aws:dynamodb:eu-west-1:000000000000:table/{table_name}/index/by-pk")
    # Until it is ACTIVE the replica is not there for data operations in its region (DynamoDB's
    # ResourceNotFoundException: "... or its status might not be ACTIVE").
    key = {"pk": {"S": "k1"}}
    for call, request in (
        (eu.get_item, {"Key": key}),
        (eu.put_item, {"Item": {"pk": {"S": "new"}}}),
        (eu.update_item, {"Key": key, "UpdateExpression": "SET n = :n", "ExpressionAttributeValues": {":n": {"N": "9"}}}),
        (eu.delete_item, {"Key": key}),
        (eu.scan, {}),
        (eu.query, {"KeyConditionExpression": "pk = :k", "ExpressionAttributeValues": {":k": {"S": "k1"}}}),
    ):
        assert _refused(call, TableName=table_name, **request) == (
            "ResourceNotFoundException", "Requested resource not found"), call
    assert _refused(eu.batch_get_item, RequestItems={table_name: {"Keys": [key]}}) == (
        "ResourceNotFoundException", "Requested resource not found")

    settle(srv.url, PHASE + 1)
    table = us.describe_table(TableName=table_name)["Table"]
    assert (table["TableStatus"], table["Replicas"]) == ("ACTIVE", [_entry("eu-west-1", "ACTIVE")])
    replica = eu.describe_table(TableName=table_name)["Table"]
    assert (replica["TableStatus"], replica["Replicas"]) == ("ACTIVE", [_entry("us-east-1", "ACTIVE")])
    assert replica["GlobalTableVersion"] == "2019.11.21"
    items = eu.scan(TableName=table_name, ConsistentRead=True)["Items"]
    assert sorted((i["pk"]["S"], i["n"]["N"]) for i in items) == [("k0", "0"), ("k1", "1"), ("k2", "2")]
    index = eu.query(TableName=table_name, IndexName="by-pk", KeyConditionExpression="pk = :k",
                     ExpressionAttributeValues={":k": {"S": "k1"}})["Items"]
    assert index == [{"pk": {"S": "k1"}, "n": {"N": "1"}}]
    # Regional settings do not travel: the replica has no tags and no deletion protection of its own.
    assert eu.list_tags_of_resource(ResourceArn=replica["TableArn"])["Tags"] == []


def test_deleting_a_replica_removes_only_that_regions_copy(srv: Server, ddbs: dict[str, Any], table_name: str) -> None:
    us, eu = ddbs["us-east-1"], ddbs["eu-west-1"]
    _global(srv, ddbs, table_name, "eu-west-1")
    us.put_item(TableName=table_name, Item={"pk": {"S": "kept"}})
    answer = us.update_table(TableName=table_name, ReplicaUpdates=[{"Delete": {"RegionName": "eu-west-1"}}])[
        "TableDescription"]
    assert (answer["TableStatus"], answer["Replicas"]) == ("UPDATING", [_entry("eu-west-1", "ACTIVE")])
    assert replicas(us, table_name) == [("eu-west-1", "ACTIVE")]
    assert eu.describe_table(TableName=table_name)["Table"]["TableStatus"] == "UPDATING"
    settle(srv.url, PHASE + 1)
    table = us.describe_table(TableName=table_name)["Table"]
    assert (table["TableStatus"], table["Replicas"]) == ("ACTIVE", [_entry("eu-west-1", "DELETING")])
    replica = eu.describe_table(TableName=table_name)["Table"]
    assert replica["TableStatus"] == "DELETING"
    assert not {"Replicas", "GlobalTableVersion", "GlobalTableSettingsReplicationMode"} & set(replica)
    settle(srv.url, PHASE + 1)
    table = us.describe_table(TableName=table_name)["Table"]
    assert table["TableStatus"] == "ACTIVE"
    assert not {"Replicas", "GlobalTableVersion", "GlobalTableSettingsReplicationMode"} & set(table)
    assert table["StreamSpecification"] == NEW_AND_OLD  # the stream DynamoDB enabled stays
    with pytest.raises(Exception) as excinfo:
        eu.describe_table(TableName=table_name)
    assert error_of(excinfo) == ("ResourceNotFoundException",
                                 f"Requested resource not found: Table: {table_name} not found")
    assert us.get_item(TableName=table_name, Key={"pk": {"S": "kept"}})["Item"] == {"pk": {"S": "kept"}}
    # The region may hold a replica again.
    us.update_table(TableName=table_name, ReplicaUpdates=[{"Create": {"RegionName": "eu-west-1"}}])
    settle(srv.url, PHASE + 1)
    assert eu.get_item(TableName=table_name, Key={"pk": {"S": "kept"}})["Item"] == {"pk": {"S": "kept"}}


def test_delete_table_in_a_replica_region_leaves_the_group(srv: Server, ddbs: dict[str, Any], table_name: str) -> None:
    us, eu = ddbs["us-east-1"], ddbs["eu-west-1"]
    _global(srv, ddbs, table_name, "eu-west-1")
    answer = eu.delete_table(TableName=table_name)["TableDescription"]
    assert (answer["TableStatus"], answer["Replicas"]) == ("DELETING", [_entry("us-east-1", "ACTIVE")])
    assert us.describe_table(TableName=table_name)["Table"]["TableStatus"] == "UPDATING"
    assert _refused(eu.delete_table, TableName=table_name) == (
        "ResourceInUseException", "The resource which you are attempting to change is in use.")
    settle(srv.url, PHASE + 1)
    assert replicas(us, table_name) == [("eu-west-1", "DELETING")]
    settle(srv.url, PHASE + 1)
    assert replicas(us, table_name) == []
    assert table_name not in eu.list_tables()["TableNames"]


def test_three_regions_list_each_other_in_joining_order(srv: Server, ddbs: dict[str, Any], table_name: str) -> None:
    us, eu, ap = (ddbs[r] for r in REGIONS)
    _global(srv, ddbs, table_name, "eu-west-1")
    eu.update_table(TableName=table_name, ReplicaUpdates=[{"Create": {"RegionName": "ap-south-1"}}])
    settle(srv.url, PHASE + 1)
    assert replicas(us, table_name) == [("eu-west-1", "ACTIVE"), ("ap-south-1", "ACTIVE")]
    assert replicas(eu, table_name) == [("us-east-1", "ACTIVE"), ("ap-south-1", "ACTIVE")]
    assert replicas(ap, table_name) == [("us-east-1", "ACTIVE"), ("eu-west-1", "ACTIVE")]
    # eu-west-1 created ap-south-1 less than 24 hours ago: it cannot leave, nor can us-east-1 (eu's source).
    recent = ("ValidationException", "Replica cannot be deleted because it has acted as a source region for new "
              "replica(s) being added to the table in the last 24 hours.")
    assert _refused(ap.update_table, TableName=table_name, ReplicaUpdates=[{"Delete": {"RegionName": "eu-west-1"}}]) \
        == recent
    assert _refused(us.delete_table, TableName=table_name) == recent
    ap.delete_table(TableName=table_name)
    settle(srv.url, PHASE + 1)
    settle(srv.url, PHASE + 1)
    assert replicas(us, table_name) == [("eu-west-1", "ACTIVE")]


REPLICA_ERRORS = [
    ([{"Create": {"RegionName": "us-east-1"}}], "ValidationException",
     "Cannot add or delete the local region through ReplicaUpdates. Use CreateTable, DeleteTable, or UpdateTable as "
     "required."),
    ([{"Delete": {"RegionName": "us-east-1"}}], "ValidationException",
     "Cannot add or delete the local region through ReplicaUpdates. Use CreateTable, DeleteTable, or UpdateTable as "
     "required."),
    ([{"Create": {"RegionName": "sa-east-1"}}], "ValidationException",
     "Failed to access the region: \u2018sa-east-1\u2019. User is missing the permissions since the region is "
     "disabled."),
    ([{"Create": {"RegionName": "EU-WEST-1"}}], "ValidationException",
     "Region EU-WEST-1 is not supported. The latest version of global tables are only supported in the following "
     "regions: [ap-south-1, eu-west-1, us-east-1]."),
    ([{"Delete": {"RegionName": "ap-south-1"}}], "ValidationException",
     "Update global table operation failed because one or more replicas were not part of the global table. Please "
     "retry the request without these replicas: [ap-south-1]."),
    ([{"Update": {"RegionName": "ap-south-1", "TableClassOverride": "STANDARD"}}], "ValidationException",
     "Update global table operation failed because one or more replicas were not part of the global table. Please "
     "retry the request without these replicas: [ap-south-1]."),
    ([{"Update": {"RegionName": "eu-west-1"}}], "ValidationException",
     "There are no actions specified in the Replica Update Action of the request."),
    ([{}], "ValidationException", "There are no actions specified in the Replica Update Action of the request."),
    ([{"Create": {"RegionName": "ap-south-1"}, "Delete": {"RegionName": "eu-west-1"}}], "ValidationException",
     "Update table operation with more than one type of replica actions not allowed."),
    ([{"Create": {"RegionName": "ap-south-1"}}, {"Create": {"RegionName": "sa-east-1"}}], "ValidationException",
     "Update table operation with more than one create or delete replica actions not allowed"),
    ([{"Create": {"RegionName": "eu-west-1"}}], "ValidationException",
     "Failed to create a the new replica of table with name: \u2018{name}\u2019 because one or more replicas "
     "already existed as tables."),
    ([{"Update": {"RegionName": "eu-west-1", "KMSMasterKeyId": "alias/aws/dynamodb"}}], "ValidationException",
     "One or more parameter values were invalid: KMSMasterKeyId must be specified for each replica."),
    # Multi-account disassociation: refused by name (Partita's own text, docs/decisions.md).
    ([{"Disassociate": {"RegionName": "us-east-1", "DisassociationMode": "WAIT_FOR_REPLICATION"}}],
     "ValidationException",
     "Disassociate is not supported: Partita does not implement disassociating replicas (multi-account global "
     "tables) yet"),
    ([{"Update": {"RegionName": "eu-west-1", "ProvisionedThroughputOverride": {"ReadCapacityUnits": 5}}}],
     "ValidationException",
     "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST"),
]


@pytest.mark.parametrize("updates, code, message", REPLICA_ERRORS)
def test_replica_update_errors(srv: Server, ddbs: dict[str, Any], updates: list[dict[str, Any]], code: str,
                               message: str) -> None:
    name = "replica-errors"
    us = ddbs["us-east-1"]
    if name not in us.list_tables()["TableNames"]:
        _global(srv, ddbs, name, "eu-west-1")
    before = us.describe_table(TableName=name)["Table"]
    assert _refused(us.update_table, TableName=name, ReplicaUpdates=updates) == (code, message.replace("{name}", name))
    assert us.describe_table(TableName=name)["Table"] == before


def test_replica_updates_must_be_the_only_change(srv: Server, ddbs: dict[str, Any], table_name: str) -> None:
    us = ddbs["us-east-1"]
    key_table(us, table_name)
    assert _refused(us.update_table, TableName=table_name, DeletionProtectionEnabled=True,
                    ReplicaUpdates=[{"Create": {"RegionName": "eu-west-1"}}]) == (
        "ValidationException",
        "One or more parameter values were invalid: Replica modification must be the only operation in the request")
    # Checked before the table is looked up.
    assert _refused(us.update_table, TableName="no-such-table", BillingMode="PAY_PER_REQUEST",
                    ReplicaUpdates=[{"Create": {"RegionName": "eu-west-1"}}])[1].endswith(
        "Replica modification must be the only operation in the request")
    assert _refused(us.update_table, TableName="no-such-table",
                    ReplicaUpdates=[{"Create": {"RegionName": "eu-west-1"}}]) == (
        "ResourceNotFoundException", "Requested resource not found: Table: no-such-table not found")


def test_two_identical_creates_make_one_replica(srv: Server, ddbs: dict[str, Any], table_name: str) -> None:
    us = ddbs["us-east-1"]
    key_table(us, table_name)
    us.update_table(TableName=table_name, ReplicaUpdates=[{"Create": {"RegionName": "ap-south-1"}}] * 2)
    settle(srv.url, PHASE + 1)
    assert replicas(us, table_name) == [("ap-south-1", "ACTIVE")]


def test_a_foreign_table_of_the_same_name_blocks_a_replica(srv: Server, ddbs: dict[str, Any], table_name: str) -> None:
    key_table(ddbs["us-east-1"], table_name)
    key_table(ddbs["ap-south-1"], table_name)
    assert _refused(ddbs["us-east-1"].update_table, TableName=table_name,
                    ReplicaUpdates=[{"Create": {"RegionName": "ap-south-1"}}]) == (
        "ValidationException", f"Failed to create a the new replica of table with name: \u2018{table_name}\u2019 "
        "because one or more replicas already existed as tables.")


def test_a_provisioned_table_needs_auto_scaling(srv: Server, ddbs: dict[str, Any], table_name: str) -> None:
    us = ddbs["us-east-1"]
    key_table(us, table_name, BillingMode="PROVISIONED",
              ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1})
    assert _refused(us.update_table, TableName=table_name, ReplicaUpdates=[{"Create": {"RegionName": "eu-west-1"}}]) \
        == ("ValidationException", "Table write capacity should either be Pay-Per-Request or AutoScaled.")


def test_a_change_under_way_holds_off_others(srv: Server, ddbs: dict[str, Any], table_name: str) -> None:
    us, eu = ddbs["us-east-1"], ddbs["eu-west-1"]
    key_table(us, table_name)
    us.update_table(TableName=table_name, ReplicaUpdates=[{"Create": {"RegionName": "eu-west-1"}}])
    in_use = ("ResourceInUseException", "The resource which you are attempting to change is in use.")
    assert _refused(us.update_table, TableName=table_name, ReplicaUpdates=[{"Create": {"RegionName": "ap-south-1"}}]) \
        == in_use
    assert _refused(us.update_table, TableName=table_name, DeletionProtectionEnabled=True) == in_use
    # Tags and TTL are admitted meanwhile; TTL reaches every replica.
    arn = us.describe_table(TableName=table_name)["Table"]["TableArn"]
    us.tag_resource(ResourceArn=arn, Tags=[{"Key": "team", "Value": "a"}])
    us.update_time_to_live(TableName=table_name, TimeToLiveSpecification={"Enabled": True, "AttributeName": "exp"})
    settle(srv.url, PHASE + 1)
    assert eu.describe_time_to_live(TableName=table_name)["TimeToLiveDescription"] == {
        "TimeToLiveStatus": "ENABLED", "AttributeName": "exp"}
    assert eu.list_tags_of_resource(
        ResourceArn=f"arn:aws:dynamodb:eu-west-1:000000000000:table/{table_name}")["Tags"] == []


def test_the_stream_of_a_replica_stays_enabled(srv: Server, ddbs: dict[str, Any], table_name: str) -> None:
    _global(srv, ddbs, table_name, "eu-west-1")
    for region in ("us-east-1", "eu-west-1"):
        assert _refused(ddbs[region].update_table, TableName=table_name, StreamSpecification={"StreamEnabled": False}) \
            == ("ValidationException",
                "One or more parameter values were invalid: Disabling Stream is not allowed for a Global Table replica.")
        assert _refused(ddbs[region].update_table, TableName=table_name, StreamSpecification=NEW_AND_OLD) == (
            "ValidationException", f"Table already has an enabled stream: TableName: {table_name}")


def test_deletion_protection_is_regional_and_guards_the_replica(
    srv: Server, ddbs: dict[str, Any], table_name: str
) -> None:
    us, eu = ddbs["us-east-1"], ddbs["eu-west-1"]
    _global(srv, ddbs, table_name, "eu-west-1")
    eu.update_table(TableName=table_name, DeletionProtectionEnabled=True)
    assert us.describe_table(TableName=table_name)["Table"]["DeletionProtectionEnabled"] is False
    protected = ("ValidationException", f"Cannot delete table {table_name} in region eu-west-1 because it has deletion "
                 "protection enabled. Disable deletion protection first.")
    assert _refused(us.update_table, TableName=table_name, ReplicaUpdates=[{"Delete": {"RegionName": "eu-west-1"}}]) \
        == protected
    assert _refused(eu.delete_table, TableName=table_name) == protected


def test_indexes_and_billing_are_the_groups(srv: Server, ddbs: dict[str, Any], table_name: str) -> None:
    us, eu = ddbs["us-east-1"], ddbs["eu-west-1"]
    _global(srv, ddbs, table_name, "eu-west-1")
    eu.update_table(TableName=table_name, AttributeDefinitions=[{"AttributeName": "g", "AttributeType": "S"}],
                    GlobalSecondaryIndexUpdates=[{"Create": {
                        "IndexName": "by-g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                        "Projection": {"ProjectionType": "KEYS_ONLY"}}}])
    assert [i["IndexName"] for i in us.describe_table(TableName=table_name)["Table"]["GlobalSecondaryIndexes"]] == [
        "by-g"]


def test_a_one_region_server_has_nowhere_to_replicate(ddb: Any, table_name: str) -> None:
    """The shared server of the suite serves us-east-1 alone."""
    key_table(ddb, table_name)
    assert _refused(ddb.update_table, TableName=table_name, ReplicaUpdates=[{"Create": {"RegionName": "us-west-2"}}]) \
        == ("ValidationException", "Failed to access the region: \u2018us-west-2\u2019. User is missing the "
            "permissions since the region is disabled.")
    assert "Replicas" not in ddb.describe_table(TableName=table_name)["Table"]


def test_with_auth_each_region_is_authorized_on_its_own_arns(tmp_path: Path) -> None:
    """A replica is reached with the replica region's ARN: policies name regions (unchanged by replication)."""
    srv = launch_regions(tmp_path / "store", "--replica-phase-ms", "0", "--replication-lag-ms", "0")
    try:
        us, eu = client(srv.url, "us-east-1"), client(srv.url, "eu-west-1")
        key_table(us, "authz")
        us.update_table(TableName="authz", ReplicaUpdates=[{"Create": {"RegionName": "eu-west-1"}}])
        settle(srv.url)
        us.put_item(TableName="authz", Item={"pk": {"S": "a"}})
        assert eu.get_item(TableName="authz", Key={"pk": {"S": "a"}})["Item"] == {"pk": {"S": "a"}}
    finally:
        srv.stop()
