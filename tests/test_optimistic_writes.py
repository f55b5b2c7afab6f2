"""Optimistic group commit on SQLite: writes run without the write lock and are checked at the commit.

A write of a group reads the committed state and keeps its rows until the
end of the turn (storage/sqlite_writers.py); the commit takes the lock,
re-reads what the writes read and runs again the requests whose rows another
process changed meanwhile. These tests pin that no update is ever lost
between two processes on one file: at the engine level, where the race can
be timed exactly (two stores on one file, the second committing between the
first one's read and its commit), and over HTTP with two servers on one data
directory incrementing one counter from both sides.
"""

from __future__ import annotations

import re
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import STORE, Server, client_for, create_table
from hypothesis import example, given, settings
from hypothesis import strategies as st

from partita.api.dispatch import handle
from partita.engine.engine import Engine
from partita.errors import DynamoDBError
from partita.storage.sqlite import SQLiteStore

CREATE = {
    "TableName": "counters", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}], "BillingMode": "PAY_PER_REQUEST",
}
KEY = {"pk": {"S": "c"}}


def _item(engine: Engine) -> dict[str, Any]:
    """The counter item as a client reads it: `handle`'s answers go to orjson (GetItem's item may be stored JSON)."""
    answer = handle(engine, "GetItem", {"TableName": "counters", "Key": KEY, "ConsistentRead": True})
    return orjson.loads(orjson.dumps(answer))["Item"]


def _add(engine: Engine, **extra: Any) -> dict[str, Any]:
    return handle(engine, "UpdateItem", {
        "TableName": "counters", "Key": KEY, "UpdateExpression": "ADD n :one",
        "ExpressionAttributeValues": {":one": {"N": "1"}}, "ReturnValues": "UPDATED_NEW", **extra,
    })


@contextmanager
def _two_processes(path: Path) -> Iterator[tuple[Engine, Engine]]:
    """Two engines on one SQLite file, as two server processes have it, the counters table created."""
    first, second = Engine(SQLiteStore(path), background=False), Engine(SQLiteStore(path), background=False)
    try:
        first.tables.create(CREATE)
        yield first, second
    finally:
        first.close()
        second.close()


class _Server:
    """What protocol/server.py gives the store: a request name, held answers, reruns."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.opened = 0
        self.current: dict[str, Any] | None = None
        self.answers: dict[int, dict[str, Any]] = {}
        self.reruns: list[int] = []
        self._requests: dict[int, tuple[Callable[[], dict[str, Any]], object]] = {}
        store = engine.store
        assert isinstance(store, SQLiteStore)
        self.store = store
        store.attach(self._opened, self._token, self._rerun)

    def commit(self) -> bool:
        """The end of the turn, as the server's: False when the group's writes were lost."""
        return self.store.commit_group()

    def _opened(self) -> None:
        self.opened += 1

    def _token(self) -> object | None:
        return self.current

    def _rerun(self, token: object) -> None:
        number = next(n for n, (_, t) in self._requests.items() if t is token)
        self.reruns.append(number)
        self.answer(number, self._requests[number][0], token)

    def answer(self, number: int, run: Callable[[], dict[str, Any]], token: object | None = None) -> None:
        self.current = token if isinstance(token, dict) else {"request": number}
        self._requests[number] = (run, self.current)
        try:
            self.answers[number] = run()
        except DynamoDBError as error:
            self.answers[number] = {"error": type(error).__name__}
        finally:
            self.current = None


@pytest.mark.skipif(STORE != "memory", reason="engine level on its own SQLite file: runs once")
def test_a_write_whose_read_changed_runs_again_at_the_commit(tmp_path: Path) -> None:
    with _two_processes(tmp_path / "partita.db") as (first, second):
        _add(first)  # n = 1, committed
        server = _Server(first)
        server.answer(1, lambda: _add(first))  # reads n = 1 without the lock, would write 2
        assert server.opened == 1
        assert _add(second)["Attributes"]["n"] == {"N": "2"}  # the other process commits meanwhile
        assert server.commit()
        assert server.reruns == [1]
        assert server.answers[1]["Attributes"]["n"] == {"N": "3"}  # the answer that is sent
        assert _item(second)["n"] == {"N": "3"}
        # A condition decided on a stale read is decided again too.
        server.answer(2, lambda: handle(first, "PutItem", {
            "TableName": "counters", "Item": {"pk": {"S": "c"}, "n": {"N": "10"}},
            "ConditionExpression": "n = :three", "ExpressionAttributeValues": {":three": {"N": "3"}},
        }))
        _add(second)  # n = 4: the put's condition no longer holds
        assert server.commit()
        assert server.reruns == [1, 2]
        assert server.answers[2] == {"error": "ConditionalCheckFailedException"}
        assert _item(second)["n"] == {"N": "4"}
        # Nothing changed in between: no rerun, one commit for both writes.
        server.answer(3, lambda: _add(first))
        server.answer(4, lambda: _add(first))
        assert server.commit()
        assert server.reruns == [1, 2]
        assert server.answers[4]["Attributes"]["n"] == {"N": "6"}


@pytest.mark.skipif(STORE != "memory", reason="engine level on its own SQLite file: runs once")
def test_a_turn_after_another_process_committed_reads_its_rows_not_the_cache(tmp_path: Path) -> None:
    """The rows a turn read or wrote are kept (storage/sqlite_cache.py) only while no other commit moves them."""
    with _two_processes(tmp_path / "partita.db") as (first, second):
        server = _Server(first)
        server.answer(1, lambda: _add(first))  # n = 1: the turn reads the absent item, writes n = 1
        assert server.commit()
        server.answer(2, lambda: _add(first))  # n = 2, read from what the last turn left
        assert server.commit()
        assert _add(second)["Attributes"]["n"] == {"N": "3"}  # the other process, between two turns
        server.answer(3, lambda: _add(first))
        assert server.answers[3]["Attributes"]["n"] == {"N": "4"}  # not 3: the turn did not read n = 2
        assert server.commit()
        assert server.reruns == []
        assert _item(second)["n"] == {"N": "4"}
        # A read in a turn commits the turn's writes into its group; a write after it is
        # a locked one, whose row the next turn must read from the file, not from before it.
        server.answer(4, lambda: _add(first))  # n = 5
        server.answer(5, lambda: handle(first, "GetItem", {"TableName": "counters", "Key": KEY}))
        server.answer(6, lambda: _add(first))  # n = 6, under the lock
        assert server.commit()
        server.answer(7, lambda: _add(first))
        assert server.commit()
        assert server.answers[7]["Attributes"]["n"] == {"N": "7"}
        assert _item(second)["n"] == {"N": "7"}


_STEPS = st.lists(
    st.tuples(st.sampled_from(["add", "get", "other", "commit", "touch"]), st.sampled_from(["a", "a", "a", "b"])),
    min_size=1,
    max_size=30,
)


@pytest.mark.skipif(STORE != "memory", reason="engine level on its own SQLite files: runs once")
@settings(max_examples=100, deadline=None)
@given(steps=_STEPS)
# Always tried: a turn after the other process's commit (the cache must start over), and a
# locked write after a read in a turn (the commit must not keep the row the read settled).
@example(steps=[("add", "a"), ("commit", "a"), ("other", "a"), ("add", "a"), ("get", "a"), ("add", "a"),
                ("commit", "a"), ("add", "a"), ("commit", "a")])
def test_turns_and_another_process_never_lose_a_write(steps: list[tuple[str, str]]) -> None:
    """Any interleaving of one server's turns (writes, reads, commits) with another process's writes.

    Each counter ends at the number of increments made to it, and no two
    increments the server acknowledged for one counter answer the same value:
    what the optimistic writes, their cache and their checks at the commit
    must keep.
    """
    with tempfile.TemporaryDirectory() as directory, _two_processes(Path(directory) / "partita.db") as pair:
        first, second = pair
        server = _Server(first)
        expected = {"a": 0, "b": 0}
        sent: list[tuple[int, str]] = []  # requests whose answer the commit makes final
        for number, (step, key) in enumerate(steps):
            item_key = {"pk": {"S": key}}
            if step == "add":
                expected[key] += 1
                sent.append((number, key))
                server.answer(number, lambda k=item_key: _add(first, Key=k))
            elif step == "get":
                server.answer(number, lambda k=item_key: handle(
                    first, "GetItem", {"TableName": "counters", "Key": k}))
            elif step == "touch":  # writes the item, not its counter (a rerun may reorder writes)
                server.answer(number, lambda k=item_key, v=str(number): handle(first, "UpdateItem", {
                    "TableName": "counters", "Key": k, "UpdateExpression": "SET m = :v",
                    "ExpressionAttributeValues": {":v": {"N": v}}}))
            elif step == "other":
                if server.store._group_open:
                    # The turn holds the write lock (a read settled its writes): the
                    # other process waits for it, and the turn commits first.
                    assert server.commit()
                expected[key] += 1
                _add(second, Key=item_key)
            else:
                assert server.commit()
        assert server.commit()
        for key, count in expected.items():
            item = handle(second, "GetItem", {"TableName": "counters", "Key": {"pk": {"S": key}},
                                              "ConsistentRead": True}).get("Item")
            counter = (orjson.loads(orjson.dumps(item)) if item else {}).get("n", {"N": "0"})
            assert counter == {"N": str(count)}
        # Per key, each increment the server acknowledged answered a value of its own.
        for key in expected:
            values = [int(server.answers[n]["Attributes"]["n"]["N"]) for n, k in sent if k == key]
            assert len(set(values)) == len(values)


@pytest.mark.skipif(STORE != "sqlite", reason="two servers on one SQLite file")
def test_two_servers_on_one_file_lose_no_increment(start_server: Callable[..., Server], tmp_path: Path) -> None:
    data = str(tmp_path / "data")
    servers = [start_server("--data-dir", data), start_server("--data-dir", data)]
    clients = [client_for(server.url) for server in servers]
    create_table(clients[0], "counters")
    acknowledged = 0
    swapped = 0
    lock = threading.Lock()

    def work(slot: int) -> None:
        nonlocal acknowledged, swapped
        ddb = client_for(servers[slot % 2].url)
        for _ in range(40):
            ddb.update_item(TableName="counters", Key=KEY, UpdateExpression="ADD n :one",
                            ExpressionAttributeValues={":one": {"N": "1"}})
            # compare-and-swap: read, then write only if nobody wrote in between
            seen = ddb.get_item(TableName="counters", Key={"pk": {"S": "cas"}}, ConsistentRead=True).get("Item")
            old = 0 if seen is None else int(seen["v"]["N"])
            try:
                ddb.put_item(TableName="counters", Item={"pk": {"S": "cas"}, "v": {"N": str(old + 1)}},
                             ConditionExpression="attribute_not_exists(v) OR v = :old",
                             ExpressionAttributeValues={":old": {"N": str(old)}})
            except ddb.exceptions.ConditionalCheckFailedException:
                continue
            with lock:
                swapped += 1
        with lock:
            acknowledged += 40

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(work, range(8)))
    for ddb in clients:
        counter = ddb.get_item(TableName="counters", Key=KEY, ConsistentRead=True)["Item"]["n"]
        assert counter == {"N": str(acknowledged)}
        cas = ddb.get_item(TableName="counters", Key={"pk": {"S": "cas"}}, ConsistentRead=True)["Item"]["v"]
        assert cas == {"N": str(swapped)}
    # A write run again at the group commit counts once in /metrics: its last run's outcome.
    expected = {
        ("UpdateItem", "success"): float(acknowledged),
        ("PutItem", "success"): float(swapped),
        ("PutItem", "ConditionalCheckFailedException"): float(acknowledged - swapped),
    }
    deadline = time.monotonic() + 10
    while True:
        counted = [{key: _requests(_scrape(server.url), *key) for key in expected} for server in servers]
        if counted == [expected, expected] or time.monotonic() > deadline:
            break
        time.sleep(0.2)  # each server writes its counts for the other within about a second
    assert counted == [expected, expected]


def _scrape(url: str) -> str:
    with urllib.request.urlopen(url + "/metrics") as answer:
        return answer.read().decode()


def _requests(text: str, operation: str, outcome: str) -> float | None:
    """partita_requests_total for an operation and outcome (both servers count both: one data directory)."""
    for line in text.splitlines():
        if line.startswith("partita_requests_total{"):
            labels = dict(re.findall(r'(\w+)="([^"]*)"', line.split("}")[0]))
            if labels == {"operation": operation, "outcome": outcome}:
                return float(line.rsplit(" ", 1)[1])
    return None
