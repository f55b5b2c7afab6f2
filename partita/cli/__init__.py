"""The `partita` command: one module per command (serve, clock, streams, load/dump).

Each command module declares its parser and runs it; this module only
assembles the parsers and dispatches, so a command never imports another.
"""

from __future__ import annotations

import argparse

from . import clock, data, streams
from .options import add_serve_options
from .serve import serve


def _version() -> str:
    """The installed distribution's version (what `pip install .` recorded)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("partita")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "unknown"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="partita", description="A DynamoDB-compatible database server.")
    parser.add_argument("--version", action="version", version=f"partita {_version()}")
    commands = parser.add_subparsers(dest="command", required=True)
    add_serve_options(commands.add_parser("serve", help="serve the DynamoDB API over HTTP"))
    clock.add_parser(commands)
    streams.add_parser(commands)
    data.add_parsers(commands)
    return parser


def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    if args.command == "serve":
        serve(args)
    elif args.command == "clock":
        clock.run(args)
    elif args.command == "streams":
        streams.run(args)
    else:  # load, dump (argparse rejects unknown commands)
        data.run(args)
