"""`partita clock ...` and `partita streams tail`: clients of a running server.

They talk to the server over HTTP as any user would (the admin API for the
clock, the DynamoDB Streams API for tail), so they work against one worker
or many, in memory or on disk. Both sign with SigV4 for service `dynamodb`
from the standard AWS credential chain (environment, profile, ...), so they
work against `partita serve --auth` too; without credentials the clock call
goes unsigned (a server without `--auth` needs none) and the Streams client
uses placeholder keys, as any key works there.
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
        parser.add_argument("--region", default=None, help="the signing region (default: the AWS config's, else us-east-1)")
    streams = commands.add_parser("streams", help="DynamoDB Streams tools")
    stream_actions = streams.add_subparsers(dest="action", required=True)
    tail = stream_actions.add_parser("tail", help="print a table's stream records as JSON lines")
    tail.add_argument("table")
    tail.add_argument("--endpoint", default="http://127.0.0.1:8000", help="the server's URL")
    tail.add_argument("--from", dest="start", choices=("trim-horizon", "latest"), default="latest")
    tail.add_argument("--region", default=None, help="default: the AWS config's, else us-east-1")
    tail.add_argument("--exec", dest="exec_command", metavar="CMD",
                      help='run CMD for each batch, with {"Records": [...]} on its standard input')
    tail.add_argument("--poll", type=float, default=0.5, metavar="SECONDS", help="pause between empty reads")
    tail.add_argument("--exit-when-idle", type=float, default=None, metavar="SECONDS",
                      help=argparse.SUPPRESS)  # for tests: stop after this long without records


def session() -> Any:
    """botocore's session: the standard credential chain and config (AWS_PROFILE, env vars, files)."""
    import botocore.session

    return botocore.session.get_session()


def region_of(args: argparse.Namespace, current: Any) -> str:
    return str(args.region or current.get_config_variable("region") or "us-east-1")


def signed_headers(
    current: Any, method: str, url: str, data: bytes | None, headers: dict[str, str], region: str
) -> dict[str, str]:
    """`headers` plus a SigV4 signature (service dynamodb) when the chain has credentials.

    The admin routes of a server with `--auth` need a signature from a
    principal allowed `partita:Admin`; botocore's own signer makes it, so
    it is exactly what an SDK would send.
    """
    credentials = current.get_credentials()
    if credentials is None:
        return headers
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest

    request = AWSRequest(method=method, url=url, data=data or b"", headers=headers)
    SigV4Auth(credentials.get_frozen_credentials(), "dynamodb", region).add_auth(request)
    return {name: str(value) for name, value in request.headers.items()}


def _error_text(raw: bytes, fallback: str) -> str:
    """The admin API's `{"error": ...}`, or DynamoDB's error body (an `--auth` refusal)."""
    try:
        doc = json.loads(raw)
    except ValueError:
        return fallback
    if not isinstance(doc, dict):
        return fallback
    if "error" in doc:
        return str(doc["error"])
    code = str(doc.get("__type", "")).rpartition("#")[2]
    message = doc.get("message", doc.get("Message"))
    if code:
        return f"{code}: {message}" if message else code
    return fallback


def _call(current: Any, url: str, region: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    data = None if body is None else json.dumps(body).encode()
    method = "GET" if body is None else "POST"
    headers = signed_headers(current, method, url, data, {"Content-Type": "application/json"}, region)
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            doc: dict[str, Any] = json.loads(response.read())
            return doc
    except urllib.error.HTTPError as error:
        sys.exit(f"partita: {_error_text(error.read(), str(error))}")
    except urllib.error.URLError as error:
        sys.exit(f"partita: cannot reach {url}: {error.reason}")


def run_clock(args: argparse.Namespace) -> None:
    url = args.endpoint.rstrip("/") + "/partita/v1/clock"
    current = session()
    body = {"advance_seconds": args.duration} if args.action == "advance" else None
    doc = _call(current, url, region_of(args, current), body)
    print(json.dumps(doc))


def run_streams(args: argparse.Namespace) -> None:
    from botocore.exceptions import BotoCoreError, ClientError

    from .streams_tail import tail

    try:
        sys.exit(tail(args))
    except (ClientError, BotoCoreError) as error:
        sys.exit(f"partita: {error}")
