"""Metering on a plain server (issue 28): consumed units counted on every table, without --emulate-throughput.

The shared test server runs without the emulation, as `partita serve` does by
default. Every operation family charges exactly the units
ReturnConsumedCapacity reports (a transaction twice), to the table or to the
global index it touches, and the partition map, the hot keys and /metrics
show them. Hot keys of a table without Contributor Insights are a sample by
units (one request per 8 units, carrying 8): the workloads here are laid out
so that the sample is exact.
"""

from __future__ import annotations

import re
import urllib.request
from typing import Any

from capacity_helpers import admin
from conftest import launch


def _scrape(url: str) -> str:
    with urllib.request.urlopen(url + "/metrics") as answer:
        return answer.read().decode()


def _metric(text: str, name: str, **labels: str) -> float | None:
    for line in text.splitlines():
        if not line.startswith(name + "{"):
            continue
        if dict(re.findall(r'(\w+)="([^"]*)"', line.split("}")[0])) == labels:
            return float(line.rsplit(" ", 1)[1])
    return None


def _table(ddb: Any, name: str) -> None:
    ddb.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"} for a in ("pk", "sk", "g")],
        GlobalSecondaryIndexes=[{"IndexName": "byG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}],
    )


def _traffic(ddb: Any, name: str) -> None:
    """38 write units and 5.5 read units on the table, 34 write and 0.5 read units on byG."""
    for i in range(24):  # 24 x (1 table + 1 index) write units
        ddb.put_item(TableName=name, Item={"pk": {"S": "A"}, "sk": {"S": f"{i:02}"}, "g": {"S": "x"}})
    ddb.batch_write_item(RequestItems={name: [  # 10 x (1 + 1)
        {"PutRequest": {"Item": {"pk": {"S": "B"}, "sk": {"S": str(i)}, "g": {"S": "y"}}}} for i in range(10)]})
    ddb.transact_write_items(TransactItems=[  # 2 x 2 (transactional), no index entry
        {"Put": {"TableName": name, "Item": {"pk": {"S": "C"}, "sk": {"S": str(i)}}}} for i in range(2)])
    key = {"pk": {"S": "A"}, "sk": {"S": "00"}}
    assert ddb.get_item(TableName=name, Key=key, ReturnConsumedCapacity="TOTAL")["ConsumedCapacity"][
        "CapacityUnits"] == 0.5
    ddb.get_item(TableName=name, Key=key, ConsistentRead=True)  # 1
    query = ddb.query(TableName=name, KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": "A"}},
                      ReturnConsumedCapacity="TOTAL")
    assert query["Count"] == 24 and query["ConsumedCapacity"]["CapacityUnits"] == 0.5
    on_index = ddb.query(TableName=name, IndexName="byG", KeyConditionExpression="g = :g",
                         ExpressionAttributeValues={":g": {"S": "x"}}, ReturnConsumedCapacity="INDEXES")
    assert on_index["ConsumedCapacity"]["GlobalSecondaryIndexes"] == {"byG": {"CapacityUnits": 0.5}}
    scan = ddb.scan(TableName=name, ReturnConsumedCapacity="TOTAL")  # 36 small items: one 0.5-unit page
    assert scan["Count"] == 36 and scan["ConsumedCapacity"]["CapacityUnits"] == 0.5
    ddb.batch_get_item(RequestItems={name: {"Keys": [key, {"pk": {"S": "B"}, "sk": {"S": "0"}}]}})  # 2 x 0.5
    ddb.transact_get_items(TransactItems=[{"Get": {"TableName": name, "Key": key}}])  # 2


def test_plain_server_meters_every_operation_in_metrics(endpoint: str, ddb: Any, table_name: str) -> None:
    _table(ddb, table_name)
    text = _scrape(endpoint)
    assert _metric(text, "partita_consumed_write_units_total", table=table_name, index="") == 0.0
    _traffic(ddb, table_name)
    text = _scrape(endpoint)
    assert _metric(text, "partita_consumed_write_units_total", table=table_name, index="") == 38.0
    assert _metric(text, "partita_consumed_read_units_total", table=table_name, index="") == 5.5
    assert _metric(text, "partita_consumed_write_units_total", table=table_name, index="byG") == 34.0
    assert _metric(text, "partita_consumed_read_units_total", table=table_name, index="byG") == 0.5
    assert _metric(text, "partita_throttled_requests_total", table=table_name, index="", operation="write") == 0.0


def test_plain_server_partition_map_and_hot_keys_show_the_traffic(endpoint: str, ddb: Any, table_name: str) -> None:
    _table(ddb, table_name)
    _traffic(ddb, table_name)
    status, layout = admin(endpoint, f"/partita/v1/tables/{table_name}/partitions")
    assert status == 200
    assert layout["emulate_throughput"] is False
    parts = layout["partitions"]
    assert sum(p["write_units_total"] for p in parts) == 38.0
    assert sum(p["read_units_total"] for p in parts) == 5.5
    assert sum(p["write_units_per_minute"] for p in parts) == 38.0
    assert sum(p["item_count"] for p in parts) == 36
    assert sum(1 for p in parts if p["write_units_total"]) == 3  # the collections A, B and C
    status, index_layout = admin(endpoint, f"/partita/v1/tables/{table_name}/partitions?index=byG")
    assert sum(p["write_units_total"] for p in index_layout["partitions"]) == 34.0
    status, hot = admin(endpoint, f"/partita/v1/tables/{table_name}/hot-keys")
    assert status == 200 and hot["contributor_insights"] is None
    ranked = [(k["key"], k["write_units_total"]) for k in hot["partition_keys"]["by_consumed_units"]]
    # A's 24 units: sampled at its 8th, 16th and 24th; B's at its 8th of 10 (the sampling debt starts at 0).
    assert ranked == [({"pk": {"S": "A"}}, 24.0), ({"pk": {"S": "B"}}, 8.0)]
    status, index_hot = admin(endpoint, f"/partita/v1/tables/{table_name}/hot-keys?index=byG")
    ranked = [(k["key"], k["write_units_total"]) for k in index_hot["partition_keys"]["by_consumed_units"]]
    assert ranked == [({"g": {"S": "x"}}, 24.0), ({"g": {"S": "y"}}, 8.0)]


def test_deleting_a_table_frees_its_meter_and_a_new_one_starts_at_zero(endpoint: str, ddb: Any,
                                                                       table_name: str) -> None:
    _table(ddb, table_name)
    _traffic(ddb, table_name)
    ddb.delete_table(TableName=table_name)
    _table(ddb, table_name)
    text = _scrape(endpoint)
    assert _metric(text, "partita_consumed_write_units_total", table=table_name, index="") == 0.0
    status, hot = admin(endpoint, f"/partita/v1/tables/{table_name}/hot-keys")
    assert hot["keys"]["by_consumed_units"] == []


def test_reset_frees_every_metered_slot(tmp_path: Any) -> None:
    """`partita.testing` resets between tests: the meter's fixed region must not fill with dead tables."""
    from conftest import client_for

    srv = launch("--data-dir", str(tmp_path))
    try:
        ddb = client_for(srv.url)
        _table(ddb, "kept")
        _traffic(ddb, "kept")
        status, doc = admin(srv.url, "/partita/v1/reset", {})
        assert status == 200 and doc["dropped_tables"] == 1
        _table(ddb, "kept")
        text = _scrape(srv.url)
        assert _metric(text, "partita_consumed_write_units_total", table="kept", index="") == 0.0
        ddb.put_item(TableName="kept", Item={"pk": {"S": "A"}, "sk": {"S": "1"}})
        status, layout = admin(srv.url, "/partita/v1/tables/kept/partitions")
        assert sum(p["write_units_total"] for p in layout["partitions"]) == 1.0
        # 600 metered tables, reset each time: the region (4096 slots) never fills.
        for round_ in range(3):
            for i in range(200):
                name = f"t{round_}-{i}"
                ddb.create_table(TableName=name, BillingMode="PAY_PER_REQUEST",
                                 KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                                 AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}])
                ddb.batch_write_item(RequestItems={name: [  # most of its 8 partitions
                    {"PutRequest": {"Item": {"pk": {"S": f"k{k}"}}}} for k in range(8)]})
            admin(srv.url, "/partita/v1/reset", {})
        _table(ddb, "last")
        ddb.put_item(TableName="last", Item={"pk": {"S": "A"}, "sk": {"S": "1"}})
        status, layout = admin(srv.url, "/partita/v1/tables/last/partitions")
        assert sum(p["write_units_total"] for p in layout["partitions"]) == 1.0
    finally:
        srv.stop()
