"""Start-up benchmark: `partita serve` and `partita.testing.local()` against dynalite, whole processes.

    python bench/startup.py                                  # 7 interleaved rounds: partita, local, dynalite
    python bench/startup.py --runs 11 --json out.json
    python bench/startup.py --tree before=/tmp/main-checkout --tree after=.   # A/B two source trees

Per round, every server once, in turn (A B C A B C ...), so that a slow minute of this
shared machine hits all of them alike; the ratios are paired within a round.

- serve: spawn `partita serve --in-memory` (what the console script runs: `from partita.cli
  import main`), poll a signed ListTables every 2 ms until the first HTTP answer: spawn ->
  answer is the start-up time. Then VmRSS 0.5 s later (idle RSS), then SIGTERM -> exit.
- local: spawn a Python process that imports partita.testing, starts local(), sends one
  ListTables over a raw socket and prints; spawn -> that line is the whole process, and the
  child reports its own phases (import, start, first answer) and a later start (a second
  local() in the same process after the first stopped: start + first answer).
- dynalite: `node cli.js` (in memory), timed like serve.

Children run without PYTHONDONTWRITEBYTECODE and each server runs once unmeasured first,
so byte-code caches exist as they do for an installed package. Numbers are medians of the
rounds with [min-max]; never quote one round. See bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from client import Signer
from common import ASK_SOURCE, BENCH_DIR, PEERS_DIR, REPO_DIR, named_trees, say
from servers import DYNALITE_CLI, free_port, rss_mib

_SERVE = "import sys; from partita.cli import main; sys.exit(main())"
#: The child of the `local` measurement; phases in ms on its own clock, as one JSON line.
_LOCAL = f"""
import time
t0 = time.perf_counter()
import json, socket
from partita.testing import local
t1 = time.perf_counter()
{ASK_SOURCE}
server = local().start()
t2 = time.perf_counter()
ask(server.endpoint)
t3 = time.perf_counter()
print("answered", flush=True)
server.stop()
t4 = time.perf_counter()
again = local().start()
ask(again.endpoint)
t5 = time.perf_counter()
again.stop()
ms = lambda a, b: round((b - a) * 1000, 2)
print(json.dumps({{"import": ms(t0, t1), "start": ms(t1, t2), "request": ms(t2, t3), "in_process": ms(t0, t3),
                  "later_start": ms(t4, t5)}}), flush=True)
"""


@dataclass
class Kind:
    """One thing measured: a command, how it is timed, and its runs."""

    name: str
    mode: str  # "serve" (an HTTP server polled until it answers) or "local" (a child that reports)
    command: list[str]
    env: dict[str, str]
    runs: list[dict[str, float]] = field(default_factory=list)


def _env(tree: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its byte-code caches
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    return env


def _python() -> str:
    venv = REPO_DIR / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def _first_answer(process: subprocess.Popen[bytes], port: int, started: float, timeout: float) -> float:
    """Seconds from spawn to the first HTTP answer to a signed ListTables (polled every 2 ms)."""
    host = f"127.0.0.1:{port}"
    request = Signer().raw_request(host, "ListTables", {})
    while time.perf_counter() - started < timeout:
        if process.poll() is not None:
            raise RuntimeError(f"exited with {process.returncode} before answering")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=2) as sock:
                sock.sendall(request)
                if sock.recv(65536).startswith(b"HTTP/1.1 "):
                    return time.perf_counter() - started
        except OSError:
            pass
        time.sleep(0.002)
    raise RuntimeError(f"no answer within {timeout} s")


def measure_serve(kind: Kind, timeout: float) -> dict[str, float]:
    port = free_port()
    started = time.perf_counter()
    process = subprocess.Popen([*kind.command, "--port", str(port)], env=kind.env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, start_new_session=True,
                               cwd="/")
    try:
        first = _first_answer(process, port, started, timeout)
        time.sleep(0.5)
        rss = rss_mib(process.pid)
        stopping = time.perf_counter()
        process.send_signal(signal.SIGTERM)
        process.wait(30)
        return {"first_ms": first * 1000, "rss_mib": rss, "stop_ms": (time.perf_counter() - stopping) * 1000}
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def measure_local(kind: Kind, timeout: float) -> dict[str, float]:
    started = time.perf_counter()
    process = subprocess.Popen(kind.command, env=kind.env, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL,
                               text=True, cwd="/")
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        whole = time.perf_counter() - started
        if line.strip() != "answered":
            raise RuntimeError(f"local() did not answer: {line!r}")
        phases = json.loads(process.stdout.readline())
        process.wait(timeout)
        return {"first_ms": whole * 1000, **{f"{k}_ms": v for k, v in phases.items()}}
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def _median(values: list[float]) -> str:
    if not values:
        return "-"
    return f"{statistics.median(values):8.1f} [{min(values):.1f}-{max(values):.1f}]"


def report(kinds: list[Kind]) -> list[str]:
    lines = ["Start-up (ms, median of the rounds [min-max]; RSS in MiB)"]
    for kind in kinds:
        keys = list(dict.fromkeys(k for run in kind.runs for k in run))
        lines.append(f"  {kind.name:<18} " + "  ".join(f"{k[:-3] if k.endswith('_ms') else k} "
                                                     f"{_median([r[k] for r in kind.runs if k in r])}"
                                                     for k in keys))
    by_name = {kind.name: kind for kind in kinds}
    peer = by_name.get("dynalite")
    lines.append("Ratios paired within a round (median [min-max]): first answer, and idle RSS for serve")
    for kind in kinds:
        if peer is None or kind is peer or not peer.runs:
            continue
        for key in ("first_ms", "rss_mib"):
            pairs = [a[key] / b[key] for a, b in zip(kind.runs, peer.runs, strict=False)
                     if key in a and key in b and b[key]]
            if pairs:
                lines.append(f"  {kind.name}/dynalite {key[:-3] if key.endswith('_ms') else key:<6} "
                             f"x{statistics.median(pairs):.2f} [{min(pairs):.2f}-{max(pairs):.2f}]")
    trees = [k for k in kinds if "[" in k.name]
    for kind in trees:
        for other in trees:
            same_mode = kind.mode == other.mode and kind is not other and kinds.index(kind) < kinds.index(other)
            if same_mode:
                for key in ("first_ms", "later_start_ms", "rss_mib"):
                    pairs = [a[key] / b[key] for a, b in zip(other.runs, kind.runs, strict=False)
                             if key in a and key in b and b[key]]
                    if pairs:
                        lines.append(f"  {other.name}/{kind.name} {key}: x{statistics.median(pairs):.2f} "
                                     f"[{min(pairs):.2f}-{max(pairs):.2f}]")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7, help="interleaved rounds (default 7; at least 5)")
    parser.add_argument("--servers", default="partita,local,dynalite",
                        help="comma-separated: partita (serve), local (local()), dynalite, ceiling "
                        "(bench/ceiling_server.py: plain Python's floor)")
    parser.add_argument("--tree", action="append", default=[], metavar="NAME=DIR",
                        help="a Partita source tree to run (PYTHONPATH); repeat to A/B trees (default: this checkout)")
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--json", type=Path, help="write every run here")
    opts = parser.parse_args()
    wanted = opts.servers.split(",")
    trees = named_trees(opts.tree)
    if not trees:
        trees = [("", REPO_DIR)]
    python = _python()
    kinds: list[Kind] = []
    for name, tree in trees:
        suffix = f"[{name}]" if name else ""
        if "partita" in wanted:
            kinds.append(Kind(f"partita{suffix}", "serve", [python, "-c", _SERVE, "serve", "--in-memory"], _env(tree)))
        if "local" in wanted:
            kinds.append(Kind(f"local{suffix}", "local", [python, "-c", _LOCAL], _env(tree)))
    if "ceiling" in wanted:  # plain Python's floor: uvloop + httptools + orjson, no Partita at all
        kinds.append(Kind("ceiling", "serve", [python, str(BENCH_DIR / "ceiling_server.py")], _env(None)))
    if "dynalite" in wanted:
        if not DYNALITE_CLI.exists():
            sys.exit(f"dynalite not found in {PEERS_DIR}: run bench/setup.sh")
        kinds.append(Kind("dynalite", "serve", ["node", str(DYNALITE_CLI), "--host", "127.0.0.1"], dict(os.environ)))
    load = os.getloadavg()[0]
    say(f"load average {load:.2f} before the run" + (" (busy machine: numbers skew)" if load > 1 else ""))
    for kind in kinds:  # unmeasured: byte-code caches, node's compile cache, the page cache
        (measure_serve if kind.mode == "serve" else measure_local)(kind, opts.timeout)
    for round_ in range(opts.runs):
        for kind in kinds:
            run = (measure_serve if kind.mode == "serve" else measure_local)(kind, opts.timeout)
            kind.runs.append(run)
        say(f"round {round_ + 1}/{opts.runs}: " + ", ".join(f"{k.name} {k.runs[-1]['first_ms']:.0f} ms" for k in kinds))
    print("\n".join(report(kinds)))
    say(f"load average {os.getloadavg()[0]:.2f} after the run")
    if opts.json:
        doc: dict[str, Any] = {"load_before": load, "kinds": {k.name: k.runs for k in kinds}}
        opts.json.write_text(json.dumps(doc, indent=1))


if __name__ == "__main__":
    main()
