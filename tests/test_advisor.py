"""The advisor's API, command and settings: /partita/v1/advice, `partita advise`, --advice-setting, the entity view.

The finding kinds themselves, scenario by scenario, are in test_advisor_examples.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from capacity_helpers import admin
from conftest import STORE, Server, client_for, create_table, launch


def _orders(ddb: Any, name: str, count: int = 40) -> None:
    create_table(ddb, name)
    for n in range(count):
        ddb.put_item(TableName=name, Item={"pk": {"S": f"ORDER#{n}"}, "status": {"S": "LOST" if n == 7 else "OK"}})


def _scan_for_lost(ddb: Any, name: str, **extra: Any) -> dict[str, Any]:
    return ddb.scan(TableName=name, FilterExpression="#s = :s", ExpressionAttributeNames={"#s": "status"},
                    ExpressionAttributeValues={":s": {"S": "LOST"}}, **extra)


def _kinds(url: str, table: str) -> list[str]:
    status, doc = admin(url, f"/partita/v1/advice?table={table}")
    assert status == 200
    return [f["kind"] for f in doc["findings"]]


def test_advice_lists_every_table_and_filters_by_table(endpoint: str, ddb: Any, table_name: str) -> None:
    _orders(ddb, table_name)
    _scan_for_lost(ddb, table_name)
    other = table_name + "-b"
    _orders(ddb, other, 20)
    _scan_for_lost(ddb, other)
    status, doc = admin(endpoint, "/partita/v1/advice")
    assert status == 200
    mine = [(f["kind"], f["table"]) for f in doc["findings"] if f["table"] in (table_name, other)]
    assert mine == [("scan-filter", table_name), ("scan-filter", other)]  # table order
    assert doc["settings"]["scan_filter_min_read"] == 10 and doc["settings"]["gsi_read_window_ms"] == 1000.0
    status, doc = admin(endpoint, f"/partita/v1/advice?table={other}")
    assert [(f["kind"], f["table"], f["evidence"]["items_read"]) for f in doc["findings"]] == [
        ("scan-filter", other, 20)]


def test_advice_errors(endpoint: str) -> None:
    assert admin(endpoint, "/partita/v1/advice?table=no-such-table") == (404, {"error": "no table named no-such-table"})
    assert admin(endpoint, "/partita/v1/advice", {}) == (405, {"error": "use GET to read the advice"})


def test_legacy_scan_filter_and_partiql_where_are_scans_with_a_filter(endpoint: str, ddb: Any,
                                                                      table_name: str) -> None:
    _orders(ddb, table_name)
    ddb.scan(TableName=table_name, ScanFilter={"status": {"ComparisonOperator": "EQ",
                                                          "AttributeValueList": [{"S": "LOST"}]}})
    status, doc = admin(endpoint, f"/partita/v1/advice?table={table_name}")
    (found,) = doc["findings"]
    assert (found["evidence"]["filter"], found["evidence"]["filter_attributes"]) == ("legacy: status EQ", ["status"])
    assert found["fix"]["inputs"][0]["input"]["AttributeDefinitions"] == [{"AttributeName": "status",
                                                                          "AttributeType": "S"}]
    ddb.execute_statement(Statement=f'SELECT * FROM "{table_name}" WHERE status = ?', Parameters=[{"S": "LOST"}])
    status, doc = admin(endpoint, f"/partita/v1/advice?table={table_name}")
    assert sorted((f["evidence"]["filter"] is not None, f["evidence"]["items_read"]) for f in doc["findings"]) == [
        (True, 40), (True, 40)]


def test_query_with_a_filter_proposes_the_filtered_attribute_as_a_sort_key(endpoint: str, ddb: Any,
                                                                          table_name: str) -> None:
    create_table(ddb, table_name, range_key=("sk", "S"))
    for n in range(30):
        ddb.put_item(TableName=table_name, Item={"pk": {"S": "CUSTOMER#1"}, "sk": {"S": f"ORDER#{n:02}"},
                                                  "state": {"S": "OPEN" if n == 3 else "PAID"}})
    ddb.query(TableName=table_name, KeyConditionExpression="pk = :p AND begins_with(sk, :o)",
              FilterExpression="#st = :s", ExpressionAttributeNames={"#st": "state"},
              ExpressionAttributeValues={":p": {"S": "CUSTOMER#1"}, ":o": {"S": "ORDER#"}, ":s": {"S": "OPEN"}})
    status, doc = admin(endpoint, f"/partita/v1/advice?table={table_name}")
    (found,) = doc["findings"]
    assert found["kind"] == "scan-filter"
    assert found["evidence"]["key_condition"] == "pk = CUSTOMER#… AND begins_with(sk, ORDER#…)"
    assert (found["evidence"]["items_read"], found["evidence"]["items_returned"]) == (30, 1)
    assert found["lesson"].startswith("A Query with a filter is not a WHERE clause")
    create = found["fix"]["inputs"][0]["input"]["GlobalSecondaryIndexUpdates"][0]["Create"]
    assert create["IndexName"] == "by_pk_state"
    assert create["KeySchema"] == [{"AttributeName": "pk", "KeyType": "HASH"},
                                   {"AttributeName": "state", "KeyType": "RANGE"}]


def test_deleting_a_table_forgets_its_shapes(endpoint: str, ddb: Any, table_name: str) -> None:
    _orders(ddb, table_name)
    _scan_for_lost(ddb, table_name)
    assert _kinds(endpoint, table_name) == ["scan-filter"]
    ddb.delete_table(TableName=table_name)
    _orders(ddb, table_name, 5)
    assert _kinds(endpoint, table_name) == []


def test_partita_advise_prints_text_and_json(endpoint: str, ddb: Any, table_name: str) -> None:
    _orders(ddb, table_name)
    _scan_for_lost(ddb, table_name)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    text = subprocess.run([sys.executable, "-m", "partita", "advise", "--endpoint", endpoint, "--table", table_name],
                          capture_output=True, text=True, env=env, check=True).stdout
    lines = text.splitlines()
    assert lines[:3] == [
        "1 finding:", "", f"scan-filter: {table_name}",
    ]
    assert lines[3] == ("  A Scan with a filter is not a WHERE clause: DynamoDB reads, and charges for, every item "
                        "before the filter runs. This request paid 0.5 read units for 40 items to return 1 (2.5%).")
    assert lines[4].startswith("  evidence: operation=Scan, requests=1, items_read=40, items_returned=1, ")
    assert lines[6].startswith("    UpdateTable (adds the index by_status): {\"TableName\":")
    raw = subprocess.run([sys.executable, "-m", "partita", "advise", "--endpoint", endpoint, "--table", table_name,
                          "--format", "json"], capture_output=True, text=True, env=env, check=True).stdout
    assert json.loads(raw) == admin(endpoint, f"/partita/v1/advice?table={table_name}")[1]
    missing = subprocess.run([sys.executable, "-m", "partita", "advise", "--endpoint", endpoint, "--table", "nope"],
                             capture_output=True, text=True, env=env)
    assert (missing.returncode, missing.stderr.strip()) == (1, "partita: no table named nope")


@pytest.fixture(scope="module")
def strict(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server whose advisor asks for 1000 items read before a scan-filter, and keeps 2 shapes."""
    store = ["--data-dir", str(tmp_path_factory.mktemp("strict"))] if STORE == "sqlite" else ["--in-memory"]
    srv = launch(*store, "--advice-setting", "scan_filter_min_read=1000", "--advice-setting", "max_shapes=2")
    yield srv
    srv.stop()


def test_settings_change_the_thresholds_and_bound_the_shapes(strict: Server, table_name: str) -> None:
    ddb = client_for(strict.url)
    _orders(ddb, table_name)
    _scan_for_lost(ddb, table_name)
    status, doc = admin(strict.url, f"/partita/v1/advice?table={table_name}")
    assert doc == {"findings": [], "settings": {**doc["settings"], "scan_filter_min_read": 1000, "max_shapes": 2}}
    for _ in range(2):
        ddb.get_item(TableName=table_name, Key={"pk": {"S": "ORDER#1"}})
    ddb.scan(TableName=table_name, Limit=5)  # a third shape: the least used (the filtered Scan) goes
    status, doc = admin(strict.url, f"/partita/v1/tables/{table_name}/entities")
    patterns = doc["entities"][0]["access_patterns"]
    assert [(p["operation"], p["requests"], p["filter"]) for p in patterns] == [("GetItem", 2, None),
                                                                                ("Scan", 1, None)]


def test_a_bad_advice_setting_is_a_usage_error_at_start() -> None:
    for value, message in (("nope=1", "unknown advice setting 'nope=1'"),
                           ("scan_filter_min_read=many", "advice setting scan_filter_min_read needs a whole number, "
                                                         "not 'many'"),
                           ("hot_key_share=-1", "advice setting hot_key_share must not be negative")):
        done = subprocess.run([sys.executable, "-m", "partita", "serve", "--in-memory", "--port", "0",
                               "--advice-setting", value], capture_output=True, text=True, timeout=30)
        assert done.returncode == 2
        assert f"argument --advice-setting: {message}" in done.stderr


def test_entity_view_groups_items_by_key_prefix_with_attributes_and_access_patterns(
        endpoint: str, ddb: Any, table_name: str) -> None:
    ddb.create_table(
        TableName=table_name, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"} for a in ("pk", "sk", "email")],
        GlobalSecondaryIndexes=[{"IndexName": "byEmail", "KeySchema": [{"AttributeName": "email", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "KEYS_ONLY"}}])
    for c in range(40):
        ddb.put_item(TableName=table_name, Item={"pk": {"S": f"CLIENTE#{c}"}, "sk": {"S": "PERFIL"},
                                                  "email": {"S": f"c{c}@x.org"}, "name": {"S": "n"}})
        for o in range(2):
            item = {"pk": {"S": f"CLIENTE#{c}"}, "sk": {"S": f"PEDIDO#2026-09-0{o + 1}#{c}"}, "total_cents": {"N": "5"}}
            if o == 0:
                item["coupon"] = {"S": "X"}
            ddb.put_item(TableName=table_name, Item=item)
    ddb.get_item(TableName=table_name, Key={"pk": {"S": "CLIENTE#1"}, "sk": {"S": "PERFIL"}})
    for c in range(3):
        ddb.query(TableName=table_name, KeyConditionExpression="pk = :p AND begins_with(sk, :o)",
                  ExpressionAttributeValues={":p": {"S": f"CLIENTE#{c}"}, ":o": {"S": "PEDIDO#"}})
    ddb.query(TableName=table_name, IndexName="byEmail", KeyConditionExpression="email = :e",
              ExpressionAttributeValues={":e": {"S": "c1@x.org"}})
    status, doc = admin(endpoint, f"/partita/v1/tables/{table_name}/entities")
    assert status == 200
    assert (doc["table"], doc["index"], doc["key"], doc["item_count"], doc["sampled_items"]) == (
        table_name, None, ["pk", "sk"], 120, 120)
    orders, profiles = doc["entities"]
    assert (orders["name"], orders["sampled"], orders["share"], orders["estimated_count"]) == (
        "CLIENTE# / PEDIDO#", 80, 0.6667, 80)
    assert orders["attributes"] == [{"name": "pk", "type": "S", "share": 1.0}, {"name": "sk", "type": "S", "share": 1.0},
                                    {"name": "total_cents", "type": "N", "share": 1.0},
                                    {"name": "coupon", "type": "S", "share": 0.5}]
    assert [(p["operation"], p["key_condition"], p["requests"], p["items_read"]) for p in orders["access_patterns"]] == [
        ("Query", "pk = CLIENTE#… AND begins_with(sk, PEDIDO#…)", 3, 6)]
    assert (profiles["name"], profiles["sampled"], profiles["estimated_count"]) == ("CLIENTE# / PERFIL", 40, 40)
    assert [a["name"] for a in profiles["attributes"]] == ["email", "name", "pk", "sk"]
    assert [(p["operation"], p["key_condition"], p["requests"]) for p in profiles["access_patterns"]] == [
        ("GetItem", "pk = CLIENTE#… AND sk = PERFIL", 1)]
    status, index_doc = admin(endpoint, f"/partita/v1/tables/{table_name}/entities?index=byEmail")
    assert (index_doc["key"], index_doc["item_count"]) == (["email", None], 40)
    (entry,) = index_doc["entities"]
    assert (entry["name"], entry["sampled"]) == ("(no type prefix)", 40)
    assert [(p["operation"], p["index"], p["requests"]) for p in entry["access_patterns"]] == [("Query", "byEmail", 1)]
    assert admin(endpoint, f"/partita/v1/tables/{table_name}/entities?index=nope") == (
        404, {"error": f"table {table_name} has no index named nope"})
    assert admin(endpoint, "/partita/v1/tables/no-such-table/entities") == (404, {"error": "no table named no-such-table"})


def test_two_workers_add_their_shapes(start_server: Any, tmp_path: Any) -> None:
    """Each worker counts its own requests; whichever answers /partita/v1/advice adds the other's."""
    import time

    from conftest import raw_request

    server = start_server("--data-dir", str(tmp_path / "data"), "--workers", "2")
    _orders(client_for(server.url), "orders")
    for _ in range(20):  # a connection each: the kernel spreads them over the workers
        answer = raw_request(server.url, "Scan", {
            "TableName": "orders", "FilterExpression": "#s = :s", "ExpressionAttributeNames": {"#s": "status"},
            "ExpressionAttributeValues": {":s": {"S": "LOST"}}})
        assert answer.status == 200

    def reported() -> tuple[int, int] | None:
        status, doc = admin(server.url, "/partita/v1/advice?table=orders")
        if not doc["findings"]:
            return None
        evidence = doc["findings"][0]["evidence"]
        return evidence["requests"], evidence["items_read"]

    # Each worker writes its shapes at most a second after they change: wait until six answers in a
    # row (whichever worker answers each) agree on both workers' totals.
    deadline = time.monotonic() + 20
    seen: list[tuple[int, int] | None] = []
    while seen[-6:] != [(20, 800)] * 6:
        assert time.monotonic() < deadline, seen[-6:]
        seen.append(reported())
        time.sleep(0.1)


@pytest.fixture(scope="module")
def emulated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    store = ["--data-dir", str(tmp_path_factory.mktemp("emulated"))] if STORE == "sqlite" else ["--in-memory"]
    srv = launch(*store, "--emulate-throughput")
    yield srv
    srv.stop()


def test_a_throttled_key_near_the_partition_ceiling_is_hot_and_low_cardinality(emulated: Server,
                                                                              table_name: str) -> None:
    from botocore.exceptions import ClientError
    from capacity_helpers import strict_client

    ddb = strict_client(emulated.url)
    create_table(ddb, table_name)
    throttled = 0
    for _ in range(12):  # 293 write units a put, faster than one partition's 1000 a second
        try:
            ddb.put_item(TableName=table_name, Item={"pk": {"S": "STATUS#ACTIVE"}, "v": {"S": "x" * 300_000}})
        except ClientError as error:
            assert error.response["Error"]["Code"] == "ThrottlingException"
            throttled += 1
    assert throttled >= 1
    status, doc = admin(emulated.url, f"/partita/v1/advice?table={table_name}")
    hot, low = doc["findings"]
    assert (hot["kind"], low["kind"]) == ("hot-key", "low-cardinality-key")
    units = (12 - throttled) * 293.0
    evidence = hot["evidence"]
    assert (evidence["key"], evidence["throttled_requests"], evidence["units_total"], evidence["share_of_units"]) == (
        {"pk": {"S": "STATUS#ACTIVE"}}, throttled, units, 1.0)
    assert 0 < evidence["write_units_per_second"] <= round(units / 60, 2)  # the sliding minute
    assert evidence["share_of_partition_ceiling"] == round(evidence["write_units_per_second"] / 1000, 4)
    assert hot["lesson"].endswith(f", and was throttled {throttled} times.")
    assert low["evidence"]["values"] == [{"key": {"pk": {"S": "STATUS#ACTIVE"}}, "share_of_units": 1.0}]
    assert low["evidence"]["looks_like"] == "status"


@pytest.mark.parametrize("subprocess_", [False, True], ids=["in-process", "subprocess"])
def test_local_takes_advice_settings_and_answers_advice(subprocess_: bool) -> None:
    from partita.testing import local

    with local(advice_setting=["scan_filter_min_read=30"], subprocess=subprocess_) as server:
        ddb = server.client()
        _orders(ddb, "orders", 20)
        _scan_for_lost(ddb, "orders")
        assert server.advice() == []  # 20 items read: under this server's 30
        _scan_for_lost(ddb, "orders")
        assert [(f["kind"], f["evidence"]["items_read"]) for f in server.advice("orders")] == [("scan-filter", 40)]
        server.reset()
        assert server.advice() == []
