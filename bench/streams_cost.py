"""In-process: PutItem cost with and without a stream (NEW_AND_OLD_IMAGES), and GetRecords records/s.

Run: .venv/bin/python bench/streams_cost.py (no server: the engine alone, memory and SQLite stores).
"""
import pathlib
import tempfile
import time

from partita.engine.engine import Engine
from partita.storage.memory import MemoryStore
from partita.storage.sqlite import SQLiteStore


def run(store_factory, label):
    for stream in (False, True):
        engine = Engine(store_factory(), background=False)
        req = {"TableName": "t", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
               "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}], "BillingMode": "PAY_PER_REQUEST"}
        if stream:
            req["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
        engine.tables.create(req)
        n = 20000
        t0 = time.perf_counter()
        for i in range(n):
            engine.items.put("t", {"pk": {"S": f"k{i % 5000}"}, "v": {"N": str(i)}, "s": {"S": "x" * 100}})
        dt = time.perf_counter() - t0
        print(f"{label} stream={stream}: {n/dt:,.0f} puts/s ({dt/n*1e6:.1f} us/put)")
        if stream:
            arn = engine.tables.describe("t")["LatestStreamArn"]
            shard = engine.streams.describe_stream(arn, None, None, None)["StreamDescription"]["Shards"][0]["ShardId"]
            it = engine.streams.get_shard_iterator(arn, shard, "TRIM_HORIZON", None, None)["ShardIterator"]
            import orjson
            t0 = time.perf_counter()
            total = 0
            while True:
                page = engine.streams.get_records(it, 1000)
                orjson.dumps(page)
                total += len(page["Records"])
                if not page["Records"]:
                    break
                it = page["NextShardIterator"]
            dt = time.perf_counter() - t0
            print(f"{label} GetRecords: {total/dt:,.0f} records/s ({total} records, serialized)")
        engine.close()

run(MemoryStore, "memory")
d = tempfile.mkdtemp()
c = iter(range(100))
run(lambda: SQLiteStore(pathlib.Path(d) / f"s{next(c)}.sqlite3"), "sqlite")
