"""`partita serve`: start the server on the embedded store."""

from __future__ import annotations

import argparse
import gc
import socket
import sys
from pathlib import Path


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="partita", description="A DynamoDB-compatible database server.")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="serve the DynamoDB API over HTTP")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000, help="0 picks a free port")
    store = serve.add_mutually_exclusive_group()
    store.add_argument("--data-dir", type=Path, default=Path("partita-data"), help="where the SQLite store lives")
    store.add_argument("--in-memory", action="store_true", help="keep nothing on disk")
    serve.add_argument("--region", default="us-east-1")
    return parser


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def serve(args: argparse.Namespace) -> None:
    import uvicorn

    from .engine.engine import Engine
    from .protocol.app import PartitaApp
    from .storage.sqlite import open_store

    store = open_store(None if args.in_memory else args.data_dir)
    app = PartitaApp(Engine(store, args.region))
    sock = _bind(args.host, args.port)
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    config = uvicorn.Config(
        app,
        loop="uvloop",
        http="httptools",
        lifespan="off",
        log_level="warning",
        access_log=False,
        timeout_keep_alive=60,
    )
    server = uvicorn.Server(config)
    # Everything allocated so far lives for the whole process: keep the cyclic
    # collector from walking it again and again (it showed as p99 spikes).
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 50, 100)
    print(f"Partita serving DynamoDB at http://{shown}:{port}", flush=True)
    try:
        server.run(sockets=[sock])
    finally:
        store.close()


def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    if args.command == "serve":
        serve(args)
    else:  # pragma: no cover - argparse rejects unknown commands
        sys.exit(2)
