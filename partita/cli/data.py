"""`partita load TABLE FILE` and `partita dump TABLE [FILE]`: items in and out of any endpoint.

They are DynamoDB clients (BatchWriteItem, Scan), so they work against
Partita, DynamoDB Local or DynamoDB itself. Files stream: one item is
parsed or written at a time, whatever the file's size.

Formats:
- `ddb`: DynamoDB JSON lines, `{"Item": {"id": {"S": "a"}}}` per line, the
  format of DynamoDB's export to S3 (`.gz` files are read and written
  compressed); a line holding a bare attribute map is read too. Lossless.
- `json`: plain JSON objects, one per line or as one JSON array, with types
  inferred as boto3's TypeSerializer does (numbers, strings, booleans, null,
  lists, maps). Writing it turns sets into lists, binary into base64 text
  and numbers with a fraction into JSON floats (use `ddb` to keep all 38
  digits).
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import os
import sys
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import IO, Any

BATCH = 25  # BatchWriteItem's limit


def add_parsers(commands: Any) -> None:
    load = commands.add_parser("load", help="write items from a file into a table (BatchWriteItem)")
    load.add_argument("table")
    load.add_argument("file", help="the file to read, - for standard input")
    load.add_argument("--format", choices=("auto", "ddb", "json"), default="auto",
                      help="ddb: DynamoDB JSON lines (S3 export); json: plain JSON; auto: look (default)")
    dump = commands.add_parser("dump", help="write every item of a table to a file (Scan)")
    dump.add_argument("table")
    dump.add_argument("file", nargs="?", default="-", help="the file to write (default: standard output)")
    dump.add_argument("--format", choices=("ddb", "json"), default="ddb",
                      help="ddb: DynamoDB JSON lines, as DynamoDB's S3 export (default); json: a JSON array")
    for parser in (load, dump):
        parser.add_argument("--endpoint", default=None,
                            help="the endpoint URL (default $AWS_ENDPOINT_URL_DYNAMODB or "
                            "http://127.0.0.1:8000); 'aws' for DynamoDB itself")
        parser.add_argument("--region", default=None, help="default $AWS_DEFAULT_REGION or us-east-1")
        parser.add_argument("--no-progress", action="store_true", help="no progress line on a terminal")


def run(args: argparse.Namespace) -> None:
    # A client command's: botocore is never imported by `partita serve`.
    from botocore.exceptions import BotoCoreError, ClientError

    client = _client(args.endpoint, args.region)
    progress = Progress(enabled=not args.no_progress and sys.stderr.isatty())
    try:
        if args.command == "load":
            count = load(client, args.table, args.file, args.format, progress)
            progress.done(f"loaded {count} items into {args.table}")
        else:
            count = dump(client, args.table, args.file, args.format, progress)
            progress.done(f"dumped {count} items from {args.table}")
    except (ClientError, BotoCoreError, OSError, ValueError) as error:
        sys.exit(f"partita: {error}")


def _client(endpoint: str | None, region: str | None) -> Any:
    import botocore.session

    session = botocore.session.get_session()
    endpoint = endpoint or os.environ.get("AWS_ENDPOINT_URL_DYNAMODB") or "http://127.0.0.1:8000"
    kwargs: dict[str, Any] = {"region_name": region or session.get_config_variable("region") or "us-east-1"}
    if endpoint != "aws":
        kwargs["endpoint_url"] = endpoint
        if session.get_credentials() is None:  # a local server takes any key
            kwargs.update(aws_access_key_id="partita", aws_secret_access_key="partita")
    return session.create_client("dynamodb", **kwargs)


class Progress:
    """A one-line progress report on stderr, redrawn at most ten times a second."""

    def __init__(self, *, enabled: bool) -> None:
        self.enabled = enabled
        self._last = 0.0

    def update(self, text: str) -> None:
        now = time.monotonic()
        if self.enabled and now - self._last >= 0.1:
            self._last = now
            sys.stderr.write(f"\r{text}\x1b[K")
            sys.stderr.flush()

    def done(self, text: str) -> None:
        sys.stderr.write(("\r" if self.enabled else "") + text + ("\x1b[K\n" if self.enabled else "\n"))
        sys.stderr.flush()


# -- load ---------------------------------------------------------------


def load(client: Any, table: str, file: str, fmt: str, progress: Progress) -> int:
    raw, total = _open_in(file)
    if _gzipped(file, raw):
        import gzip  # (a client command's): not imported by `partita serve`, which parses this module

        raw = gzip.GzipFile(fileobj=raw)
    text = io.TextIOWrapper(raw, encoding="utf-8")
    count = 0
    batch: list[dict[str, Any]] = []
    for item in read_items(text, fmt):
        batch.append({"PutRequest": {"Item": item}})
        if len(batch) == BATCH:
            _write_batch(client, table, batch)
            count += len(batch)
            batch = []
            progress.update(_load_status(count, raw, total))
    if batch:
        _write_batch(client, table, batch)
        count += len(batch)
    return count


def _open_in(file: str) -> tuple[IO[bytes], int | None]:
    if file == "-":
        return sys.stdin.buffer, None
    path = Path(file)
    return path.open("rb"), path.stat().st_size


def _gzipped(file: str, raw: IO[bytes]) -> bool:
    if file.endswith(".gz"):
        return True
    peek = getattr(raw, "peek", None)
    return peek is not None and peek(2)[:2] == b"\x1f\x8b"


def _load_status(count: int, raw: IO[bytes], total: int | None) -> str:
    if total:
        done = raw.tell()
        return f"loaded {count:,} items ({done / 1e6:.1f} of {total / 1e6:.1f} MB, {100 * done // total}%)"
    return f"loaded {count:,} items"


def read_items(text: IO[str], fmt: str) -> Iterator[dict[str, Any]]:
    """Items in the API's attribute-value form, one at a time."""
    first = _peek_char(text)
    if first == "[":
        if fmt == "ddb":
            raise ValueError("a JSON array is plain JSON: use --format json (ddb is one item per line)")
        yield from (_serialize(obj) for obj in _array_items(text))
        return
    for number, line in enumerate(text, 1):
        line = line.strip()
        if not line:
            continue
        try:
            obj = json.loads(line, parse_float=Decimal)
        except json.JSONDecodeError as error:
            raise ValueError(f"line {number}: not JSON ({error.msg})") from None
        if not isinstance(obj, dict):
            raise ValueError(f"line {number}: expected a JSON object")
        if fmt == "auto":
            fmt = "ddb" if _looks_typed(obj) else "json"
        if fmt == "ddb":
            attributes = obj["Item"] if set(obj) == {"Item"} and isinstance(obj["Item"], dict) else obj
            try:
                yield {name: _from_wire(value) for name, value in attributes.items()}
            except (TypeError, ValueError, AttributeError) as error:
                raise ValueError(f"line {number}: not DynamoDB JSON ({error})") from None
        else:
            yield _serialize(obj)


_TYPES = frozenset({"S", "N", "B", "BOOL", "NULL", "M", "L", "SS", "NS", "BS"})


def _looks_typed(obj: dict[str, Any]) -> bool:
    """Whether a line is DynamoDB JSON: `{"Item": {...}}` or every value a one-key type map."""
    if set(obj) == {"Item"} and isinstance(obj["Item"], dict):
        obj = obj["Item"]
    return bool(obj) and all(isinstance(v, dict) and len(v) == 1 and next(iter(v)) in _TYPES
                             for v in obj.values())


def _from_wire(value: dict[str, Any]) -> dict[str, Any]:
    """An attribute value as JSON has it (binary in base64) to what botocore takes (bytes)."""
    (kind, inner), = value.items()
    if kind == "B":
        return {"B": base64.b64decode(inner)}
    if kind == "BS":
        return {"BS": [base64.b64decode(v) for v in inner]}
    if kind == "M":
        return {"M": {k: _from_wire(v) for k, v in inner.items()}}
    if kind == "L":
        return {"L": [_from_wire(v) for v in inner]}
    if kind not in _TYPES:
        raise ValueError(f"unknown attribute type {kind!r}")
    return {kind: inner}


def _serialize(obj: Any) -> dict[str, Any]:
    from boto3.dynamodb.types import TypeSerializer

    if not isinstance(obj, dict):
        raise ValueError("expected JSON objects (one per item)")
    serializer = TypeSerializer()
    return {name: serializer.serialize(value) for name, value in obj.items()}


def _peek_char(text: IO[str]) -> str:
    """The first non-blank character, without consuming anything but blanks."""
    buffer = text.buffer if hasattr(text, "buffer") else None  # type: ignore[union-attr]
    while buffer is not None and hasattr(buffer, "peek"):
        head = buffer.peek(1)[:1]
        if head in (b" ", b"\t", b"\r", b"\n"):
            buffer.read(1)
            continue
        return head.decode("latin-1")
    return ""


def _array_items(text: IO[str]) -> Iterator[Any]:
    """The elements of one JSON array, decoded one at a time from a stream."""
    decoder = json.JSONDecoder(parse_float=Decimal)
    buffer = text.read(1 << 16).lstrip()
    if not buffer.startswith("["):
        raise ValueError("expected a JSON array")
    buffer, pos, eof = buffer[1:], 0, False
    while True:
        while pos < len(buffer) and buffer[pos] in " \t\r\n,":
            pos += 1
        if pos < len(buffer) and buffer[pos] == "]":
            return
        try:
            value, end = decoder.raw_decode(buffer, pos)
        except json.JSONDecodeError:
            if eof:
                raise ValueError("the JSON array is cut short or malformed") from None
            chunk = text.read(1 << 16)
            eof = not chunk
            buffer, pos = buffer[pos:] + chunk, 0
            continue
        if end == len(buffer) and not eof:
            # A number at the very end of the buffer may continue in the next chunk.
            chunk = text.read(1 << 16)
            eof = not chunk
            if chunk:
                buffer, pos = buffer[pos:] + chunk, 0
                continue
        yield value
        pos = end
        if pos > 1 << 16:
            buffer, pos = buffer[pos:], 0


def _write_batch(client: Any, table: str, batch: list[dict[str, Any]]) -> None:
    """BatchWriteItem, retrying unprocessed items with backoff (throttling)."""
    pending: dict[str, Any] = {table: batch}
    delay = 0.05
    while pending:
        pending = client.batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}
        if pending:
            time.sleep(delay)
            delay = min(delay * 2, 5.0)


# -- dump ---------------------------------------------------------------


def dump(client: Any, table: str, file: str, fmt: str, progress: Progress) -> int:
    estimate = client.describe_table(TableName=table)["Table"].get("ItemCount")
    out = _open_out(file)
    count = 0
    try:
        if fmt == "json":
            out.write("[")
        for page in client.get_paginator("scan").paginate(TableName=table):
            for item in page["Items"]:
                if fmt == "ddb":
                    out.write(json.dumps({"Item": _to_wire(item)}, separators=(",", ":")) + "\n")
                else:
                    out.write(("\n" if count == 0 else ",\n") + json.dumps(_plain(item), separators=(",", ":")))
                count += 1
            suffix = f" of about {estimate:,}" if estimate else ""
            progress.update(f"dumped {count:,} items{suffix}")
        if fmt == "json":
            out.write("\n]\n")
    finally:
        if out is not sys.stdout:
            out.close()
        else:
            out.flush()
    return count


def _open_out(file: str) -> IO[str]:
    if file == "-":
        return sys.stdout
    if file.endswith(".gz"):
        import gzip

        return io.TextIOWrapper(gzip.open(file, "wb"), encoding="utf-8")
    return open(file, "w", encoding="utf-8")  # noqa: SIM115 - closed by dump


def _to_wire(item: dict[str, Any]) -> dict[str, Any]:
    return {name: _value_to_wire(value) for name, value in item.items()}


def _value_to_wire(value: dict[str, Any]) -> dict[str, Any]:
    (kind, inner), = value.items()
    if kind == "B":
        return {"B": base64.b64encode(inner).decode()}
    if kind == "BS":
        return {"BS": [base64.b64encode(v).decode() for v in inner]}
    if kind == "M":
        return {"M": _to_wire(inner)}
    if kind == "L":
        return {"L": [_value_to_wire(v) for v in inner]}
    return {kind: inner}


def _plain(item: dict[str, Any]) -> dict[str, Any]:
    from boto3.dynamodb.types import TypeDeserializer

    deserializer = TypeDeserializer()
    return {name: _jsonable(deserializer.deserialize(value)) for name, value in item.items()}


def _jsonable(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | set | frozenset):
        items = [_jsonable(v) for v in value]
        return sorted(items, key=str) if isinstance(value, set | frozenset) else items
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode()
    if hasattr(value, "value") and isinstance(value.value, bytes):  # boto3's Binary
        return base64.b64encode(value.value).decode()
    return value
