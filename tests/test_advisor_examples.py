"""The access-pattern advisor on the runnable scenarios of examples/advisor: each kind appears, with its evidence.

Every scenario runs against a real server over HTTP exactly as
`python examples/advisor/<kind>.py` runs it, and the test reads
`GET /partita/v1/advice?table=...`. Evidence that follows from the requests
(counts, bytes, units, shares) is asserted exactly; what depends on the
wall clock (a rate over the sliding minute, a growth a day) within the bound
the requests set. The well-modelled shop yields no finding at all.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from capacity_helpers import admin
from conftest import STORE, Server, client_for, launch

from partita.engine.model.sizes import item_size

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "advisor"))

import gsi_read_after_write  # noqa: E402
import hot_key  # noqa: E402
import low_cardinality_key  # noqa: E402
import lsi_collection_growth  # noqa: E402
import projection_after_read  # noqa: E402
import scan_filter  # noqa: E402
import unbounded_collection  # noqa: E402
import well_modelled  # noqa: E402


@pytest.fixture(scope="module")
def own_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server of this module's own, with a 600 KB item-collection cap (lsi_collection_growth.LIMIT, as
    its example runs): the hot-key ranking is a bounded table of slots, which other tests' keys on the
    shared server may crowd."""
    store = ["--data-dir", str(tmp_path_factory.mktemp("advisor"))] if STORE == "sqlite" else ["--in-memory"]
    srv = launch(*store, "--item-collection-limit", str(lsi_collection_growth.LIMIT))
    yield srv
    srv.stop()


def advice(url: str, table: str) -> list[dict[str, Any]]:
    status, doc = admin(url, f"/partita/v1/advice?table={table}")
    assert status == 200
    return doc["findings"]


def mover(url: str) -> Any:
    def advance(seconds: float) -> None:
        status, _ = admin(url, "/partita/v1/clock", {"advance_seconds": seconds})
        assert status == 200

    return advance


def only(findings: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    assert [f["kind"] for f in findings] == [kind], findings
    return findings[0]


def test_scan_as_where_is_a_scan_filter_finding_with_a_gsi_on_the_filtered_attribute(
        endpoint: str, ddb: Any, table_name: str) -> None:
    scan_filter.run(ddb, table_name, mover(endpoint))
    found = only(advice(endpoint, table_name), "scan-filter")
    table_bytes = sum(item_size(scan_filter.order(n)) for n in range(scan_filter.ORDERS))
    units = math.ceil(table_bytes / 4096) / 2  # one page a Scan, eventually consistent
    assert found["table"] == table_name and found["index"] is None
    assert found["evidence"] == {
        "operation": "Scan", "requests": 3, "items_read": 600, "items_returned": 12, "bytes_read": 3 * table_bytes,
        "read_units": 3 * units, "share_of_read_units": 1.0, "filter": "#s = :s", "filter_attributes": ["status"],
        "returned_share": 0.02,
    }
    assert found["lesson"] == (
        "A Scan with a filter is not a WHERE clause: DynamoDB reads, and charges for, every item before the filter "
        f"runs. These 3 requests paid {3 * units:g} read units for 600 items to return 12 (2.0%).")
    assert found["fix"]["inputs"][0] == {"operation": "UpdateTable", "why": "adds the index by_status", "input": {
        "TableName": table_name,
        "AttributeDefinitions": [{"AttributeName": "status", "AttributeType": "S"}],
        "GlobalSecondaryIndexUpdates": [{"Create": {
            "IndexName": "by_status", "KeySchema": [{"AttributeName": "status", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"}}}]}}
    assert found["fix"]["inputs"][1]["input"] == {
        "TableName": table_name, "IndexName": "by_status", "KeyConditionExpression": "#k0 = :v",
        "ExpressionAttributeNames": {"#k0": "status"}}
    # The proposed input is one DynamoDB takes as it is.
    ddb.update_table(**found["fix"]["inputs"][0]["input"])


def test_one_vehicle_taking_most_writes_is_a_hot_key(own_server: Server, table_name: str) -> None:
    endpoint = own_server.url
    hot_key.run(client_for(endpoint), table_name, mover(endpoint))
    found = only(advice(endpoint, table_name), "hot-key")
    evidence = found["evidence"]
    rate = evidence.pop("write_units_per_second")
    assert 0 < rate <= round(320 / 60, 2)  # the sliding minute may have begun mid-run
    assert evidence == {
        "key": {"pk": {"S": "VEHICLE#7"}}, "share_of_units": 0.678, "units_total": 320.0,
        "table_units_total": 472.0, "partition_keys_seen": 20, "read_units_per_second": 0.0,
        "share_of_partition_ceiling": round(rate / 1000, 4), "throttled_requests": 0,
    }
    assert found["lesson"].startswith(
        "One partition-key value is one partition, which serves at most 3,000 reads and 1,000 writes a second "
        "however large the table: VEHICLE#7 took 67.8% of the units among 20 keys, ")
    assert found["lesson"].endswith(": as the traffic grows, this key meets the ceiling first.")
    assert found["fix"]["text"].startswith("Shard the key: write to 2 keys, VEHICLE#7#0 to VEHICLE#7#1 ")


def test_a_status_keyed_table_is_a_low_cardinality_key(own_server: Server, table_name: str) -> None:
    endpoint, ddb = own_server.url, client_for(own_server.url)
    low_cardinality_key.run(ddb, table_name, mover(endpoint))
    found = only(advice(endpoint, table_name), "low-cardinality-key")
    evidence = found["evidence"]
    values = evidence.pop("values")
    assert sorted((v["key"]["pk"]["S"], v["share_of_units"]) for v in values) == [
        ("STATUS#DONE", 0.3331), ("STATUS#IN_PROGRESS", 0.3331), ("STATUS#OPEN", 0.3331)]
    # 600 one-unit writes and one Query reading 50 small items (half a unit).
    assert evidence == {"partition_key": "pk", "share_of_units": 0.9992, "units_total": 600.5, "values_seen": 3,
                        "looks_like": "status"}
    create = found["fix"]["inputs"][0]
    assert create["operation"] == "CreateTable"
    assert create["input"]["GlobalSecondaryIndexes"] == [{
        "IndexName": "by_status_shard", "Projection": {"ProjectionType": "ALL"},
        "KeySchema": [{"AttributeName": "status_shard", "KeyType": "HASH"}, {"AttributeName": "pk", "KeyType": "RANGE"}]}]
    ddb.create_table(**{**create["input"], "TableName": table_name + "-v2"})


def test_a_gsi_queried_right_after_the_write_is_a_read_after_write(endpoint: str, ddb: Any, table_name: str) -> None:
    gsi_read_after_write.run(ddb, table_name, mover(endpoint))
    found = only(advice(endpoint, table_name), "gsi-read-after-write")
    assert found["index"] == "byEmail"
    evidence = found["evidence"]
    delay = evidence.pop("smallest_delay_ms")
    assert 0 <= delay <= 1000
    assert evidence == {"queries_after_write": 5, "queries_on_index": 5, "share_of_queries": 1.0,
                        "window_ms": 1000.0, "gsi_lag_ms": 0, "could_miss_with_lag": False}
    assert found["fix"]["inputs"] == [{"operation": "GetItem", "why": "reads the item just written, strongly consistent",
                                       "input": {"TableName": table_name, "ConsistentRead": True,
                                                 "Key": {"pk": {"S": "<the key just written>"}}}}]


def test_a_gsi_query_after_the_window_is_no_finding(endpoint: str, ddb: Any, table_name: str) -> None:
    advance = mover(endpoint)
    gsi_read_after_write.run(ddb, table_name, lambda s: None)
    assert [f["kind"] for f in advice(endpoint, table_name)] == ["gsi-read-after-write"]
    ddb.put_item(TableName=table_name, Item={"pk": {"S": "USER#late"}, "email": {"S": "late@example.com"}})
    advance(2)  # past the 1 s window on the server clock
    ddb.query(TableName=table_name, IndexName="byEmail", KeyConditionExpression="email = :e",
              ExpressionAttributeValues={":e": {"S": "late@example.com"}})
    assert only(advice(endpoint, table_name), "gsi-read-after-write")["evidence"]["queries_after_write"] == 5


def test_projection_of_two_small_attributes_from_large_items(endpoint: str, ddb: Any, table_name: str) -> None:
    projection_after_read.run(ddb, table_name, mover(endpoint))
    found = only(advice(endpoint, table_name), "projection-after-read")
    items = [ddb.get_item(TableName=table_name, Key={"pk": {"S": "CATEGORY#books"}, "sk": {"S": f"PRODUCT#{n:03}"}})[
        "Item"] for n in range(projection_after_read.PRODUCTS)]
    sizes = [item_size(item) for item in items]
    kept = [item_size({k: v for k, v in item.items() if k in ("name", "price")}) for item in items]
    evidence = found["evidence"]
    assert evidence["requests"] == 4 and evidence["items_read"] == 120 and evidence["items_returned"] == 120
    assert evidence["bytes_read"] == 4 * sum(sizes)
    assert evidence["read_units"] == 4 * math.ceil(sum(sizes) / 4096) / 2
    assert evidence["average_item_bytes"] == round(sum(sizes) / len(sizes))
    assert evidence["projected_share"] == round(sum(kept[:20]) / sum(sizes[:20]), 4)  # the first 20, by row order
    assert evidence["sampled_items"] == 20
    assert evidence["projection"] == "#n, price" and evidence["projected_attributes"] == ["name", "price"]
    assert evidence["key_condition"] == "pk = CATEGORY#…"
    update = found["fix"]["inputs"][0]["input"]
    assert update["GlobalSecondaryIndexUpdates"][0]["Create"]["Projection"] == {
        "ProjectionType": "INCLUDE", "NonKeyAttributes": ["name", "price"]}
    ddb.update_table(**update)


def test_whole_collections_read_page_after_page_are_unbounded(endpoint: str, ddb: Any, table_name: str) -> None:
    unbounded_collection.run(ddb, table_name, mover(endpoint))
    found = only(advice(endpoint, table_name), "unbounded-collection")
    item = {"pk": {"S": "VEHICLE#0"}, "sk": {"S": "READING#000000"}, "trace": {"S": unbounded_collection.TRACE}}
    size = item_size(item)
    first = math.ceil(1024 * 1024 / size)  # a page ends at the item that reaches 1 MB
    rest = unbounded_collection.READINGS - first
    per_query = (math.ceil(first * size / 4096) + math.ceil(rest * size / 4096)) / 2
    assert found["evidence"] == {
        "operation": "Query", "requests": 8, "items_read": 2400, "items_returned": 2400,
        "bytes_read": 4 * 600 * size, "read_units": 4 * per_query, "share_of_read_units": 1.0,
        "key_condition": "pk = VEHICLE#…", "logical_queries": 4, "pages": 8, "pages_per_query": 2.0,
        "items_per_query": 600.0, "read_units_per_query": per_query,
    }
    assert [step["operation"] for step in found["fix"]["inputs"]] == ["Query", "UpdateTimeToLive"]


def test_a_well_modelled_single_table_design_yields_no_finding(endpoint: str, ddb: Any, table_name: str) -> None:
    well_modelled.run(ddb, table_name, mover(endpoint))
    assert advice(endpoint, table_name) == []


def test_a_collection_under_a_local_index_growing_toward_the_cap(own_server: Server) -> None:
    small_cap = own_server
    ddb = client_for(small_cap.url)
    started = time.time()
    lsi_collection_growth.run(ddb, "fleet-log", mover(small_cap.url))
    took = time.time() - started
    found = only(advice(small_cap.url, "fleet-log"), "lsi-collection-growth")
    entry = {"pk": {"S": "VEHICLE#1"}, "sk": {"S": "LOG#0#000"}, "kind": {"S": "GPS"},
             "payload": {"S": lsi_collection_growth.ENTRY}}
    per_write = item_size(entry) + item_size({k: entry[k] for k in ("pk", "sk", "kind")})  # the item, its LSI entry
    size = 20 * per_write
    evidence = found["evidence"]
    growth, days_left, date = evidence.pop("growth_bytes_per_day"), evidence.pop("days_left"), \
        evidence.pop("projected_refusal")
    observed = evidence.pop("observed_days")
    # From the first write (one item) to the last: a day on the server clock, plus the run's own time.
    assert 1.0 <= observed <= 1.0 + took / 86400 + 0.001
    assert (size - per_write) / (1.0 + took / 86400) - 1 <= growth <= size - per_write
    assert days_left == pytest.approx((600_000 - size) / growth, abs=0.05)
    assert len(date) == 10 and date[4] == "-"
    assert evidence == {"collection": {"S": "VEHICLE#1"}, "size_bytes": size, "limit_bytes": 600_000,
                        "share_of_limit": round(size / 600_000, 4), "local_indexes": ["byKind"]}
    create = found["fix"]["inputs"][0]
    assert create["operation"] == "CreateTable"
    assert create["input"]["GlobalSecondaryIndexes"] == [{
        "IndexName": "byKind", "Projection": {"ProjectionType": "KEYS_ONLY"},
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "kind", "KeyType": "RANGE"}]}]
    assert "LocalSecondaryIndexes" not in create["input"]
    ddb.create_table(**create["input"])  # DynamoDB's own check of the proposal
