"""Running wrk over a pool of pre-signed requests, and judging its output.

The requests are signed beforehand so that wrk's Lua only replays bytes: the
client's cost stays small and the same for every server. A run counts only
when every request got an HTTP 200 (with the expected text, when checked)
and the server stayed up.
"""

from __future__ import annotations

import json
import random
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from client import DynamoClient, Signer
from common import BENCH_DIR, LUA_DIR, Json, say
from servers import RunningServer, cpu_seconds, wait_idle
from tables import TableSpec
from workloads import RequestBuilder, Workload


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
