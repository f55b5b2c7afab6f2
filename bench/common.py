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

#: An Authorization header for a server without --auth: it reads the scope, not the signature.
UNCHECKED_AUTH = ("AWS4-HMAC-SHA256 Credential=partita/20240101/us-east-1/dynamodb/aws4_request, "
                  "SignedHeaders=host;x-amz-date, Signature=0000")


#: Source of `ask(endpoint)` for benchmark children: one ListTables over a raw socket (no SDK to
#: import), asserting its 200. `socket` must be imported where it runs.
ASK_SOURCE = r"""
def ask(endpoint):
    host, port = endpoint.rsplit("/", 1)[1].rsplit(":", 1)
    head = ("POST / HTTP/1.1\r\nHost: %s:%s\r\nX-Amz-Target: DynamoDB_20120810.ListTables\r\n"
            "Content-Type: application/x-amz-json-1.0\r\nX-Amz-Date: 20240101T000000Z\r\n"
            "Authorization: AUTH\r\nContent-Length: 2\r\n\r\n{}" % (host, port))
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(head.encode())
        answer = sock.recv(65536)
    assert answer.startswith(b"HTTP/1.1 200"), answer
""".replace("AUTH", UNCHECKED_AUTH)


class BenchError(Exception):
    pass


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


def named_trees(specs: list[str]) -> list[tuple[str, Path]]:
    """`--tree NAME=DIR` options (the A/B of source trees) as names and resolved folders."""
    return [(name, Path(path).resolve()) for name, _, path in (spec.partition("=") for spec in specs)]
