"""Seeing replication: `/metrics` and the console's replication page on a server of several regions."""

from __future__ import annotations

import re
import urllib.request
from collections.abc import Callable
from pathlib import Path

from conftest import Server
from region_helpers import admin, client, hold, key_table, settle, store_args


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as response:
        return str(response.read().decode())


def _sample(text: str, name: str, **labels: str) -> float:
    """The value of one metric sample (labels in any order)."""
    for line in text.splitlines():
        if not labels and line.startswith(name + " "):
            return float(line.rsplit(" ", 1)[1])
        if not line.startswith(name + "{"):
            continue
        found = dict(re.findall(r'(\w+)="([^"]*)"', line[len(name):line.index("}") + 1]))
        if found == labels:
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"no sample {name}{labels}")


def test_metrics_and_console_show_replicas_backlog_latency_and_conflicts(
    start_server: Callable[..., Server], tmp_path: Path
) -> None:
    srv = start_server(*store_args(tmp_path / "store"), "--regions", "us-east-1,eu-west-1",
                       "--replica-phase-ms", "0", "--replication-lag-ms", "60000")
    us, eu = client(srv.url, "us-east-1"), client(srv.url, "eu-west-1")
    key_table(us, "orders")
    us.update_table(TableName="orders", ReplicaUpdates=[{"Create": {"RegionName": "eu-west-1"}}])
    settle(srv.url)
    hold(srv.url)
    us.put_item(TableName="orders", Item={"pk": {"S": "k"}, "v": {"S": "us"}})
    admin(srv.url, "clock", {"advance_seconds": 1})
    eu.put_item(TableName="orders", Item={"pk": {"S": "k"}, "v": {"S": "eu"}})
    text = _get(srv.url + "/metrics")
    assert _sample(text, "partita_replication_pending", table="orders", source_region="us-east-1",
                   destination_region="eu-west-1") == 1
    assert _sample(text, "partita_replication_held") == 1
    assert _sample(text, "partita_global_table_replicas", table="orders", region="eu-west-1", status="ACTIVE") == 1
    page = _get(srv.url + "/console/replication")
    assert 'id="held"' in page
    assert '<tr class="pending" data-table="orders">' in page
    hold(srv.url, False)
    settle(srv.url, 61)
    text = _get(srv.url + "/metrics")
    assert _sample(text, "partita_replication_pending", table="orders", source_region="us-east-1",
                   destination_region="eu-west-1") == 0
    assert _sample(text, "partita_replication_conflicts_total", table="orders") == 1
    assert _sample(text, "partita_replicated_writes_total", source_region="eu-west-1",
                   destination_region="us-east-1") == 1
    assert _sample(text, "partita_replication_latency_seconds", source_region="us-east-1",
                   destination_region="eu-west-1") >= 60
    page = _get(srv.url + "/console/replication")
    assert '<tr class="conflict" data-table="orders"><td>orders</td><td class="num">1</td></tr>' in page
    assert '<td><code>{"pk": {"S": "k"}}</code></td><td>eu-west-1</td>\n  <td>us-east-1</td>' in page


def test_one_region_server_says_how_to_serve_several(start_server: Callable[..., Server]) -> None:
    srv = start_server("--in-memory")
    assert 'id="one-region"' in _get(srv.url + "/console/replication")
    assert "partita_replication" not in _get(srv.url + "/metrics")
