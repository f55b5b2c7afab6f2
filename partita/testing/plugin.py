"""pytest plugin: a real Partita server for the test session (entry point `pytest11`).

Fixtures: `partita` (the session's LocalPartita), `dynamodb_endpoint`,
`dynamodb_client`, `dynamodb_resource`, `dynamodb_streams_client`, and
`partita_tables` (create tables from definitions, see
`partita.testing.tables`). `partita.testing.plugin.tables_fixture(...)`
declares a fixture that creates the given tables for each test.

Every test that uses one of them (directly or through another fixture), or
is marked `@pytest.mark.partita`, runs with the environment pointing at the
server (so code under test may call `boto3.client("dynamodb")` with no
arguments) and has every table dropped afterwards, unless it is marked
`partita_keep_tables` or the run has `--partita-keep-tables`. The server
starts lazily, once per process: with pytest-xdist each worker has its own
(and its own subdirectory of `--partita-data-dir`), so workers never see
each other's tables.

The module imports nothing heavy: it is loaded into every pytest run of an
environment where Partita is installed, used or not.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .server import LocalPartita
    from .tables import Source

_OPTIONS = pytest.StashKey[dict[str, Any]]()
_FIXTURES = frozenset({"partita", "dynamodb_endpoint", "dynamodb_client", "dynamodb_resource",
                       "dynamodb_streams_client", "partita_tables"})


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("partita", "Partita (DynamoDB-compatible server)")
    group.addoption("--partita-data-dir", metavar="DIR", default=None,
                    help="keep the server's tables in a SQLite store under DIR (default: in memory); "
                    "each xdist worker uses DIR/<worker id>")
    group.addoption("--partita-subprocess", action="store_true", default=None,
                    help="run the server as a `partita serve` subprocess instead of in this process")
    group.addoption("--partita-keep-tables", action="store_true", default=None,
                    help="do not drop the tables after each test")
    group.addoption("--partita-option", action="append", default=[], metavar="NAME=VALUE",
                    help="a `partita serve` option for the server, e.g. gsi-lag-ms=200 (repeatable)")
    parser.addini("partita_options", type="linelist", default=[],
                  help="`partita serve` options as NAME=VALUE lines (e.g. gsi-lag-ms=200)")
    parser.addini("partita_subprocess", type="bool", default=False, help="as --partita-subprocess")
    parser.addini("partita_keep_tables", type="bool", default=False, help="as --partita-keep-tables")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "partita: run against the Partita server with the environment "
                            "pointing at it (for code that builds its own boto3 clients)")
    config.addinivalue_line("markers", "partita_keep_tables: do not drop the tables after this test")
    if not config.getoption("help", False):
        config.stash[_OPTIONS] = server_options(config)  # a bad option is a usage error at once


def server_options(config: pytest.Config) -> dict[str, Any]:
    """The LocalPartita options this run asks for (ini first, then the command line)."""
    options: dict[str, Any] = _parse_pairs([*config.getini("partita_options"),
                                            *config.getoption("partita_option")])
    data_dir = config.getoption("partita_data_dir")
    if data_dir is not None:
        root = Path(data_dir)
        # xdist's own record, not $PYTEST_XDIST_WORKER: a pytest started from
        # inside a worker (pytester, say) inherits that variable.
        worker = getattr(config, "workerinput", {}).get("workerid")
        options["data_dir"] = root / worker if worker else root
        options.pop("in_memory", None)
    subprocess = config.getoption("partita_subprocess")
    options["subprocess"] = bool(config.getini("partita_subprocess") if subprocess is None else subprocess)
    return options


def _parse_pairs(pairs: list[str]) -> dict[str, Any]:
    """`gsi-lag-ms=200` lines to typed serve options, parsed by `partita serve`'s own parser."""
    from ..cli.options import serve_parser

    argv: list[str] = []
    names: list[str] = []
    for pair in pairs:
        name, _, value = pair.partition("=")
        name = name.strip().lstrip("-").replace("_", "-")
        names.append(name.replace("-", "_"))
        argv.append(f"--{name}")
        if value.strip().lower() not in ("", "true"):
            argv.append(value.strip())
    errors = io.StringIO()
    try:
        with contextlib.redirect_stderr(errors):
            parsed = vars(serve_parser().parse_args(argv))
    except SystemExit:
        reason = errors.getvalue().strip().splitlines()[-1:] or [""]
        raise pytest.UsageError(f"bad Partita options: {' '.join(pairs)} ({reason[0]})") from None
    return {name: parsed[name] for name in names}


@pytest.fixture(scope="session")
def partita(request: pytest.FixtureRequest) -> Iterator[LocalPartita]:
    """The session's Partita server (one per xdist worker), started on first use."""
    from .server import LocalPartita

    server = LocalPartita(env=False, **request.config.stash[_OPTIONS]).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(autouse=True)
def _partita_isolation(request: pytest.FixtureRequest) -> Iterator[None]:
    """For tests that use Partita: the environment during the test, dropped tables after it."""
    node = request.node
    if _FIXTURES.isdisjoint(request.fixturenames) and node.get_closest_marker("partita") is None:
        yield
        return
    server: LocalPartita = request.getfixturevalue("partita")
    server.apply_environment()
    try:
        yield
    finally:
        server.restore_environment()
        keep = request.config.getoption("partita_keep_tables")
        keep = request.config.getini("partita_keep_tables") if keep is None else keep
        if not keep and node.get_closest_marker("partita_keep_tables") is None:
            server.reset()


@pytest.fixture(scope="session")
def dynamodb_endpoint(partita: LocalPartita) -> str:
    return partita.endpoint


@pytest.fixture(scope="session")
def dynamodb_client(partita: LocalPartita) -> Any:
    """A boto3 DynamoDB client for the server (made once: clients take ~50 ms to build)."""
    return partita.client()


@pytest.fixture(scope="session")
def dynamodb_resource(partita: LocalPartita) -> Any:
    return partita.resource()


@pytest.fixture(scope="session")
def dynamodb_streams_client(partita: LocalPartita) -> Any:
    return partita.streams_client()


TableFactory = Callable[..., dict[str, Any]]


@pytest.fixture
def partita_tables(partita: LocalPartita, dynamodb_client: Any, dynamodb_resource: Any) -> TableFactory:
    """`partita_tables(*sources, parameters=None)`: create the tables now; {name: boto3 Table}.

    A source is CreateTable input (a dict or a list of them), or the path
    of a JSON/YAML file holding such input or a CloudFormation/SAM template.
    """
    from .tables import create_tables, load_definitions

    def create(*sources: Source, parameters: Mapping[str, str] | None = None) -> dict[str, Any]:
        names = create_tables(dynamodb_client, load_definitions(*sources, parameters=parameters))
        return {name: dynamodb_resource.Table(name) for name in names}

    return create


def tables_fixture(*sources: Source, parameters: Mapping[str, str] | None = None,
                   name: str | None = None) -> Any:
    """A fixture that creates these tables for each test and gives {name: boto3 Table}.

        # conftest.py
        from partita.testing.plugin import tables_fixture
        tables = tables_fixture("template.yaml")   # the stack's AWS::DynamoDB::Table resources

    Definitions are read and checked here, at import, so a broken file
    fails the collection once instead of every test.
    """
    from .tables import load_definitions

    definitions = load_definitions(*sources, parameters=parameters)

    def fixture(partita_tables: TableFactory) -> dict[str, Any]:
        return partita_tables(*definitions)

    return pytest.fixture(fixture, name=name) if name else pytest.fixture(fixture)

