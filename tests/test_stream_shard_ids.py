"""ShardIds sort the way shards were created, and a stream's shards are listed in ShardId order.

Unit checks of the engine's shard naming (engine/streams): DescribeStream's
order over HTTP is in test_stream_requests.py; these pin the invariants
behind it, including for streams stored by an older Partita (unsorted ids)
and for a split made in the same millisecond as the stream.
"""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from partita.engine.streams.keys import HASH_SPACE, shard_ids, shard_ms
from partita.engine.streams.lifecycle import listed_shards, read_meta, split_shard, sync_stream
from partita.storage.memory import MemoryStore

ARN = "arn:aws:dynamodb:us-east-1:000000000000:table/t/stream/2026-01-01T00:00:00.000"


@settings(max_examples=30, deadline=None)
@given(first=st.integers(0, 5000), count=st.integers(1, 400), ms=st.integers(0, 10**17))
def test_a_batch_of_ids_is_distinct_sorted_and_well_formed(first: int, count: int, ms: int) -> None:
    ids = shard_ids(ARN, first, count, ms)
    assert len(set(ids)) == count
    assert ids == sorted(ids)
    assert all(re.fullmatch(r"shardId-\d{20}-[0-9a-f]{8}", i) and 28 <= len(i) <= 65 for i in ids)
    assert {shard_ms(i) for i in ids} == {ms}


def test_legacy_streams_list_in_shard_id_order() -> None:
    """A stream stored by an older Partita keeps its ids (in hash order); the listing sorts them."""
    ids = ["shardId-00000001796407841946-7a918792", "shardId-00000001796407841946-83dd83e7",
           "shardId-00000001796407841946-30bd4cc7", "shardId-00000001796407841946-042de729"]
    meta: dict[str, Any] = {"shards": [{"index": n, "id": i} for n, i in enumerate(ids)]}
    assert [s["id"] for s in listed_shards(meta)] == sorted(ids)
    assert [s["index"] for s in listed_shards(meta)] == [3, 2, 0, 1]


def _description(partitions: int) -> dict[str, Any]:
    step = HASH_SPACE // partitions
    return {
        "LatestStreamArn": ARN, "LatestStreamLabel": "2026-01-01T00:00:00.000", "TableName": "t",
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "StreamSpecification": {"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"},
        "_Partitions": {"": [n * step for n in range(partitions)]},  # capacity.partitions.MAP_MEMBER
    }


def test_children_sort_after_their_parent_even_in_the_same_millisecond() -> None:
    store = MemoryStore()
    description = _description(8)
    now = 1_800_000_000.123
    with store.write() as txn:
        sync_stream(txn, None, description, now)
        meta = read_meta(txn, description["_Stream"]["id"])
        assert meta is not None and len(meta["shards"]) == 8
        # Stored in partition order, which is also ShardId order.
        assert [s["id"] for s in meta["shards"]] == [s["id"] for s in listed_shards(meta)]
        assert [s["low"] for s in meta["shards"]] == sorted(s["low"] for s in meta["shards"])
        parent = meta["shards"][0]
        split_shard(txn, description, 0, parent["high"] // 2, now)  # the clock has not moved
        meta = read_meta(txn, description["_Stream"]["id"])
    assert meta is not None
    listed = listed_shards(meta)
    children = [s for s in listed if s["parent"] == parent["id"]]
    assert len(children) == 2 and [c["low"] for c in children] == sorted(c["low"] for c in children)
    assert all(c["id"] > s["id"] for c in children for s in meta["shards"][:8])
    assert listed == meta["shards"]  # creation order, partition order within a batch, and ShardId order agree
