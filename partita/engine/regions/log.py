"""What every write to a replica table adds to its commit: the item's version and its change record.

`store_item` (items/writes.py) calls `ReplicaLog.record` for a table that
belongs to a global table, inside the transaction that writes the item, so
the version and the change record commit with the item or not at all: a
write acknowledged in one region reaches the others after a crash
(DESIGN.md). Tables of no global table never get here.

The version is the hidden per-item timestamp last-writer-wins compares
(keys.py): microseconds on the server clock, made later than the version
the item had, so a region's own later write always supersedes what it
holds. On a multi-Region strongly consistent table there is no change
record: the coordinator writes the item to every replica in this same
commit instead (`write_through`).
"""

from __future__ import annotations

from typing import Any

import orjson

from ...storage.base import WriteTxn
from ..tables.schema import Table
from ..time.clock import Clock
from .keys import counter_key, outbox_key, pack_version, read_int, unpack_version, version_key

Item = dict[str, dict[str, Any]]


class ReplicaLog:
    """One per engine (it knows its region); `coordinator` is set on a server of several regions."""

    def __init__(self, clock: Clock, region: str) -> None:
        self._clock = clock
        self.region = region
        #: The server's GlobalTables (coordinator.py; typed Any: it imports the write path, which imports this).
        self.coordinator: Any = None

    def record(self, txn: WriteTxn, table: Table, row: bytes, new: Item | None) -> None:
        group = table.replication
        assert group is not None
        suffix = row[len(table.prefix):]
        key = version_key(table.table_id, suffix)
        now = self._clock.now()
        micros = int(now * 1_000_000)
        previous = txn.get(key)
        coordinator = self.coordinator
        strong = group["mode"] == "STRONG" and coordinator is not None
        if previous is not None:
            if strong:
                coordinator.check_conflict(self.region, previous, now)
            micros = max(micros, unpack_version(previous)[0] + 1)
        txn.put(key, pack_version(micros, self.region))
        if strong:
            coordinator.write_through(txn, self.region, table, suffix, new, (micros, self.region))
            return
        counter = counter_key(table.table_id)
        n = read_int(txn.get(counter)) + 1
        txn.put(counter, b"%d" % n)
        txn.put(outbox_key(table.table_id, n),
                orjson.dumps([now, micros, self.region, suffix.hex(), new, table.name]))
        if coordinator is not None:
            coordinator.written = True
