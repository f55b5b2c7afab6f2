"""`partita streams tail TABLE`: follow a table's stream, as JSON lines or into a command.

A consumer of the public Streams API like any other (botocore's
dynamodbstreams client), so it shows exactly what a Lambda trigger or a KCL
application would read. It follows every shard of the table's latest
stream, including shards opened later (children of split partitions), and
reads a parent shard before its children, as DynamoDB asks of consumers.
With `--exec CMD`, each non-empty batch is piped to CMD as a Lambda-style
event `{"Records": [...]}` (camelCase userIdentity and `eventSourceARN`, as
Lambda delivers them), so a handler can be tested against real events.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import time
from typing import Any


def add_parsers(commands: Any) -> None:
    streams = commands.add_parser("streams", help="DynamoDB Streams tools")
    stream_actions = streams.add_subparsers(dest="action", required=True)
    tail = stream_actions.add_parser("tail", help="print a table's stream records as JSON lines")
    tail.add_argument("table")
    tail.add_argument("--endpoint", default="http://127.0.0.1:8000", help="the server's URL")
    tail.add_argument("--from", dest="start", choices=("trim-horizon", "latest"), default="latest")
    tail.add_argument("--region", default=None, help="default: the AWS config's, else us-east-1")
    tail.add_argument("--exec", dest="exec_command", metavar="CMD",
                      help='run CMD for each batch, with {"Records": [...]} on its standard input')
    tail.add_argument("--poll", type=float, default=0.5, metavar="SECONDS", help="pause between empty reads")
    tail.add_argument("--exit-when-idle", type=float, default=None, metavar="SECONDS",
                      help=argparse.SUPPRESS)  # for tests: stop after this long without records


def run(args: argparse.Namespace) -> None:
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        sys.exit(tail(args))
    except (ClientError, BotoCoreError) as error:
        sys.exit(f"partita: {error}")


def _client(service: str, args: argparse.Namespace) -> Any:
    """A botocore client signing with the standard credential chain (placeholders when it has none)."""
    from .remote import region_of, session

    current = session()
    keys = {}
    if current.get_credentials() is None:  # a server without --auth takes any key
        keys = {"aws_access_key_id": "partita", "aws_secret_access_key": "partita"}
    return current.create_client(service, endpoint_url=args.endpoint, region_name=region_of(args, current), **keys)


def _plain(value: Any) -> Any:
    """botocore's parsed record back to JSON (timestamps to epoch seconds, bytes to base64)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, datetime.datetime):
        return int(value.timestamp())
    if isinstance(value, bytes):
        import base64

        return base64.b64encode(value).decode()
    return value


def lambda_record(record: dict[str, Any], arn: str) -> dict[str, Any]:
    out = dict(record)
    identity = out.get("userIdentity")
    if identity:
        out["userIdentity"] = {"type": identity.get("Type"), "principalId": identity.get("PrincipalId")}
    out["eventSourceARN"] = arn
    return out


def _all_shards(streams: Any, arn: str) -> list[dict[str, Any]]:
    """Every shard of the stream, page after page (DescribeStream answers at most 100 at a time)."""
    request: dict[str, Any] = {"StreamArn": arn}
    shards: list[dict[str, Any]] = []
    while True:
        described = streams.describe_stream(**request)["StreamDescription"]
        shards += described["Shards"]
        last = described.get("LastEvaluatedShardId")
        if last is None:
            return shards
        request["ExclusiveStartShardId"] = last


def tail(args: argparse.Namespace) -> int:
    ddb = _client("dynamodb", args)
    streams = _client("dynamodbstreams", args)
    arn = ddb.describe_table(TableName=args.table)["Table"].get("LatestStreamArn")
    if not arn:
        print(f"partita: table {args.table} has no stream", file=sys.stderr)
        return 1
    start = "TRIM_HORIZON" if args.start == "trim-horizon" else "LATEST"
    iterators: dict[str, str | None] = {}
    finished: set[str] = set()
    idle_since = time.monotonic()
    first = True
    while True:
        shards = _all_shards(streams, arn)
        listed = {shard["ShardId"] for shard in shards}
        for shard in shards:
            sid = shard["ShardId"]
            parent = shard.get("ParentShardId")
            # A child waits for its parent to be read to its end, wherever the listing puts it.
            if sid in iterators or (parent is not None and parent in listed and parent not in finished):
                continue
            # Shards opened after we started are read from their beginning.
            kind = start if first else "TRIM_HORIZON"
            iterators[sid] = streams.get_shard_iterator(StreamArn=arn, ShardId=sid, ShardIteratorType=kind)[
                "ShardIterator"]
        first = False
        got = False
        round_records: list[dict] = []
        for sid, iterator in list(iterators.items()):
            if iterator is None:
                continue
            page = streams.get_records(ShardIterator=iterator)
            iterators[sid] = page.get("NextShardIterator")
            if iterators[sid] is None:
                finished.add(sid)
            round_records += [_plain(r) for r in page["Records"]]
        # A stream has a shard per partition: one poll's records, in the order they were written.
        records = sorted(round_records, key=lambda r: int(r["dynamodb"]["SequenceNumber"]))
        if records:
            got = True
            if args.exec_command:
                event = json.dumps({"Records": [lambda_record(r, arn) for r in records]})
                import subprocess

                done = subprocess.run(args.exec_command, shell=True, input=event, text=True)
                if done.returncode != 0:
                    print(f"partita: {args.exec_command!r} exited {done.returncode}", file=sys.stderr)
            else:
                for record in records:
                    print(json.dumps(record), flush=True)
        if got:
            idle_since = time.monotonic()
        elif args.exit_when_idle is not None and time.monotonic() - idle_since > args.exit_when_idle:
            return 0
        else:
            time.sleep(args.poll)
