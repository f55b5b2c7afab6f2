"""Start-up as CPU time: what a fresh process spends before its first answer, per source tree.

    python bench/startup_cpu.py                                   # this checkout, 15 processes
    python bench/startup_cpu.py --runs 15 --tree before=/tmp/main-checkout --tree after=.

bench/startup.py times whole processes on the wall clock, which is what a
user waits for; on a shared host its rounds can swing by a third, more than a
change of a few milliseconds. This measures the same work on the process's own
CPU clock (`time.process_time`), which other tenants disturb less: import
`partita.cli`, build `serve --in-memory`'s options as `local()` does, build the engine
and the app as `partita serve` does, import the HTTP server, then answer one
ListTables in process (the first request's lazy imports and the shape
validator's model). No socket, no event loop. Trees run interleaved, one
process each per round; the ratio is paired within a round. The same process's
second request is not measured (it is tens of microseconds).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

from common import REPO_DIR, UNCHECKED_AUTH, named_trees, say

_CHILD = r"""
import sys, time
sys.path.insert(0, TREE)
start = time.process_time()
from partita.cli.options import serve_options
args = serve_options(in_memory=True)
from partita.cli.serve import build_app, build_engine, open_store
app = build_app(args, build_engine(args, open_store(args)))
import partita.protocol.server
built = time.process_time()
headers = {b"content-type": b"application/x-amz-json-1.0", b"x-amz-target": b"DynamoDB_20120810.ListTables",
           b"authorization": AUTH, b"x-amz-date": b"20240101T000000Z"}
assert app.answer("POST", headers, b"{}")[0] == 200
print((built - start) * 1e3, (time.process_time() - built) * 1e3)
"""


def _once(tree: Path) -> tuple[float, float]:
    child = _CHILD.replace("TREE", repr(str(tree))).replace("AUTH", repr(UNCHECKED_AUTH.encode()))
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, cwd="/tmp", check=False)
    if done.returncode != 0:
        raise SystemExit(f"{tree}: {done.stderr.strip()}")
    build, first = map(float, done.stdout.split())
    return build, first


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):7.2f} [{min(values):.2f}-{max(values):.2f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--tree", action="append", default=[], metavar="NAME=DIR",
                        help="a Partita source tree (put first on sys.path); repeat to A/B trees")
    opts = parser.parse_args()
    trees = named_trees(opts.tree)
    if not trees:
        trees = [("partita", REPO_DIR)]
    for _, tree in trees:
        _once(tree)  # unmeasured: byte-code caches and the model copy exist, as for an installed package
    results: dict[str, list[tuple[float, float]]] = {name: [] for name, _ in trees}
    for round_ in range(opts.runs):
        for name, tree in trees:
            results[name].append(_once(tree))
        say(f"round {round_ + 1}/{opts.runs}")
    print("CPU ms in a fresh process, median [min-max]")
    for name, rows in results.items():
        print(f"  {name:10s} start {_spread([b for b, _ in rows])}  first request {_spread([f for _, f in rows])}"
              f"  sum {_spread([b + f for b, f in rows])}")
    if len(trees) == 2:
        (first, _), (second, _) = trees
        ratios = [sum(results[second][i]) / sum(results[first][i]) for i in range(opts.runs)]
        print(f"  {second}/{first} sum, paired: x{statistics.median(ratios):.3f} [{min(ratios):.3f}-{max(ratios):.3f}]")


if __name__ == "__main__":
    main()
