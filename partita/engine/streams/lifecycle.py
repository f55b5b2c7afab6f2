"""Opening and closing streams as a table's StreamSpecification changes.

Every enable makes a new stream (a new label and ARN, new shards, a fresh
sequence counter); a disable, or deleting the table, closes the stream's
shards (each gets its EndingSequenceNumber) and the stream stays readable
until its records age out. One open shard per partition of the table: the
shard list carries hash ranges and parent links, so a partition split
closes its shard and opens children without changing how records are
written or read (`split_shard`).
"""

from __future__ import annotations

from typing import Any

import orjson

from ...storage.base import ReadView, WriteTxn
from ..capacity.partitions import starts_of
from .keys import (
    HASH_SPACE,
    STREAM_ID_ROW,
    counter_key,
    meta_key,
    record_n,
    record_prefix,
    shard_ids,
    shard_ms,
)

Description = dict[str, Any]


def read_meta(view: ReadView, stream_id: int) -> dict[str, Any] | None:
    raw = view.get(meta_key(stream_id))
    return None if raw is None else orjson.loads(raw)


def write_meta(txn: WriteTxn, meta: dict[str, Any]) -> None:
    txn.put(meta_key(meta["id"]), orjson.dumps(meta))


def _next_stream_id(txn: WriteTxn) -> int:
    raw = txn.get(STREAM_ID_ROW)
    value = 1 if raw is None else int(raw) + 1
    txn.put(STREAM_ID_ROW, str(value).encode())
    return value


def _counter(view: ReadView, stream_id: int) -> int:
    raw = view.get(counter_key(stream_id))
    return 0 if raw is None else int(raw)


def _new_shards(
    meta: dict[str, Any], ranges: list[tuple[int, int]], parent: str | None, start: int, now: float
) -> list[dict[str, Any]]:
    """Open one shard per hash range, in range order; their ids sort after every earlier shard's.

    A batch created in the same millisecond as the last one (a split right
    after enabling, on a clock that has not moved) is stamped one ms later,
    so a child's ShardId always sorts after its parent's (see `shard_ids`).
    """
    first = len(meta["shards"])
    created_ms = int(now * 1000)
    if meta["shards"]:
        created_ms = max(created_ms, max(shard_ms(s["id"]) for s in meta["shards"]) + 1)
    ids = shard_ids(meta["arn"], first, len(ranges), created_ms)
    shards = [
        {"index": first + offset, "id": ids[offset], "parent": parent, "start": start, "end": None,
         "low": low, "high": high, "trimmed": 0}
        for offset, (low, high) in enumerate(ranges)
    ]
    meta["shards"].extend(shards)
    return shards


def listed_shards(meta: dict[str, Any]) -> list[dict[str, Any]]:
    """A stream's shards as DynamoDB lists them: ascending ShardId (byte-wise), whatever their index.

    New streams store their shards in this order already (`_new_shards`);
    streams opened by older versions of Partita stored them in hash order
    with unordered ids, and every listing (DescribeStream, hence the console
    and `partita streams tail`) goes through here, so they list right too.
    """
    return sorted(meta["shards"], key=lambda shard: shard["id"])  # str order is UTF-8 byte order


def _open(txn: WriteTxn, description: Description, now: float) -> None:
    stream_id = _next_stream_id(txn)
    meta: dict[str, Any] = {
        "id": stream_id,
        "arn": description["LatestStreamArn"],
        "label": description["LatestStreamLabel"],
        "table": description["TableName"],
        "key_schema": description["KeySchema"],
        "view": description["StreamSpecification"]["StreamViewType"],
        "status": "ENABLED",
        "created": now,
        "disabled": None,
        "shards": [],
    }
    # One shard per partition of the table's map (hash ranges are inclusive).
    starts = starts_of(description)
    ends = [start - 1 for start in starts[1:]] + [HASH_SPACE - 1]
    shards = _new_shards(meta, list(zip(starts, ends, strict=True)), None, 1, now)
    write_meta(txn, meta)
    description["_Stream"] = {"id": stream_id, "view": meta["view"],
                              "open": [[shard["low"], shard["index"]] for shard in shards]}


def _last_n(view: ReadView, stream_id: int, shard: int) -> int | None:
    start = record_prefix(stream_id, shard)
    end = record_prefix(stream_id, shard + 1)
    for key, _ in view.range(start, end, reverse=True, limit=1):
        return record_n(key)
    return None


def _close_shard(txn: WriteTxn, meta: dict[str, Any], shard: dict[str, Any]) -> None:
    last = _last_n(txn, meta["id"], shard["index"])
    shard["end"] = max(shard["start"], last if last is not None else _counter(txn, meta["id"]))


def _close(txn: WriteTxn, stream_id: int, now: float) -> None:
    meta = read_meta(txn, stream_id)
    if meta is None:
        return
    for shard in meta["shards"]:
        if shard["end"] is None:
            _close_shard(txn, meta, shard)
    meta["status"] = "DISABLED"
    meta["disabled"] = now
    write_meta(txn, meta)


def sync_stream(txn: WriteTxn, old: Description | None, new: Description | None, now: float) -> None:
    """Open or close streams so that `new` (None: the table is deleted) has the stream it describes.

    Call inside the transaction that stores `new`; it sets `new["_Stream"]`.
    """
    current = None if old is None else old.get("_Stream")
    spec = None if new is None else new.get("StreamSpecification")
    enabled = bool(spec and spec.get("StreamEnabled"))
    arn = None if new is None else new.get("LatestStreamArn")
    if current is not None:
        old_arn = None if old is None else old.get("LatestStreamArn")
        if not enabled or arn != old_arn:
            _close(txn, current["id"], now)
            if new is not None:
                new.pop("_Stream", None)
        else:
            return
    if enabled and new is not None:
        _open(txn, new, now)


def split_shard(txn: WriteTxn, description: Description, shard_index: int, at: int, now: float) -> None:
    """Close one open shard and open two children over its hash range, split at `at`.

    For the partition split of the capacity work: records of the parent stay
    readable, new records of each half go to its child, and DescribeStream
    shows the children with `ParentShardId`.
    """
    stream = description["_Stream"]
    meta = read_meta(txn, stream["id"])
    assert meta is not None
    parent = meta["shards"][shard_index]
    assert parent["end"] is None and parent["low"] < at <= parent["high"]
    _close_shard(txn, meta, parent)
    start = _counter(txn, meta["id"]) + 1
    left, right = _new_shards(meta, [(parent["low"], at - 1), (at, parent["high"])], parent["id"], start, now)
    write_meta(txn, meta)
    kept = [entry for entry in stream["open"] if entry[1] != shard_index]
    stream["open"] = sorted(kept + [[left["low"], left["index"]], [right["low"], right["index"]]])
