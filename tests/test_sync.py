"""`partita serve --sync full`: the SQLite store syncs its WAL at every commit (and refuses other stores).

What an OS crash keeps cannot be observed from a test; what can is that the
server's connection runs SQLite's FULL level (NORMAL by default), that
acknowledged writes still survive kill -9 with it, and that the flag is
refused where it would promise nothing.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import Server, client_for, create_table, kill_during_writes

from partita.testing import local

FULL, NORMAL = 2, 1  # PRAGMA synchronous's answers


def _level(server: Any) -> int:
    return int(server.engine.store._db.execute("PRAGMA synchronous").fetchone()[0])


def test_sync_full_is_the_connection_s_level_and_normal_the_default(tmp_path: Path) -> None:
    with local(data_dir=tmp_path / "full", sync="full") as server:
        ddb = server.client()
        create_table(ddb, "synced")
        ddb.put_item(TableName="synced", Item={"pk": {"S": "a"}})
        assert _level(server) == FULL
    with local(data_dir=tmp_path / "full") as server:
        assert _level(server) == NORMAL
        assert server.client().get_item(TableName="synced", Key={"pk": {"S": "a"}})["Item"] == {"pk": {"S": "a"}}


def test_kill_during_writes_loses_nothing_acknowledged_with_sync_full(
    start_server: Callable[..., Server], tmp_path: Path
) -> None:
    store = ["--data-dir", str(tmp_path / "data"), "--sync", "full"]
    server = start_server(*store)
    create_table(client_for(server.url), "stream")

    def write(ddb: Any, slot: int, n: int) -> list[int]:
        key = slot * 1_000_000 + n
        ddb.put_item(TableName="stream", Item={"pk": {"S": str(key)}})
        return [key]

    written = kill_during_writes(server, write, writers=4, at_least=100, seconds=5)
    ddb = client_for(start_server(*store).url)
    assert [key for key in written if "Item" not in ddb.get_item(
        TableName="stream", Key={"pk": {"S": str(key)}}, ConsistentRead=True)] == []


def test_sync_is_refused_where_it_would_promise_nothing() -> None:
    for args, message in (
        (["--in-memory", "--sync", "full"], "partita: --sync is for the SQLite store in --data-dir; --in-memory keeps nothing"),
        (["--backend", "postgresql://nobody@127.0.0.1:1/none", "--sync", "full"],
         "partita: --sync is for the SQLite store; PostgreSQL's durability is its synchronous_commit setting "
         "(on by default)"),
    ):
        done = subprocess.run([sys.executable, "-m", "partita", "serve", "--port", "0", *args],
                              capture_output=True, text=True, timeout=60)
        assert (done.returncode, done.stderr.strip()) == (1, message)
    done = subprocess.run([sys.executable, "-m", "partita", "serve", "--sync", "always"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "argument --sync: invalid choice: 'always' (choose from 'normal', 'full')" in done.stderr
