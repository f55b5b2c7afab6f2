"""`partita clock ...` and `partita streams tail`: clients of a running server.

They talk to the server over HTTP as any user would (the admin API for the
clock, the DynamoDB Streams API for tail), so they work against one worker
or many, in memory or on disk.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import urllib.error
import urllib.request
from typing import Any

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_PART = re.compile(r"(\d+(?:\.\d+)?)([smhdw]?)")


def parse_duration(text: str) -> float:
    """`90s`, `25h`, `1h30m`, `2d`, or a bare number of seconds."""
    text = text.strip().lower()
    pos = 0
    total = 0.0
    while pos < len(text):
        match = _PART.match(text, pos)
        if match is None or match.end() == pos:
            raise argparse.ArgumentTypeError(f"not a duration: {text!r} (try 90s, 15m, 25h, 2d)")
        total += float(match.group(1)) * _UNITS[match.group(2) or "s"]
        pos = match.end()
    if not text:
        raise argparse.ArgumentTypeError("empty duration")
    return total


def add_commands(commands: Any) -> None:
    clock = commands.add_parser("clock", help="read or move a running server's clock (TTL, streams, windows)")
    actions = clock.add_subparsers(dest="action", required=True)
    advance = actions.add_parser("advance", help="move the server clock forward")
    advance.add_argument("duration", type=parse_duration, help="e.g. 90s, 15m, 25h, 2d")
    show = actions.add_parser("show", help="print the server clock")
    for parser in (advance, show):
        parser.add_argument("--endpoint", default="http://127.0.0.1:8000", help="the server's URL")
    streams = commands.add_parser("streams", help="DynamoDB Streams tools")
    stream_actions = streams.add_subparsers(dest="action", required=True)
    tail = stream_actions.add_parser("tail", help="print a table's stream records as JSON lines")
    tail.add_argument("table")
    tail.add_argument("--endpoint", default="http://127.0.0.1:8000", help="the server's URL")
    tail.add_argument("--from", dest="start", choices=("trim-horizon", "latest"), default="latest")
    tail.add_argument("--region", default="us-east-1")
    tail.add_argument("--exec", dest="exec_command", metavar="CMD",
                      help='run CMD for each batch, with {"Records": [...]} on its standard input')
    tail.add_argument("--poll", type=float, default=0.5, metavar="SECONDS", help="pause between empty reads")
    tail.add_argument("--exit-when-idle", type=float, default=None, metavar="SECONDS",
                      help=argparse.SUPPRESS)  # for tests: stop after this long without records


def _call(url: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method="GET" if body is None else "POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            doc: dict[str, Any] = json.loads(response.read())
            return doc
    except urllib.error.HTTPError as error:
        try:
            message = json.loads(error.read()).get("error", str(error))
        except ValueError:
            message = str(error)
        sys.exit(f"partita: {message}")
    except urllib.error.URLError as error:
        sys.exit(f"partita: cannot reach {url}: {error.reason}")


def run_clock(args: argparse.Namespace) -> None:
    url = args.endpoint.rstrip("/") + "/partita/v1/clock"
    doc = _call(url, {"advance_seconds": args.duration} if args.action == "advance" else None)
    print(json.dumps(doc))


def run_streams(args: argparse.Namespace) -> None:
    from .streams_tail import tail

    sys.exit(tail(args))
