"""The ceiling: the least a Python DynamoDB-shaped server can do per request.

uvloop + httptools + orjson and a dict per table; no validation, no storage,
no signatures checked. It answers CreateTable, DescribeTable, ListTables,
PutItem, GetItem and BatchWriteItem well enough for bench/run.py, so
`run.py --servers ceiling,partita` shows how close Partita is to what plain
Python on this machine can answer at all. Not a DynamoDB implementation.

    .venv/bin/python bench/ceiling_server.py --port 8000
"""

from __future__ import annotations

import argparse
import asyncio
import gc
from typing import Any, cast

import httptools
import orjson
import uvloop

Json = dict[str, Any]
TABLES: dict[str, dict[str, Any]] = {}
ITEMS: dict[str, dict[tuple[str, ...], Json]] = {}


def key_of(table: str, item: Json) -> tuple[str, ...]:
    return tuple(orjson.dumps(item[name]).decode() for name in TABLES[table]["keys"])


def create_table(req: Json) -> Json:
    name = req["TableName"]
    description = {
        "TableName": name,
        "TableStatus": "ACTIVE",
        "KeySchema": req["KeySchema"],
        "AttributeDefinitions": req["AttributeDefinitions"],
        "ItemCount": 0,
    }
    TABLES[name] = {
        "keys": [k["AttributeName"] for k in req["KeySchema"]],
        "description": description,
    }
    ITEMS[name] = {}
    return {"TableDescription": description}


def describe_table(req: Json) -> Json:
    return {"Table": TABLES[req["TableName"]]["description"]}


def list_tables(req: Json) -> Json:
    return {"TableNames": sorted(TABLES)}


def put_item(req: Json) -> Json:
    name = req["TableName"]
    ITEMS[name][key_of(name, req["Item"])] = req["Item"]
    return {}


def get_item(req: Json) -> Json:
    name = req["TableName"]
    item = ITEMS[name].get(key_of(name, req["Key"]))
    return {} if item is None else {"Item": item}


def batch_write_item(req: Json) -> Json:
    for name, requests in req["RequestItems"].items():
        for r in requests:
            put_item({"TableName": name, "Item": r["PutRequest"]["Item"]})
    return {"UnprocessedItems": {}}


OPERATIONS = {
    "CreateTable": create_table,
    "DescribeTable": describe_table,
    "ListTables": list_tables,
    "PutItem": put_item,
    "GetItem": get_item,
    "BatchWriteItem": batch_write_item,
}


class Protocol(asyncio.Protocol):
    def __init__(self) -> None:
        self.parser = httptools.HttpRequestParser(self)
        self.transport: asyncio.Transport | None = None
        self.target = b""
        self.body: list[bytes] = []
        self.header_name = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError:
            assert self.transport is not None
            self.transport.close()

    def on_message_begin(self) -> None:
        self.body = []
        self.target = b""

    def on_header(self, name: bytes, value: bytes) -> None:
        if name.lower() == b"x-amz-target":
            self.target = value

    def on_body(self, body: bytes) -> None:
        self.body.append(body)

    def on_message_complete(self) -> None:
        operation = self.target.rpartition(b".")[2].decode()
        status = b"200 OK"
        try:
            answer = OPERATIONS[operation](orjson.loads(b"".join(self.body)))
        except Exception as exc:  # noqa: BLE001 - a stand-in server: any failure is a 400
            status = b"400 Bad Request"
            answer = {
                "__type": "com.amazon.coral.validate#ValidationException",
                "message": repr(exc),
            }
        payload = orjson.dumps(answer)
        assert self.transport is not None
        self.transport.write(
            b"HTTP/1.1 " + status + b"\r\nContent-Type: application/x-amz-json-1.0\r\n"
            b"Content-Length: " + str(len(payload)).encode() + b"\r\n\r\n" + payload
        )


async def serve(host: str, port: int) -> None:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(Protocol, host, port, backlog=1024)
    async with server:
        await server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    gc.freeze()  # DESIGN.md: the cyclic collector dominates p99 otherwise
    uvloop.run(serve(args.host, args.port))


if __name__ == "__main__":
    main()
