"""The trimming duty: stream records older than 24 hours (server clock) are removed.

Records of a shard are in sequence order, which is commit order, so the
oldest record tells whether anything is due: an idle tick reads one row per
shard. A disabled stream whose records are all gone is forgotten (its
metadata and counter rows deleted), as DynamoDB stops listing it 24 hours
after it was disabled.
"""

from __future__ import annotations

import struct

import orjson

from ...storage.base import Store
from ..time.clock import Clock
from .keys import META_SPACE, RETENTION_SECONDS, counter_key, meta_key, record_n, record_prefix
from .lifecycle import read_meta, write_meta
from .reader import oldest_time

BATCH = 1000


class StreamTrimmer:
    def __init__(self, store: Store, clock: Clock, retention: float = RETENTION_SECONDS) -> None:
        self._store = store
        self._clock = clock
        self._retention = retention

    def run(self) -> bool:
        horizon = self._clock.now() - self._retention
        worked = False
        for _, raw in list(self._store.range(META_SPACE, b"\x08")):
            meta = orjson.loads(raw)
            for shard in meta["shards"]:
                oldest = oldest_time(self._store, meta["id"], shard["index"])
                if oldest is not None and oldest < horizon:
                    self._trim(meta["id"], shard["index"], horizon)
                    worked = True
            if meta["status"] == "DISABLED" and meta["disabled"] < horizon:
                worked = self._forget(meta["id"]) or worked
        return worked

    def _trim(self, stream_id: int, shard_index: int, horizon: float) -> None:
        with self._store.write() as txn:
            meta = read_meta(txn, stream_id)
            if meta is None:
                return
            start = record_prefix(stream_id, shard_index)
            last = None
            for key, raw in list(txn.range(start, record_prefix(stream_id, shard_index + 1), limit=BATCH)):
                if struct.unpack_from(">d", raw)[0] >= horizon:
                    break
                txn.delete(key)
                last = record_n(key)
            if last is not None:
                shard = meta["shards"][shard_index]
                shard["trimmed"] = max(shard["trimmed"], last)
                write_meta(txn, meta)

    def _forget(self, stream_id: int) -> bool:
        with self._store.write() as txn:
            meta = read_meta(txn, stream_id)
            if meta is None:
                return False
            for shard in meta["shards"]:
                start = record_prefix(stream_id, shard["index"])
                if next(iter(txn.range(start, record_prefix(stream_id, shard["index"] + 1), limit=1)), None):
                    return False
            txn.delete(meta_key(stream_id))
            txn.delete(counter_key(stream_id))
        return True
