"""The `partita` command: one module per command (serve, clock, streams, load/dump, advise).

Each command module declares its parser and runs it; this module only
assembles the parsers and dispatches, so a command never imports another.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any, NoReturn

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


def _add_serve(commands: Any) -> None:
    add_serve_options(commands.add_parser("serve", help="serve the DynamoDB API over HTTP"))


#: Each command's parsers, in the order `partita --help` lists them.
_COMMANDS: dict[str, Callable[[Any], None]] = {
    "serve": _add_serve,
    "clock": clock.add_parser,
    "streams": streams.add_parser,
    "load": data.add_parsers,
    "dump": data.add_parsers,
    "advise": advise.add_parser,
}


class _Narrowed(Exception):
    """A command line the one-command parser refused: parsed again by the whole parser, which says why."""


class _OneCommand(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _Narrowed(message)


def _parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; with `command`, only that command's subparser.

    A parser costs its construction (argparse looks up a translation for
    each of its messages): `partita serve` builds only its own (about 3 ms
    of its start). Anything else (`--help`, `--version`, an unknown
    command) gets every command, and so does a line the one-command parser
    refuses (`main`), so help and errors read as they always did.
    """
    kind = argparse.ArgumentParser if command is None else _OneCommand
    parser = kind(prog="partita", description="A DynamoDB-compatible database server.")
    parser.add_argument("--version", action=_Version, help="show program's version number and exit")
    commands = parser.add_subparsers(dest="command", required=True)
    if command is not None:
        _COMMANDS[command](commands)
        return parser
    for add in dict.fromkeys(_COMMANDS.values()):  # load and dump share one
        add(commands)
    return parser


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    try:
        args = _parser(argv[0] if argv and argv[0] in _COMMANDS else None).parse_args(argv)
    except _Narrowed:
        args = _parser().parse_args(argv)  # exits with argparse's message and usage
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
