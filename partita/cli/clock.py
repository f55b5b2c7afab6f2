"""`partita clock advance DURATION` and `partita clock show`: a running server's clock.

Tests and demos move the server clock (TTL, stream retention, iterator and
token windows) through the admin API instead of sleeping.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from .options import parse_duration


def add_parsers(commands: Any) -> None:
    clock = commands.add_parser("clock", help="read or move a running server's clock (TTL, streams, windows)")
    actions = clock.add_subparsers(dest="action", required=True)
    advance = actions.add_parser("advance", help="move the server clock forward")
    advance.add_argument("duration", type=parse_duration, help="e.g. 90s, 15m, 25h, 2d")
    show = actions.add_parser("show", help="print the server clock")
    for parser in (advance, show):
        parser.add_argument("--endpoint", default="http://127.0.0.1:8000", help="the server's URL")
        parser.add_argument("--region", default=None, help="the signing region (default: the AWS config's, else us-east-1)")


def run(args: argparse.Namespace) -> None:
    from .remote import call, region_of, session  # urllib and botocore: not for `partita serve`

    url = args.endpoint.rstrip("/") + "/partita/v1/clock"
    current = session()
    body = {"advance_seconds": args.duration} if args.action == "advance" else None
    doc = call(current, url, region_of(args, current), body)
    print(json.dumps(doc))
