"""Two source trees' servers measured at the same time, each loaded by its own wrk.

    python bench/side_by_side.py --tree before=/tmp/main-checkout --tree after=. --workloads put,get --pairs 6

bench/run.py measures servers one after another; on a shared host the load of
other tenants can move a round's throughput by half, more than most changes
to the request path. Here both trees' `partita serve --in-memory` run at once
on their own ports, their tables are preloaded alike, and two wrk processes
load them together for the same seconds: whatever the host does meanwhile
hits both. Each pair reports the second tree's requests/s over the first's;
which server's wrk starts first alternates between pairs, and servers are
started afresh for every pair. The summary is the geometric mean of the
pairs' ratios, with their spread. Both servers and both wrk share the
machine's cores, so absolute rates here are not comparable with run.py's;
only the ratio is the result.
"""

from __future__ import annotations

import argparse
import math
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from common import RESULTS_DIR, BenchError, named_trees, say
from servers import RunningServer, ServerDef, tree_command
from tables import create_table, make_tables, preload
from workloads import WORKLOADS
from wrk import WrkResult, run_wrk, write_pool


def _tree_server(name: str, tree: Path) -> ServerDef:
    """`partita serve --in-memory` from `tree`."""
    return ServerDef(name, lambda port: tree_command(str(tree), port, "--in-memory"),
                     "install the project into .venv (pip install -e .)")


def _pair(trees: list[tuple[str, Path]], workload_name: str, opts: argparse.Namespace, index: int,
          out_dir: Path) -> tuple[WrkResult, WrkResult]:
    """One pair: both servers started, preloaded, and loaded at once; their results in `trees` order."""
    workload = WORKLOADS[workload_name]
    table = make_tables(opts.items)[workload.table]
    servers = [RunningServer(_tree_server(name, tree), out_dir / f"{name}.{workload_name}.{index}.log")
               for name, tree in trees]
    try:
        with tempfile.TemporaryDirectory(prefix="partita-side-") as tmp:
            pools = []
            for server in servers:
                server.wait_first_answer(opts.start_timeout)
                create_table(server.client, table)
                preload(server.client, table, "batch", 4)
                pool = Path(tmp) / f"{server.definition.name}.pool"
                write_pool(pool, server.client, table, workload, opts.pool, seed=1000 + index)
                pools.append(pool)
                warm = run_wrk(server, workload, pool, 1.0, True, out_dir / "wrk.log")
                if not warm.ok:
                    raise BenchError(f"{server.definition.name} {workload_name} warm-up failed: {warm.reason}")
            order = [0, 1] if index % 2 == 0 else [1, 0]
            with ThreadPoolExecutor(max_workers=2) as loaders:
                futures = {i: loaders.submit(run_wrk, servers[i], workload, pools[i], opts.seconds, False,
                                             out_dir / "wrk.log") for i in order}
                results = futures[0].result(), futures[1].result()
    finally:
        for server in servers:
            server.stop()
    for (name, _), result in zip(trees, results, strict=True):
        if not result.ok:
            raise BenchError(f"{name} {workload_name}: {result.reason}")
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", action="append", required=True, metavar="NAME=DIR",
                        help="a source tree to serve from (twice: the first is the reference)")
    parser.add_argument("--workloads", default="put,get", help="comma list of: " + ",".join(WORKLOADS))
    parser.add_argument("--pairs", type=int, default=6, help="pairs per workload")
    parser.add_argument("--seconds", type=float, default=6.0, help="seconds each pair is loaded")
    parser.add_argument("--items", type=int, default=10000, help="items preloaded into the table")
    parser.add_argument("--pool", type=int, default=10000, help="distinct pre-signed requests per workload")
    parser.add_argument("--start-timeout", type=float, default=30.0)
    opts = parser.parse_args(argv)
    trees = named_trees(opts.tree)
    if len(trees) != 2:
        parser.error("name exactly two trees")
    workloads = [w.strip() for w in opts.workloads.split(",") if w.strip()]
    unknown = [w for w in workloads if w not in WORKLOADS or WORKLOADS[w].prepare is not None]
    if unknown:
        parser.error(f"--workloads: cannot run {unknown} side by side")
    RESULTS_DIR.mkdir(exist_ok=True)
    out_dir = Path(tempfile.mkdtemp(prefix="side-", dir=RESULTS_DIR))
    say(f"logs in {out_dir}")
    (first, _), (second, _) = trees
    summary = []
    for workload in workloads:
        ratios = []
        for index in range(opts.pairs):
            a, b = _pair(trees, workload, opts, index, out_dir)
            ratios.append(b.ops_per_s / a.ops_per_s)
            say(f"[{workload} {index + 1}/{opts.pairs}] {first} {a.ops_per_s:,.0f}/s, "
                f"{second} {b.ops_per_s:,.0f}/s: x{ratios[-1]:.3f}")
        mean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        summary.append(f"  {workload:8s} {second}/{first} x{mean:.3f} [{min(ratios):.3f}-{max(ratios):.3f}]"
                       f" over {len(ratios)} pairs")
    print("Side by side: geometric mean of the pairs' ratios [min-max]")
    print("\n".join(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
