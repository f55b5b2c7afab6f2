"""The `partita` command: one module per command (serve, clock, streams, load/dump, advise).

Each command module declares its parser and runs it; this module only
assembles the parsers and dispatches, so a command never imports another.
"""

from __future__ import annotations

import argparse
from typing import Any

from . import advise, clock, data, streams
from .options import add_serve_options
from .serve import serve


def _version() -> str:
    """The installed distribution's version (what `pip install .` recorded)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("partita")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "unknown"


class _Version(argparse.Action):
    """`--version`, looked up only when asked: importlib.metadata costs more than the rest of start-up's parsing."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any) -> None:
        print(f"partita {_version()}")  # on standard output, as argparse's own version action
        parser.exit()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="partita", description="A DynamoDB-compatible database server.")
    parser.add_argument("--version", action=_Version, help="show program's version number and exit")
    commands = parser.add_subparsers(dest="command", required=True)
    add_serve_options(commands.add_parser("serve", help="serve the DynamoDB API over HTTP"))
    clock.add_parser(commands)
    streams.add_parser(commands)
    data.add_parsers(commands)
    advise.add_parser(commands)
    return parser


def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    if args.command == "serve":
        serve(args)
    elif args.command == "clock":
        clock.run(args)
    elif args.command == "streams":
        streams.run(args)
    elif args.command == "advise":
        advise.run(args)
    else:  # load, dump (argparse rejects unknown commands)
        data.run(args)
