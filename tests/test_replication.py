"""Multi-Region eventual consistency: writes reach the other replicas after the lag, last writer wins.

The server replicates after a minute of server clock (`--replication-lag-ms
60000`): a test sees a write in its own region only, then advances the clock
and settles (`POST /partita/v1/replication {"settle": true}`) to see it
everywhere. Holding replication makes conflicts deterministic.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import STORE, Server, durable_store
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from region_helpers import REGIONS, admin, client, clients, hold, key_table, launch_regions, settle
from streams_helpers import eventually, read_stream

LAG = 60.0


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = launch_regions(tmp_path_factory.mktemp("replication"), "--replica-phase-ms", "0",
                            "--replication-lag-ms", "60000")
    yield server
    server.stop()


@pytest.fixture
def ddbs(srv: Server) -> dict[str, Any]:
    return clients(srv.url)


def global_table(url: str, name: str, *regions: str, **extra: Any) -> None:
    """`name` in us-east-1 with replicas in `regions` (ACTIVE); nothing held."""
    us = client(url, "us-east-1")
    key_table(us, name, **extra)
    for region in regions:
        us.update_table(TableName=name, ReplicaUpdates=[{"Create": {"RegionName": region}}])
        settle(url)


def get(ddb: Any, name: str, key: str) -> dict[str, Any] | None:
    item: dict[str, Any] | None = ddb.get_item(TableName=name, Key={"pk": {"S": key}}, ConsistentRead=True).get("Item")
    return item


def test_a_write_reaches_every_replica_after_the_lag(srv: Server, ddbs: dict[str, Any], table_name: str) -> None:
    us, eu, ap = (ddbs[r] for r in REGIONS)
    global_table(srv.url, table_name, "eu-west-1", "ap-south-1")
    us.put_item(TableName=table_name, Item={"pk": {"S": "a"}, "v": {"N": "1"}})
    settle(srv.url)  # not due yet
    assert (get(us, table_name, "a"), get(eu, table_name, "a"), get(ap, table_name, "a")) == (
        {"pk": {"S": "a"}, "v": {"N": "1"}}, None, None)
    status = admin(srv.url, "replication")
    pending = {(p["from"], p["to"]): p["changes"] for p in status["pending"] if p["table"] == table_name}
    assert pending == {("us-east-1", "eu-west-1"): 1, ("us-east-1", "ap-south-1"): 1, ("eu-west-1", "us-east-1"): 0,
                       ("eu-west-1", "ap-south-1"): 0, ("ap-south-1", "us-east-1"): 0, ("ap-south-1", "eu-west-1"): 0}
    settle(srv.url, LAG + 1)
    assert get(eu, table_name, "a") == get(ap, table_name, "a") == {"pk": {"S": "a"}, "v": {"N": "1"}}
    # Each region's stream shows the write, in its own region.
    for region in REGIONS:
        streams = client(srv.url, region, "dynamodbstreams")
        arn = ddbs[region].describe_table(TableName=table_name)["Table"]["LatestStreamArn"]
        records = read_stream(streams, arn)
        assert [(r["awsRegion"], r["eventName"], r["dynamodb"]["NewImage"]) for r in records] == [
            (region, "INSERT", {"pk": {"S": "a"}, "v": {"N": "1"}})]
        assert "userIdentity" not in records[0]


def test_last_writer_wins_and_every_replica_converges(srv: Server, ddbs: dict[str, Any], table_name: str) -> None:
    us, eu = ddbs["us-east-1"], ddbs["eu-west-1"]
    global_table(srv.url, table_name, "eu-west-1")
    hold(srv.url)
    try:
        us.put_item(TableName=table_name, Item={"pk": {"S": "k"}, "v": {"S": "from us"}})
        admin(srv.url, "clock", {"advance_seconds": 1})
        eu.put_item(TableName=table_name, Item={"pk": {"S": "k"}, "v": {"S": "from eu"}})
        # A partition: each region sees its own write.
        assert get(us, table_name, "k") == {"pk": {"S": "k"}, "v": {"S": "from us"}}
        assert get(eu, table_name, "k") == {"pk": {"S": "k"}, "v": {"S": "from eu"}}
    finally:
        hold(srv.url, False)
    status = settle(srv.url, LAG + 1)
    assert get(us, table_name, "k") == get(eu, table_name, "k") == {"pk": {"S": "k"}, "v": {"S": "from eu"}}
    assert {"table": table_name, "count": 1} in status["conflicts"]
    assert {"table": table_name, "region": "eu-west-1", "key": {"pk": {"S": "k"}}, "kept": "eu-west-1",
            "discarded": "us-east-1"} in status["recent_conflicts"]
    # us-east-1's stream shows its own write then the winning one; eu-west-1's only its own.
    for region, expected in (("us-east-1", [("INSERT", "from us"), ("MODIFY", "from eu")]),
                             ("eu-west-1", [("INSERT", "from eu")])):
        arn = ddbs[region].describe_table(TableName=table_name)["Table"]["LatestStreamArn"]
        records = read_stream(client(srv.url, region, "dynamodbstreams"), arn)
        assert [(r["eventName"], r["dynamodb"]["NewImage"]["v"]["S"]) for r in records] == expected


def test_a_later_delete_wins_over_an_earlier_update(srv: Server, ddbs: dict[str, Any], table_name: str) -> None:
    us, eu = ddbs["us-east-1"], ddbs["eu-west-1"]
    global_table(srv.url, table_name, "eu-west-1")
    us.put_item(TableName=table_name, Item={"pk": {"S": "k"}, "v": {"N": "0"}})
    settle(srv.url, LAG + 1)
    hold(srv.url)
    try:
        us.update_item(TableName=table_name, Key={"pk": {"S": "k"}}, UpdateExpression="SET v = :v",
                       ExpressionAttributeValues={":v": {"N": "1"}})
        admin(srv.url, "clock", {"advance_seconds": 1})
        eu.delete_item(TableName=table_name, Key={"pk": {"S": "k"}})
    finally:
        hold(srv.url, False)
    settle(srv.url, LAG + 1)
    assert get(us, table_name, "k") is None and get(eu, table_name, "k") is None


_ops = st.lists(st.tuples(st.sampled_from(REGIONS), st.sampled_from(["put", "delete"]), st.sampled_from("abc"),
                          st.integers(0, 9)), min_size=1, max_size=8)
_examples = itertools.count()


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=_ops)
def test_replicas_converge_to_the_last_write_whatever_the_interleaving(
    srv: Server, ops: list[tuple[str, str, str, int]]
) -> None:
    """While replication is held each region sees its own writes; released, all hold the last write of each item.

    A write that changes nothing where it is made (deleting a missing item,
    putting the item it already holds) is no change to replicate: it makes
    no stream record, which is what DynamoDB replicates from.
    """
    name = "convergence"
    ddbs = clients(srv.url)
    if name not in ddbs["us-east-1"].list_tables()["TableNames"]:
        global_table(srv.url, name, "eu-west-1", "ap-south-1")
    run = next(_examples)
    model: dict[str, int | None] = {}
    local: dict[str, dict[str, int]] = {region: {} for region in REGIONS}
    hold(srv.url)
    try:
        for region, op, key, value in ops:
            pk = {"S": f"{run}-{key}"}
            if op == "put":
                ddbs[region].put_item(TableName=name, Item={"pk": pk, "v": {"N": str(value)}})
                if local[region].get(key) != value:
                    model[key] = local[region][key] = value
            else:
                ddbs[region].delete_item(TableName=name, Key={"pk": pk})
                if key in local[region]:
                    model[key] = None
                    del local[region][key]
        for region in REGIONS:
            seen = {k: int(i["v"]["N"]) for k in "abc" if (i := get(ddbs[region], name, f"{run}-{k}")) is not None}
            assert seen == local[region]
    finally:
        hold(srv.url, False)
    settle(srv.url, LAG + 1)
    expected = {k: v for k, v in model.items() if v is not None}
    for region in REGIONS:
        seen = {k: int(i["v"]["N"]) for k in "abc" if (i := get(ddbs[region], name, f"{run}-{k}")) is not None}
        assert seen == expected


def test_a_transactions_items_replicate_one_by_one(srv: Server, ddbs: dict[str, Any], table_name: str) -> None:
    us, eu = ddbs["us-east-1"], ddbs["eu-west-1"]
    global_table(srv.url, table_name, "eu-west-1")
    us.transact_write_items(TransactItems=[
        {"Put": {"TableName": table_name, "Item": {"pk": {"S": "x"}}}},
        {"Put": {"TableName": table_name, "Item": {"pk": {"S": "y"}}}},
    ])
    assert (get(eu, table_name, "x"), get(eu, table_name, "y")) == (None, None)
    settle(srv.url, LAG + 1)
    assert (get(eu, table_name, "x"), get(eu, table_name, "y")) == ({"pk": {"S": "x"}}, {"pk": {"S": "y"}})


def test_writes_made_while_a_replica_is_created_reach_it(srv: Server, ddbs: dict[str, Any], table_name: str) -> None:
    us, eu = ddbs["us-east-1"], ddbs["eu-west-1"]
    key_table(us, table_name)
    us.put_item(TableName=table_name, Item={"pk": {"S": "before"}})
    us.update_table(TableName=table_name, ReplicaUpdates=[{"Create": {"RegionName": "eu-west-1"}}])
    us.put_item(TableName=table_name, Item={"pk": {"S": "during"}})
    settle(srv.url, LAG + 1)
    assert {i["pk"]["S"] for i in eu.scan(TableName=table_name, ConsistentRead=True)["Items"]} == {"before", "during"}


def test_ttl_is_shared_and_its_deletes_replicate(srv: Server, ddbs: dict[str, Any], table_name: str) -> None:
    us, eu = ddbs["us-east-1"], ddbs["eu-west-1"]
    global_table(srv.url, table_name, "eu-west-1")
    eu.update_time_to_live(TableName=table_name, TimeToLiveSpecification={"Enabled": True, "AttributeName": "exp"})
    assert us.describe_time_to_live(TableName=table_name)["TimeToLiveDescription"] == {
        "TimeToLiveStatus": "ENABLED", "AttributeName": "exp"}
    now = admin(srv.url, "clock")["now"]
    us.put_item(TableName=table_name, Item={"pk": {"S": "old"}, "exp": {"N": str(int(now) + 30)}})
    settle(srv.url, LAG + 1)  # replicated, and now expired
    eventually(lambda: get(us, table_name, "old") is None)
    settle(srv.url, LAG + 1)
    assert get(eu, table_name, "old") is None
    # The service deleted it in us-east-1 (its identity there); eu-west-1 shows a replicated delete.
    for region, identity in (("us-east-1", {"Type": "Service", "PrincipalId": "dynamodb.amazonaws.com"}),
                             ("eu-west-1", None)):
        arn = ddbs[region].describe_table(TableName=table_name)["Table"]["LatestStreamArn"]
        removes = [r for r in read_stream(client(srv.url, region, "dynamodbstreams"), arn) if r["eventName"] == "REMOVE"]
        assert [r.get("userIdentity") for r in removes] == [identity]


def test_with_no_lag_the_other_regions_see_a_write_before_its_answer(start_server: Callable[..., Server],
                                                                    tmp_path: Path) -> None:
    srv = start_server(*launch_args(tmp_path), "--replication-lag-ms", "0", "--replica-phase-ms", "0")
    us, eu = client(srv.url, "us-east-1"), client(srv.url, "eu-west-1")
    global_table(srv.url, "sync", "eu-west-1")
    us.put_item(TableName="sync", Item={"pk": {"S": "a"}})
    assert get(eu, "sync", "a") == {"pk": {"S": "a"}}
    hold(srv.url)
    us.put_item(TableName="sync", Item={"pk": {"S": "b"}})
    assert get(eu, "sync", "b") is None
    admin(srv.url, "replication", {"hold": False, "settle": True})
    assert get(eu, "sync", "b") == {"pk": {"S": "b"}}


def launch_args(folder: Path) -> list[str]:
    from region_helpers import store_args

    return [*store_args(folder), "--regions", ",".join(REGIONS)]


@pytest.mark.skipif(STORE == "memory", reason="a store that outlives its server")
def test_an_acknowledged_write_survives_kill_9_and_replicates_after_recovery(
    start_server: Callable[..., Server], tmp_path: Path
) -> None:
    args = [*durable_store(tmp_path / "store"), "--regions", "us-east-1,eu-west-1", "--replica-phase-ms", "0",
            "--replication-lag-ms", "60000"]
    srv = start_server(*args)
    global_table(srv.url, "durable", "eu-west-1")
    client(srv.url, "us-east-1").put_item(TableName="durable", Item={"pk": {"S": "acked"}})
    srv.kill()
    srv = start_server(*args)
    eu = client(srv.url, "eu-west-1")
    assert get(eu, "durable", "acked") is None
    settle(srv.url, LAG + 1)
    assert get(eu, "durable", "acked") == {"pk": {"S": "acked"}}
