"""Stream rows in the store, and the public forms of sequence numbers and shard ids.

Rows (the stream id is never reused, like table ids):

- `RECORD_SPACE | stream id | shard index | n`: one record, the value being
  the record's server-clock time (8 bytes) and its JSON;
- `META_SPACE | stream id`: the stream and its shards (JSON), which outlive
  the table's stream setting (a disabled stream stays readable for 24 h);
- `COUNTER_SPACE | stream id`: the last sequence number given out.

Sequence numbers are one counter per stream, so they increase within every
shard and also across a stream's shards in commit order; a split of a shard
(when partitions split) only opens new shard indexes under the same counter.
"""

from __future__ import annotations

import struct

RECORD_SPACE = b"\x06"
META_SPACE = b"\x07"
COUNTER_SPACE = b"\x08"
STREAM_ID_ROW = b"\x00stream-seq"
SECRET_ROW = b"\x00stream-key"

#: Public sequence numbers are this plus the counter: numeric strings of 21+
#: digits, as DynamoDB's (the service model requires at least 21 characters).
SEQUENCE_BASE = 10**20
HASH_SPACE = 2**64
RETENTION_SECONDS = 24 * 3600
ITERATOR_SECONDS = 15 * 60


def sequence_text(n: int) -> str:
    return str(SEQUENCE_BASE + n)


def sequence_value(text: str) -> int | None:
    """The counter value of a public sequence number, or None if it is not one of ours."""
    if not text.isdigit() or int(text) <= SEQUENCE_BASE:
        return None
    return int(text) - SEQUENCE_BASE


def record_prefix(stream_id: int, shard: int) -> bytes:
    return RECORD_SPACE + struct.pack(">II", stream_id, shard)


def record_key(stream_id: int, shard: int, n: int) -> bytes:
    return RECORD_SPACE + struct.pack(">IIQ", stream_id, shard, n)


def record_n(key: bytes) -> int:
    (n,) = struct.unpack_from(">Q", key, 9)
    return n


def meta_key(stream_id: int) -> bytes:
    return META_SPACE + struct.pack(">I", stream_id)


def counter_key(stream_id: int) -> bytes:
    return COUNTER_SPACE + struct.pack(">I", stream_id)


def shard_ids(arn: str, first_index: int, count: int, created_ms: int) -> list[str]:
    """Ids for `count` shards opened together, in ascending (byte-wise) order of their indexes.

    DynamoDB's form, `shardId-<20 digits>-<8 hex>`: creation time in ms and a
    digest. DescribeStream lists shards in ShardId order and Kinesis-style
    consumers rely on it, so the ids of one batch are its sorted digests,
    handed out in index order, and a later batch (a split's children) gets a
    later time: creation order, partition (hash-range) order and ShardId order
    then agree, as on the service where children are always created after
    their parent. Digests are distinct within a batch.
    """
    from hashlib import sha256  # with the first stream, not with the engine (reader._mac says why)

    digests: set[str] = set()
    n = first_index
    while len(digests) < count:
        digests.add(sha256(f"{arn}#{n}".encode()).hexdigest()[:8])
        n += 1
    return [f"shardId-{created_ms:020d}-{digest}" for digest in sorted(digests)]


def shard_ms(shard_id: str) -> int:
    """The creation time (ms) written in a shard id."""
    return int(shard_id.split("-")[1])
