"""What every part of the benchmark harness shares: its paths, errors and progress output.

Kept apart from the modules that use them so that those import one another
in one direction only (client, tables, workloads, servers, wrk, measure,
report, run).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

# every module of the harness lives in bench/, so these hold from any of them;
# REPO_DIR is the checkout this file is in (servers run its .venv's partita)
BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
PEERS_DIR = BENCH_DIR / ".peers"
LUA_DIR = BENCH_DIR / "lua"
RESULTS_DIR = BENCH_DIR / "results"

Json = dict[str, Any]


class BenchError(Exception):
    pass


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())
