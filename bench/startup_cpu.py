"""Start-up as CPU time: what a fresh process spends before its first answer, per source tree.

    python bench/startup_cpu.py                                   # this checkout, 15 processes
    python bench/startup_cpu.py --runs 15 --tree before=/tmp/main-checkout --tree after=.
    python bench/startup_cpu.py --floor                           # local(): the libraries' share, then Partita's

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

`--floor` splits `local()`'s first start (import `partita.testing`, start,
one ListTables over a socket, every thread's CPU) into what the libraries it
loads cost and what is Partita's own: one unmeasured child records every
module that is not Partita's in the order it was loaded; each measured child
imports those first (the libraries' share, the floor no change to Partita's
code can go below while it uses them), then does `local()`'s work (Partita's
own share). The list is read from the tree measured, not written here, so it
follows the code.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

from common import ASK_SOURCE, REPO_DIR, UNCHECKED_AUTH, named_trees, say

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


#: `--floor`'s child. LIBRARIES: module names to load first ([] when recording them); ASK: common.ASK_SOURCE.
_LOCAL = r"""
import sys, time
sys.path.insert(0, TREE)
before = set(sys.modules)
start = time.process_time()
for name in LIBRARIES:
    try:
        __import__(name)
    except ImportError:
        pass
loaded = time.process_time()
import socket  # the client's; the server loads it too, so it is among LIBRARIES
from partita.testing import local
server = local(env=False).start()
ASK
ask(server.endpoint)
answered = time.process_time()
if not LIBRARIES:
    print(" ".join(n for n in sys.modules if n not in before and n.split(".")[0] != "partita"))
print((loaded - start) * 1e3, (answered - loaded) * 1e3)
server.stop()
"""


def _run_child(tree: Path, source: str) -> str:
    """What a fresh process running `source` printed (its TREE replaced by the tree's folder)."""
    child = source.replace("TREE", repr(str(tree)))
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, cwd="/tmp", check=False)
    if done.returncode != 0:
        raise SystemExit(f"{tree}: {done.stderr.strip()}")
    return done.stdout


def _local(tree: Path, libraries: list[str]) -> list[str]:
    return _run_child(tree, _LOCAL.replace("ASK", ASK_SOURCE).replace("LIBRARIES", repr(libraries))).splitlines()


def floor(trees: list[tuple[str, Path]], runs: int) -> None:
    """`local()`'s first start as CPU time: its libraries' share, then Partita's own."""
    libraries = {name: _local(tree, [])[0].split() for name, tree in trees}  # also warms the caches
    results: dict[str, list[tuple[float, float]]] = {name: [] for name, _ in trees}
    for round_ in range(runs):
        for name, tree in trees:
            first, own = map(float, _local(tree, libraries[name])[-1].split())
            results[name].append((first, own))
        say(f"round {round_ + 1}/{runs}")
    print("local(): import, start and one ListTables, CPU ms in a fresh process (every thread), median [min-max]")
    for name, rows in results.items():
        print(f"  {name:10s} libraries ({len(libraries[name])} modules) {_spread([a for a, _ in rows])}"
              f"  Partita's own {_spread([b for _, b in rows])}  sum {_spread([a + b for a, b in rows])}")


def _once(tree: Path) -> tuple[float, float]:
    build, first = map(float, _run_child(tree, _CHILD.replace("AUTH", repr(UNCHECKED_AUTH.encode()))).split())
    return build, first


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):7.2f} [{min(values):.2f}-{max(values):.2f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--tree", action="append", default=[], metavar="NAME=DIR",
                        help="a Partita source tree (put first on sys.path); repeat to A/B trees")
    parser.add_argument("--floor", action="store_true",
                        help="local()'s first start split into its libraries' share and Partita's own")
    opts = parser.parse_args()
    trees = named_trees(opts.tree)
    if not trees:
        trees = [("partita", REPO_DIR)]
    if opts.floor:
        floor(trees, opts.runs)
        return
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
