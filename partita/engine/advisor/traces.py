"""What the write path leaves for the advisor: recent GSI entries and item-collection sizes.

Two bounded logs, kept by the write path only for tables that have the
index in question (so a table without indexes pays nothing):

- `gsi_write` (tables with a global index): the row key of each index
  entry a write puts, with the server time, grouped by the entry's
  partition (the index prefix and the 8-byte hash of its partition key).
  A Query on the index then asks `gsi_read` whether a row it would read
  was written within the window: the read-your-writes pattern a GSI,
  eventually consistent, does not support.
- `collection` (tables with a local index): the size of the item
  collection a write left, which the write path computes anyway for
  ItemCollectionMetrics and the 10 GB cap; the first and last size of
  each collection give its growth rate.

Per process: a read in another worker does not see this worker's writes
(docs/decisions.md, issue 28).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import orjson

from ..time.clock import Clock

#: Partitions of recent GSI entries kept, and entries kept per partition.
RECENT_PARTITIONS = 4096
RECENT_PER_PARTITION = 8
#: Collections tracked per table with a local index (the largest are kept).
COLLECTIONS_PER_TABLE = 256


class Traces:
    def __init__(self, clock: Clock, window_seconds: float) -> None:
        self._clock = clock
        self.window = window_seconds
        #: index partition prefix -> [(entry row key, server time)], oldest partition first
        self._recent: OrderedDict[bytes, list[tuple[bytes, float]]] = OrderedDict()
        #: (table id, index name) -> [GSI Queries that read a recent write, the smallest delay in seconds]
        self.read_after_write: dict[tuple[int, str], list[float]] = {}
        #: table id -> collection key text -> [first time, first bytes, last time, last bytes]
        self.collections: dict[int, dict[str, list[float]]] = {}

    # -- the write path ----------------------------------------------------------------

    def gsi_write(self, row: bytes, prefix_length: int) -> None:
        """An index entry was put at `row` (its index's prefix is `prefix_length` bytes)."""
        partition = row[: prefix_length + 8]
        entries = self._recent.get(partition)
        if entries is None:
            if len(self._recent) >= RECENT_PARTITIONS:
                self._recent.popitem(last=False)
            entries = self._recent[partition] = []
        else:
            self._recent.move_to_end(partition)
            if len(entries) >= RECENT_PER_PARTITION:
                del entries[0]
        entries.append((row, self._clock.now_cached()))

    def collection(self, table_id: int, key: Any, size: int) -> None:
        """A write to a table with a local index left the collection of `key` (its partition key) at `size` bytes."""
        now = self._clock.now_cached()
        tracked = self.collections.get(table_id)
        if tracked is None:
            tracked = self.collections[table_id] = {}
        text = orjson.dumps(key).decode()
        entry = tracked.get(text)
        if entry is not None:
            entry[2] = now
            entry[3] = float(size)
            return
        if len(tracked) >= COLLECTIONS_PER_TABLE:
            smallest = min(tracked, key=lambda k: tracked[k][3])
            if tracked[smallest][3] >= size:
                return
            del tracked[smallest]
        tracked[text] = [now, float(size), now, float(size)]

    # -- the read path -----------------------------------------------------------------

    def gsi_read(self, table_id: int, index: str, prefix_length: int, start: bytes, end: bytes) -> None:
        """A Query on a GSI reads [start, end): count it if a row there was written within the window."""
        entries = self._recent.get(start[: prefix_length + 8])
        if not entries:
            return
        now = self._clock.now()
        delay = None
        for row, at in entries:
            if start <= row < end and 0 <= now - at <= self.window:
                delay = now - at if delay is None else min(delay, now - at)
        if delay is None:
            return
        counts = self.read_after_write.get((table_id, index))
        if counts is None:
            self.read_after_write[(table_id, index)] = [1.0, delay]
        else:
            counts[0] += 1
            counts[1] = min(counts[1], delay)

    # -- housekeeping -----------------------------------------------------------------

    def forget(self, table_id: int) -> None:
        self.collections.pop(table_id, None)
        for key in [k for k in self.read_after_write if k[0] == table_id]:
            del self.read_after_write[key]

    def clear(self) -> None:
        self._recent.clear()
        self.read_after_write.clear()
        self.collections.clear()
