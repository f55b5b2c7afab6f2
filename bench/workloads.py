"""The workloads: what one request of each looks like, and how wrk sends them.

A workload is a function returning one random (operation, payload) for a
table, and a Workload entry in WORKLOADS; wrk.py signs a pool of them and
replays it with lua/replay.lua (or the workload's own script).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from client import DynamoClient
from common import BenchError, Json
from tables import TableSpec

QUERY_ITEMS = 25  # items one Query workload request returns

RequestBuilder = Callable[[TableSpec, random.Random], tuple[str, Json]]


def build_put(table: TableSpec, rng: random.Random) -> tuple[str, Json]:
    p, s = table.random_key(rng)
    return "PutItem", {
        "TableName": table.name,
        "Item": table.item(p, s, version=rng.randrange(10000)),
    }


def build_update(table: TableSpec, rng: random.Random) -> tuple[str, Json]:
    """SET of the string attribute and ADD to the number: a read-modify-write of a preloaded item."""
    p, s = table.random_key(rng)
    return "UpdateItem", {
        "TableName": table.name,
        "Key": table.key(p, s),
        "UpdateExpression": "SET v = :v ADD n :one",
        "ExpressionAttributeValues": {":v": table.item(p, s, version=rng.randrange(10000))["v"],
                                      ":one": {"N": "1"}},
    }


BATCH_ITEMS = 25  # BatchWriteItem's maximum


def build_batch(table: TableSpec, rng: random.Random) -> tuple[str, Json]:
    """25 PutRequests of distinct random preloaded keys (one request, so ops/s counts batches)."""
    keys = rng.sample(range(table.partitions), min(BATCH_ITEMS, table.partitions))
    puts = [{"PutRequest": {"Item": table.item(p, 0, version=rng.randrange(10000))}} for p in keys]
    return "BatchWriteItem", {"RequestItems": {table.name: puts}}


def build_get(table: TableSpec, rng: random.Random) -> tuple[str, Json]:
    p, s = table.random_key(rng)
    return "GetItem", {"TableName": table.name, "Key": table.key(p, s)}


def build_query(table: TableSpec, rng: random.Random) -> tuple[str, Json]:
    """25 consecutive items of a random 100-item collection, by a sort-key range."""
    p = rng.randrange(table.partitions)
    s = rng.randrange(table.per_partition - QUERY_ITEMS + 1)
    return "Query", {
        "TableName": table.name,
        "KeyConditionExpression": "pk = :p AND sk BETWEEN :a AND :b",
        "ExpressionAttributeValues": {
            ":p": table.key(p)["pk"],
            ":a": table.key(p, s)["sk"],
            ":b": table.key(p, s + QUERY_ITEMS - 1)["sk"],
        },
    }


def prepare_scan(client: DynamoClient, table: TableSpec) -> tuple[RequestBuilder, float]:
    """Page through the whole table once; requests then fetch a random page of that walk.

    A full Scan is a chain of requests, each starting where the previous
    page ended, so it cannot be replayed as independent requests; but its
    pages can: every request reads one page of the walk. Items read per
    second is requests per second times the walk's mean items per page.
    """
    starts: list[Json | None] = [None]
    total = 0
    while True:
        payload: Json = {"TableName": table.name}
        if starts[-1] is not None:
            payload["ExclusiveStartKey"] = starts[-1]
        answer = client.check("Scan", payload)
        total += int(answer.get("Count", 0))
        last = answer.get("LastEvaluatedKey")
        if last is None:
            break
        starts.append(last)
    if total != table.count:
        raise BenchError(f"a full Scan of {table.name} read {total} items, expected {table.count}")

    def build(table: TableSpec, rng: random.Random) -> tuple[str, Json]:
        payload: Json = {"TableName": table.name}
        start = rng.choice(starts)
        if start is not None:
            payload["ExclusiveStartKey"] = start
        return "Scan", payload

    return build, total / len(starts)


@dataclass(frozen=True)
class Workload:
    name: str
    description: str
    table: str  # key of make_tables()
    build: RequestBuilder  # one random request for this workload
    expect: str  # text every good response body contains
    threads: int = 2
    connections: int = 32
    lua: str = "replay.lua"
    # per-server set-up returning the request builder to use and the items
    # each request reads (reported as items/s), for requests that depend on
    # the server's own answers (Scan pages)
    prepare: Callable[[DynamoClient, TableSpec], tuple[RequestBuilder, float]] | None = None


WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (
        Workload(
            "put", "PutItem, random preloaded key, ~100 B item", "simple", build_put, "{", 2, 32
        ),
        Workload("update", "UpdateItem (SET + ADD), random preloaded key", "simple", build_update,
                 "{", 2, 32),
        Workload("batch", "BatchWriteItem of 25 puts, random preloaded keys (ops/s = batches)",
                 "simple", build_batch, '"UnprocessedItems":{}', 2, 32),
        Workload("get", "GetItem, random preloaded key", "simple", build_get, '"Item"', 2, 32),
        Workload("get1", "GetItem at 1 connection (latency)", "simple", build_get, '"Item"', 1, 1),
        Workload("query10k", "Query, 25 of a 100-item collection, 10k-item table", "coll10k",
                 build_query, '"Count":25', 2, 32),
        Workload("query1m", "Query, 25 of a 100-item collection, large table (--collection-items)",
                 "coll1m", build_query, '"Count":25', 2, 32),
        # 8 connections: 32 concurrent 1 MB pages time dynalite out (10 s)
        Workload("scan10k", "Scan pages of the 10k-item simple table (items/s)", "simple",
                 build_get, '"ScannedCount"', 2, 8, prepare=prepare_scan),
    )
}
