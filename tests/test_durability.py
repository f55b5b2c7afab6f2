"""Acknowledged writes survive `kill -9` of the server."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import Server, client_for, create_table, durable_store, kill_during_writes


def test_restart_keeps_tables_and_items(start_server: Callable[..., Server], tmp_path: Path) -> None:
    store = durable_store(tmp_path / "data")
    first = start_server(*store)
    ddb = client_for(first.url)
    create_table(ddb, "durable", range_key=("sk", "N"))
    for i in range(50):
        ddb.put_item(TableName="durable", Item={"pk": {"S": "p"}, "sk": {"N": str(i)}, "v": {"S": f"v{i}"}})
    ddb.delete_item(TableName="durable", Key={"pk": {"S": "p"}, "sk": {"N": "0"}})
    first.kill()

    second = start_server(*store)
    ddb = client_for(second.url)
    assert ddb.list_tables()["TableNames"] == ["durable"]
    assert ddb.describe_table(TableName="durable")["Table"]["ItemCount"] == 49
    assert "Item" not in ddb.get_item(TableName="durable", Key={"pk": {"S": "p"}, "sk": {"N": "0"}})
    for i in range(1, 50):
        item = ddb.get_item(TableName="durable", Key={"pk": {"S": "p"}, "sk": {"N": str(i)}})["Item"]
        assert item["v"] == {"S": f"v{i}"}


def test_kill_during_writes_loses_nothing_acknowledged(start_server: Callable[..., Server], tmp_path: Path) -> None:
    store = durable_store(tmp_path / "data")
    server = start_server(*store)
    setup = client_for(server.url)
    create_table(setup, "stream")

    def write(ddb: Any, slot: int, n: int) -> list[int]:
        key = slot * 1_000_000 + n
        ddb.put_item(TableName="stream", Item={"pk": {"S": str(key)}, "n": {"N": str(key)}})
        return [key]

    written = kill_during_writes(server, write, writers=4, at_least=300, seconds=10)

    restarted = start_server(*store)
    ddb: Any = client_for(restarted.url)
    missing = [
        key for key in written
        if "Item" not in ddb.get_item(TableName="stream", Key={"pk": {"S": str(key)}}, ConsistentRead=True)
    ]
    assert missing == []
