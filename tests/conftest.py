"""Real Partita servers for the tests, driven over HTTP as users drive them.

Each pytest worker starts its own server (in memory, on a free port); tests
share it and keep apart by unique table names. Tests that need to kill and
restart a server use `start_server` with their own data directory.
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config
from hypothesis import settings as hypothesis_settings

# `./dev test` (so CI) runs each property test on the same examples every time
# (PARTITA_HYPOTHESIS=gate): a landing must not depend on what a random draw
# happens to find that day. Run pytest directly, or set PARTITA_HYPOTHESIS=default,
# to explore new examples; add what they find as an @example.
hypothesis_settings.register_profile("gate", derandomize=True, database=None)
hypothesis_settings.load_profile(os.environ.get("PARTITA_HYPOTHESIS", "default"))

os.environ.setdefault("AWS_ACCESS_KEY_ID", "partita")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "partita")
os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")


@dataclass
class Server:
    process: subprocess.Popen[str]
    url: str

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()


def launch(*args: str) -> Server:
    """Start `partita serve --port 0 ARGS` and wait for the line with its URL."""
    process = subprocess.Popen(
        [sys.executable, "-m", "partita", "serve", "--port", "0", *args],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if "://" not in line:
        process.kill()
        raise RuntimeError(f"partita did not start: {line!r}")
    return Server(process, line.strip().split()[-1])


def client_for(url: str) -> Any:
    return boto3.client(
        "dynamodb",
        endpoint_url=url,
        region_name="us-east-1",
        config=Config(retries={"max_attempts": 1}),
    )


#: Which store the shared server runs on: `memory` (default), `sqlite` or `postgres`.
#: `./dev test` runs the suite once with each, so every backend meets every test.
STORE = os.environ.get("PARTITA_TEST_STORE", "memory")
#: The throwaway cluster of the PostgreSQL pass (tests/pg/cluster.sh, started by `./dev test`).
PG_URL = os.environ.get("PARTITA_TEST_PG_URL", "")
PG_DIR = os.environ.get("PARTITA_TEST_PG_DIR", "")
_databases = itertools.count()


def fresh_database(tag: str = "") -> str:
    """The URL of a new, empty database on the test cluster (one per pytest worker or test)."""
    import psycopg

    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw")
    name = f"partita_{worker}_{tag}{next(_databases)}_{uuid.uuid4().hex[:6]}"
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return PG_URL.rsplit("/", 1)[0] + "/" + name


def durable_store(folder: Path, tag: str = "durable") -> list[str]:
    """`partita serve` arguments of a store that outlives its server: restart and kill -9 tests.

    The store under test in the PostgreSQL pass is PostgreSQL, so there the
    server gets a fresh database of the pass's cluster (servers started again
    with the same arguments find it); otherwise a SQLite store in `folder`.
    """
    if STORE == "postgres" and PG_URL:
        return ["--backend", fresh_database(tag)]
    return ["--data-dir", str(folder)]


def needs_postgres() -> pytest.MarkDecorator:
    return pytest.mark.skipif(not PG_URL, reason="needs the PostgreSQL pass of ./dev test (PARTITA_TEST_PG_URL)")


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    if STORE == "postgres":
        srv = launch("--backend", fresh_database())
    elif STORE == "sqlite":
        srv = launch("--data-dir", str(tmp_path_factory.mktemp("store")))
    else:
        srv = launch("--in-memory")
    yield srv
    srv.stop()


@pytest.fixture(scope="session")
def endpoint(server: Server) -> str:
    return server.url


@pytest.fixture(scope="session")
def ddb(endpoint: str) -> Any:
    return client_for(endpoint)


_counter = itertools.count()


@pytest.fixture
def table_name() -> str:
    return f"t-{uuid.uuid4().hex[:10]}-{next(_counter)}"


def create_table(
    ddb: Any,
    name: str,
    hash_key: tuple[str, str] = ("pk", "S"),
    range_key: tuple[str, str] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    schema = [{"AttributeName": hash_key[0], "KeyType": "HASH"}]
    definitions = [{"AttributeName": hash_key[0], "AttributeType": hash_key[1]}]
    if range_key is not None:
        schema.append({"AttributeName": range_key[0], "KeyType": "RANGE"})
        definitions.append({"AttributeName": range_key[0], "AttributeType": range_key[1]})
    extra.setdefault("BillingMode", "PAY_PER_REQUEST")
    return ddb.create_table(TableName=name, KeySchema=schema, AttributeDefinitions=definitions, **extra)


@pytest.fixture
def hash_table(ddb: Any, table_name: str) -> str:
    """A table keyed by `pk` (S)."""
    create_table(ddb, table_name)
    return table_name


@pytest.fixture
def range_table(ddb: Any, table_name: str) -> str:
    """A table keyed by `pk` (S) and `sk` (N)."""
    create_table(ddb, table_name, range_key=("sk", "N"))
    return table_name


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[Callable[..., Server]]:
    started: list[Server] = []

    def start(*args: str) -> Server:
        srv = launch(*args)
        started.append(srv)
        return srv

    yield start
    for srv in started:
        srv.stop()


def put_all(ddb: Any, table: str, items: list[dict[str, Any]]) -> None:
    for item in items:
        ddb.put_item(TableName=table, Item=item)


def error_of(excinfo: pytest.ExceptionInfo[Any]) -> tuple[str, str]:
    """(code, message) of a botocore ClientError."""
    error = excinfo.value.response["Error"]
    return error["Code"], error.get("Message", "")


FAKE_AUTH = (
    "AWS4-HMAC-SHA256 Credential=partita/20260101/us-east-1/dynamodb/aws4_request, "
    "SignedHeaders=host;x-amz-date, Signature=0000"
)


@dataclass
class RawResponse:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        import json

        return json.loads(self.body)


def raw_request(
    url: str,
    operation: str | None,
    body: bytes | dict[str, Any] | None,
    *,
    headers: dict[str, str | None] | None = None,
    method: str = "POST",
) -> RawResponse:
    """One HTTP request as a hand-rolled client would send it (for bad input)."""
    import http.client
    import json
    from urllib.parse import urlparse

    parsed = urlparse(url)
    payload = json.dumps(body).encode() if isinstance(body, dict) else (body or b"")
    sent: dict[str, str | None] = {
        "Content-Type": "application/x-amz-json-1.0",
        "Authorization": FAKE_AUTH,
        "X-Amz-Date": "20260101T000000Z",
    }
    if operation is not None:
        sent["X-Amz-Target"] = f"DynamoDB_20120810.{operation}"
    sent.update(headers or {})
    present = {k: v for k, v in sent.items() if v is not None}
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
    try:
        conn.request(method, "/", body=payload, headers=present)
        response = conn.getresponse()
        return RawResponse(response.status, {k.lower(): v for k, v in response.getheaders()}, response.read())
    finally:
        conn.close()


def kill_during_writes(
    server: Server,
    write: Callable[[Any, int, int], list[Any] | None],
    *,
    writers: int,
    at_least: int,
    seconds: float,
) -> list[Any]:
    """Run `writers` threads until `at_least` writes are acknowledged, `kill -9` the server, return them.

    `write(client, slot, n)` makes the slot's n-th write and returns the keys
    it acknowledged (None: nothing, stop). Any error ends that writer: after
    the kill, requests fail in every way a dead server makes them fail.
    """
    import threading
    import time

    acknowledged: list[list[Any]] = [[] for _ in range(writers)]
    stop = threading.Event()

    def writer(slot: int) -> None:
        client = client_for(server.url)
        n = 0
        while not stop.is_set():
            try:
                keys = write(client, slot, n)
            except Exception:
                return
            if keys is None:
                return
            acknowledged[slot].extend(keys)
            n += 1

    threads = [threading.Thread(target=writer, args=(slot,)) for slot in range(writers)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + seconds
    while sum(map(len, acknowledged)) < at_least and time.monotonic() < deadline:
        time.sleep(0.05)
    server.kill()
    stop.set()
    for thread in threads:
        thread.join(30)
    written = [key for slot in acknowledged for key in slot]
    assert len(written) >= at_least
    return written
