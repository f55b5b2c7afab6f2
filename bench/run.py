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

# Where the rest is (all in bench/): client.py signs requests and talks to a
# server; tables.py defines the tables and preloads them; workloads.py holds the
# request builders and WORKLOADS; servers.py holds SERVERS and starts/stops
# them; wrk.py runs wrk and judges its output; measure.py benches one server;
# report.py prints the tables. This file keeps the command line and the rounds.

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from common import PEERS_DIR, REPO_DIR, RESULTS_DIR, Json, say
from measure import ServerResult, bench_server
from report import median_results, report, rounds_report
from servers import DYNALITE_CLI, SERVERS
from workloads import WORKLOADS


def compiled_state() -> tuple[int, int]:
    """(current, all) of setup.py's COMPILED modules: a missing or stale copy runs as Python.

    The same rule as partita/__init__.py's finder: a compiled copy older than
    its .py is not used. After editing one, `.venv/bin/python setup.py
    build_ext --inplace` rebuilds what changed.
    """
    text = (REPO_DIR / "setup.py").read_text()
    paths = text.split('COMPILED = """', 1)[1].split('"""', 1)[0].split()
    current = 0
    for path in paths:
        source = REPO_DIR / "partita" / path
        copies = sorted(source.parent.glob(source.stem + ".*.so"))
        if copies and copies[0].stat().st_mtime >= source.stat().st_mtime:
            current += 1
    return current, len(paths)


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
        "partita_compiled": "{}/{}".format(*compiled_state()),
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
    current, every = compiled_state()
    if current < every:
        say(f"warning: {every - current} of {every} request-path modules run as Python here (not compiled, or "
            "edited since: `.venv/bin/python setup.py build_ext --inplace`)")
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
