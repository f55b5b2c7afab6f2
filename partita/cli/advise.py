"""`partita advise [--endpoint URL] [--table NAME] [--format text|json]`: a running server's findings.

The access-pattern advisor's findings (`GET /partita/v1/advice`), as text to
read (lesson, evidence, fix and the inputs that make it) or as the JSON
document other tools consume. Signed like the other client commands, so it
works against `partita serve --auth` with an identity allowed the admin API.
"""

from __future__ import annotations

import argparse
import json
from typing import Any
from urllib.parse import quote

from .remote import call, region_of, session


def add_parsers(commands: Any) -> None:
    advise = commands.add_parser("advise", help="print a running server's access-pattern findings "
                                 "(Scan used as a WHERE clause, hot keys, growing collections...)")
    advise.add_argument("--endpoint", default="http://127.0.0.1:8000", help="the server's URL")
    advise.add_argument("--table", default=None, help="only this table's findings")
    advise.add_argument("--format", choices=("text", "json"), default="text",
                        help="text to read (default), or the API's JSON document")
    advise.add_argument("--region", default=None, help="the signing region (default: the AWS config's, else us-east-1)")


def run(args: argparse.Namespace) -> None:
    from ..engine.advisor.report import as_text

    url = args.endpoint.rstrip("/") + "/partita/v1/advice"
    if args.table is not None:
        url += "?table=" + quote(args.table, safe="")
    current = session()
    doc = call(current, url, region_of(args, current))
    if args.format == "json":
        print(json.dumps(doc, indent=2, ensure_ascii=False))
    else:
        print(as_text(doc["findings"]))
