"""kill -9 during Kinesis delivery loses no acknowledged change (duplicates allowed, order per key kept)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from backup_helpers import wait_for
from conftest import Server, client_for, create_table, durable_store, kill_during_writes
from kinesis_server import Kinesalite, needs_kinesalite, start_kinesalite

pytestmark = needs_kinesalite


@pytest.fixture
def kinesalite() -> Iterator[Kinesalite]:
    server = start_kinesalite()
    yield server
    server.stop()


def test_kill_during_delivery_loses_no_acknowledged_change(
        start_server: Callable[..., Server], kinesalite: Kinesalite, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Small, slow batches, so the kill lands while the duty is delivering.
    monkeypatch.setenv("PARTITA_KINESIS_BATCH", "4")
    monkeypatch.setenv("PARTITA_KINESIS_PAUSE", "0.02")
    args = [*durable_store(tmp_path), "--kinesis-endpoint", kinesalite.url]
    server = start_server(*args)
    ddb = client_for(server.url)
    create_table(ddb, "crash-table")
    arn = kinesalite.create_stream("crash-stream", shards=2)
    ddb.enable_kinesis_streaming_destination(TableName="crash-table", StreamArn=arn)
    wait_for(lambda: ddb.describe_kinesis_streaming_destination(TableName="crash-table")[
        "KinesisDataStreamDestinations"][0]["DestinationStatus"] == "ACTIVE")

    def write(client: Any, slot: int, n: int) -> list[Any]:
        key = f"k{slot}"
        client.put_item(TableName="crash-table", Item={"pk": {"S": key}, "n": {"N": str(n)}})
        return [(key, n)]

    written = kill_during_writes(server, write, writers=3, at_least=120, seconds=60)
    restarted = start_server(*args)
    ddb = client_for(restarted.url)
    ddb.put_item(TableName="crash-table", Item={"pk": {"S": "after"}, "n": {"N": "0"}})
    wanted = {*written, ("after", 0)}

    def delivered() -> list[tuple[str, int]] | None:
        found = [(r["dynamodb"]["Keys"]["pk"]["S"], int(r["dynamodb"]["NewImage"]["n"]["N"]))
                 for r in kinesalite.records("crash-stream")]
        return found if wanted <= set(found) else None

    found = wait_for(delivered, 120)
    # Per key, the last time each version shows up respects the write order (resends may repeat a tail).
    for slot in range(3):
        mine = [n for key, n in found if key == f"k{slot}"]
        last = {n: i for i, n in enumerate(mine)}
        ordered = sorted(last, key=lambda n: last[n])
        assert ordered == sorted(ordered)
