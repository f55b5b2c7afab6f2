"""`partita.testing.local()`: a real Partita server for a test suite, one call away.

In-process (the default) it runs the very server `partita serve` runs --
the same engine wiring (`cli.serve.build_engine`) and the same HTTP server -- on
its own uvloop event loop in a daemon thread, so starting it costs no
interpreter start-up (a process's first start about 0.1 s, mostly imports;
later ones a few milliseconds) and tests may reach into the engine
(`reset()` is a direct store transaction). `subprocess=True` runs
`python -m partita serve` instead, for what a thread cannot give: several
worker processes, the uvicorn front end, or a server that survives the
test process's own signal handling; there `reset()` and `advance_clock()`
go through the admin API.

While started it points the environment at itself (endpoint variables,
dummy credentials and region), so application code that builds
`boto3.client("dynamodb")` with no arguments reaches it unchanged, as
moto's `mock_aws` users expect; stopping restores every variable as it was.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

#: Values for the environment while a server is active. Keys must be
#: dummies: real ones would sign real requests if anything escaped.
DUMMY_ACCESS_KEY = "partita"
DUMMY_SECRET_KEY = "partita"
#: Variables that would override or defeat the endpoint and credentials set
#: here (a profile whose credentials win, a session token for other keys).
_CLEARED = ("AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_PROFILE",
            "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")


class LocalPartita:
    """One Partita server for tests; a context manager and a plain start/stop object.

    Options are `partita serve`'s, by their Python names (`--gsi-lag-ms` is
    `gsi_lag_ms`); the ones that exist are listed, and any other serve
    option passes through `**options`, so flags added to `serve` work here
    unchanged. `in_memory` is the default; `data_dir` keeps a SQLite store.
    `auth` (a `--auth` users file) verifies signatures and policies, and
    `tls_cert`/`tls_key` serve HTTPS, in-process as in a subprocess: the app
    and TLS context come from the same functions `partita serve` uses. With
    `auth` the dummy keys of the environment are refused unless the file
    names them; pass `aws_access_key_id`/`aws_secret_access_key` to client().
    `schema` is `--schema`'s file, or the same document as a dict: it is
    checked here, so a fault raises SchemaFileError in the caller, in-process
    as in a subprocess.
    """

    def __init__(
        self,
        *,
        data_dir: str | os.PathLike[str] | None = None,
        in_memory: bool | None = None,
        region: str = "us-east-1",
        gsi_lag_ms: int | None = None,
        index_backfill_ms: int | None = None,
        index_allocation_ms: int | None = None,
        ttl_delay: float | None = None,
        clock_offset: float | None = None,
        item_collection_limit: int | None = None,
        auth: str | os.PathLike[str] | None = None,
        tls_cert: str | os.PathLike[str] | None = None,
        tls_key: str | os.PathLike[str] | None = None,
        schema: str | os.PathLike[str] | Mapping[str, Any] | None = None,
        subprocess: bool = False,
        env: bool = True,
        **options: Any,
    ) -> None:
        from ..cli.options import serve_options

        if in_memory is None:
            in_memory = data_dir is None
        if in_memory and data_dir is not None:
            raise ValueError("give data_dir or in_memory=True, not both")
        if isinstance(options.get("regions"), str):  # "us-east-1,eu-west-1" as on the command line
            from ..cli.options import region_list

            options["regions"] = region_list(options["regions"])
        given: dict[str, Any] = {"in_memory": in_memory, "region": region, "port": 0, **options}
        if data_dir is not None:
            given["data_dir"] = Path(data_dir)
        for name, path in (("auth", auth), ("tls_cert", tls_cert), ("tls_key", tls_key)):
            if path is not None:
                given[name] = Path(path)
        for name, value in (("gsi_lag_ms", gsi_lag_ms), ("index_backfill_ms", index_backfill_ms),
                            ("index_allocation_ms", index_allocation_ms), ("ttl_delay", ttl_delay),
                            ("clock_offset", clock_offset), ("item_collection_limit", item_collection_limit)):
            if value is not None:
                given[name] = value
        self._schema_source = schema
        self._schema_file: Path | None = None
        if schema is not None:
            from ..cli.serve import guard_spec

            given["schema"] = guard_spec(schema)  # SchemaFileError now, not at start(); compiled once
        self.options = serve_options(**given)  # TypeError on a name serve does not know
        self._given = given
        self.region = region
        self.subprocess = subprocess
        self._env = env
        if not subprocess and (self.options.workers > 1 or self.options.http != "partita"):
            raise ValueError("workers > 1 and http='uvicorn' need subprocess=True")
        self.endpoint: str = ""
        self.engine: Any = None  # in-process only
        self._store: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._http: Any = None
        self._app: Any = None
        self._thread: threading.Thread | None = None
        self._process: subprocess.Popen[str] | None = None
        self._saved_env: dict[str, str | None] | None = None
        self._saved_session: Any = None

    def _schema_path(self, schema: str | os.PathLike[str] | Mapping[str, Any]) -> Path:
        """The file a subprocess server reads: the one given, or the dict written to a temporary one."""
        if not isinstance(schema, Mapping):
            return Path(schema)
        import tempfile

        def number(value: Any) -> Any:
            from decimal import Decimal

            if isinstance(value, Decimal):
                return float(value)
            raise TypeError(f"{value!r} is not JSON")

        with tempfile.NamedTemporaryFile("w", suffix=".json", prefix="partita-schema-", delete=False) as out:
            json.dump(schema, out, default=number)
        self._schema_file = Path(out.name)
        return self._schema_file

    # -- life cycle -------------------------------------------------------

    @property
    def started(self) -> bool:
        return bool(self.endpoint)

    def start(self) -> LocalPartita:
        if self.started:
            return self
        if self.subprocess:
            self._start_subprocess()
        else:
            self._start_thread()
        if self._env:
            self.apply_environment()
        return self

    def stop(self) -> None:
        """Stop serving, free the port and the threads, restore the environment (idempotent)."""
        self.restore_environment()
        if self._process is not None:
            self._stop_subprocess()
        if self._thread is not None:
            self._stop_thread()
        self.endpoint = ""
        if self._schema_file is not None:
            self._schema_file.unlink(missing_ok=True)
            self._schema_file = None

    def __enter__(self) -> LocalPartita:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.stop()

    def _start_thread(self) -> None:
        from ..cli.serve import bind, build_app, build_engine, open_store, set_clock, ssl_context

        args = self.options
        tls = ssl_context(args)  # before anything is opened: a bad pair raises here
        store = open_store(args)
        engine = None
        try:
            set_clock(args, store)
            engine = build_engine(args, store)
            app = build_app(args, engine)  # AuthFileError for a bad --auth file
        except BaseException:
            if engine is not None:
                engine.duties.stop()
            store.close()
            raise
        self._app = app
        sock = bind(args.host, args.port)
        self._store, self.engine = store, engine
        ready = threading.Event()
        failure: list[BaseException] = []
        self._thread = threading.Thread(
            target=self._serve, args=(app, sock, tls, ready, failure),
            name="partita-local", daemon=True,
        )
        self._thread.start()
        ready.wait()
        if failure:
            self._thread.join()
            self._thread = None
            self._close_engine()
            raise failure[0]
        host, port = sock.getsockname()[:2]
        scheme = "http" if tls is None else "https"
        self.endpoint = f"{scheme}://{f'[{host}]' if ':' in host else host}:{port}"

    def _serve(
        self, app: Any, sock: Any, tls: Any, ready: threading.Event, failure: list[BaseException]
    ) -> None:
        """The server thread: the same HttpServer as `partita serve`, without signal handlers."""
        import uvloop

        from ..protocol.server import HttpServer

        loop = uvloop.new_event_loop()
        asyncio.set_event_loop(loop)
        http = HttpServer(
            app,
            keep_alive_timeout=self.options.keep_alive_timeout,
            request_timeout=self.options.request_timeout,
            shutdown_timeout=2.0,
            ssl_context=tls,
        )
        try:
            loop.run_until_complete(http.start(sock))
        except BaseException as error:
            failure.append(error)
            sock.close()
            loop.close()
            ready.set()
            return
        self._loop, self._http = loop, http
        ready.set()
        try:
            loop.run_until_complete(http.wait_closed())
        finally:
            sock.close()
            loop.close()

    def _stop_thread(self) -> None:
        assert self._thread is not None
        if self._loop is not None and self._http is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._http.shutdown)
        self._thread.join(10)
        self._thread = None
        self._loop = self._http = None
        self._close_engine()

    def _close_engine(self) -> None:
        if self.engine is not None:
            self.engine.stop_background()
        if self._store is not None:
            self._store.close()
        self.engine = self._store = None

    def _start_subprocess(self) -> None:
        options = dict(self._given)
        if self._schema_source is not None:
            options["schema"] = self._schema_path(self._schema_source)
        argv = [sys.executable, "-m", "partita", "serve", *serve_argv(options)]
        process = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
        assert process.stdout is not None
        line = process.stdout.readline()
        if "://" not in line:
            process.kill()
            process.wait()
            raise RuntimeError(f"partita serve did not start (exit {process.poll()}): {line!r}")
        self._process = process
        self.endpoint = line.strip().split()[-1]
        # Keep reading its standard output so it can never block on a full pipe.
        threading.Thread(target=process.stdout.read, name="partita-stdout", daemon=True).start()

    def _stop_subprocess(self) -> None:
        assert self._process is not None
        process, self._process = self._process, None
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def reload_auth(self) -> bool:
        """Re-read the `auth` file, as SIGHUP does for `partita serve` (False: kept the old one)."""
        if self._process is not None:
            import signal

            self._process.send_signal(signal.SIGHUP)
            return True
        auth = None if self._app is None else self._app.auth
        if auth is None:
            raise RuntimeError("the server runs without auth")
        reloaded: bool = auth.reload()
        return reloaded

    # -- environment ------------------------------------------------------

    def environment(self) -> dict[str, str]:
        """What is set while the server is active (exported for child processes too)."""
        return {
            "AWS_ENDPOINT_URL_DYNAMODB": self.endpoint,
            "AWS_ENDPOINT_URL_DYNAMODB_STREAMS": self.endpoint,
            "AWS_ACCESS_KEY_ID": DUMMY_ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": DUMMY_SECRET_KEY,
            "AWS_DEFAULT_REGION": self.region,
            "AWS_REGION": self.region,
        }

    def apply_environment(self) -> None:
        """Point the environment at this server (done by start() unless env=False)."""
        if self._saved_env is not None:
            return
        wanted: dict[str, str | None] = {**self.environment(), **dict.fromkeys(_CLEARED)}
        self._saved_env = {name: os.environ.get(name) for name in wanted}
        for name, value in wanted.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        # boto3's default session caches the credentials it resolved first
        # (real ones, perhaps): give code under test a fresh one.
        boto3 = sys.modules.get("boto3")
        if boto3 is not None:
            self._saved_session = boto3.DEFAULT_SESSION
            boto3.DEFAULT_SESSION = None

    def restore_environment(self) -> None:
        """Put back every variable apply_environment changed (a no-op if it did not run)."""
        if self._saved_env is None:
            return
        for name, value in self._saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        self._saved_env = None
        boto3 = sys.modules.get("boto3")
        if boto3 is not None:
            boto3.DEFAULT_SESSION = self._saved_session
        self._saved_session = None

    # -- clients ----------------------------------------------------------

    def _client_args(self, overrides: dict[str, Any]) -> dict[str, Any]:
        if not self.started:
            raise RuntimeError("the Partita server is not started")
        return {
            "endpoint_url": self.endpoint,
            "region_name": self.region,
            "aws_access_key_id": DUMMY_ACCESS_KEY,
            "aws_secret_access_key": DUMMY_SECRET_KEY,
            **overrides,
        }

    def client(self, **overrides: Any) -> Any:
        """A boto3 DynamoDB client for this server (any boto3.client argument overrides)."""
        import boto3

        return boto3.client("dynamodb", **self._client_args(overrides))

    def resource(self, **overrides: Any) -> Any:
        import boto3

        return boto3.resource("dynamodb", **self._client_args(overrides))

    def streams_client(self, **overrides: Any) -> Any:
        import boto3

        return boto3.client("dynamodbstreams", **self._client_args(overrides))

    # -- test controls ----------------------------------------------------

    def reset(self, *, keep_clock: bool = False) -> int:
        """Drop every table (and their streams), and put the clock back unless keep_clock.

        In-process this is one store transaction (about a millisecond for a
        few small tables); a subprocess server gets `POST /partita/v1/reset`.
        Returns how many tables were dropped.
        """
        if self.engine is not None:
            from ..engine.tables.reset import reset

            return reset(self.engine, keep_clock=keep_clock)
        dropped: int = self._admin("reset", {"keep_clock": keep_clock})["dropped_tables"]
        return dropped

    def advance_clock(self, seconds: float) -> float:
        """Move the server clock forward (TTL, stream retention...); the server's new time."""
        if seconds < 0:
            raise ValueError("the clock only moves forward")
        if self.engine is not None:
            self.engine.clock.advance(float(seconds))
            self.engine.duties.wake()
            now: float = self.engine.clock.now()
            return now
        now = self._admin("clock", {"advance_seconds": seconds})["now"]
        return now

    def clock(self) -> float:
        """The server's time, in epoch seconds."""
        if self.engine is not None:
            now: float = self.engine.clock.now()
            return now
        now = self._admin("clock", None)["now"]
        return now

    def schema_violations(self, table: str | None = None, limit: int = 100) -> dict[str, Any]:
        """What the schema guard recorded (warn mode): {"mode", "total", "findings"}, newest first.

        As `GET /partita/v1/schema/violations`; a server without a schema raises RuntimeError.
        """
        if self.engine is not None:
            if self.engine.schema_guard is None:
                raise RuntimeError("the server runs without a schema (local(schema=...))")
            from ..admin.schema_guard import violations

            return violations(self.engine, table, limit)
        import urllib.error
        from urllib.parse import quote

        query = f"?limit={limit}" + (f"&table={quote(table)}" if table else "")
        try:
            return self._admin("schema/violations" + query, None)
        except urllib.error.HTTPError as error:
            if error.code == 404:
                raise RuntimeError("the server runs without a schema (local(schema=...))") from None
            raise

    def advice(self, table: str | None = None) -> list[dict[str, Any]]:
        """The access-pattern advisor's findings (of one table), as `GET /partita/v1/advice` answers.

        Over HTTP in-process too: the findings are computed on the server's
        own thread, never beside requests it is serving.
        """
        from urllib.parse import quote

        resource = "advice" if table is None else "advice?table=" + quote(table, safe="")
        findings: list[dict[str, Any]] = self._admin(resource, None)["findings"]
        return findings

    # -- global tables (a server of several regions: regions=[...]) ---------------------------

    def hold_replication(self) -> None:
        """Stop applying global tables' writes to the other replicas (they wait, in order)."""
        self._replication({"hold": True})

    def release_replication(self, *, settle: bool = True) -> None:
        """Resume replication; with `settle`, apply every due write before returning."""
        self._replication({"hold": False, "settle": settle})

    def settle_replication(self) -> dict[str, Any]:
        """Apply every due write now (the lag still counts: advance the clock past it first)."""
        return self._replication({"settle": True})

    def replication(self) -> dict[str, Any]:
        """Replication as `GET /partita/v1/replication` shows it (regions, backlog, conflicts...)."""
        return self._replication(None)

    def _replication(self, body: dict[str, Any] | None) -> dict[str, Any]:
        if self.engine is not None:
            from ..admin.replication import replication

            return replication(self.engine, "GET" if body is None else "POST", body)
        return self._admin("replication", body)

    def _admin(self, resource: str, body: dict[str, Any] | None) -> dict[str, Any]:
        if not self.started:
            raise RuntimeError("the Partita server is not started")
        import urllib.request  # (http.client, email): only a subprocess server's controls need it

        request = urllib.request.Request(
            f"{self.endpoint}/partita/v1/{resource}",
            data=None if body is None else json.dumps(body).encode(),
            method="GET" if body is None else "POST",
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            doc: dict[str, Any] = json.loads(response.read())
            return doc

    def __repr__(self) -> str:
        mode = "subprocess" if self.subprocess else "in-process"
        return f"<LocalPartita {mode} {self.endpoint or 'stopped'}>"


def serve_argv(options: dict[str, Any]) -> list[str]:
    """`partita serve` flags for options given by Python name (`gsi_lag_ms=5` -> `--gsi-lag-ms 5`).

    Every serve flag is its dest with dashes, so no table of names is kept
    here; booleans are flags given when true. The result is parsed once
    here so a bad value fails in the caller, not in a child that exits.
    """
    from ..cli.options import serve_parser

    argv: list[str] = []
    for name, value in options.items():
        flag = "--" + name.replace("_", "-")
        if isinstance(value, bool):
            if value:
                argv.append(flag)
        elif isinstance(value, list | tuple) and name == "regions":  # one comma-separated list
            argv += [flag, ",".join(str(part) for part in value)]
        elif isinstance(value, list | tuple):  # a repeatable flag (--advice-setting)
            for each in value:
                argv += [flag, str(each)]
        elif value is not None:
            argv += [flag, str(value)]
    serve_parser().parse_args(argv)
    return argv


def local(**options: Any) -> LocalPartita:
    """A Partita server for tests: `with local() as ddb: ddb.client()...`, or `.start()`/`.stop()`.

    See LocalPartita for the options (those of `partita serve`).
    """
    return LocalPartita(**options)
