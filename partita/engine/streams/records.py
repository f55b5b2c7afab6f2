"""The stream record of one item change, written in the same commit as the change.

`store_item` calls :meth:`StreamWriter.record` for every write that changed
something on a table whose stream is enabled, so a record exists exactly
when its change committed (a rolled-back transaction, a failed condition or
a write that leaves the item as it was leaves none), and survives a crash
with it. The record is stored as the JSON GetRecords returns, behind its
8-byte server-clock time (which trimming reads without parsing the JSON).

Whether a write gets a record is decided inside its transaction
(:meth:`StreamWriter.stream_of`): the table the request holds was read
before the transaction began, and another worker may have enabled, disabled
or split the stream since. As the change log does (backups/changelog.py),
a table that is no longer the catalog's current copy is re-read in the
transaction, so the decision commits with the write.
"""

from __future__ import annotations

import bisect
import struct
from random import getrandbits
from typing import TYPE_CHECKING, Any

import orjson

from ...storage.base import WriteTxn
from ..model.keys import partition_hash
from ..model.sizes import item_size
from ..tables.catalog import Catalog
from ..tables.schema import Table
from ..time.clock import Clock
from .keys import counter_key, record_key, sequence_text

Item = dict[str, dict[str, Any]]

#: The identity DynamoDB puts on the REMOVE records of TTL deletions, with the
#: Streams API's member names (the service model's `Identity`); Lambda events
#: spell them `type` / `principalId` (see `partita streams tail --exec`).
TTL_IDENTITY = {"Type": "Service", "PrincipalId": "dynamodb.amazonaws.com"}
_NEW = ("NEW_IMAGE", "NEW_AND_OLD_IMAGES")
_OLD = ("OLD_IMAGE", "NEW_AND_OLD_IMAGES")


def next_sequence(txn: WriteTxn, stream_id: int) -> int:
    row = counter_key(stream_id)
    raw = txn.get(row)
    n = 1 if raw is None else int(raw) + 1
    txn.put(row, b"%d" % n)
    return n


def shard_for(stream: dict[str, Any], table: Table, item: Item) -> int:
    """The open shard whose hash range holds the item's partition (one shard per partition)."""
    shards: list[list[int]] = stream["open"]
    if len(shards) == 1:
        return shards[0][1]
    hk = table.hash_key
    position = int.from_bytes(partition_hash(hk.type, item[hk.name][hk.type]), "big")
    lows = [low for low, _ in shards]
    return shards[bisect.bisect_right(lows, position) - 1][1]


if TYPE_CHECKING:
    from ..capacity.stats import ProcessStats


class StreamWriter:
    """Writes stream records; one per engine (it knows the region and the clock)."""

    def __init__(
        self, clock: Clock, region: str, stats: ProcessStats | None = None, catalog: Catalog | None = None
    ) -> None:
        self._clock = clock
        self._region = region
        self._stats = stats  # counts records written, for /metrics
        self._catalog = catalog
        #: The last re-check: (transaction, table id, the stream found), so a batch re-reads once.
        self._checked: tuple[object, int, dict[str, Any] | None] | None = None

    def stream_of(self, txn: WriteTxn, table: Table) -> dict[str, Any] | None:
        """The table's enabled stream as the catalog has it inside `txn` (None: the write gets no record).

        The common case (the table is the catalog's current copy) costs a
        generation read; otherwise the table's row is read in `txn`.
        """
        catalog = self._catalog
        if catalog is None or catalog.current(table):
            return table.description.get("_Stream")
        checked = self._checked
        if checked is not None and checked[0] is txn and checked[1] == table.table_id:
            return checked[2]
        fresh = catalog.get(table.name, txn)
        stream = fresh.description.get("_Stream") if fresh is not None and fresh.table_id == table.table_id else None
        self._checked = (txn, table.table_id, stream)
        return stream

    def record(
        self,
        txn: WriteTxn,
        table: Table,
        stream: dict[str, Any],
        old: Item | None,
        new: Item | None,
        new_size: int | None,
        identity: dict[str, str] | None = None,
    ) -> None:
        subject = new if new is not None else old
        assert subject is not None
        view = stream["view"]
        keys = {name: subject[name] for name in table.key_names if name in subject}
        now = self._clock.now()
        size = item_size(keys)
        dynamodb: dict[str, Any] = {"ApproximateCreationDateTime": int(now), "Keys": keys}
        if new is not None and view in _NEW:
            dynamodb["NewImage"] = new
            size += item_size(new) if new_size is None else new_size
        if old is not None and view in _OLD:
            dynamodb["OldImage"] = old
            size += item_size(old)
        n = next_sequence(txn, stream["id"])
        dynamodb["SequenceNumber"] = sequence_text(n)
        dynamodb["SizeBytes"] = size
        dynamodb["StreamViewType"] = view
        record: dict[str, Any] = {
            "eventID": f"{getrandbits(128):032x}",
            "eventName": "INSERT" if old is None else "REMOVE" if new is None else "MODIFY",
            "eventVersion": "1.1",
            "eventSource": "aws:dynamodb",
            "awsRegion": self._region,
            "dynamodb": dynamodb,
        }
        if identity is not None:
            record["userIdentity"] = identity
        shard = shard_for(stream, table, subject)
        txn.put(record_key(stream["id"], shard, n), struct.pack(">d", now) + orjson.dumps(record))
        if self._stats is not None:
            self._stats.add("stream_records", table.name)
