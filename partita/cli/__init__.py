"""The `partita` command: one module per command (serve, clock, streams, load/dump, advise).

Each command module declares its parser and runs it; this module only
assembles the parsers and dispatches, so a command never imports another.
"""

from __future__ import annotations

import argparse
import sys
from importlib import import_module
from typing import Any, NoReturn


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


#: Each command's module (in this package), in the order `partita --help` lists them; each
#: declares its parsers (`add_parsers`) and runs them (`run`). A module is imported only when
#: its command runs or every parser is built (help, errors): `partita serve`, and `local()`
#: which reads serve's options, load none of the others.
_COMMANDS: dict[str, str] = {
    "serve": "serve",
    "clock": "clock",
    "streams": "streams",
    "load": "data",
    "dump": "data",
    "advise": "advise",
}


def _module(name: str) -> Any:
    return import_module(f".{name}", __name__)


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
        _module(_COMMANDS[command]).add_parsers(commands)
        return parser
    for module in dict.fromkeys(_COMMANDS.values()):  # load and dump share one
        _module(module).add_parsers(commands)
    return parser


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    try:
        args = _parser(argv[0] if argv and argv[0] in _COMMANDS else None).parse_args(argv)
    except _Narrowed:
        args = _parser().parse_args(argv)  # exits with argparse's message and usage
    _module(_COMMANDS[args.command]).run(args)  # argparse rejects unknown commands
