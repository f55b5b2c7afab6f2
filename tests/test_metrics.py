"""/metrics through a two-worker server: requests, latencies, stream records, TTL deletions, backfills.

Requests go over fresh connections, so both workers answer some of them;
each scrape is a fresh connection too, and whichever worker answers must
report the totals of both (each worker's counts reach the others within
about a second, so the test waits for them to settle, then checks that
scrapes agree).
"""

from __future__ import annotations

import re
import time
import urllib.request
from pathlib import Path
from typing import Any

from conftest import client_for, raw_request


def _scrape(url: str) -> str:
    with urllib.request.urlopen(url + "/metrics") as answer:
        return answer.read().decode()


def _value(text: str, name: str, **labels: str) -> float | None:
    for line in text.splitlines():
        if not line.startswith(name + "{"):
            continue
        found = dict(re.findall(r'(\w+)="([^"]*)"', line.split("}")[0]))
        if found == labels:
            return float(line.rsplit(" ", 1)[1])
    return None


def test_metrics_are_totals_of_both_workers(start_server: Any, tmp_path: Path) -> None:
    server = start_server("--data-dir", str(tmp_path / "data"), "--workers", "2")
    ddb = client_for(server.url)
    name = "metered"
    ddb.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "g", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        GlobalSecondaryIndexes=[{"IndexName": "byG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "KEYS_ONLY"}}],
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"},
    )
    ddb.update_time_to_live(TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": "exp"})
    for i in range(20):  # a connection each: the kernel spreads them over the workers
        item = {"pk": {"S": f"k{i}"}, "g": {"S": "x"}}
        if i < 3:
            item["exp"] = {"N": str(int(time.time()) - 60)}  # expired: TTL deletes these three
        answer = raw_request(server.url, "PutItem", {"TableName": name, "Item": item})
        assert answer.status == 200
    for _ in range(5):
        answer = raw_request(server.url, "PutItem", {
            "TableName": name, "Item": {"pk": {"S": "k5"}}, "ConditionExpression": "attribute_not_exists(pk)"})
        assert answer.status == 400
    raw_request(server.url, "NoSuchOperation", {})

    expected = {
        ("partita_requests_total", (("operation", "PutItem"), ("outcome", "success"))): 20.0,
        ("partita_requests_total", (("operation", "PutItem"), ("outcome", "ConditionalCheckFailedException"))): 5.0,
        ("partita_requests_total", (("operation", "unknown"), ("outcome", "UnknownOperationException"))): 1.0,
        ("partita_request_duration_seconds_count", (("operation", "PutItem"),)): 25.0,
        ("partita_request_duration_seconds_bucket", (("le", "+Inf"), ("operation", "PutItem"))): 25.0,
        ("partita_stream_records_written_total", (("table", name),)): 23.0,  # 20 puts, 3 TTL removals
        ("partita_ttl_deletions_total", (("table", name),)): 3.0,
        ("partita_gsi_backfill_progress", (("index", "byG"), ("table", name))): 1.0,
        ("partita_item_count", (("index", ""), ("table", name))): 17.0,
    }

    def matches(text: str) -> bool:
        return all(_value(text, metric, **dict(labels)) == value for (metric, labels), value in expected.items())

    deadline = time.monotonic() + 20
    while not matches(_scrape(server.url)):
        assert time.monotonic() < deadline, _scrape(server.url)
        time.sleep(0.2)
    time.sleep(1.5)  # each worker has written its counts since (at most a second after they changed)
    for _ in range(6):  # settled: every scrape, on either worker, says the same
        text = _scrape(server.url)
        assert matches(text), text
        # a histogram's buckets are cumulative and end at its count
        buckets = [float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                   if line.startswith('partita_request_duration_seconds_bucket{') and 'operation="PutItem"' in line]
        assert buckets == sorted(buckets) and buckets[-1] == 25.0 and len(buckets) == 15
