"""Whole-server instructions per request with and without `--emulate-throughput` (issue 11).

Run: .venv/bin/python bench/capacity_cost.py [--workloads put,update,batch,get] [--requests N]

Each server runs under `valgrind --tool=callgrind --separate-threads=yes`; the
bench's table is created (the partita-emulated ServerDef's WarmThroughput for
both, so the map is the same), preloaded and warmed, the counters are zeroed
(`callgrind_control --zero`), a fixed number of the bench's pre-signed requests
is replayed over 32 keep-alive connections, and the counters are dumped. The
report is instructions per request per thread, and the server's RSS before and
after. Instruction counts repeat on a loaded machine where ops/s swing by 30%.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from client import DynamoClient, Signer  # noqa: E402
from servers import SERVERS  # noqa: E402
from tables import TableSpec, batch_chunk, create_table  # noqa: E402
from workloads import RequestBuilder, build_batch, build_get, build_put, build_update  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
CONNECTIONS = 32
#: Requests a second of the plain server in bench/README.md's last quiet run (32 connections).
REAL_RATE = {"put": 24_111, "update": 17_366, "batch": 3_327, "get": 41_166}
#: Requests a second sent to the server under valgrind (which serves ~2-4x this on a loaded machine).
PACE = {"put": 100.0, "update": 80.0, "batch": 8.0, "get": 150.0}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pool(path: Path, port: int, table: TableSpec, build: RequestBuilder, size: int, seed: int) -> list[bytes]:
    signer = Signer()
    rng = random.Random(seed)
    out = []
    for _ in range(size):
        operation, payload = build(table, rng)
        out.append(signer.raw_request(f"127.0.0.1:{port}", operation, payload))
    return out


async def _connection(port: int, requests: list[bytes], bad: list[int], start: float, gap: float) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    loop = asyncio.get_running_loop()
    for number, raw in enumerate(requests):
        wait = start + number * gap - loop.time()
        if wait > 0:
            await asyncio.sleep(wait)
        writer.write(raw)
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))  # type: ignore[union-attr]
        body = await reader.readexactly(length)
        if not head.startswith(b"HTTP/1.1 200") or b"Unprocessed" in body and b'"UnprocessedItems":{}' not in body:
            bad.append(1)
    writer.close()


def replay(port: int, requests: list[bytes], rate: float) -> int:
    """Send every request over CONNECTIONS keep-alive connections at `rate` a second; the bad answers.

    Paced, so that the rate the server's slowed clock sees does not depend
    on how loaded the machine is (as long as the server keeps up).
    """
    bad: list[int] = []

    async def main() -> None:
        start = asyncio.get_running_loop().time() + 0.05
        gap = CONNECTIONS / rate
        await asyncio.gather(*(_connection(port, requests[i::CONNECTIONS], bad, start + i / rate, gap)
                               for i in range(CONNECTIONS)))

    asyncio.run(main())
    return len(bad)


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def per_thread(out_dir: Path) -> dict[str, int]:
    """Instructions per thread of the last dump (callgrind.out.<pid>.<dump>-<thread>)."""
    totals: dict[str, int] = {}
    for path in sorted(out_dir.glob("callgrind.out.*")):
        text = path.read_text(errors="replace")
        thread = path.name.rsplit("-", 1)[-1]
        match = re.search(r"^summary: (\d+)", text, re.M) or re.search(r"^totals: (\d+)", text, re.M)
        if match and ".1-" in path.name:
            totals[thread] = int(match.group(1))
    return totals


def measure(emulated: bool, workload: str, count: int, warm: int, out_root: Path,
            speed: float, rate: float, source: Path | None) -> tuple[dict[str, int], int, int, float]:
    port = free_port()
    out_dir = out_root / f"{workload}-{'emu' if emulated else 'plain'}"
    out_dir.mkdir(parents=True, exist_ok=True)
    for old in out_dir.glob("callgrind.out.*"):
        old.unlink()
    # The bench's own server commands (bench/servers.py), after the `partita` executable.
    serve = SERVERS["partita-emulated" if emulated else "partita"].command(port)[1:]
    command = ["valgrind", "--tool=callgrind", "--separate-threads=yes",
               f"--callgrind-out-file={out_dir}/callgrind.out.%p",
               str(REPO / ".venv/bin/python"), __file__, "serve-dilated", str(speed), *serve]
    env = dict(os.environ)
    if source is not None:  # another checkout's partita (e.g. the commit before a change)
        env["PYTHONPATH"] = str(source)
    server = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        deadline = time.monotonic() + 300
        client = DynamoClient(port, timeout=120)
        while True:
            try:
                client.call("ListTables", {})
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        items = 10_000  # bench/run.py's default
        table = TableSpec("bench_simple", range_key=False, partitions=items)
        create_table(client, table, options=SERVERS["partita-emulated"].table_options)
        batch_chunk(client, table, list(table.all_items()))
        build = {"put": build_put, "update": build_update, "batch": build_batch,
                 "get": build_get}[workload]
        requests = pool(out_dir / "pool", port, table, build, warm + count, 7)
        if replay(port, requests[:warm], rate):
            print("warning: bad answers while warming", file=sys.stderr)
        before = rss_kib(server.pid)
        subprocess.run(["callgrind_control", "--zero", str(server.pid)], check=True, stdout=subprocess.DEVNULL)
        started = time.monotonic()
        bad = replay(port, requests[warm:], rate)
        elapsed = time.monotonic() - started
        subprocess.run(["callgrind_control", "--dump", str(server.pid)], check=True, stdout=subprocess.DEVNULL)
        after = rss_kib(server.pid)
        if bad:
            print(f"warning: {bad} bad answers ({workload}, emulated={emulated})", file=sys.stderr)
        return per_thread(out_dir), before, after, count / elapsed
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(60)
        except subprocess.TimeoutExpired:
            server.kill()


class _DilatedTime:
    """`time` as the server clock module sees it: wall time running `speed` times as fast.

    Under valgrind a request takes ~50x as long, so at wall time every lease
    would expire and every window roll between two requests of a partition;
    with the clock slowed by the same factor the meter sees the bench's
    request rate. Only the clock module's `time.time` and `cadence` are replaced (a
    library preload such as libfaketime costs more than the request and
    breaks timed waits); monotonic time, so the duty thread's ticks, stays real.
    """

    def __init__(self, speed: float) -> None:
        self._speed = speed
        self._start = time.time()

    def time(self) -> float:
        return self._start + (time.time() - self._start) * self._speed

    def monotonic(self) -> float:
        return time.monotonic() * self._speed


def serve_dilated(speed: float, argv: list[str]) -> None:
    import partita.engine.time.clock as clock
    from partita.cli import main as partita_main

    dilated = _DilatedTime(speed)
    clock.time = dilated  # type: ignore[assignment]
    clock.cadence = dilated.monotonic  # the meter's publish cadence: as often per request as unslowed
    sys.argv = ["partita", *argv]
    sys.exit(partita_main())


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "serve-dilated":
        serve_dilated(float(sys.argv[2]), sys.argv[3:])
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--workloads", default="put,update,batch,get")
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--warm", type=int, default=500)
    parser.add_argument("--pace", type=float, default=1.0, help="scale the paced request rates")
    parser.add_argument("--source", type=Path, default=None, help="run the partita package of this checkout")
    parser.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "partita-capacity-cost"))
    args = parser.parse_args()
    out_root = Path(args.out)
    for workload in args.workloads.split(","):
        count = args.requests if workload != "batch" else max(1, args.requests // 10)
        warm = args.warm if workload != "batch" else max(1, args.warm // 10)
        rows = {}
        rate = PACE[workload] * args.pace
        speed = rate / REAL_RATE[workload]
        for emulated in (False, True):
            threads, before, after, seen = measure(emulated, workload, count, warm, out_root, speed, rate, args.source)
            print(f"{workload:6} {'emulated' if emulated else 'plain   '} {seen:.1f} requests/s under valgrind"
                  f" (paced at {rate:.0f}), clock speed {speed:.5f}: the meter sees {seen / speed:,.0f}/s", flush=True)
            rows[emulated] = threads
            total = sum(threads.values())
            detail = ", ".join(f"thread {t}: {n / count / 1000:.1f}k" for t, n in sorted(threads.items()))
            print(f"{workload:6} {'emulated' if emulated else 'plain   '} {total / count / 1000:8.1f}k instr/request"
                  f" ({detail}); RSS {before // 1024} -> {after // 1024} MiB", flush=True)
        # Thread 01 serves the requests; the others (the duty thread) tick on real time, which valgrind
        # stretches ~50x against the requests, so their share per request is not the bench's.
        plain, emu = rows[False].get("01", 0), rows[True].get("01", 0)
        print(f"{workload:6} extra on the request thread {(emu - plain) / count / 1000:+.1f}k a request,"
              f" x{emu / plain:.3f}", flush=True)


if __name__ == "__main__":
    main()
