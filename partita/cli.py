"""`partita serve`: start the server on the embedded store (and the client commands of cli_admin)."""

from __future__ import annotations

import argparse
import gc
import os
import signal
import socket
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from .cli_admin import add_commands, parse_duration, run_clock, run_streams
from .cli_data import add_data_commands, run_data


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="partita", description="A DynamoDB-compatible database server.")
    parser.add_argument("--version", action="version", version=f"partita {_version()}")
    commands = parser.add_subparsers(dest="command", required=True)
    _add_serve_options(commands.add_parser("serve", help="serve the DynamoDB API over HTTP"))
    add_commands(commands)
    add_data_commands(commands)
    return parser


def _add_serve_options(serve: argparse.ArgumentParser) -> None:
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000, help="0 picks a free port")
    store = serve.add_mutually_exclusive_group()
    store.add_argument("--data-dir", type=Path, default=Path("partita-data"), help="where the SQLite store lives")
    store.add_argument("--in-memory", action="store_true", help="keep nothing on disk")
    store.add_argument(
        "--backend",
        metavar="URL",
        help="a shared PostgreSQL store, postgresql://user:pass@host:port/db (many servers may share it)",
    )
    serve.add_argument(
        "--read-replica",
        metavar="URL",
        help="with --backend: a streaming replica serving eventually consistent reads (postgresql://...)",
    )
    serve.add_argument("--region", default="us-east-1")
    serve.add_argument(
        "--vector-index",
        choices=("exact", "approximate"),
        default="exact",
        help="SearchVectors: exact nearest neighbours (numpy, deterministic) or an HNSW graph (usearch)",
    )
    serve.add_argument(
        "--gsi-lag-ms",
        type=int,
        default=0,
        metavar="MS",
        help="delay the visibility of global secondary index changes, as DynamoDB's are asynchronous (default 0)",
    )
    serve.add_argument(
        "--item-collection-limit",
        type=_positive_int,
        default=10 * 1024**3,
        metavar="BYTES",
        help="item collection size cap on tables with a local index (default 10 GB, as DynamoDB)",
    )
    serve.add_argument(
        "--http",
        choices=("partita", "uvicorn"),
        default="partita",
        help="HTTP server: Partita's own (default, fastest) or uvicorn running the ASGI app",
    )
    serve.add_argument(
        "--workers",
        type=_positive_int,
        default=1,
        help="processes sharing the port and the --data-dir store (default 1)",
    )
    serve.add_argument(
        "--keep-alive-timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="close connections idle this long (default 60)",
    )
    serve.add_argument(
        "--clock-offset",
        type=parse_duration,
        default=None,
        metavar="SECONDS",
        help="start the server clock this far ahead of wall time (TTL, streams; kept by a --data-dir store)",
    )
    serve.add_argument(
        "--ttl-delay",
        type=parse_duration,
        default=0.0,
        metavar="SECONDS",
        help="delete expired items this long after they expire (default 0: within about a second; "
        "DynamoDB takes up to 48 hours, 172800)",
    )
    serve.add_argument(
        "--request-timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="answer 408 and close when a request has not fully arrived this long after "
        "its first byte (default 60; Partita's own server)",
    )
    serve.add_argument(
        "--emulate-throughput",
        action="store_true",
        help="enforce DynamoDB's throughput limits: provisioned capacity with burst, 3000 read / 1000 write "
        "units per second per partition, on-demand maxima (off by default, as DynamoDB Local)",
    )
    serve.add_argument(
        "--table-max-units",
        type=_positive_int,
        default=40_000,
        metavar="UNITS",
        help="per-table quota of read and of write units per second (default 40,000, as DynamoDB's): "
        "DescribeLimits reports it, and --emulate-throughput caps on-demand tables at it",
    )
    serve.add_argument(
        "--split-heat-seconds",
        type=_positive_int,
        default=300,
        metavar="SECONDS",
        help="split a partition for heat once it has been hot (throttling at, or using 80%% of, its "
        "ceiling) this many seconds in a streak (default 300; needs --emulate-throughput)",
    )
    serve.add_argument(
        "--partition-size-limit",
        type=_positive_int,
        default=10 * 1024**3,
        metavar="BYTES",
        help="split a partition that holds more than this (default 10 GB, as DynamoDB)",
    )
    serve.add_argument(
        "--auth",
        type=Path,
        default=None,
        metavar="FILE",
        help="verify SigV4 signatures against the principals in FILE (JSON or TOML) and enforce "
        "their IAM policies; reloaded on SIGHUP (default: any credentials are accepted)",
    )
    serve.add_argument("--tls-cert", type=Path, default=None, metavar="FILE", help="serve HTTPS with this PEM certificate (chain)")
    serve.add_argument("--tls-key", type=Path, default=None, metavar="FILE", help="the private key of --tls-cert (PEM)")
    serve.add_argument(
        "--s3-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="where exports and imports find s3://bucket/prefix: DIR/bucket/prefix "
        "(default: s3/ in the data dir; a temporary directory with --in-memory)",
    )
    serve.add_argument(
        "--s3-endpoint",
        default=None,
        metavar="URL",
        help="write exports to and read imports from this S3-compatible service instead of --s3-dir "
        "(credentials from the standard AWS chain: environment, shared files, instance role)",
    )
    serve.add_argument("--s3-region", default=None, metavar="REGION",
                       help="the region --s3-endpoint signs for (default: the AWS chain's, else us-east-1)")
    serve.add_argument("--s3-addressing", choices=("path", "virtual"), default="path",
                       help="bucket in the URL path (local services; default) or in the host name")

    serve.add_argument(
        "--no-console",
        dest="console",
        action="store_false",
        help="do not serve the web console at /console",
    )


def _version() -> str:
    """The installed distribution's version (what `pip install .` recorded)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("partita")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "unknown"


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def _tune_gc() -> None:
    """Freeze start-up objects and collect less often.

    Everything allocated so far lives for the whole process: keep the cyclic
    collector from walking it again and again (it showed as p99 spikes).
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 50, 100)


def open_store(args: argparse.Namespace) -> Any:
    """The store the options name: PostgreSQL (--backend), memory (--in-memory) or SQLite."""
    if args.backend:
        from .storage.pg_schema import SchemaTooNew
        from .storage.postgres import PostgresStore

        if not args.backend.startswith(("postgresql://", "postgres://")):
            sys.exit("partita: --backend takes a postgresql://user:pass@host:port/db URL")
        replica = args.read_replica
        if replica is not None and not replica.startswith(("postgresql://", "postgres://")):
            sys.exit("partita: --read-replica takes a postgresql://user:pass@host:port/db URL")
        try:
            return PostgresStore(args.backend, replica_url=replica)
        except SchemaTooNew as error:
            sys.exit(f"partita: {error}")
    if args.read_replica:
        sys.exit("partita: --read-replica needs --backend (a PostgreSQL store)")
    from .storage.sqlite import open_store as open_sqlite

    return open_sqlite(None if args.in_memory else args.data_dir)


def serve(args: argparse.Namespace) -> None:
    if args.in_memory and args.workers > 1:
        sys.exit(
            "partita: --in-memory cannot be used with --workers > 1: each worker is a "
            "separate process with its own memory, so they would not see each other's "
            "tables. Use --data-dir (the workers share its SQLite file)."
        )
    _check_security_flags(args)
    sock = _bind(args.host, args.port)
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    scheme = "https" if args.tls_cert else "http"
    line = f"Partita serving DynamoDB at {scheme}://{shown}:{port}"
    if args.workers == 1:
        store = open_store(args)
        _set_clock(args, store)
        _serve_in_process(args, sock, store, line)
        return
    # Create the file (or the schema) once, before any worker opens it.
    store = open_store(args)
    _set_clock(args, store)
    store.close()
    _import_server_modules(args.http)  # imported once, shared by the forked workers
    print(line, flush=True)
    sys.exit(_supervise(args, sock))


def _check_security_flags(args: argparse.Namespace) -> None:
    """Fail at start, with the reason, on an unusable --auth file or TLS pair (never with a secret)."""
    if (args.tls_cert is None) != (args.tls_key is None):
        sys.exit("partita: --tls-cert and --tls-key go together")
    if args.tls_cert is not None:
        from .protocol.tls import TlsError, server_context

        try:
            server_context(args.tls_cert, args.tls_key)
        except TlsError as error:
            sys.exit(f"partita: {error}")
    if args.auth is not None:
        from .protocol.auth.principals import AuthFileError, load

        try:
            load(args.auth)
        except AuthFileError as error:
            sys.exit(f"partita: --auth: {error}")


def _set_clock(args: argparse.Namespace, store: Any) -> None:
    """`--clock-offset`: set once, before any worker serves (the offset lives in the store)."""
    if args.clock_offset is not None:
        from .engine.time.clock import Clock

        Clock(store).set_offset(args.clock_offset)


def _import_server_modules(http: str) -> None:
    from .engine import engine  # noqa: F401
    from .protocol import app, server  # noqa: F401

    if http == "uvicorn":
        import uvicorn  # noqa: F401


def build_engine(args: argparse.Namespace, store: Any) -> Any:
    """The engine `partita serve` runs, from its parsed options.

    Shared by `serve` and `partita.testing.local()` so an in-process server
    is wired exactly as the command line wires one (new serve flags reach
    both by being read here).
    """
    from .engine.backups.objects import S3
    from .engine.engine import Engine

    return Engine(
        store,
        args.region,
        item_collection_limit=args.item_collection_limit,
        gsi_lag_ms=args.gsi_lag_ms,
        ttl_delay=args.ttl_delay,
        emulate_throughput=args.emulate_throughput,
        # Throughput counters live in a file beside a SQLite store, shared by its
        # workers; PostgreSQL servers borrow them from the database (capacity/remote.py).
        capacity_path=None if args.in_memory or args.backend else args.data_dir / "partita.capacity",
        capacity_url=args.backend or None,
        partition_size_limit=args.partition_size_limit,
        vector_index=args.vector_index,
        s3_dir=args.s3_dir or (None if args.in_memory else args.data_dir / "s3"),
        s3=None if args.s3_endpoint is None else S3(args.s3_endpoint, args.s3_region, args.s3_addressing == "path"),
        table_max_units=args.table_max_units,
        split_heat_seconds=args.split_heat_seconds,
    )


def serve_options(**options: Any) -> argparse.Namespace:
    """`partita serve`'s options as the parser would build them, from keyword arguments.

    Defaults come from the parser itself, so a flag added to `serve` is
    accepted here under its dest name (`--gsi-lag-ms` is `gsi_lag_ms`)
    with no other change. Unknown names raise TypeError.
    """
    parser = serve_parser()
    args = parser.parse_args([])
    known = vars(args)
    for name, value in options.items():
        if name not in known:
            raise TypeError(f"unknown partita serve option {name!r} (known: {', '.join(sorted(known))})")
        setattr(args, name, value)
    return args


def serve_parser() -> argparse.ArgumentParser:
    """The `serve` subcommand's parser on its own (for serve_options and the subprocess mode)."""
    parser = argparse.ArgumentParser(prog="partita serve")
    _add_serve_options(parser)
    return parser


def _serve_in_process(args: argparse.Namespace, sock: socket.socket, store: Any, line: str | None) -> None:
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
            from .protocol.server import run

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
            engine.stop_background()
        store.close()


def build_app(args: argparse.Namespace, engine: Any) -> Any:
    """The PartitaApp `partita serve` runs: with `--auth`, its Authenticator (the in-process
    `partita.testing.local()` builds it here too). A bad --auth file raises AuthFileError."""
    from .protocol.app import PartitaApp

    auth = None
    if args.auth is not None:
        from .protocol.auth import Authenticator

        auth = Authenticator(args.auth, args.region, secure_transport=args.tls_cert is not None)
    return PartitaApp(engine, auth, console=args.console)


def ssl_context(args: argparse.Namespace) -> Any:
    """The server's TLS context for `--tls-cert`/`--tls-key`, or None (TlsError when unusable)."""
    if args.tls_cert is None and args.tls_key is None:
        return None
    if args.tls_cert is None or args.tls_key is None:
        raise ValueError("--tls-cert and --tls-key go together")
    from .protocol.tls import server_context

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


def _supervise(args: argparse.Namespace, sock: socket.socket) -> int:
    """Run args.workers forked workers on the shared socket until told to stop.

    Forking after binding lets every worker accept on the same listening
    socket (the kernel spreads connections) and shares the imported code.
    Each worker opens its own SQLite connection after the fork (a connection
    must never cross a fork); WAL, BEGIN IMMEDIATE and busy_timeout make the
    shared file safe. SIGTERM/SIGINT are forwarded; a worker that dies on
    its own is replaced. Returns the exit code.
    """
    children: dict[int, float] = {}  # pid -> start time
    stopping = False
    failed = False
    stop_signals = {signal.SIGTERM, signal.SIGINT}

    def forward(signum: int, frame: Any) -> None:
        nonlocal stopping
        stopping = True
        for pid in list(children):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    def hang_up(signum: int, frame: Any) -> None:
        for pid in list(children):  # each worker reloads its own --auth principals
            try:
                os.kill(pid, signal.SIGHUP)
            except ProcessLookupError:
                pass

    blocked = stop_signals | {signal.SIGHUP}

    def spawn() -> None:
        # Block the stop signals across fork so a child never runs the
        # parent's forwarding handler, and the parent never misses a pid.
        signal.pthread_sigmask(signal.SIG_BLOCK, blocked)
        try:
            pid = os.fork()
            if pid == 0:
                for signum in stop_signals:
                    signal.signal(signum, signal.SIG_DFL)
                # Until the worker's server installs its reload, a hang-up must not kill it.
                signal.signal(signal.SIGHUP, signal.SIG_IGN)
                signal.pthread_sigmask(signal.SIG_UNBLOCK, blocked)
                code = 0
                try:
                    _serve_in_process(args, sock, open_store(args), None)
                except SystemExit as exit_:
                    code = exit_.code if isinstance(exit_.code, int) else 1
                except BaseException:
                    traceback.print_exc()
                    code = 1
                finally:
                    sys.stdout.flush()
                    sys.stderr.flush()
                os._exit(code)
            children[pid] = time.monotonic()
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, blocked)

    for signum in stop_signals:
        signal.signal(signum, forward)
    signal.signal(signal.SIGHUP, hang_up)
    for _ in range(args.workers):
        spawn()
    # The parent keeps the socket (it accepts nothing) to start replacements.
    while children:
        pid, status = os.waitpid(-1, 0)
        started = children.pop(pid, None)
        if started is None:
            continue
        code = os.waitstatus_to_exitcode(status)
        clean = code == 0 or (stopping and -code in stop_signals)
        if stopping:
            failed = failed or not clean
            continue
        print(f"partita: worker {pid} exited ({code}); starting another", file=sys.stderr, flush=True)
        if time.monotonic() - started < 1.0:
            time.sleep(1.0)  # do not spin on a worker that dies at start-up
        if not stopping:
            spawn()
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    if args.command == "serve":
        serve(args)
    elif args.command == "clock":
        run_clock(args)
    elif args.command == "streams":
        run_streams(args)
    elif args.command in ("load", "dump"):
        run_data(args)
    else:  # pragma: no cover - argparse rejects unknown commands
        sys.exit(2)
