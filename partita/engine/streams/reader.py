"""The DynamoDB Streams read API: ListStreams, DescribeStream, GetShardIterator, GetRecords.

A shard iterator is `<stream ARN>|1|<token>` like DynamoDB's; the token packs
the stream, the shard, the next sequence number to read, the iterator's
creation time on the server clock and whether it must still find that
exact position, and is signed with a key kept in the store (so every worker
accepts the iterators of the others, and a forged or altered one is
refused). Records are returned as stored, without parsing them again.
"""

from __future__ import annotations

import base64
import os
import struct
from typing import Any

import orjson

from ...errors import DynamoDBError, ResourceNotFoundException, ValidationException
from ...storage.base import ReadView, Store
from ..time.clock import Clock
from .keys import (
    ITERATOR_SECONDS,
    META_SPACE,
    SECRET_ROW,
    record_n,
    record_prefix,
    sequence_text,
    sequence_value,
)
from .lifecycle import listed_shards, read_meta

#: GetRecords answers at most this many bytes of records (DynamoDB's 1 MB), and this many records.
MAX_RECORDS_BYTES = 1024 * 1024
MAX_RECORDS = 1000
_TOKEN = struct.Struct(">IIQQB")
_MAC_BYTES = 16


class ExpiredIteratorException(DynamoDBError):
    code = "ExpiredIteratorException"


class TrimmedDataAccessException(DynamoDBError):
    code = "TrimmedDataAccessException"


# Wording: "Shard iterator has expired" is what the service's Java SDK trace
# shows (AmazonDynamoDBStreams, ExpiredIteratorException); the trimmed-data
# and invalid-iterator texts are from users' reports, not confirmed transcripts.
EXPIRED = "Shard iterator has expired"
TRIMMED = "The data you are trying to access has been trimmed"
INVALID_ITERATOR = "Invalid ShardIterator"


def _stream_not_found(arn: str) -> ResourceNotFoundException:
    return ResourceNotFoundException(f"Requested resource not found: Stream: {arn} not found")


def _shard_public(shard: dict[str, Any]) -> dict[str, Any]:
    numbers = {"StartingSequenceNumber": sequence_text(shard["start"])}
    if shard["end"] is not None:
        numbers["EndingSequenceNumber"] = sequence_text(shard["end"])
    out: dict[str, Any] = {"ShardId": shard["id"], "SequenceNumberRange": numbers}
    if shard["parent"] is not None:
        out["ParentShardId"] = shard["parent"]
    return out


class StreamReader:
    def __init__(self, store: Store, clock: Clock) -> None:
        self._store = store
        self._clock = clock
        self._ids: dict[str, int] = {}
        self._secret: bytes | None = None

    # -- lookups -----------------------------------------------------------------------

    def _metas(self) -> list[dict[str, Any]]:
        return [orjson.loads(raw) for _, raw in self._store.range(META_SPACE, b"\x08")]

    def _meta(self, arn: str) -> dict[str, Any]:
        stream_id = self._ids.get(arn)
        if stream_id is None:
            for meta in self._metas():
                self._ids[meta["arn"]] = meta["id"]
            stream_id = self._ids.get(arn)
        meta = None if stream_id is None else read_meta(self._store, stream_id)
        if meta is None:
            raise _stream_not_found(arn)
        return meta

    def _key(self) -> bytes:
        if self._secret is None:
            raw = self._store.get(SECRET_ROW)
            if raw is None:
                with self._store.write() as txn:
                    raw = txn.get(SECRET_ROW)
                    if raw is None:
                        raw = os.urandom(32)
                        txn.put(SECRET_ROW, raw)
            self._secret = raw
        return self._secret

    # -- ListStreams, DescribeStream -----------------------------------------------------

    def list_streams(self, table: str | None, limit: int | None, start_after: str | None) -> dict[str, Any]:
        """Streams ordered by ARN (table name, then label), so paging is stable."""
        limit = 100 if limit is None else limit
        metas = sorted((m for m in self._metas() if table is None or m["table"] == table), key=lambda m: m["arn"])
        if start_after is not None:
            metas = [m for m in metas if m["arn"] > start_after]
        page = metas[:limit]
        out: dict[str, Any] = {
            "Streams": [{"StreamArn": m["arn"], "TableName": m["table"], "StreamLabel": m["label"]} for m in page]
        }
        if len(metas) > limit:
            out["LastEvaluatedStreamArn"] = page[-1]["arn"]
        return out

    def describe_stream(
        self, arn: str, limit: int | None, start_after: str | None, shard_filter: dict[str, Any] | None
    ) -> dict[str, Any]:
        """Shards in ShardId order, a page of `limit` after `start_after` (compared byte-wise).

        The start need not be a shard of the stream: a page resumes after the
        place the id would sort at (an id past the last shard gives no shards,
        as DynamoDB answers), so paging stays right whichever shard a client
        last saw. `shard_filter` (CHILD_SHARDS, both members checked by the
        API's model) keeps the children of one shard.
        """
        meta = self._meta(arn)
        limit = 100 if limit is None else limit
        shards = listed_shards(meta)
        if shard_filter is not None and shard_filter.get("Type") == "CHILD_SHARDS":
            parent = shard_filter.get("ShardId")
            shards = [s for s in shards if s["parent"] == parent]
        if start_after is not None:
            shards = [s for s in shards if s["id"] > start_after]
        page = shards[:limit]
        description: dict[str, Any] = {
            "StreamArn": meta["arn"],
            "StreamLabel": meta["label"],
            "StreamStatus": meta["status"],
            "StreamViewType": meta["view"],
            "CreationRequestDateTime": meta["created"],
            "TableName": meta["table"],
            "KeySchema": meta["key_schema"],
            "Shards": [_shard_public(s) for s in page],
        }
        if len(shards) > limit:
            description["LastEvaluatedShardId"] = page[-1]["id"]
        return {"StreamDescription": description}

    # -- iterators -------------------------------------------------------------------------

    def _iterator(self, meta: dict[str, Any], shard: int, start: int, exact: bool) -> str:
        body = _TOKEN.pack(meta["id"], shard, start, int(self._clock.now() * 1000), exact)
        mac = _mac(self._key(), meta["arn"].encode() + body)
        return f"{meta['arn']}|1|{base64.b64encode(body + mac).decode()}"

    def _decode(self, iterator: str) -> tuple[dict[str, Any], dict[str, Any], int, bool]:
        arn, _, rest = iterator.rpartition("|1|")
        try:
            raw = base64.b64decode(rest, validate=True)
        except ValueError:
            raise ValidationException(INVALID_ITERATOR) from None
        if not arn or len(raw) != _TOKEN.size + _MAC_BYTES:
            raise ValidationException(INVALID_ITERATOR)
        body, mac = raw[: _TOKEN.size], raw[_TOKEN.size :]
        from hmac import compare_digest

        if not compare_digest(mac, _mac(self._key(), arn.encode() + body)):
            raise ValidationException(INVALID_ITERATOR)
        stream_id, shard, start, created_ms, exact = _TOKEN.unpack(body)
        if self._clock.now() * 1000 - created_ms > ITERATOR_SECONDS * 1000:
            raise ExpiredIteratorException(EXPIRED)
        meta = read_meta(self._store, stream_id)
        if meta is None or meta["arn"] != arn or shard >= len(meta["shards"]):
            raise _stream_not_found(arn)
        return meta, meta["shards"][shard], start, bool(exact)

    def get_shard_iterator(
        self, arn: str, shard_id: str, kind: str, sequence: str | None, timestamp: float | None
    ) -> dict[str, Any]:
        meta = self._meta(arn)
        shard = next((s for s in meta["shards"] if s["id"] == shard_id), None)
        if shard is None:
            raise ResourceNotFoundException(
                f"Requested resource not found: Shard does not exist: {shard_id}"
            )
        exact = False
        if kind == "TRIM_HORIZON":
            start = 0
        elif kind == "LATEST":
            start = self._latest(meta, shard) + 1
        elif kind == "AT_TIMESTAMP":
            assert timestamp is not None  # the API refuses AT_TIMESTAMP without one
            if timestamp > self._clock.now():
                raise ValidationException("The timestamp is in the future")
            start = self._first_at(meta, shard, timestamp)
        else:
            assert sequence is not None  # the API refuses AT/AFTER_SEQUENCE_NUMBER without one
            n = sequence_value(sequence)
            if n is None or n < shard["start"] or (shard["end"] is not None and n > shard["end"]):
                raise ValidationException(f"Invalid SequenceNumber {sequence} for shard {shard_id}")
            if n <= shard["trimmed"]:
                raise TrimmedDataAccessException(TRIMMED)
            start = n if kind == "AT_SEQUENCE_NUMBER" else n + 1
            exact = True
        return {"ShardIterator": self._iterator(meta, shard["index"], start, exact)}

    def _latest(self, meta: dict[str, Any], shard: dict[str, Any]) -> int:
        """The last sequence number written to the shard (or just before its start)."""
        if shard["end"] is not None:
            return int(shard["end"])
        prefix = record_prefix(meta["id"], shard["index"])
        for key, _ in self._store.range(prefix, record_prefix(meta["id"], shard["index"] + 1), reverse=True, limit=1):
            return record_n(key)
        return int(shard["start"]) - 1

    def _first_at(self, meta: dict[str, Any], shard: dict[str, Any], timestamp: float) -> int:
        prefix = record_prefix(meta["id"], shard["index"])
        for key, raw in self._store.range(prefix, record_prefix(meta["id"], shard["index"] + 1)):
            if struct.unpack_from(">d", raw)[0] >= timestamp:
                return record_n(key)
        return self._latest(meta, shard) + 1

    # -- GetRecords -------------------------------------------------------------------------

    def get_records(self, iterator: str, limit: int | None) -> dict[str, Any]:
        meta, shard, start, exact = self._decode(iterator)
        if exact and start <= shard["trimmed"]:
            raise TrimmedDataAccessException(TRIMMED)
        limit = MAX_RECORDS if limit is None else limit
        stream_id, index = meta["id"], shard["index"]
        rows = self._store.range(
            record_prefix(stream_id, index) + struct.pack(">Q", start),
            record_prefix(stream_id, index + 1),
            limit=limit,
        )
        records: list[Any] = []
        size = 0
        next_start = start
        exhausted = True
        for count, (key, raw) in enumerate(rows, 1):
            size += len(raw) - 8
            if records and size > MAX_RECORDS_BYTES:
                exhausted = False
                break
            records.append(orjson.Fragment(raw[8:]))
            next_start = record_n(key) + 1
            if count == limit:
                exhausted = False
        out: dict[str, Any] = {"Records": records}
        closed = shard["end"] is not None
        if not (closed and (exhausted or next_start > shard["end"])):
            out["NextShardIterator"] = self._iterator(meta, index, next_start, next_start > 0)
        return out


def oldest_time(view: ReadView, stream_id: int, shard: int) -> float | None:
    for _, raw in view.range(record_prefix(stream_id, shard), record_prefix(stream_id, shard + 1), limit=1):
        return float(struct.unpack_from(">d", raw)[0])
    return None


def _mac(key: bytes, data: bytes) -> bytes:
    """An iterator's signature. hmac and hashlib load with the first iterator, not with the
    engine: a server that never reads a stream does not pay their import (OpenSSL's set-up)."""
    import hashlib
    import hmac

    return hmac.new(key, data, hashlib.sha256).digest()[:_MAC_BYTES]
