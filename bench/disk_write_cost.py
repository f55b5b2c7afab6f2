"""In-process: the CPU one write costs on the on-disk SQLite store, through the real HTTP path and group commit.

Run: .venv/bin/python bench/disk_write_cost.py [put|update|batch] [N] [ITEMS]

Requests like bench/run.py's (random preloaded keys, ~100-byte items) go
through `HttpConnection.data_received` on 8 connections, one request each
per simulated event-loop turn, and `HttpServer.commit_group` ends every
turn, as the server's loop would. Prints CPU us per request; under
`valgrind --tool=callgrind` run it with two values of N and divide the
difference of the instruction totals by the difference of N (start-up
cancels), which repeats on a loaded machine where timings do not.
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from in_process import Loop, Transport

from partita.engine.engine import Engine
from partita.protocol.app import PartitaApp
from partita.protocol.server import HttpConnection, HttpServer
from partita.storage.sqlite import open_store

ITEMS = 10_000
CONNECTIONS = 8


def item(i: int, rng: random.Random) -> dict[str, Any]:
    return {"pk": {"S": f"k{i:08d}"}, "n": {"N": str(rng.randrange(10000))}, "v": {"S": "x" * 80}}


def body(kind: str, rng: random.Random) -> tuple[str, dict[str, Any]]:
    if kind == "put":
        return "PutItem", {"TableName": "bench", "Item": item(rng.randrange(ITEMS), rng)}
    if kind == "update":
        return "UpdateItem", {"TableName": "bench", "Key": {"pk": {"S": f"k{rng.randrange(ITEMS):08d}"}},
                              "UpdateExpression": "SET v = :v ADD n :one",
                              "ExpressionAttributeValues": {":v": {"S": "y" * 80}, ":one": {"N": "1"}}}
    keys = rng.sample(range(ITEMS), 25)
    return "BatchWriteItem", {"RequestItems": {"bench": [{"PutRequest": {"Item": item(k, rng)}} for k in keys]}}


def raw(operation: str, payload: dict[str, Any]) -> bytes:
    data = json.dumps(payload).encode()
    return (b"POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/x-amz-json-1.0\r\n"
            b"authorization: AWS4-HMAC-SHA256 Credential=AKID/20261201/us-east-1/dynamodb/aws4_request, "
            b"SignedHeaders=host, Signature=0\r\nx-amz-date: 20261201T000000Z\r\n"
            b"x-amz-target: DynamoDB_20120810." + operation.encode() + b"\r\ncontent-length: "
            + str(len(data)).encode() + b"\r\n\r\n" + data)


def main() -> None:
    kind = sys.argv[1] if len(sys.argv) > 1 else "put"
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 4000
    global ITEMS
    ITEMS = int(sys.argv[3]) if len(sys.argv) > 3 else ITEMS
    engine = Engine(open_store(Path(tempfile.mkdtemp(prefix="partita-disk-cost-"))), background=False)
    engine.tables.create({"TableName": "bench", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
                          "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
                          "BillingMode": "PAY_PER_REQUEST"})
    rng = random.Random(7)
    for i in range(ITEMS):
        engine.items.put("bench", item(i, rng))
    requests = [raw(*body(kind, rng)) for _ in range(count)]
    server = HttpServer(PartitaApp(engine))
    loop = Loop()
    server._loop = loop  # type: ignore[assignment]  # noqa: SLF001
    # as start() does (a server without optimistic writes has no token or rerun)
    optimistic = [server._token, server._rerun] if hasattr(server, "_rerun") else []  # noqa: SLF001
    server._group.attach(server._group_opened, *optimistic)  # noqa: SLF001
    connections = []
    for _ in range(CONNECTIONS):
        connection = HttpConnection(server)
        connection.connection_made(Transport(only_ok=True))  # type: ignore[arg-type]
        connections.append(connection)
    t0 = time.process_time()
    for at in range(0, count, CONNECTIONS):
        for connection, data in zip(connections, requests[at:at + CONNECTIONS], strict=False):
            connection.data_received(data)
        loop.run_turn()
    spent = time.process_time() - t0
    assert sum(c._transport.answers for c in connections) == count  # type: ignore[union-attr]  # noqa: SLF001
    print(f"{kind}: {spent / count * 1e6:.1f} us CPU a request ({count} requests)")
    engine.close()


if __name__ == "__main__":
    main()
