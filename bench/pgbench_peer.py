"""The PostgreSQL backend against `pgbench` on the same PostgreSQL, in the same run.

    .venv/bin/python bench/pgbench_peer.py [--rounds 2] [--duration 5] [--clients 32]
    PARTITA_BENCH_BASELINE=DIR .venv/bin/python bench/pgbench_peer.py --servers partita-pg,partita-pg-baseline

Issue 27 measures the PostgreSQL path against what the database itself does
for a client doing the nearest work: pgbench's built-in `simple-update` (one
UPDATE of an account, a SELECT of it and an INSERT into history, in one
transaction) for PutItem and UpdateItem, and `select-only` (one SELECT by
primary key) for GetItem, with as many clients as wrk has connections. Each
round runs pgbench (both scripts) and then `bench/run.py --quick` with the
`partita-pg` (one process) and `partita-pg-2w` (two workers) servers, so the
two sides meet the same cluster state and machine load; the report gives
each side's median over rounds and the ratios.

The cluster is PARTITA_BENCH_PG_URL's when set, else a throwaway one from
tests/pg/cluster.sh (Debian's PostgreSQL, installed when missing), removed at
the end.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
CLUSTER = REPO / "tests" / "pg" / "cluster.sh"
SERVERS = "partita-pg,partita-pg-2w"
WORKLOADS = ("put", "update", "get")
PEER_OF = {"put": "simple-update", "update": "simple-update", "get": "select-only"}


def _pgbench() -> str:
    found = shutil.which("pgbench")
    if found:
        return found
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/pgbench"), key=lambda p: p.parent.parent.name)
    if not versions:
        raise SystemExit("pgbench not found (Debian's postgresql package has it: tests/pg/cluster.sh install)")
    return str(versions[-1])


def _pgbench_run(pgbench: str, url: str, script: str, clients: int, duration: int) -> tuple[float, float]:
    """(transactions a second, p99 latency in ms) of one pgbench run of a built-in script."""
    with tempfile.TemporaryDirectory() as logs:
        out = subprocess.run(
            [pgbench, "-n", "-b", script, "-c", str(clients), "-j", "2", "-T", str(duration), "-l",
             "--log-prefix", f"{logs}/tx", url],
            capture_output=True, text=True, check=True,
        ).stdout
        latencies = sorted(int(line.split()[2]) for log in Path(logs).iterdir() for line in log.read_text().splitlines())
    tps = float(re.search(r"tps = ([\d.]+)", out).group(1))  # type: ignore[union-attr]
    p99 = latencies[int(len(latencies) * 0.99)] / 1000 if latencies else float("nan")
    return tps, p99


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--duration", type=int, default=5, help="seconds of each pgbench and wrk run")
    parser.add_argument("--clients", type=int, default=32, help="pgbench clients (wrk uses 32 connections)")
    parser.add_argument("--scale", type=int, default=10, help="pgbench -i scale")
    parser.add_argument("--servers", default=SERVERS, help="bench/run.py servers (partita-pg-baseline: before/after)")
    opts = parser.parse_args()
    pgbench = _pgbench()
    url = os.environ.get("PARTITA_BENCH_PG_URL")
    cluster_dir = None
    if not url:
        subprocess.run([str(CLUSTER), "install"], check=True)
        cluster_dir = tempfile.mkdtemp(prefix="partita-pgbench-")
        url = subprocess.run([str(CLUSTER), "start", f"{cluster_dir}/cluster"], capture_output=True, text=True,
                             check=True).stdout.strip()
    try:
        subprocess.run([pgbench, "-i", "-q", "-s", str(opts.scale), url], capture_output=True, check=True)
        peer: dict[str, list[tuple[float, float]]] = {"simple-update": [], "select-only": []}
        ours: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for round_ in range(opts.rounds):
            print(f"round {round_ + 1} of {opts.rounds}", file=sys.stderr, flush=True)
            for script in peer:
                peer[script].append(_pgbench_run(pgbench, url, script, opts.clients, opts.duration))
                print(f"  pgbench {script}: {peer[script][-1][0]:,.0f} tps, p99 {peer[script][-1][1]:.1f} ms",
                      file=sys.stderr, flush=True)
            with tempfile.TemporaryDirectory() as scratch:
                out = Path(scratch) / "run.json"
                subprocess.run(
                    [sys.executable, str(BENCH / "run.py"), "--quick", "--duration", str(opts.duration),
                     "--cold-starts", "1", "--servers", opts.servers, "--workloads", ",".join(WORKLOADS),
                     "--json", str(out)],
                    env={**os.environ, "PARTITA_BENCH_PG_URL": url}, check=True, stdout=sys.stderr,
                )
                for result in json.loads(out.read_text())["results"]:
                    for workload, measured in result["workloads"].items():
                        ours.setdefault((result["name"], workload), []).append(
                            (measured["ops_per_s"], measured["p99_ms"]))
        print(f"pgbench: {opts.clients} clients, scale {opts.scale}; partita: wrk 32 connections; "
              f"{opts.rounds} rounds of {opts.duration} s, medians")
        for script, runs in peer.items():
            print(f"  pgbench {script:<14} {statistics.median(t for t, _ in runs):>9,.0f} tps   "
                  f"p99 {statistics.median(p for _, p in runs):6.1f} ms")
        for (server, workload), runs in sorted(ours.items()):
            ops = statistics.median(t for t, _ in runs)
            script = PEER_OF[workload]
            share = ops / statistics.median(t for t, _ in peer[script])
            print(f"  {server:<14} {workload:<7} {ops:>9,.0f} ops/s p99 {statistics.median(p for _, p in runs):6.1f} ms"
                  f"   {share:6.1%} of pgbench {script}")
    finally:
        if cluster_dir is not None:
            subprocess.run([str(CLUSTER), "stop", f"{cluster_dir}/cluster"], check=False)
            shutil.rmtree(cluster_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
