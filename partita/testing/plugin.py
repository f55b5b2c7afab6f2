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

`--partita-advice=warn|fail` (or the ini `partita_advice`) asks the
access-pattern advisor after each such test that passed: its findings
(a Scan used as a WHERE clause, a hot key...) become a
`PartitaAdviceWarning` each, or fail the test. The marker
`@pytest.mark.partita_advice_ignore("scan-filter", table="T", index="I")`
silences findings of those kinds (every kind if none is named), of that
table and index when given.

The module imports nothing heavy: it is loaded into every pytest run of an
environment where Partita is installed, used or not.
"""

from __future__ import annotations

import contextlib
import io
import warnings
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .server import LocalPartita
    from .tables import Source

_OPTIONS = pytest.StashKey[dict[str, Any]]()
#: The server a test used (set by the isolation fixture), for the advice check after its call.
_SERVER = pytest.StashKey["LocalPartita"]()
_ADVICE = pytest.StashKey[str]()
ADVICE_MODES = ("off", "warn", "fail")


class PartitaAdviceWarning(UserWarning):
    """A finding of Partita's access-pattern advisor about what a test's requests did."""
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
    group.addoption("--partita-schema", metavar="FILE", default=None,
                    help="check every item written against the entity schemas in FILE (partita serve "
                    "--schema): reject mode fails the write, warn mode reports each violation as a "
                    "PartitaSchemaWarning of the test that wrote it")
    group.addoption("--partita-advice", choices=ADVICE_MODES, default=None,
                    help="after each test that passed, report the access-pattern advisor's findings about "
                    "its requests as warnings (warn) or fail the test (fail); default off")
    group.addoption("--partita-option", action="append", default=[], metavar="NAME=VALUE",
                    help="a `partita serve` option for the server, e.g. gsi-lag-ms=200 (repeatable)")
    parser.addini("partita_options", type="linelist", default=[],
                  help="`partita serve` options as NAME=VALUE lines (e.g. gsi-lag-ms=200)")
    parser.addini("partita_schema", default=None, help="as --partita-schema (relative to the rootdir)")
    parser.addini("partita_subprocess", type="bool", default=False, help="as --partita-subprocess")
    parser.addini("partita_keep_tables", type="bool", default=False, help="as --partita-keep-tables")
    parser.addini("partita_advice", default="off", help="as --partita-advice: off, warn or fail")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "partita: run against the Partita server with the environment "
                            "pointing at it (for code that builds its own boto3 clients)")
    config.addinivalue_line("markers", "partita_keep_tables: do not drop the tables after this test")
    config.addinivalue_line("markers", "partita_advice_ignore(*kinds, table=None, index=None): silence the "
                            "access-pattern advisor's findings of these kinds (all if none), of this table/index")
    if not config.getoption("help", False):
        config.stash[_OPTIONS] = server_options(config)  # a bad option is a usage error at once
        mode = config.getoption("partita_advice") or config.getini("partita_advice") or "off"
        if mode not in ADVICE_MODES:
            raise pytest.UsageError(f"partita_advice must be one of {', '.join(ADVICE_MODES)}, not {mode!r}")
        config.stash[_ADVICE] = mode


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
    schema = config.getoption("partita_schema")
    if schema is not None:
        options["schema"] = Path(schema).resolve()
    elif config.getini("partita_schema"):
        options["schema"] = config.rootpath / str(config.getini("partita_schema"))
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
    node.stash[_SERVER] = server
    server.apply_environment()
    spec = getattr(server.options, "schema", None)
    watch = spec is not None and spec.mode == "warn"
    before = server.schema_violations(limit=1)["total"] if watch else 0
    try:
        yield
    finally:
        server.restore_environment()
        found = _violations(server, before) if watch else []  # read before the reset drops them
        keep = request.config.getoption("partita_keep_tables")
        keep = request.config.getini("partita_keep_tables") if keep is None else keep
        if not keep and node.get_closest_marker("partita_keep_tables") is None:
            server.reset()
        _warn(found)  # last: under -W error the first one raises


class PartitaSchemaWarning(UserWarning):
    """A write of this test broke its entity's schema (`--partita-schema` in warn mode).

    `-W error::partita.testing.plugin.PartitaSchemaWarning` turns each into an error of the test.
    """


def _violations(server: LocalPartita, before: int) -> list[str]:
    """What the test's writes broke (at most the latest 100), oldest first, one line each."""
    new = server.schema_violations(limit=1)["total"] - before
    if new <= 0:
        return []
    lines = []
    for found in reversed(server.schema_violations(limit=min(new, 100))["findings"]):
        evidence = found["evidence"]
        key = ", ".join(f"{name}={next(iter(value.values()))}" for name, value in evidence["key"].items())
        lines.append(f"{evidence['write']} on {found['table']} ({key}) does not match schema "
                     f"{evidence['entity']}: " + "; ".join(evidence["errors"]))
    return lines


def _warn(lines: list[str]) -> None:
    import warnings

    for line in lines:
        warnings.warn(PartitaSchemaWarning(line), stacklevel=2)


def _silenced(item: pytest.Item, finding: dict[str, Any]) -> bool:
    for marker in item.iter_markers("partita_advice_ignore"):
        kinds = marker.args
        if kinds and finding["kind"] not in kinds:
            continue
        if "table" in marker.kwargs and marker.kwargs["table"] != finding["table"]:
            continue
        if "index" in marker.kwargs and marker.kwargs["index"] != finding["index"]:
            continue
        return True
    return False


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """After a test that used Partita passed: its findings, as warnings or a failure (`--partita-advice`).

    Asked before the isolation fixture drops the tables, so the findings are
    about this test's requests (a reset forgets every table's shapes).
    """
    result = yield
    mode = item.config.stash.get(_ADVICE, "off")
    server = item.stash.get(_SERVER, None)
    if mode == "off" or server is None or not server.started:
        return result
    from ..engine.advisor.report import finding_text

    found = [f for f in server.advice() if not _silenced(item, f)]
    if not found:
        return result
    if mode == "fail":
        text = "\n\n".join(finding_text(f) for f in found)
        pytest.fail(f"Partita's access-pattern advisor found {len(found)} problem(s) in this test's requests "
                    f"(silence one with @pytest.mark.partita_advice_ignore(KIND)):\n\n{text}", pytrace=False)
    for finding in found:
        warnings.warn(PartitaAdviceWarning(finding_text(finding)), stacklevel=1)
    return result


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

