"""`partita serve`: open the store, wire the engine and the app, and serve in this process.

With `--workers N` the forking supervisor (workers.py) runs `serve_in_process`
in each child; `partita.testing.local()` reuses `build_engine`, `build_app`
and `open_store` so an in-process server is wired exactly as the command line
wires one.
"""

from __future__ import annotations

import argparse
import gc
import signal
import socket
import sys
from typing import Any

from .options import add_serve_options
from .workers import supervise


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def _tune_gc() -> None:
    """Freeze start-up objects, collect less often, and turn the collector back on.

    Everything allocated so far lives for the whole process: keep the cyclic
    collector from walking it again and again (it showed as p99 spikes).
    `serve` turns the collector off while the server starts (imports make
    cycles that live on, and collecting them repeatedly is start-up time); no
    full collection precedes the freeze: it found about 300 garbage objects
    here and cost 5 ms of a start-up of about 100.
    """
    gc.freeze()
    gc.set_threshold(50_000, 50, 100)
    gc.enable()


def open_store(args: argparse.Namespace) -> Any:
    """The store the options name: PostgreSQL (--backend), memory (--in-memory) or SQLite."""
    if args.backend:
        from ..storage.pg_replica import ReplicaReads
        from ..storage.pg_schema import SchemaTooNew
        from ..storage.postgres import PostgresStore

        if not args.backend.startswith(("postgresql://", "postgres://")):
            sys.exit("partita: --backend takes a postgresql://user:pass@host:port/db URL")
        if args.sync != "normal":
            sys.exit("partita: --sync is for the SQLite store; PostgreSQL's durability is its "
                     "synchronous_commit setting (on by default)")
        replica = args.read_replica
        if replica is not None and not replica.startswith(("postgresql://", "postgres://")):
            sys.exit("partita: --read-replica takes a postgresql://user:pass@host:port/db URL")
        try:
            return PostgresStore(args.backend, replica=None if replica is None else ReplicaReads(replica))
        except SchemaTooNew as error:
            sys.exit(f"partita: {error}")
    if args.read_replica:
        sys.exit("partita: --read-replica needs --backend (a PostgreSQL store)")
    if args.sync != "normal" and args.in_memory:
        sys.exit("partita: --sync is for the SQLite store in --data-dir; --in-memory keeps nothing")
    if args.in_memory:
        from ..storage.memory import MemoryStore

        return MemoryStore()
    from ..storage.sqlite import open_store as open_sqlite

    return open_sqlite(args.data_dir, args.sync)


def add_parsers(commands: Any) -> None:
    add_serve_options(commands.add_parser("serve", help="serve the DynamoDB API over HTTP"))


def run(args: argparse.Namespace) -> None:
    if args.in_memory and args.workers > 1:
        sys.exit(
            "partita: --in-memory cannot be used with --workers > 1: each worker is a "
            "separate process with its own memory, so they would not see each other's "
            "tables. Use --data-dir (the workers share its SQLite file)."
        )
    if args.workers == 1:
        gc.disable()  # until the server starts (_tune_gc)
    _check_security_flags(args)
    args.schema = load_schema(args)  # a malformed file stops here, before anything is opened; compiled once
    sock = bind(args.host, args.port)
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    scheme = "https" if args.tls_cert else "http"
    line = f"Partita serving DynamoDB at {scheme}://{shown}:{port}"
    if args.workers == 1:
        store = open_store(args)
        set_clock(args, store)
        serve_in_process(args, sock, store, line)
        return
    # Create the file (or the schema) once, before any worker opens it.
    store = open_store(args)
    set_clock(args, store)
    store.close()
    _import_server_modules(args.http)  # imported once, shared by the forked workers
    print(line, flush=True)
    sys.exit(supervise(args, lambda: serve_in_process(args, sock, open_store(args), None)))


def _check_security_flags(args: argparse.Namespace) -> None:
    """Fail at start, with the reason, on an unusable --auth file or TLS pair (never with a secret)."""
    if (args.tls_cert is None) != (args.tls_key is None):
        sys.exit("partita: --tls-cert and --tls-key go together")
    if args.tls_cert is not None:
        from ..protocol.tls import TlsError, server_context

        try:
            server_context(args.tls_cert, args.tls_key)
        except TlsError as error:
            sys.exit(f"partita: {error}")
    if args.auth is not None:
        from ..protocol.auth.principals import AuthFileError, load

        try:
            load(args.auth)
        except AuthFileError as error:
            sys.exit(f"partita: --auth: {error}")


def load_schema(args: argparse.Namespace) -> Any:
    """`--schema`: the compiled guard spec, or None. A file Partita cannot use exits with why."""
    try:
        return guard_spec(args.schema)
    except ValueError as error:  # SchemaFileError
        sys.exit(f"partita: --schema: {error}")


def guard_spec(value: Any) -> Any:
    """The schema guard's spec from `--schema`'s value: a file, a document (`local(schema={...})`),
    or a spec already compiled; None for none. Raises SchemaFileError (a ValueError) on a fault."""
    if value is None:
        return None
    from collections.abc import Mapping

    from ..engine.schema_guard.spec import GuardSpec, load_spec, spec_from_document

    if isinstance(value, GuardSpec):
        return value
    if isinstance(value, Mapping):
        return spec_from_document(value, "schema")
    return load_spec(value)


def set_clock(args: argparse.Namespace, store: Any) -> None:
    """`--clock-offset`: set once, before any worker serves (the offset lives in the store)."""
    if args.clock_offset is not None:
        from ..engine.time.clock import Clock

        Clock(store).set_offset(args.clock_offset)


def _import_server_modules(http: str) -> None:
    from ..engine import engine  # noqa: F401
    from ..protocol import app, server  # noqa: F401

    if http == "uvicorn":
        import uvicorn  # noqa: F401


def build_engine(args: argparse.Namespace, store: Any) -> Any:
    """The engine `partita serve` runs, from its parsed options.

    Shared by `serve` and `partita.testing.local()` so an in-process server
    is wired exactly as the command line wires one (new serve flags reach
    both by being read here).
    """
    from ..engine.advisor.settings import parse_settings
    from ..engine.engine import Engine

    s3 = None
    if args.s3_endpoint is not None:
        from ..engine.backups.objects import S3

        s3 = S3(args.s3_endpoint, args.s3_region, args.s3_addressing == "path")
    options: dict[str, Any] = dict(
        item_collection_limit=args.item_collection_limit,
        gsi_lag_ms=args.gsi_lag_ms,
        index_allocation_ms=args.index_allocation_ms,
        index_backfill_ms=args.index_backfill_ms,
        ttl_delay=args.ttl_delay,
        emulate_throughput=args.emulate_throughput,
        # Throughput counters live in a file beside a SQLite store, shared by its
        # workers; PostgreSQL servers borrow them from the database (capacity/remote.py).
        capacity_path=None if args.in_memory or args.backend else args.data_dir / "partita.capacity",
        capacity_url=args.backend or None,
        partition_size_limit=args.partition_size_limit,
        vector_index=args.vector_index,
        s3_dir=args.s3_dir or (None if args.in_memory else args.data_dir / "s3"),
        s3=s3,
        table_max_units=args.table_max_units,
        split_heat_seconds=args.split_heat_seconds,
        schema=guard_spec(args.schema),
        advice=parse_settings(args.advice_setting),
        kinesis_endpoint=args.kinesis_endpoint,
        kinesis_region=args.kinesis_region,
    )
    if not args.regions or args.regions == [args.region]:
        return Engine(store, args.region, **options)
    from ..engine.regions.build import add_regions, home_region

    home = Engine(store, home_region(args.region, args.regions), **options)
    add_regions(home, args.regions, options, args.replication_lag_ms, args.replica_phase_ms)
    return home


def serve_in_process(args: argparse.Namespace, sock: socket.socket, store: Any, line: str | None) -> None:
    """Serve in this process until SIGTERM/SIGINT, then close the store."""

    engine = None
    try:
        engine = build_engine(args, store)
        app = build_app(args, engine)
        auth = app.auth
        tls = {}
        if args.tls_cert is not None:
            tls = {"ssl_certfile": str(args.tls_cert), "ssl_keyfile": str(args.tls_key)}
        if args.http == "uvicorn":
            import uvicorn

            if auth is not None:
                # uvicorn leaves SIGHUP alone: reload between two bytecodes of the main thread.
                signal.signal(signal.SIGHUP, lambda signum, frame: auth.reload())
            config = uvicorn.Config(
                app,
                loop="uvloop",
                http="httptools",
                lifespan="off",
                log_level="warning",
                access_log=False,
                timeout_keep_alive=int(args.keep_alive_timeout),
                server_header=False,  # the app sends DynamoDB's own
                **tls,  # type: ignore[arg-type]
            )
            uvicorn_server = _uvicorn_server_class()(config)
            _tune_gc()
            if line is not None:
                print(line, flush=True)
            uvicorn_server.run(sockets=[sock])
        else:
            from ..protocol.server import run

            _tune_gc()
            if line is not None:
                print(line, flush=True)
            run(
                app,
                sock,
                keep_alive_timeout=args.keep_alive_timeout,
                request_timeout=args.request_timeout,
                ssl_context=ssl_context(args),
                on_hangup=None if auth is None else auth.reload,
            )
    finally:
        if engine is not None:
            engine.close()  # its threads, the store, the meter's mapping, a temporary S3 folder
        else:
            store.close()


def build_app(args: argparse.Namespace, engine: Any) -> Any:
    """The PartitaApp `partita serve` runs: with `--auth`, its Authenticator (the in-process
    `partita.testing.local()` builds it here too). A bad --auth file raises AuthFileError."""
    from ..protocol.app import PartitaApp

    auth = None
    if args.auth is not None:
        from ..protocol.auth import Authenticator

        regions = None if engine.regions is None else tuple(engine.regions)
        auth = Authenticator(args.auth, engine.region, secure_transport=args.tls_cert is not None, regions=regions)
    return PartitaApp(engine, auth, console=args.console, bound=args.host,
                      allowed_hosts=tuple(args.allowed_hosts), secure=args.tls_cert is not None)


def ssl_context(args: argparse.Namespace) -> Any:
    """The server's TLS context for `--tls-cert`/`--tls-key`, or None (TlsError when unusable)."""
    if args.tls_cert is None and args.tls_key is None:
        return None
    if args.tls_cert is None or args.tls_key is None:
        raise ValueError("--tls-cert and --tls-key go together")
    from ..protocol.tls import server_context

    return server_context(args.tls_cert, args.tls_key)


def _uvicorn_server_class() -> Any:
    import contextlib

    import uvicorn

    class Server(uvicorn.Server):
        """uvicorn, less its re-raising of SIGTERM after the drain: a drained stop exits 0."""

        @contextlib.contextmanager
        def capture_signals(self) -> Any:
            stops = (signal.SIGINT, signal.SIGTERM)
            previous = {signum: signal.signal(signum, self.handle_exit) for signum in stops}
            try:
                yield
            finally:
                for signum, handler in previous.items():
                    signal.signal(signum, handler)

    return Server
