"""The tables the workloads use, their items, and loading them into a server.

An item's key and content follow from its numbers (p, s) alone, so the
workloads, the preload and the spot check after it agree on every key
without sharing state.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass

from client import DynamoClient
from common import BenchError, Json

VALUE_LEN = 80  # with the key and a number attribute, items are ~100 bytes


@dataclass(frozen=True)
class TableSpec:
    """A table the workloads read and write, and the items preloaded into it.

    Items are numbered (p, s): p in [0, partitions) is the partition key,
    s in [0, per_partition) the sort key (composite tables only).
    """

    name: str
    range_key: bool
    partitions: int
    per_partition: int = 1

    @property
    def count(self) -> int:
        return self.partitions * self.per_partition

    def create_payload(self) -> Json:
        attrs = [{"AttributeName": "pk", "AttributeType": "S"}]
        schema = [{"AttributeName": "pk", "KeyType": "HASH"}]
        if self.range_key:
            attrs.append({"AttributeName": "sk", "AttributeType": "S"})
            schema.append({"AttributeName": "sk", "KeyType": "RANGE"})
        return {
            "TableName": self.name,
            "AttributeDefinitions": attrs,
            "KeySchema": schema,
            "BillingMode": "PAY_PER_REQUEST",
        }

    def key(self, p: int, s: int = 0) -> Json:
        key: Json = {"pk": {"S": f"pk{p:08d}"}}
        if self.range_key:
            key["sk"] = {"S": f"sk{s:06d}"}
        return key

    def item(self, p: int, s: int = 0, version: int = 0) -> Json:
        item = self.key(p, s)
        seed = f"{p:08d}{s:06d}{version:04d}-"
        item["n"] = {"N": str(p * 1000 + s)}
        item["v"] = {"S": (seed * (VALUE_LEN // len(seed) + 1))[:VALUE_LEN]}
        return item

    def random_key(self, rng: random.Random) -> tuple[int, int]:
        return rng.randrange(self.partitions), rng.randrange(self.per_partition)

    def all_items(self) -> Iterator[Json]:
        for p in range(self.partitions):
            for s in range(self.per_partition):
                yield self.item(p, s)


COLLECTION = 100  # items per partition key in the Query tables


def make_tables(items: int, collection_items: int = 1_000_000) -> dict[str, TableSpec]:
    return {
        # item collections of 100, in a small and a large table: a Query's cost
        # must not depend on the table's size (issue 4, "Cost is flat")
        "coll10k": TableSpec("bench_coll_10k", range_key=True, partitions=10_000 // COLLECTION,
                             per_partition=COLLECTION),
        "coll1m": TableSpec("bench_coll_large", range_key=True,
                            partitions=max(1, collection_items // COLLECTION), per_partition=COLLECTION),
        # hash key only: put/get
        "simple": TableSpec("bench_simple", range_key=False, partitions=items),
        # pk/sk, item collections of 10: for Query-shaped workloads
        "composite": TableSpec(
            "bench_composite", range_key=True, partitions=max(1, items // 10), per_partition=10
        ),
    }


# --------------------------------------------------------------------------
# Table set-up and preload
# --------------------------------------------------------------------------


def create_table(
    client: DynamoClient, table: TableSpec, timeout: float = 60.0, options: Json | None = None
) -> None:
    client.check("CreateTable", {**table.create_payload(), **(options or {})})
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        answer = client.check("DescribeTable", {"TableName": table.name})
        if answer.get("Table", {}).get("TableStatus") == "ACTIVE":
            return
        time.sleep(0.05)
    raise BenchError(f"table {table.name} not ACTIVE after {timeout:.0f} s")


def chunks(items: Iterator[Json], size: int) -> Iterator[list[Json]]:
    chunk: list[Json] = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def put_chunk(client: DynamoClient, table: TableSpec, items: list[Json]) -> None:
    for item in items:
        client.check("PutItem", {"TableName": table.name, "Item": item})


def batch_chunk(client: DynamoClient, table: TableSpec, items: list[Json]) -> None:
    """BatchWriteItem in groups of 25, retrying UnprocessedItems."""
    for group in chunks(iter(items), 25):
        requests: list[Json] = [{"PutRequest": {"Item": item}} for item in group]
        delay = 0.01
        while requests:
            answer = client.check("BatchWriteItem", {"RequestItems": {table.name: requests}})
            requests = answer.get("UnprocessedItems", {}).get(table.name, [])
            if requests:
                time.sleep(delay)
                delay = min(delay * 2, 1.0)


# Above this many items a PutItem preload runs in worker processes, not
# threads: one Python client process signs and sends about 2,000 PutItem/s,
# which would take minutes for the large Query table.
PROCESS_PRELOAD_ITEMS = 100_000


def _put_partitions(port: int, table: TableSpec, first: int, past_last: int) -> int:
    """Worker process: PutItem every item of partitions [first, past_last)."""
    client = DynamoClient(port)
    for p in range(first, past_last):
        for s in range(table.per_partition):
            client.check("PutItem", {"TableName": table.name, "Item": table.item(p, s)})
    return (past_last - first) * table.per_partition


def put_in_processes(client: DynamoClient, table: TableSpec, processes: int) -> None:
    step = max(1, table.partitions // (processes * 8))
    with ProcessPoolExecutor(max_workers=processes) as pool:
        futures = [
            pool.submit(_put_partitions, client.port, table, lo, min(table.partitions, lo + step))
            for lo in range(0, table.partitions, step)
        ]
        for future in futures:
            future.result()


def preload(
    client: DynamoClient, table: TableSpec, mode: str, threads: int
) -> tuple[str, float, str]:
    """Loads every item of the table. Returns (mode used, seconds, note)."""
    note = ""
    items = table.all_items()
    started = time.perf_counter()
    if mode == "auto":
        first = [next(items) for _ in range(min(25, table.count))]
        status, answer = client.call(
            "BatchWriteItem",
            {"RequestItems": {table.name: [{"PutRequest": {"Item": i}} for i in first]}},
        )
        if status == 200 and not answer.get("UnprocessedItems"):
            mode = "batch"
        else:
            mode = "put"
            note = f"BatchWriteItem unavailable (HTTP {status} {str(answer.get('__type', ''))[-40:]}), used PutItem"
            put_chunk(client, table, first)
    chunk_size = 250
    work = batch_chunk if mode == "batch" else put_chunk
    if mode == "put" and table.count >= PROCESS_PRELOAD_ITEMS:
        # the first 25 items may be written twice (auto probe); PutItem is idempotent
        put_in_processes(client, table, threads)
        note = (note + "; " if note else "") + f"PutItem from {threads} client processes"
    else:
        with ThreadPoolExecutor(max_workers=threads) as pool:
            futures = [pool.submit(work, client, table, chunk) for chunk in chunks(items, chunk_size)]
            for future in futures:
                future.result()
    seconds = time.perf_counter() - started
    # spot check: the preload really landed
    rng = random.Random(7)
    for _ in range(20):
        p, s = table.random_key(rng)
        answer = client.check("GetItem", {"TableName": table.name, "Key": table.key(p, s)})
        if "Item" not in answer:
            raise BenchError(f"preloaded item {table.key(p, s)} missing after preload")
    return mode, seconds, note
