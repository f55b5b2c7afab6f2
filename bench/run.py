#!/usr/bin/env python3
"""Partita's benchmark: Partita against dynalite and moto, driven by wrk.

Run with the project's venv (it needs botocore for SigV4 signing):

    bash bench/setup.sh                       # once: wrk, moto, dynalite
    .venv/bin/python bench/run.py             # 10 s per workload
    .venv/bin/python bench/run.py --quick     # 3 s per workload
    .venv/bin/python bench/run.py --servers partita --workloads get --json out.json

For each server, one after the other: start it on a free 127.0.0.1 port and
time the first answered request (cold start), create the tables the chosen
workloads need, preload them, then for each workload run a checked warm-up
(every response must be 200 with the expected body) and a measured wrk run.
See bench/README.md for what each number means.

Adding a workload: write a function that returns one random request
(operation name and JSON payload) for a table, and add a `Workload` entry to
WORKLOADS. The requests are built and SigV4-signed here and replayed by
lua/replay.lua; a workload that needs different client behaviour can name its
own Lua script (same arguments and BENCH_RESULT output as replay.lua).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
PEERS_DIR = BENCH_DIR / ".peers"
LUA_DIR = BENCH_DIR / "lua"
RESULTS_DIR = BENCH_DIR / "results"

REGION = "us-east-1"
TARGET_PREFIX = "DynamoDB_20120810."
CONTENT_TYPE = "application/x-amz-json-1.0"

Json = dict[str, Any]


# --------------------------------------------------------------------------
# Signing and a small HTTP client (preload, table set-up, sanity checks)
# --------------------------------------------------------------------------


class Signer:
    """Real SigV4 signatures with fixed fake credentials.

    Servers that check only the header's shape (dynalite, moto) and servers
    that verify signatures against known credentials both accept these.
    """

    def __init__(self) -> None:
        self._auth = SigV4Auth(
            Credentials("AKIDPARTITABENCH", "partita-bench-secret"), "dynamodb", REGION
        )

    def headers(self, host: str, operation: str, body: bytes) -> list[tuple[str, str]]:
        request = AWSRequest(
            method="POST",
            url=f"http://{host}/",
            data=body,
            headers={
                "Host": host,
                "Content-Type": CONTENT_TYPE,
                "X-Amz-Target": TARGET_PREFIX + operation,
            },
        )
        self._auth.add_auth(request)
        out = [(name, str(value)) for name, value in request.headers.items()]
        out.append(("Content-Length", str(len(body))))
        return out

    def raw_request(self, host: str, operation: str, payload: Json) -> bytes:
        body = json.dumps(payload, separators=(",", ":")).encode()
        head = "POST / HTTP/1.1\r\n" + "".join(
            f"{k}: {v}\r\n" for k, v in self.headers(host, operation, body)
        )
        return head.encode() + b"\r\n" + body


class DynamoClient:
    """Keep-alive DynamoDB JSON client, one connection per calling thread."""

    def __init__(self, port: int, timeout: float = 30.0) -> None:
        self.host = f"127.0.0.1:{port}"
        self.port = port
        self.timeout = timeout
        self._signer = Signer()
        self._local = threading.local()

    def _connection(self) -> http.client.HTTPConnection:
        conn: http.client.HTTPConnection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
            self._local.conn = conn
        return conn

    def call(self, operation: str, payload: Json) -> tuple[int, Json]:
        body = json.dumps(payload, separators=(",", ":")).encode()
        for attempt in range(2):
            conn = self._connection()
            try:
                conn.request(
                    "POST", "/", body, dict(self._signer.headers(self.host, operation, body))
                )
                response = conn.getresponse()
                data = response.read()
                break
            except (OSError, http.client.HTTPException):
                conn.close()
                self._local.conn = None
                if attempt:
                    raise
        try:
            decoded = json.loads(data) if data else {}
        except ValueError:
            decoded = {"__raw": data[:300].decode(errors="replace")}
        if not isinstance(decoded, dict):
            decoded = {"__raw": decoded}
        return response.status, decoded

    def check(self, operation: str, payload: Json) -> Json:
        status, answer = self.call(operation, payload)
        if status != 200:
            raise BenchError(f"{operation} -> HTTP {status}: {json.dumps(answer)[:300]}")
        return answer


class BenchError(Exception):
    pass


# --------------------------------------------------------------------------
# Tables and their preloaded items
# --------------------------------------------------------------------------

VALUE_LEN = 80  # with the key and a number attribute, items are ~100 bytes


@dataclass(frozen=True)
class TableSpec:
    """A table the workloads read and write, and the items preloaded into it.

    Items are numbered (p, s): p in [0, partitions) is the partition key,
    s in [0, per_partition) the sort key (composite tables only).
    """

    name: str
    range_key: bool
    partitions: int
    per_partition: int = 1

    @property
    def count(self) -> int:
        return self.partitions * self.per_partition

    def create_payload(self) -> Json:
        attrs = [{"AttributeName": "pk", "AttributeType": "S"}]
        schema = [{"AttributeName": "pk", "KeyType": "HASH"}]
        if self.range_key:
            attrs.append({"AttributeName": "sk", "AttributeType": "S"})
            schema.append({"AttributeName": "sk", "KeyType": "RANGE"})
        return {
            "TableName": self.name,
            "AttributeDefinitions": attrs,
            "KeySchema": schema,
            "BillingMode": "PAY_PER_REQUEST",
        }

    def key(self, p: int, s: int = 0) -> Json:
        key: Json = {"pk": {"S": f"pk{p:08d}"}}
        if self.range_key:
            key["sk"] = {"S": f"sk{s:06d}"}
        return key

    def item(self, p: int, s: int = 0, version: int = 0) -> Json:
        item = self.key(p, s)
        seed = f"{p:08d}{s:06d}{version:04d}-"
        item["n"] = {"N": str(p * 1000 + s)}
        item["v"] = {"S": (seed * (VALUE_LEN // len(seed) + 1))[:VALUE_LEN]}
        return item

    def random_key(self, rng: random.Random) -> tuple[int, int]:
        return rng.randrange(self.partitions), rng.randrange(self.per_partition)

    def all_items(self) -> Iterator[Json]:
        for p in range(self.partitions):
            for s in range(self.per_partition):
                yield self.item(p, s)


COLLECTION = 100  # items per partition key in the Query tables
QUERY_ITEMS = 25  # items one Query workload request returns


def make_tables(items: int, collection_items: int = 1_000_000) -> dict[str, TableSpec]:
    return {
        # item collections of 100, in a small and a large table: a Query's cost
        # must not depend on the table's size (issue 4, "Cost is flat")
        "coll10k": TableSpec("bench_coll_10k", range_key=True, partitions=10_000 // COLLECTION,
                             per_partition=COLLECTION),
        "coll1m": TableSpec("bench_coll_large", range_key=True,
                            partitions=max(1, collection_items // COLLECTION), per_partition=COLLECTION),
        # hash key only: put/get
        "simple": TableSpec("bench_simple", range_key=False, partitions=items),
        # pk/sk, item collections of 10: for Query-shaped workloads
        "composite": TableSpec(
            "bench_composite", range_key=True, partitions=max(1, items // 10), per_partition=10
        ),
    }


# --------------------------------------------------------------------------
# Workloads
# --------------------------------------------------------------------------

RequestBuilder = Callable[[TableSpec, random.Random], tuple[str, Json]]


def build_put(table: TableSpec, rng: random.Random) -> tuple[str, Json]:
    p, s = table.random_key(rng)
    return "PutItem", {
        "TableName": table.name,
        "Item": table.item(p, s, version=rng.randrange(10000)),
    }


def build_update(table: TableSpec, rng: random.Random) -> tuple[str, Json]:
    """SET of the string attribute and ADD to the number: a read-modify-write of a preloaded item."""
    p, s = table.random_key(rng)
    return "UpdateItem", {
        "TableName": table.name,
        "Key": table.key(p, s),
        "UpdateExpression": "SET v = :v ADD n :one",
        "ExpressionAttributeValues": {":v": table.item(p, s, version=rng.randrange(10000))["v"],
                                      ":one": {"N": "1"}},
    }


BATCH_ITEMS = 25  # BatchWriteItem's maximum


def build_batch(table: TableSpec, rng: random.Random) -> tuple[str, Json]:
    """25 PutRequests of distinct random preloaded keys (one request, so ops/s counts batches)."""
    keys = rng.sample(range(table.partitions), min(BATCH_ITEMS, table.partitions))
    puts = [{"PutRequest": {"Item": table.item(p, 0, version=rng.randrange(10000))}} for p in keys]
    return "BatchWriteItem", {"RequestItems": {table.name: puts}}


def build_get(table: TableSpec, rng: random.Random) -> tuple[str, Json]:
    p, s = table.random_key(rng)
    return "GetItem", {"TableName": table.name, "Key": table.key(p, s)}


def build_query(table: TableSpec, rng: random.Random) -> tuple[str, Json]:
    """25 consecutive items of a random 100-item collection, by a sort-key range."""
    p = rng.randrange(table.partitions)
    s = rng.randrange(table.per_partition - QUERY_ITEMS + 1)
    return "Query", {
        "TableName": table.name,
        "KeyConditionExpression": "pk = :p AND sk BETWEEN :a AND :b",
        "ExpressionAttributeValues": {
            ":p": table.key(p)["pk"],
            ":a": table.key(p, s)["sk"],
            ":b": table.key(p, s + QUERY_ITEMS - 1)["sk"],
        },
    }


def prepare_scan(client: DynamoClient, table: TableSpec) -> tuple[RequestBuilder, float]:
    """Page through the whole table once; requests then fetch a random page of that walk.

    A full Scan is a chain of requests, each starting where the previous
    page ended, so it cannot be replayed as independent requests; but its
    pages can: every request reads one page of the walk. Items read per
    second is requests per second times the walk's mean items per page.
    """
    starts: list[Json | None] = [None]
    total = 0
    while True:
        payload: Json = {"TableName": table.name}
        if starts[-1] is not None:
            payload["ExclusiveStartKey"] = starts[-1]
        answer = client.check("Scan", payload)
        total += int(answer.get("Count", 0))
        last = answer.get("LastEvaluatedKey")
        if last is None:
            break
        starts.append(last)
    if total != table.count:
        raise BenchError(f"a full Scan of {table.name} read {total} items, expected {table.count}")

    def build(table: TableSpec, rng: random.Random) -> tuple[str, Json]:
        payload: Json = {"TableName": table.name}
        start = rng.choice(starts)
        if start is not None:
            payload["ExclusiveStartKey"] = start
        return "Scan", payload

    return build, total / len(starts)


@dataclass(frozen=True)
class Workload:
    name: str
    description: str
    table: str  # key of make_tables()
    build: RequestBuilder  # one random request for this workload
    expect: str  # text every good response body contains
    threads: int = 2
    connections: int = 32
    lua: str = "replay.lua"
    # per-server set-up returning the request builder to use and the items
    # each request reads (reported as items/s), for requests that depend on
    # the server's own answers (Scan pages)
    prepare: Callable[[DynamoClient, TableSpec], tuple[RequestBuilder, float]] | None = None


WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (
        Workload(
            "put", "PutItem, random preloaded key, ~100 B item", "simple", build_put, "{", 2, 32
        ),
        Workload("update", "UpdateItem (SET + ADD), random preloaded key", "simple", build_update,
                 "{", 2, 32),
        Workload("batch", "BatchWriteItem of 25 puts, random preloaded keys (ops/s = batches)",
                 "simple", build_batch, '"UnprocessedItems":{}', 2, 32),
        Workload("get", "GetItem, random preloaded key", "simple", build_get, '"Item"', 2, 32),
        Workload("get1", "GetItem at 1 connection (latency)", "simple", build_get, '"Item"', 1, 1),
        Workload("query10k", "Query, 25 of a 100-item collection, 10k-item table", "coll10k",
                 build_query, '"Count":25', 2, 32),
        Workload("query1m", "Query, 25 of a 100-item collection, large table (--collection-items)",
                 "coll1m", build_query, '"Count":25', 2, 32),
        # 8 connections: 32 concurrent 1 MB pages time dynalite out (10 s)
        Workload("scan10k", "Scan pages of the 10k-item simple table (items/s)", "simple",
                 build_get, '"ScannedCount"', 2, 8, prepare=prepare_scan),
    )
}


# --------------------------------------------------------------------------
# Servers
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class ServerDef:
    name: str
    command: Callable[[int], list[str]]
    missing_hint: str
    #: members added to every CreateTable of the bench on this server
    table_options: Json = field(default_factory=dict)

    def missing(self) -> str | None:
        exe = self.command(0)[0]
        if os.sep in exe:
            if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
                return f"{exe} not found; {self.missing_hint}"
        elif shutil.which(exe) is None:
            return f"{exe} not on PATH; {self.missing_hint}"
        for arg in self.command(0)[1:]:
            if arg.endswith(".js") and not os.path.isfile(arg):
                return f"{arg} not found; {self.missing_hint}"
        return None


def _pg_database(port: int) -> str:
    """A new database on PARTITA_BENCH_PG_URL's server for one run (port 0: only checking the command)."""
    base = os.environ.get("PARTITA_BENCH_PG_URL", "")
    if not base or port == 0:
        return base or "postgresql://unset"
    import psycopg

    name = f"partita_bench_{port}_{os.getpid()}_{int(time.time())}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return base.rsplit("/", 1)[0] + "/" + name
def _bench_auth_file() -> str:
    """An --auth file naming the bench's signing key, allowed everything."""
    path = Path(tempfile.mkdtemp(prefix="partita-bench-auth-")) / "auth.json"
    user = {
        "name": "bench",
        "access_key_id": "AKIDPARTITABENCH",
        "secret_access_key": "partita-bench-secret",
        "policies": [
            {
                "Version": "2012-10-17",
                "Statement": [{"Effect": "Allow", "Action": "dynamodb:*", "Resource": "*"}],
            }
        ],
    }
    path.write_text(json.dumps({"users": [user]}))
    return str(path)


DYNALITE_CLI = PEERS_DIR / "dynalite" / "node_modules" / "dynalite" / "cli.js"

SERVERS: dict[str, ServerDef] = {
    "partita": ServerDef(
        "partita",
        lambda port: [
            str(REPO_DIR / ".venv" / "bin" / "partita"),
            "serve",
            "--in-memory",
            "--port",
            str(port),
        ],
        "install the project into .venv (pip install -e .)",
    ),
    # not run by default: `--auth` with one allow-all principal (the bench's key), to
    # measure what signature verification and policy evaluation add (bench ratio)
    "partita-auth": ServerDef(
        "partita-auth",
        lambda port: [
            str(REPO_DIR / ".venv" / "bin" / "partita"),
            "serve",
            "--in-memory",
            "--auth",
            _bench_auth_file(),
            "--port",
            str(port),
        ],
        "install the project into .venv (pip install -e .)",
    ),
    # not run by default: --emulate-throughput, to measure what the throughput emulation costs
    # (the ratio to "partita" is reported when both run). Its tables are on-demand with a warm
    # throughput of 120,000 reads / 200,000 writes a second (240 partitions) and a per-table quota
    # to match, so that the bench measures the meter's cost, not throttling: a new on-demand
    # table's 4,000 writes a second (and its partitions' 1,000 each) would throttle the put
    # workload, and the default quota (40,000 units a second) the batch workload at ~80,000 items a second.
    "partita-emulated": ServerDef(
        "partita-emulated",
        lambda port: [
            str(REPO_DIR / ".venv" / "bin" / "partita"),
            "serve",
            "--in-memory",
            "--emulate-throughput",
            "--table-max-units",
            "400000",
            "--port",
            str(port),
        ],
        "install the project into .venv (pip install -e .)",
        {"WarmThroughput": {"ReadUnitsPerSecond": 120_000, "WriteUnitsPerSecond": 200_000}},
    ),
    # not run by default: the durable SQLite store, in one process and in two
    "partita-disk": ServerDef(
        "partita-disk",
        lambda port: [
            str(REPO_DIR / ".venv" / "bin" / "partita"),
            "serve",
            "--data-dir",
            tempfile.mkdtemp(prefix="partita-bench-"),
            "--port",
            str(port),
        ],
        "install the project into .venv (pip install -e .)",
    ),
    "partita-disk-2w": ServerDef(
        "partita-disk-2w",
        lambda port: [
            str(REPO_DIR / ".venv" / "bin" / "partita"),
            "serve",
            "--workers",
            "2",
            "--data-dir",
            tempfile.mkdtemp(prefix="partita-bench-"),
            "--port",
            str(port),
        ],
        "install the project into .venv (pip install -e .)",
    ),
    # not run by default: the PostgreSQL store (PARTITA_BENCH_PG_URL, e.g. from
    # `tests/pg/cluster.sh start DIR`), in one process and in two; a fresh database each run
    "partita-pg": ServerDef(
        "partita-pg",
        lambda port: [str(REPO_DIR / ".venv" / "bin" / "partita"), "serve", "--backend", _pg_database(port),
                      "--port", str(port)],
        "set PARTITA_BENCH_PG_URL to a PostgreSQL URL (tests/pg/cluster.sh start DIR prints one)",
    ),
    "partita-pg-2w": ServerDef(
        "partita-pg-2w",
        lambda port: [str(REPO_DIR / ".venv" / "bin" / "partita"), "serve", "--workers", "2", "--backend",
                      _pg_database(port), "--port", str(port)],
        "set PARTITA_BENCH_PG_URL to a PostgreSQL URL (tests/pg/cluster.sh start DIR prints one)",
    ),
    "dynalite": ServerDef(
        "dynalite",
        lambda port: ["node", str(DYNALITE_CLI), "--host", "127.0.0.1", "--port", str(port)],
        "run bench/setup.sh",
    ),
    # not run by default: the ceiling plain Python reaches here (see ceiling_server.py)
    "ceiling": ServerDef(
        "ceiling",
        lambda port: [sys.executable, str(BENCH_DIR / "ceiling_server.py"), "--port", str(port)],
        "it needs uvloop, httptools and orjson (the project's venv has them)",
    ),
    "moto": ServerDef(
        "moto",
        lambda port: [
            str(PEERS_DIR / "moto-venv" / "bin" / "moto_server"),
            "-H",
            "127.0.0.1",
            "-p",
            str(port),
        ],
        "run bench/setup.sh",
    ),
}


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def process_tree(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def rss_mib(pid: int) -> float:
    """VmRSS of the server process and its descendants (worker processes), MiB."""
    total_kb = 0
    for p in process_tree(pid):
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total_kb += int(line.split()[1])
        except OSError:
            pass
    return total_kb / 1024


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of the server process tree."""
    ticks = 0
    for p in process_tree(pid):
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            ticks += int(fields[11]) + int(fields[12])  # utime, stime
        except (OSError, IndexError, ValueError):
            pass
    return ticks / os.sysconf("SC_CLK_TCK")


def wait_idle(
    pid: int, max_cores: float = 0.1, window: float = 0.25, timeout: float = 30.0
) -> float:
    """Waits until the server uses less than max_cores of CPU over a window.

    wrk stops sending at the end of a run but a slow server may still be
    working through requests it had queued; the next run must not pay for
    them. Returns the seconds waited.
    """
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        before = cpu_seconds(pid)
        time.sleep(window)
        if cpu_seconds(pid) - before < max_cores * window:
            break
    return time.monotonic() - started


class RunningServer:
    def __init__(self, definition: ServerDef, log_path: Path) -> None:
        self.definition = definition
        self.port = free_port()
        self.log_path = log_path
        self._log = open(log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.started_at = time.perf_counter()
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen(
            definition.command(self.port),
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env=env,
            cwd=REPO_DIR,
        )
        self.client = DynamoClient(self.port)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def wait_first_answer(self, timeout: float) -> tuple[float, int]:
        """Seconds from spawn to the first HTTP answer to ListTables, and its status."""
        signer = Signer()
        body = b"{}"
        deadline = self.started_at + timeout
        while time.perf_counter() < deadline:
            if not self.alive():
                raise BenchError(f"exited with code {self.proc.returncode} before answering")
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
            try:
                conn.request(
                    "POST", "/", body, dict(signer.headers(self.client.host, "ListTables", body))
                )
                response = conn.getresponse()
                response.read()
                return time.perf_counter() - self.started_at, response.status
            except (OSError, http.client.HTTPException):
                time.sleep(0.005)
            finally:
                conn.close()
        raise BenchError(f"no answer within {timeout:.0f} s")

    def log_tail(self, lines: int = 15) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        if self.alive():
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait(timeout=10)
        self._log.close()


# --------------------------------------------------------------------------
# Table set-up and preload
# --------------------------------------------------------------------------


def create_table(
    client: DynamoClient, table: TableSpec, timeout: float = 60.0, options: Json | None = None
) -> None:
    client.check("CreateTable", {**table.create_payload(), **(options or {})})
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        answer = client.check("DescribeTable", {"TableName": table.name})
        if answer.get("Table", {}).get("TableStatus") == "ACTIVE":
            return
        time.sleep(0.05)
    raise BenchError(f"table {table.name} not ACTIVE after {timeout:.0f} s")


def chunks(items: Iterator[Json], size: int) -> Iterator[list[Json]]:
    chunk: list[Json] = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def put_chunk(client: DynamoClient, table: TableSpec, items: list[Json]) -> None:
    for item in items:
        client.check("PutItem", {"TableName": table.name, "Item": item})


def batch_chunk(client: DynamoClient, table: TableSpec, items: list[Json]) -> None:
    """BatchWriteItem in groups of 25, retrying UnprocessedItems."""
    for group in chunks(iter(items), 25):
        requests: list[Json] = [{"PutRequest": {"Item": item}} for item in group]
        delay = 0.01
        while requests:
            answer = client.check("BatchWriteItem", {"RequestItems": {table.name: requests}})
            requests = answer.get("UnprocessedItems", {}).get(table.name, [])
            if requests:
                time.sleep(delay)
                delay = min(delay * 2, 1.0)


# Above this many items a PutItem preload runs in worker processes, not
# threads: one Python client process signs and sends about 2,000 PutItem/s,
# which would take minutes for the large Query table.
PROCESS_PRELOAD_ITEMS = 100_000


def _put_partitions(port: int, table: TableSpec, first: int, past_last: int) -> int:
    """Worker process: PutItem every item of partitions [first, past_last)."""
    client = DynamoClient(port)
    for p in range(first, past_last):
        for s in range(table.per_partition):
            client.check("PutItem", {"TableName": table.name, "Item": table.item(p, s)})
    return (past_last - first) * table.per_partition


def put_in_processes(client: DynamoClient, table: TableSpec, processes: int) -> None:
    step = max(1, table.partitions // (processes * 8))
    with ProcessPoolExecutor(max_workers=processes) as pool:
        futures = [
            pool.submit(_put_partitions, client.port, table, lo, min(table.partitions, lo + step))
            for lo in range(0, table.partitions, step)
        ]
        for future in futures:
            future.result()


def preload(
    client: DynamoClient, table: TableSpec, mode: str, threads: int
) -> tuple[str, float, str]:
    """Loads every item of the table. Returns (mode used, seconds, note)."""
    note = ""
    items = table.all_items()
    started = time.perf_counter()
    if mode == "auto":
        first = [next(items) for _ in range(min(25, table.count))]
        status, answer = client.call(
            "BatchWriteItem",
            {"RequestItems": {table.name: [{"PutRequest": {"Item": i}} for i in first]}},
        )
        if status == 200 and not answer.get("UnprocessedItems"):
            mode = "batch"
        else:
            mode = "put"
            note = f"BatchWriteItem unavailable (HTTP {status} {str(answer.get('__type', ''))[-40:]}), used PutItem"
            put_chunk(client, table, first)
    chunk_size = 250
    work = batch_chunk if mode == "batch" else put_chunk
    if mode == "put" and table.count >= PROCESS_PRELOAD_ITEMS:
        # the first 25 items may be written twice (auto probe); PutItem is idempotent
        put_in_processes(client, table, threads)
        note = (note + "; " if note else "") + f"PutItem from {threads} client processes"
    else:
        with ThreadPoolExecutor(max_workers=threads) as pool:
            futures = [pool.submit(work, client, table, chunk) for chunk in chunks(items, chunk_size)]
            for future in futures:
                future.result()
    seconds = time.perf_counter() - started
    # spot check: the preload really landed
    rng = random.Random(7)
    for _ in range(20):
        p, s = table.random_key(rng)
        answer = client.check("GetItem", {"TableName": table.name, "Key": table.key(p, s)})
        if "Item" not in answer:
            raise BenchError(f"preloaded item {table.key(p, s)} missing after preload")
    return mode, seconds, note


# --------------------------------------------------------------------------
# wrk
# --------------------------------------------------------------------------


@dataclass
class WrkResult:
    ok: bool
    reason: str = ""
    ops_per_s: float = 0.0
    requests: int = 0
    p50_ms: float = 0.0
    p90_ms: float = 0.0
    p99_ms: float = 0.0
    p999_ms: float = 0.0
    max_ms: float = 0.0
    non200: int = 0
    socket_errors: int = 0
    checked: int = 0
    server_cpu_pct: float = 0.0
    server_cpu_us_per_op: float = 0.0
    rss_after_mib: float = 0.0
    phase: str = "measured"  # or "warm-up" when the checked warm-up failed
    items_per_op: float | None = None  # items each request read (Scan pages)
    raw: Json = field(default_factory=dict)


def write_pool(
    path: Path,
    client: DynamoClient,
    table: TableSpec,
    workload: Workload,
    size: int,
    seed: int,
    build: RequestBuilder | None = None,
) -> None:
    signer = Signer()
    rng = random.Random(seed)
    build = build or workload.build
    with open(path, "wb") as f:
        for _ in range(size):
            operation, payload = build(table, rng)
            raw = signer.raw_request(client.host, operation, payload)
            f.write(b"%d\n" % len(raw))
            f.write(raw)


def run_wrk(
    server: RunningServer,
    workload: Workload,
    pool_path: Path,
    seconds: float,
    check: bool,
    log_path: Path,
) -> WrkResult:
    script = LUA_DIR / workload.lua
    cmd = [
        "wrk",
        f"-t{workload.threads}",
        f"-c{workload.connections}",
        f"-d{max(1, round(seconds))}s",
        "--timeout",
        "10s",
        "-s",
        str(script),
        f"http://127.0.0.1:{server.port}/",
        "--",
        str(pool_path),
        "check" if check else "fast",
        workload.expect,
        str(workload.threads),
    ]
    waited = wait_idle(server.pid)
    if waited > 2:
        say(f"  (waited {waited:.1f} s for the server to go idle before {workload.name})")
    cpu_before = cpu_seconds(server.pid)
    started = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 60, cwd=BENCH_DIR)
    wall = time.perf_counter() - started
    cpu_used = cpu_seconds(server.pid) - cpu_before
    with open(log_path, "a") as log:
        log.write(f"$ {' '.join(cmd)}\n{proc.stdout}{proc.stderr}\n")
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("BENCH_RESULT ")), None)
    if proc.returncode != 0 or line is None:
        return WrkResult(
            False, f"wrk failed (exit {proc.returncode}): {(proc.stderr or proc.stdout)[-300:]}"
        )
    raw = json.loads(line.split(" ", 1)[1])
    socket_errors = sum(
        raw[k] for k in ("errors_connect", "errors_read", "errors_write", "errors_timeout")
    )
    # wrk itself counts status > 399; the checking hook counts every status but 200
    non200 = max(raw["errors_status"], raw["bad_status"]) if check else raw["errors_status"]
    requests = raw["requests"]
    result = WrkResult(
        ok=True,
        ops_per_s=requests / (raw["duration_us"] / 1e6) if raw["duration_us"] else 0.0,
        requests=requests,
        p50_ms=raw["lat_p50_us"] / 1000,
        p90_ms=raw["lat_p90_us"] / 1000,
        p99_ms=raw["lat_p99_us"] / 1000,
        p999_ms=raw["lat_p999_us"] / 1000,
        max_ms=raw["lat_max_us"] / 1000,
        non200=non200,
        socket_errors=socket_errors,
        checked=raw["checked"],
        server_cpu_pct=100 * cpu_used / wall if wall else 0.0,
        server_cpu_us_per_op=1e6 * cpu_used / requests if requests else 0.0,
        raw=raw,
    )
    problems = []
    if requests == 0:
        problems.append("no request completed")
    if non200:
        problems.append(f"{non200} non-200 responses")
    if check and raw["bad_body"]:
        problems.append(f"{raw['bad_body']} 200 responses without {workload.expect}")
    if check and raw["checked"] != requests:
        problems.append(f"checked {raw['checked']} of {requests} responses")
    if socket_errors:
        problems.append(
            "socket errors: "
            + ", ".join(
                f"{k[7:]} {raw[k]}"
                for k in ("errors_connect", "errors_read", "errors_write", "errors_timeout")
                if raw[k]
            )
        )
    if not server.alive():
        problems.append(f"server exited with code {server.proc.returncode}")
    if problems:
        result.ok = False
        result.reason = "; ".join(problems)
        if raw.get("first_bad"):
            result.reason += f"; first bad response: {raw['first_bad'][:200]}"
    return result


# --------------------------------------------------------------------------
# One server, all workloads
# --------------------------------------------------------------------------


@dataclass
class ServerResult:
    name: str
    ok: bool = False
    reason: str = ""
    cold_start_s: float | None = None  # median of cold_starts_s
    cold_starts_s: list[float] = field(default_factory=list)
    first_status: int | None = None
    rss_idle_start_mib: float | None = None
    rss_preloaded_mib: float | None = None
    rss_idle_end_mib: float | None = None
    preload: dict[str, Json] = field(default_factory=dict)
    workloads: dict[str, WrkResult] = field(default_factory=dict)
    log: str = ""


def bench_server(
    definition: ServerDef, workloads: Sequence[Workload], opts: argparse.Namespace, out_dir: Path
) -> ServerResult:
    result = ServerResult(definition.name)
    missing = definition.missing()
    if missing:
        result.reason = f"not available: {missing}"
        return result
    log_path = out_dir / f"{definition.name}.log"
    result.log = str(log_path)
    wrk_log = out_dir / f"{definition.name}.wrk.log"
    tables = make_tables(opts.items, opts.collection_items)
    # extra start/stop cycles only to time the cold start; the last start is benchmarked
    for attempt in range(opts.cold_starts - 1):
        probe = RunningServer(definition, out_dir / f"{definition.name}.start{attempt + 1}.log")
        try:
            seconds, _ = probe.wait_first_answer(opts.start_timeout)
            result.cold_starts_s.append(seconds)
        except BenchError:
            break  # the benchmarked start below reports the failure
        finally:
            probe.stop()
    server = RunningServer(definition, log_path)
    try:
        say(f"[{definition.name}] started pid {server.pid} on 127.0.0.1:{server.port}")
        try:
            seconds, result.first_status = server.wait_first_answer(opts.start_timeout)
        except BenchError as exc:
            result.reason = f"did not start: {exc}"
            tail = server.log_tail()
            if tail:
                result.reason += "\n" + indent(tail)
            return result
        result.cold_starts_s.append(seconds)
        result.cold_start_s = statistics.median(result.cold_starts_s)
        say(
            f"[{definition.name}] first answer after {seconds * 1000:.0f} ms (HTTP {result.first_status}); "
            f"cold start median of {len(result.cold_starts_s)}: {result.cold_start_s * 1000:.0f} ms"
        )
        time.sleep(1.0)
        result.rss_idle_start_mib = rss_mib(server.pid)

        for table_key in dict.fromkeys(w.table for w in workloads):
            table = tables[table_key]
            create_table(server.client, table, options=definition.table_options)
            mode, seconds, note = preload(server.client, table, opts.preload, opts.preload_threads)
            result.preload[table.name] = {
                "items": table.count,
                "mode": mode,
                "seconds": round(seconds, 3),
                "items_per_s": round(table.count / seconds, 1),
                "note": note,
            }
            say(
                f"[{definition.name}] preloaded {table.count} items into {table.name} in {seconds:.1f} s "
                f"({table.count / seconds:.0f}/s, {mode}){' - ' + note if note else ''}"
            )
        result.rss_preloaded_mib = rss_mib(server.pid)

        with tempfile.TemporaryDirectory(prefix="partita-bench-") as tmp:
            for index, workload in enumerate(workloads):
                table = tables[workload.table]
                pool_path = Path(tmp) / f"{workload.name}.pool"
                build, per_op = None, None
                if workload.prepare is not None:
                    build, per_op = workload.prepare(server.client, table)
                # signed just before use: signatures carry a timestamp
                write_pool(
                    pool_path, server.client, table, workload, opts.pool, seed=1000 + index, build=build
                )
                warm = run_wrk(server, workload, pool_path, opts.warmup, True, wrk_log)
                if not warm.ok:
                    warm.reason = f"warm-up (every response checked) failed: {warm.reason}"
                    warm.phase = "warm-up"
                    result.workloads[workload.name] = warm
                    say(f"[{definition.name}] {workload.name}: {warm.reason}")
                    if not server.alive():
                        break
                    continue
                measured = run_wrk(
                    server, workload, pool_path, opts.duration, opts.check_all, wrk_log
                )
                measured.rss_after_mib = rss_mib(server.pid)
                measured.items_per_op = per_op
                result.workloads[workload.name] = measured
                status = "ok" if measured.ok else f"INVALID: {measured.reason}"
                say(
                    f"[{definition.name}] {workload.name}: {measured.ops_per_s:,.0f} ops/s, "
                    f"p50 {measured.p50_ms:.2f} ms, p99 {measured.p99_ms:.2f} ms, {status}"
                )
                if not server.alive():
                    break
        if server.alive():
            wait_idle(server.pid)
            time.sleep(1.0)
            result.rss_idle_end_mib = rss_mib(server.pid)
        result.ok = server.alive() and all(w.ok for w in result.workloads.values())
        if not server.alive():
            result.reason = (
                f"server exited with code {server.proc.returncode} during the run\n"
                + indent(server.log_tail())
            )
    except BenchError as exc:
        result.reason = f"failed: {exc}"
        tail = server.log_tail()
        if tail:
            result.reason += "\n" + indent(tail)
    finally:
        server.stop()
    return result


# --------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


def fmt(value: float | None, spec: str = ".1f") -> str:
    return "-" if value is None else format(value, spec)


def report(results: list[ServerResult], workloads: Sequence[Workload]) -> str:
    lines: list[str] = []
    lines.append("Servers")
    lines.append(
        f"  {'server':<9} {'cold start':>10} {'RSS start':>10} {'preloaded':>10} {'RSS end':>9}  preload"
    )
    for r in results:
        if r.cold_start_s is None:
            lines.append(f"  {r.name:<9} {r.reason.splitlines()[0] if r.reason else 'not run'}")
            continue
        preload = ", ".join(
            f"{v['items_per_s']:.0f} items/s ({v['mode']})" for v in r.preload.values()
        )
        lines.append(
            f"  {r.name:<9} {r.cold_start_s * 1000:>8.0f}ms {fmt(r.rss_idle_start_mib):>7}MiB "
            f"{fmt(r.rss_preloaded_mib):>7}MiB {fmt(r.rss_idle_end_mib):>6}MiB  {preload}"
        )
    lines.append("")
    lines.append(
        "Workloads (measured run; latency in ms; CPU = server CPU share of the run, of 200%)"
    )
    lines.append(
        f"  {'server':<9} {'workload':<8} {'conns':>5} {'ops/s':>9} {'p50':>8} {'p99':>8} {'p99.9':>8} "
        f"{'non200':>6} {'CPU%':>5} {'us/op':>7} {'RSS MiB':>8}  status"
    )
    for r in results:
        for w in workloads:
            res = r.workloads.get(w.name)
            if res is None:
                continue
            status = "ok" if res.ok else "INVALID: " + res.reason
            if res.phase != "measured":
                lines.append(
                    f"  {r.name:<9} {w.name:<8} {w.connections:>5} {'-':>9}  not measured: {res.reason}"
                )
                continue
            lines.append(
                f"  {r.name:<9} {w.name:<8} {w.connections:>5} {res.ops_per_s:>9,.0f} {res.p50_ms:>8.2f} "
                f"{res.p99_ms:>8.2f} {res.p999_ms:>8.2f} {res.non200 + res.socket_errors:>6} "
                f"{res.server_cpu_pct:>5.0f} {res.server_cpu_us_per_op:>7.0f} {res.rss_after_mib:>8.1f}  {status}"
            )
    paged = [
        (r, w, r.workloads[w.name])
        for r in results
        for w in workloads
        if w.name in r.workloads and r.workloads[w.name].items_per_op and r.workloads[w.name].ok
    ]
    if paged:
        lines.append("")
        lines.append("Items read per second (each request reads one page)")
        for r, w, res in paged:
            assert res.items_per_op is not None
            lines.append(
                f"  {r.name:<9} {w.name:<8} {res.items_per_op:>9,.0f} items/page "
                f"{res.ops_per_s * res.items_per_op:>12,.0f} items/s"
            )
    by_name = {r.name: r for r in results}
    partita = by_name.get("partita")
    peers = [by_name[n] for n in ("dynalite", "moto") if n in by_name]
    if partita is not None and peers:
        lines.append("")
        lines.append("Ratios (Partita / peer): throughput higher is better, p99 lower is better")
        for peer in peers:
            for w in workloads:
                a, b = partita.workloads.get(w.name), peer.workloads.get(w.name)
                if a and b and a.ok and b.ok and b.ops_per_s and b.p99_ms:
                    lines.append(
                        f"  Partita/{peer.name:<9} {w.name:<8} ops/s x{a.ops_per_s / b.ops_per_s:.2f}   "
                        f"p99 x{a.p99_ms / b.p99_ms:.2f}"
                    )
                    if a.items_per_op and b.items_per_op:
                        ratio = (a.ops_per_s * a.items_per_op) / (b.ops_per_s * b.items_per_op)
                        lines.append(f"  Partita/{peer.name:<9} {w.name:<8} items/s x{ratio:.2f}")
                else:
                    lines.append(
                        f"  Partita/{peer.name:<9} {w.name:<8} n/a (a run missing or invalid)"
                    )
    variants = [r for r in results if r.name.startswith("partita-")]
    if partita is not None and variants:
        lines.append("")
        lines.append("Variants / partita, same run: throughput (1.00 = no cost), p99")
        for variant in variants:
            for w in workloads:
                a, b = variant.workloads.get(w.name), partita.workloads.get(w.name)
                if a and b and a.ok and b.ok and b.ops_per_s and b.p99_ms:
                    lines.append(
                        f"  {variant.name:<17} {w.name:<8} ops/s x{a.ops_per_s / b.ops_per_s:.3f}   "
                        f"p99 x{a.p99_ms / b.p99_ms:.2f}"
                    )
                else:
                    lines.append(f"  {variant.name:<17} {w.name:<8} n/a (a run missing or invalid)")
    failures = [r for r in results if r.reason]
    if failures:
        lines.append("")
        lines.append("Problems")
        for r in failures:
            lines.append(f"  {r.name}: {r.reason}")
            if r.log:
                lines.append(f"    (server log: {r.log})")
    return "\n".join(lines)


def median_results(
    rounds: list[list[ServerResult]], workloads: Sequence[Workload]
) -> list[ServerResult]:
    """One result per server: the first round's, with each workload's median-throughput run.

    The machine this runs on is a shared VM whose speed swings by tens of percent between
    runs a minute apart; interleaving servers over rounds and taking medians keeps one slow
    spell from deciding a ratio.
    """
    if len(rounds) == 1:
        return rounds[0]
    merged: list[ServerResult] = []
    for index, first in enumerate(rounds[0]):
        runs = [r[index] for r in rounds]
        result = replace(first, workloads=dict(first.workloads))
        result.ok = all(r.ok for r in runs)
        result.reason = "; ".join(r.reason for r in runs if r.reason)
        for w in workloads:
            done = sorted(
                (r.workloads[w.name] for r in runs if w.name in r.workloads and r.workloads[w.name].ok),
                key=lambda res: res.ops_per_s,
            )
            if done:
                result.workloads[w.name] = done[(len(done) - 1) // 2]
        merged.append(result)
    return merged


def rounds_report(rounds: list[list[ServerResult]], workloads: Sequence[Workload]) -> str:
    """Every round's throughput, and ratios paired within a round (median, min-max).

    A ratio of two runs in the same round shares that round's machine speed, so the
    median of per-round ratios is steadier than the ratio of medians.
    """
    lines = ["", f"Rounds ({len(rounds)}, interleaved): ops/s per round"]
    names = [r.name for r in rounds[0]]
    for index, name in enumerate(names):
        for w in workloads:
            values = [
                f"{r[index].workloads[w.name].ops_per_s:,.0f}"
                if w.name in r[index].workloads and r[index].workloads[w.name].ok
                else "-"
                for r in rounds
            ]
            lines.append(f"  {name:<17} {w.name:<8} {' '.join(f'{v:>8}' for v in values)}")
    bases = [n for n in ("partita", "dynalite") if n in names]
    lines.append("Paired ratios (same round): median [min-max]")
    for base in bases:
        b = names.index(base)
        for index, name in enumerate(names):
            if name == base or (base == "dynalite" and not name.startswith("partita")):
                continue
            if base == "partita" and not name.startswith("partita-"):
                continue
            for w in workloads:
                ratios = []
                for r in rounds:
                    x, y = r[index].workloads.get(w.name), r[b].workloads.get(w.name)
                    if x and y and x.ok and y.ok and y.ops_per_s:
                        ratios.append(x.ops_per_s / y.ops_per_s)
                if ratios:
                    lines.append(
                        f"  {name + '/' + base:<26} {w.name:<8} x{statistics.median(ratios):.3f} "
                        f"[{min(ratios):.3f}-{max(ratios):.3f}]"
                    )
    return "\n".join(lines)


def environment() -> Json:
    def version(cmd: list[str]) -> str:
        try:
            return (
                subprocess.run(cmd, capture_output=True, text=True, timeout=20)
                .stdout.strip()
                .splitlines()[0]
            )
        except (OSError, subprocess.SubprocessError, IndexError):
            return "?"

    dyn_pkg = DYNALITE_CLI.parent / "package.json"
    cpu_model = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cpus": os.cpu_count(),
        "cpu_model": cpu_model,
        "loadavg_before": os.getloadavg()[0],
        "python": sys.version.split()[0],
        "wrk": version(["wrk", "-v"]),
        "node": version(["node", "--version"]),
        "dynalite": json.loads(dyn_pkg.read_text()).get("version", "?")
        if dyn_pkg.exists()
        else "?",
        "moto": version(
            [
                str(PEERS_DIR / "moto-venv" / "bin" / "python"),
                "-c",
                "import importlib.metadata as m; print(m.version('moto'))",
            ]
        ),
        "partita_commit": version(["git", "-C", str(REPO_DIR), "rev-parse", "--short", "HEAD"]),
    }


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--servers", default="partita,dynalite,moto", help="comma list of: " + ",".join(SERVERS)
    )
    parser.add_argument(
        "--workloads", default="put,get,get1", help="comma list of: " + ",".join(WORKLOADS)
    )
    parser.add_argument(
        "--duration", type=float, default=None, help="seconds per measured run (default 10)"
    )
    parser.add_argument(
        "--warmup", type=float, default=None, help="seconds of checked warm-up (default 2)"
    )
    parser.add_argument("--quick", action="store_true", help="3 s runs, 1 s warm-up")
    parser.add_argument(
        "--items", type=int, default=10000, help="items preloaded into the simple table"
    )
    parser.add_argument(
        "--pool", type=int, default=10000, help="distinct pre-signed requests per workload"
    )
    parser.add_argument(
        "--collection-items",
        type=int,
        default=1_000_000,
        help="items preloaded into the large Query table (query1m), in collections of 100",
    )
    parser.add_argument(
        "--preload",
        choices=("auto", "put", "batch"),
        default="auto",
        help="auto: BatchWriteItem when the server has it, else PutItem",
    )
    parser.add_argument("--preload-threads", type=int, default=8)
    parser.add_argument(
        "--cold-starts",
        type=int,
        default=3,
        help="starts per server to time the cold start (median)",
    )
    parser.add_argument(
        "--start-timeout", type=float, default=30.0, help="seconds to wait for a first answer"
    )
    parser.add_argument(
        "--check-all",
        action="store_true",
        help="also check every response body during the measured run (costs wrk CPU)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="run every server this many times, interleaved (A B C A B C ...), and report the "
        "median run of each workload and the median of the per-round ratios",
    )
    parser.add_argument("--json", type=Path, help="write all results to this file")
    opts = parser.parse_args(argv)
    opts.rounds = max(1, opts.rounds)
    if opts.duration is None:
        opts.duration = 3.0 if opts.quick else 10.0
    opts.cold_starts = max(1, opts.cold_starts)
    if opts.warmup is None:
        opts.warmup = 1.0 if opts.quick else 2.0
    for name, table in (("servers", SERVERS), ("workloads", WORKLOADS)):
        chosen = [x.strip() for x in getattr(opts, name).split(",") if x.strip()]
        unknown = [x for x in chosen if x not in table]
        if unknown or not chosen:
            parser.error(f"--{name}: unknown {unknown}, choose from {','.join(table)}")
        setattr(opts, name, chosen)
    return opts


def main(argv: Sequence[str] | None = None) -> int:
    opts = parse_args(argv)
    if shutil.which("wrk") is None:
        say("wrk not found: run bench/setup.sh")
        return 2
    env = environment()
    if env["cpus"] and env["loadavg_before"] > 0.5 * env["cpus"]:
        say(
            f"warning: load average {env['loadavg_before']:.2f} before the run; numbers will be noisy"
        )
    out_dir = RESULTS_DIR / time.strftime("%Y%m%d-%H%M%S")
    out_dir.mkdir(parents=True, exist_ok=True)
    workloads = [WORKLOADS[name] for name in opts.workloads]
    say(f"logs in {out_dir}")
    rounds: list[list[ServerResult]] = []
    for number in range(opts.rounds):
        if opts.rounds > 1:
            say(f"round {number + 1} of {opts.rounds}")
        # later rounds time one cold start: the first round's median is the one reported
        round_opts = opts if number == 0 else argparse.Namespace(**{**vars(opts), "cold_starts": 1})
        rounds.append(
            [bench_server(SERVERS[name], workloads, round_opts, out_dir) for name in opts.servers]
        )
    results = median_results(rounds, workloads)
    print(report(results, workloads))
    if opts.rounds > 1:
        print(rounds_report(rounds, workloads))
    if opts.json:
        document = {
            "environment": env,
            "options": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(opts).items()},
            "results": [
                {
                    **asdict(r),
                    "workloads": {
                        k: {kk: vv for kk, vv in asdict(v).items()} for k, v in r.workloads.items()
                    },
                }
                for r in results
            ],
        }
        opts.json.write_text(json.dumps(document, indent=2))
        say(f"wrote {opts.json}")
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
