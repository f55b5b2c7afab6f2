"""The servers the bench can run, and starting, watching and stopping them.

A server is a command line taking a port (ServerDef); RunningServer starts
it in its own session so that stopping it takes its worker processes along,
and the /proc readers count those workers in its RSS and CPU time.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from client import DynamoClient, Signer
from common import BENCH_DIR, PEERS_DIR, REPO_DIR, BenchError, Json


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


def _bench_schema_file() -> str:
    """A --schema file (reject mode) whose entity matches every item of the bench's simple table,
    so that each PutItem is checked (and passes): the guard's whole cost per write."""
    path = Path(tempfile.mkdtemp(prefix="partita-bench-schema-")) / "schema.json"
    entity = {"name": "Simple", "table": "bench_simple", "match": {"pk": "pk*"}, "schema": {
        "type": "object", "required": ["pk", "n", "v"],
        "properties": {"pk": {"type": "string"}, "n": {"type": "integer", "minimum": 0},
                       "v": {"type": "string", "maxLength": 200}}}}
    path.write_text(json.dumps({"mode": "reject", "entities": [entity]}))
    return str(path)


DYNALITE_CLI = PEERS_DIR / "dynalite" / "node_modules" / "dynalite" / "cli.js"

def _partita_in_memory(port: int) -> list[str]:
    return [str(REPO_DIR / ".venv" / "bin" / "partita"), "serve", "--in-memory", "--port", str(port)]


def _partita_tree(variable: str) -> Callable[[int], list[str]]:
    """`partita serve --in-memory` run from the source tree named by $variable (another revision,
    checked out or archived there), so a change and its base are measured in the same run."""

    def command(port: int) -> list[str]:
        tree = os.environ.get(variable, "")
        return ["env", f"PYTHONPATH={tree}", str(REPO_DIR / ".venv" / "bin" / "python"), "-P", "-m", "partita", "serve",
                "--in-memory", "--port", str(port)]

    return command


def tree_command(tree: str, port: int, *options: str) -> list[str]:
    """`partita serve OPTIONS --port PORT` from the source tree `tree`, on this checkout's .venv."""
    python = REPO_DIR / ".venv" / "bin" / "python"
    # The tree goes first on sys.path: a server runs in this checkout, which -c would put there.
    code = f"import sys; sys.path.insert(0, {tree!r}); from partita.cli import main; sys.exit(main())"
    return [str(python), "-c", code, "serve", *options, "--port", str(port)]


def _baseline(*options: str) -> Callable[[int], list[str]]:
    """`partita serve OPTIONS` from another source tree (PARTITA_BENCH_BASELINE, e.g. a checkout
    of main): before/after ratios measured in one run."""

    def command(port: int) -> list[str]:
        return tree_command(os.environ.get("PARTITA_BENCH_BASELINE", ""), port, *options)

    return command


SERVERS: dict[str, ServerDef] = {
    "partita": ServerDef("partita", _partita_in_memory, "install the project into .venv (pip install -e .)"),
    # not run by default: the same server as "partita" again (an A/A control). Its ratio to
    # "partita" in the same run is the bench's noise floor and any bias of its place in a round,
    # which the other variants' ratios are read against.
    "partita-control": ServerDef(
        "partita-control", _partita_in_memory, "install the project into .venv (pip install -e .)"
    ),
    # not run by default: the plain server from other source trees ($PARTITA_BENCH_BASE,
    # $PARTITA_BENCH_BASE2; e.g. `git archive <base> | tar -x -C DIR` plus the built .so files), to
    # measure a change against its base in one run (issue 28 measured always-on metering so).
    "partita-base": ServerDef("partita-base", _partita_tree("PARTITA_BENCH_BASE"),
                              "set PARTITA_BENCH_BASE to a Partita source tree"),
    "partita-base2": ServerDef("partita-base2", _partita_tree("PARTITA_BENCH_BASE2"),
                               "set PARTITA_BENCH_BASE2 to a Partita source tree"),
    # not run by default: `partita` from the source tree PARTITA_BENCH_BASELINE names (before/after)
    "partita-baseline": ServerDef(
        "partita-baseline", _baseline("--in-memory"), "set PARTITA_BENCH_BASELINE to a Partita source tree"
    ),
    "partita-disk-baseline": ServerDef(
        "partita-disk-baseline",
        lambda port: _baseline("--data-dir", tempfile.mkdtemp(prefix="partita-bench-"))(port),
        "set PARTITA_BENCH_BASELINE to a Partita source tree",
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
    # not run by default: `--schema` (the schema guard, jsonschema installed) with an entity that
    # every item of the simple table matches: what checking each write costs (bench ratio)
    "partita-schema": ServerDef(
        "partita-schema",
        lambda port: [
            str(REPO_DIR / ".venv" / "bin" / "partita"),
            "serve",
            "--in-memory",
            "--schema",
            _bench_schema_file(),
            "--port",
            str(port),
        ],
        "install the project into .venv (pip install -e '.[schema]')",
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
    # not run by default: the durable SQLite store with `--sync full` (the WAL synced at every
    # commit, so acknowledged writes survive an OS crash): its ratio to "partita-disk" is its cost
    "partita-disk-full": ServerDef(
        "partita-disk-full",
        lambda port: [
            str(REPO_DIR / ".venv" / "bin" / "partita"),
            "serve",
            "--data-dir",
            tempfile.mkdtemp(prefix="partita-bench-"),
            "--sync",
            "full",
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
    # not run by default: partita-pg from PARTITA_BENCH_BASELINE's tree (before/after)
    "partita-pg-baseline": ServerDef(
        "partita-pg-baseline",
        lambda port: _baseline("--backend", _pg_database(port))(port),
        "set PARTITA_BENCH_BASELINE to a Partita source tree and PARTITA_BENCH_PG_URL to a PostgreSQL URL",
    ),
    "partita-pg-2w": ServerDef(
        "partita-pg-2w",
        lambda port: [str(REPO_DIR / ".venv" / "bin" / "partita"), "serve", "--workers", "2", "--backend",
                      _pg_database(port), "--port", str(port)],
        "set PARTITA_BENCH_PG_URL to a PostgreSQL URL (tests/pg/cluster.sh start DIR prints one)",
    ),
    # not run by default: partita-pg-2w from PARTITA_BENCH_BASELINE's tree (before/after)
    "partita-pg-2w-baseline": ServerDef(
        "partita-pg-2w-baseline",
        lambda port: _baseline("--workers", "2", "--backend", _pg_database(port))(port),
        "set PARTITA_BENCH_BASELINE to a Partita source tree and PARTITA_BENCH_PG_URL to a PostgreSQL URL",
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
