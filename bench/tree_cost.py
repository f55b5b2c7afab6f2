"""What a change costs a request, in-process: source trees measured side by side, interleaved, CPU time.

    .venv/bin/python bench/tree_cost.py --tree base=/tmp/base --tree new=. [--rounds 12 --requests 3000]

Each tree (`git archive <commit> partita | tar -x -C DIR`, plus the built
.so files) gets a worker process running `python -P` with PYTHONPATH at the
tree: an in-memory engine and `PartitaApp.answer` exactly as `partita serve`
builds them (no socket, no signature check), the bench's tables preloaded
(bench/tables.py) and the bench's request builders (bench/workloads.py). The
driver asks each worker in turn for one round (the same seeded requests of
every workload) and keeps, per tree and workload, the *minimum* over rounds
of the process CPU time per request: on a machine shared with other
sessions the minimum is the least disturbed run, where wrk's ops/s swings
by 2x between rounds (docs/decisions.md, issue 28). The HTTP server's own
work (parsing, the socket write) is the same in every tree and left out, so a
ratio here is the change's share of the request path after parsing, an upper
bound of its share of a whole request.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
WORKLOADS = ("get", "put", "update", "batch", "query10k", "scan10k")


def _worker(requests: int) -> None:
    sys.path.insert(0, str(BENCH))
    from tables import make_tables
    from workloads import WORKLOADS as BUILDERS

    from partita.cli.options import serve_options
    from partita.cli.serve import build_app, build_engine, open_store

    args = serve_options(in_memory=True)
    engine = build_engine(args, open_store(args))
    app = build_app(args, engine)
    headers_of: dict[str, dict[bytes, bytes]] = {}

    def call(operation: str, payload: dict[str, Any]) -> dict[str, Any]:
        headers = headers_of.get(operation)
        if headers is None:
            headers = headers_of[operation] = {
                b"content-type": b"application/x-amz-json-1.0",
                b"x-amz-target": f"DynamoDB_20120810.{operation}".encode(),
                b"authorization": b"AWS4-HMAC-SHA256 Credential=bench/20260101/us-east-1/dynamodb/aws4_request, "
                                  b"SignedHeaders=host;x-amz-date, Signature=0000",
                b"x-amz-date": b"20260101T000000Z"}
        status, body, *_ = app.answer("POST", headers, json.dumps(payload).encode())
        if status != 200:
            raise RuntimeError(f"{operation}: {status} {body[:200]!r}")
        return json.loads(body)

    tables = make_tables(10_000, 100)
    for key in ("simple", "coll10k"):
        spec = tables[key]
        call("CreateTable", spec.create_payload())
        items = list(spec.all_items())
        for start in range(0, len(items), 25):
            call("BatchWriteItem", {"RequestItems": {spec.name: [{"PutRequest": {"Item": i}}
                                                                  for i in items[start:start + 25]]}})
    starts: list[Any] = [None]
    while True:  # the Scan pages of the simple table, as bench/workloads.py's prepare_scan walks them
        payload: dict[str, Any] = {"TableName": tables["simple"].name}
        if starts[-1] is not None:
            payload["ExclusiveStartKey"] = starts[-1]
        last = call("Scan", payload).get("LastEvaluatedKey")
        if last is None:
            break
        starts.append(last)
    pools: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    rng = random.Random(7)
    for name in WORKLOADS:
        count = max(20, requests // 50) if name == "scan10k" else requests // (10 if name == "batch" else 1)
        if name == "scan10k":
            pools[name] = [("Scan", {"TableName": tables["simple"].name,
                                     **({"ExclusiveStartKey": s} if (s := rng.choice(starts)) else {})})
                           for _ in range(count)]
        else:
            workload = BUILDERS[name]
            pools[name] = [workload.build(tables[workload.table], rng) for _ in range(count)]
    print("ready", flush=True)
    for line in sys.stdin:
        if line.strip() != "round":
            break
        out = {}
        for name, pool in pools.items():
            begin = time.process_time()
            for operation, payload in pool:
                call(operation, payload)
            out[name] = (time.process_time() - begin) / len(pool) * 1e6
        print(json.dumps(out), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", action="append", default=[], metavar="NAME=DIR")
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--requests", type=int, default=3000, help="requests of each workload a round")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.worker:
        _worker(opts.requests)
        return
    workers = {}
    for spec in opts.tree:
        name, _, tree = spec.partition("=")
        env = {**os.environ, "PYTHONPATH": str(Path(tree).resolve())}
        workers[name] = subprocess.Popen(
            [sys.executable, "-P", __file__, "--worker", "--requests", str(opts.requests)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    for name, process in workers.items():
        assert process.stdout is not None
        if process.stdout.readline().strip() != "ready":
            raise SystemExit(f"worker {name} did not start")
    best: dict[str, dict[str, float]] = {name: {} for name in workers}
    every: dict[str, dict[str, list[float]]] = {name: {w: [] for w in WORKLOADS} for name in workers}
    for round_ in range(opts.rounds):
        order = list(workers) if round_ % 2 == 0 else list(reversed(workers))
        for name in order:
            process = workers[name]
            assert process.stdin is not None and process.stdout is not None
            process.stdin.write("round\n")
            process.stdin.flush()
            for workload, us in json.loads(process.stdout.readline()).items():
                every[name][workload].append(us)
                best[name][workload] = min(best[name].get(workload, us), us)
        print(f"round {round_ + 1} of {opts.rounds}", file=sys.stderr, flush=True)
    for process in workers.values():
        assert process.stdin is not None
        process.stdin.close()
        process.wait(30)
    names = list(workers)
    print("CPU us per request, minimum over rounds (median in brackets)")
    print(f"  {'workload':<10}" + "".join(f"{n:>22}" for n in names)
          + "".join(f"{n + '/' + names[0]:>18}" for n in names[1:]))
    for workload in WORKLOADS:
        row = f"  {workload:<10}"
        for n in names:
            med = sorted(every[n][workload])[len(every[n][workload]) // 2]
            row += f"{best[n][workload]:>12.1f} [{med:>7.1f}]"
        for n in names[1:]:
            row += f"{best[n][workload] / best[names[0]][workload]:>17.3f}x"
        print(row)


if __name__ == "__main__":
    main()
