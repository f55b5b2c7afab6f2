"""Multi-Region strong consistency (MRSC): born complete in one UpdateTable, written everywhere in one commit.

Messages are DynamoDB's as recorded by the ack-api-quirks lab (docs/decisions.md),
except the three refusals of unsupported features, which are marked unconfirmed
there. The server's replication lag is a minute of server clock: a write another
region made less than that ago is still "being modified in another Region".
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from conftest import Server, error_of
from region_helpers import REGIONS, admin, clients, key_table, launch_regions, replicas, settle

LAG = 60.0
COUNT = ("ValidationException", "Unsupported replica count for global tables with MultiRegionConsistency set to STRONG.")
ONLY_ONE = ("ValidationException", "Deletion of only one table replica is not supported for global tables with "
            "MultiRegionConsistency set to STRONG.")
CONFLICT = ("ReplicatedWriteConflictException", "One or more items in this request are being modified in another "
            "Region.")


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = launch_regions(tmp_path_factory.mktemp("mrsc"), "--replica-phase-ms", "0", "--replication-lag-ms",
                            "60000")
    yield server
    server.stop()


@pytest.fixture
def ddbs(srv: Server) -> dict[str, Any]:
    return clients(srv.url)


def _refused(call: Any, **request: Any) -> tuple[str, str]:
    with pytest.raises(Exception) as excinfo:
        call(**request)
    return error_of(excinfo)


def _strong(srv: Server, ddbs: dict[str, Any], name: str, witness: bool = False) -> dict[str, Any]:
    us = ddbs["us-east-1"]
    key_table(us, name)
    request: dict[str, Any] = {"TableName": name, "MultiRegionConsistency": "STRONG",
                               "ReplicaUpdates": [{"Create": {"RegionName": "eu-west-1"}}]}
    if witness:
        request["GlobalTableWitnessUpdates"] = [{"Create": {"RegionName": "ap-south-1"}}]
    else:
        request["ReplicaUpdates"].append({"Create": {"RegionName": "ap-south-1"}})
    answer: dict[str, Any] = us.update_table(**request)["TableDescription"]
    settle(srv.url)
    return answer


def get(ddb: Any, name: str, key: str) -> dict[str, Any] | None:
    item: dict[str, Any] | None = ddb.get_item(TableName=name, Key={"pk": {"S": key}}, ConsistentRead=True).get("Item")
    return item


def test_three_replicas_in_one_call_and_a_strong_read_anywhere(
    srv: Server, ddbs: dict[str, Any], table_name: str
) -> None:
    answer = _strong(srv, ddbs, table_name)
    assert (answer["TableStatus"], answer["MultiRegionConsistency"], answer["GlobalTableVersion"]) == (
        "UPDATING", "STRONG", "2019.11.21")
    for region in REGIONS:
        table = ddbs[region].describe_table(TableName=table_name)["Table"]
        assert (table["TableStatus"], table["MultiRegionConsistency"]) == ("ACTIVE", "STRONG")
        assert "GlobalTableWitnesses" not in table
        assert replicas(ddbs[region], table_name) == [(r, "ACTIVE") for r in REGIONS if r != region]
    # A write is in every replica when it is acknowledged: no lag, no settle.
    ddbs["eu-west-1"].put_item(TableName=table_name, Item={"pk": {"S": "a"}, "v": {"N": "1"}})
    for region in REGIONS:
        assert get(ddbs[region], table_name, "a") == {"pk": {"S": "a"}, "v": {"N": "1"}}
    ddbs["eu-west-1"].put_item(TableName=table_name, Item={"pk": {"S": "a"}, "v": {"N": "2"}})  # the same region
    assert get(ddbs["ap-south-1"], table_name, "a") == {"pk": {"S": "a"}, "v": {"N": "2"}}


def test_a_write_racing_another_regions_write_is_refused(srv: Server, ddbs: dict[str, Any], table_name: str) -> None:
    _strong(srv, ddbs, table_name)
    us, eu = ddbs["us-east-1"], ddbs["eu-west-1"]
    us.put_item(TableName=table_name, Item={"pk": {"S": "k"}, "v": {"S": "us"}})
    assert _refused(eu.put_item, TableName=table_name, Item={"pk": {"S": "k"}, "v": {"S": "eu"}}) == CONFLICT
    assert _refused(eu.delete_item, TableName=table_name, Key={"pk": {"S": "k"}}) == CONFLICT
    assert get(eu, table_name, "k") == {"pk": {"S": "k"}, "v": {"S": "us"}}
    eu.put_item(TableName=table_name, Item={"pk": {"S": "other"}})  # another item is free
    admin(srv.url, "clock", {"advance_seconds": LAG + 1})
    eu.put_item(TableName=table_name, Item={"pk": {"S": "k"}, "v": {"S": "eu"}})
    assert get(us, table_name, "k") == {"pk": {"S": "k"}, "v": {"S": "eu"}}


def test_a_replica_and_a_witness(srv: Server, ddbs: dict[str, Any], table_name: str) -> None:
    _strong(srv, ddbs, table_name, witness=True)
    us, eu, ap = (ddbs[r] for r in REGIONS)
    table = us.describe_table(TableName=table_name)["Table"]
    assert table["GlobalTableWitnesses"] == [{"RegionName": "ap-south-1", "WitnessStatus": "ACTIVE"}]
    assert replicas(us, table_name) == [("eu-west-1", "ACTIVE")]
    # The witness is no table: its region does not know the name and may create one of its own.
    assert table_name not in ap.list_tables()["TableNames"]
    key_table(ap, table_name)
    # Frozen: replicas are neither added nor removed alone; the witness goes with them.
    assert _refused(us.update_table, TableName=table_name, ReplicaUpdates=[{"Create": {"RegionName": "ap-south-1"}}]) \
        == ("ValidationException", "Cannot add replicas to a global table with strong MultiRegionConsistency")
    assert _refused(us.update_table, TableName=table_name, ReplicaUpdates=[{"Delete": {"RegionName": "eu-west-1"}}]) \
        == ("ValidationException", "Update table delete operation does not include all witnesses.")
    assert _refused(us.update_table, TableName=table_name, MultiRegionConsistency="EVENTUAL",
                    ReplicaUpdates=[{"Create": {"RegionName": "ap-south-1"}}]) == (
        "ValidationException", "MultiRegionConsistency parameter is unsupported on existing global table")
    assert _refused(eu.delete_table, TableName=table_name) == ONLY_ONE
    # Dissolved in one call: the table asked stays, a regional table again.
    answer = us.update_table(TableName=table_name, ReplicaUpdates=[{"Delete": {"RegionName": "eu-west-1"}}],
                             GlobalTableWitnessUpdates=[{"Delete": {"RegionName": "ap-south-1"}}])["TableDescription"]
    assert answer["TableStatus"] == "UPDATING"
    settle(srv.url)
    settle(srv.url)
    table = us.describe_table(TableName=table_name)["Table"]
    assert not {"Replicas", "GlobalTableWitnesses", "MultiRegionConsistency", "GlobalTableVersion"} & set(table)
    assert table_name not in eu.list_tables()["TableNames"]
    assert table_name in ap.list_tables()["TableNames"]  # the user's own table, untouched


def test_three_replicas_are_dissolved_together(srv: Server, ddbs: dict[str, Any], table_name: str) -> None:
    _strong(srv, ddbs, table_name)
    us = ddbs["us-east-1"]
    assert _refused(us.update_table, TableName=table_name, ReplicaUpdates=[{"Delete": {"RegionName": "eu-west-1"}}]) \
        == ONLY_ONE
    assert _refused(us.delete_table, TableName=table_name) == ONLY_ONE
    us.update_table(TableName=table_name, ReplicaUpdates=[{"Delete": {"RegionName": "eu-west-1"}},
                                                          {"Delete": {"RegionName": "ap-south-1"}}])
    settle(srv.url)
    settle(srv.url)
    assert replicas(us, table_name) == []
    us.delete_table(TableName=table_name)


CREATION_ERRORS = [
    ({"MultiRegionConsistency": "STRONG", "ReplicaUpdates": [{"Create": {"RegionName": "eu-west-1"}}]}, COUNT),
    ({"MultiRegionConsistency": "STRONG", "ReplicaUpdates": [{"Create": {"RegionName": "eu-west-1"}},
                                                            {"Create": {"RegionName": "us-west-1"}}]},
     ("ValidationException", "Unsupported Region(s) specified for global tables with MultiRegionConsistency set to "
      "STRONG: [us-west-1].")),
    ({"MultiRegionConsistency": "STRONG", "ReplicaUpdates": [{"Create": {"RegionName": "eu-west-1"}}],
      "GlobalTableWitnessUpdates": [{"Create": {"RegionName": "us-east-1"}}]},
     ("ValidationException", "Cannot add a witness in the same region as an existing replica when creating a global "
      "table with MultiRegionConsistency set to STRONG.")),
    ({"MultiRegionConsistency": "STRONG", "ReplicaUpdates": [{"Create": {"RegionName": "eu-west-1"}}],
      "GlobalTableWitnessUpdates": [{"Create": {"RegionName": "eu-west-1"}}]},
     ("ValidationException", "Cannot target multiple regions with the same action")),
    ({"ReplicaUpdates": [{"Create": {"RegionName": "eu-west-1"}}],
      "GlobalTableWitnessUpdates": [{"Create": {"RegionName": "ap-south-1"}}]},
     ("ValidationException", "MultiRegionConsistency must be set as STRONG when GlobalTableWitnessUpdates parameter "
      "is present.")),
    ({"MultiRegionConsistency": "STRONG", "ReplicaUpdates": [{"Delete": {"RegionName": "eu-west-1"}}]},
     ("ValidationException", "Only Replica Create actions are supported when MultiRegionConsistency parameter is "
      "provided.")),
    ({"MultiRegionConsistency": "STRONG", "ReplicaUpdates": [{"Create": {"RegionName": "eu-west-1"}}],
      "GlobalTableWitnessUpdates": [{"Create": {"RegionName": "ap-south-1"}}], "DeletionProtectionEnabled": True},
     ("ValidationException", "Requests that modify replicas or witnesses must not also modify other fields")),
]


@pytest.mark.parametrize("request_, expected", CREATION_ERRORS)
def test_strong_creation_rules(ddbs: dict[str, Any], table_name: str, request_: dict[str, Any],
                               expected: tuple[str, str]) -> None:
    us = ddbs["us-east-1"]
    key_table(us, table_name)
    assert _refused(us.update_table, TableName=table_name, **request_) == expected
    assert "Replicas" not in us.describe_table(TableName=table_name)["Table"]


def test_an_eventual_group_cannot_become_strong(srv: Server, ddbs: dict[str, Any], table_name: str) -> None:
    us = ddbs["us-east-1"]
    key_table(us, table_name)
    us.update_table(TableName=table_name, ReplicaUpdates=[{"Create": {"RegionName": "eu-west-1"}}])
    settle(srv.url)
    assert _refused(us.update_table, TableName=table_name, MultiRegionConsistency="STRONG",
                    ReplicaUpdates=[{"Create": {"RegionName": "ap-south-1"}}]) == COUNT


def test_features_mrsc_does_not_support(srv: Server, ddbs: dict[str, Any], table_name: str) -> None:
    _strong(srv, ddbs, table_name)
    eu = ddbs["eu-west-1"]
    no = "One or more parameter values were invalid: "
    assert _refused(eu.update_time_to_live, TableName=table_name,
                    TimeToLiveSpecification={"Enabled": True, "AttributeName": "exp"}) == (
        "ValidationException", f"{no}Time to Live is not supported for global tables with MultiRegionConsistency set "
        "to STRONG.")
    transactions = ("ValidationException", f"{no}Transactions are not supported for global tables with "
                    "MultiRegionConsistency set to STRONG.")
    assert _refused(eu.transact_write_items,
                    TransactItems=[{"Put": {"TableName": table_name, "Item": {"pk": {"S": "t"}}}}]) == transactions
    assert _refused(eu.transact_get_items,
                    TransactItems=[{"Get": {"TableName": table_name, "Key": {"pk": {"S": "t"}}}}]) == transactions
    assert get(eu, table_name, "t") is None


def test_the_table_must_be_empty(ddbs: dict[str, Any], table_name: str) -> None:
    us = ddbs["us-east-1"]
    key_table(us, table_name)
    us.put_item(TableName=table_name, Item={"pk": {"S": "x"}})
    assert _refused(us.update_table, TableName=table_name, MultiRegionConsistency="STRONG",
                    ReplicaUpdates=[{"Create": {"RegionName": "eu-west-1"}}, {"Create": {"RegionName": "ap-south-1"}}]) \
        == ("ValidationException", "One or more parameter values were invalid: A table must be empty to become a "
            "global table with MultiRegionConsistency set to STRONG.")
