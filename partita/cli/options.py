"""`partita serve`'s options, declared once for the command line and for partita.testing.

`serve_options(**kw)` builds the Namespace the parser would, so an in-process
server (`partita.testing.local()`) takes exactly the flags a command line has,
and a new flag reaches both by being declared here.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

#: How long an index added by UpdateTable stays CREATING at least (`--index-backfill-ms`): long
#: enough to be seen, short enough for tests that wait for ACTIVE (docs/decisions.md).
DEFAULT_INDEX_BACKFILL_MS = 200

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_PART = re.compile(r"(\d+(?:\.\d+)?)([smhdw]?)")


def parse_duration(text: str) -> float:
    """`90s`, `25h`, `1h30m`, `2d`, or a bare number of seconds."""
    text = text.strip().lower()
    pos = 0
    total = 0.0
    while pos < len(text):
        match = _PART.match(text, pos)
        if match is None or match.end() == pos:
            raise argparse.ArgumentTypeError(f"not a duration: {text!r} (try 90s, 15m, 25h, 2d)")
        total += float(match.group(1)) * _UNITS[match.group(2) or "s"]
        pos = match.end()
    if not text:
        raise argparse.ArgumentTypeError("empty duration")
    return total


def advice_setting(text: str) -> str:
    """One `NAME=VALUE` of `--advice-setting`, checked now so that a typo is a usage error."""
    from ..engine.advisor.settings import parse_settings

    try:
        parse_settings([text])
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


_REGION = re.compile(r"[a-z]{2}(-[a-z]+)+-\d+")


def region_list(text: str) -> list[str]:
    """`us-east-1,eu-west-1`: region names, each once, in the order given."""
    names: list[str] = []
    for name in (part.strip() for part in text.split(",")):
        if not _REGION.fullmatch(name):
            raise argparse.ArgumentTypeError(f"not a region name: {name!r} (e.g. us-east-1,eu-west-1)")
        if name not in names:
            names.append(name)
    return names


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be at least 0")
    return value


def add_serve_options(serve: argparse.ArgumentParser) -> None:
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000, help="0 picks a free port")
    store = serve.add_mutually_exclusive_group()
    store.add_argument("--data-dir", type=Path, default=Path("partita-data"), help="where the SQLite store lives")
    store.add_argument("--in-memory", action="store_true", help="keep nothing on disk")
    serve.add_argument(
        "--sync",
        choices=("normal", "full"),
        default="normal",
        help="SQLite durability: normal (default) survives a killed process; full also survives an "
        "OS crash or power loss (the WAL is synced at every commit, which costs throughput)",
    )
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
    serve.add_argument("--region", default="us-east-1",
                       help="the region this server is (default us-east-1); with --regions, the home region "
                       "when listed there")
    serve.add_argument(
        "--regions",
        type=region_list,
        default=None,
        metavar="R1,R2,...",
        help="serve several regions, each its own set of tables, ARNs and streams: a request belongs to "
        "the region its signature is scoped to (global tables replicate between them). The store's "
        "existing tables belong to --region if listed, else to the first (default: --region alone)",
    )
    serve.add_argument(
        "--replication-lag-ms",
        type=non_negative_int,
        default=100,
        metavar="MS",
        help="with --regions: how long a write to a global table takes to reach its other replicas, on the "
        "server clock (default 100; 0: before the write's answer is sent)",
    )
    serve.add_argument(
        "--replica-phase-ms",
        type=non_negative_int,
        default=200,
        metavar="MS",
        help="with --regions: the least time a replica stays CREATING, UPDATING or DELETING, and a table "
        "UPDATING meanwhile, on the server clock (default 200)",
    )
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
        "--index-backfill-ms",
        type=non_negative_int,
        default=DEFAULT_INDEX_BACKFILL_MS,
        metavar="MS",
        help="keep a global secondary or vector index added by UpdateTable CREATING (Backfilling) at least "
        f"this long on the server clock, as DynamoDB's take minutes (default {DEFAULT_INDEX_BACKFILL_MS}; "
        "0: ACTIVE once built)",
    )
    serve.add_argument(
        "--index-allocation-ms",
        type=non_negative_int,
        default=0,
        metavar="MS",
        help="before that, keep the table UPDATING and the index in resource allocation (Backfilling false) "
        "this long; a deleted index stays DELETING as long (default 0: boto3's table_exists waiter sleeps "
        "20 s on UPDATING)",
    )
    serve.add_argument(
        "--item-collection-limit",
        type=positive_int,
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
        type=positive_int,
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
        "--advice-setting",
        action="append",
        type=advice_setting,
        default=None,
        metavar="NAME=VALUE",
        help="an access-pattern advisor threshold, e.g. scan_filter_min_read=100 (repeatable; the settings "
        "and their defaults are in the README: GET /partita/v1/advice lists them)",
    )
    serve.add_argument(
        "--table-max-units",
        type=positive_int,
        default=40_000,
        metavar="UNITS",
        help="per-table quota of read and of write units per second (default 40,000, as DynamoDB's): "
        "DescribeLimits reports it, and --emulate-throughput caps on-demand tables at it",
    )
    serve.add_argument(
        "--split-heat-seconds",
        type=positive_int,
        default=300,
        metavar="SECONDS",
        help="split a partition for heat once it has been hot (throttling at, or using 80%% of, its "
        "ceiling) this many seconds in a streak (default 300; needs --emulate-throughput)",
    )
    serve.add_argument(
        "--partition-size-limit",
        type=positive_int,
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
    serve.add_argument(
        "--schema",
        type=Path,
        default=None,
        metavar="FILE",
        help="check every item written against the entity schemas in FILE (JSON, or YAML with PyYAML): "
        "JSON Schemas matched by table and key pattern; mode reject refuses a violating write, warn "
        "records it (console, /metrics, /partita/v1/schema/violations). Needs partita[schema]",
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
    serve.add_argument(
        "--kinesis-endpoint",
        default=None,
        metavar="URL",
        help="deliver the changes of tables with a Kinesis streaming destination to this Kinesis-compatible "
        "service (credentials from the standard AWS chain; without it enabling a destination fails)",
    )
    serve.add_argument("--kinesis-region", default=None, metavar="REGION",
                       help="the region --kinesis-endpoint signs for and its stream ARNs name (default: the table's)")
    serve.add_argument("--s3-addressing", choices=("path", "virtual"), default="path",
                       help="bucket in the URL path (local services; default) or in the host name")

    serve.add_argument(
        "--allowed-hosts",
        action="append",
        default=[],
        metavar="NAMES",
        help="without --auth, also answer the console and admin routes under these Host names "
        "(comma-separated; .example.com for a domain and its subdomains, * for any; default: "
        "localhost, loopback addresses and the --host address)",
    )
    serve.add_argument(
        "--no-console",
        dest="console",
        action="store_false",
        help="do not serve the web console at /console",
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
    add_serve_options(parser)
    return parser
