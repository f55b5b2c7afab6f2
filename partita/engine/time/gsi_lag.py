"""Optional propagation lag for global secondary indexes (`--gsi-lag-ms`).

On DynamoDB a GSI is updated asynchronously: a Query through it right after
a write may not see the write. Locally every index is exact at once, which
hides the bug of checking uniqueness (or reading your own write) through a
GSI. With a lag set, GSI mutations are queued in the store, in commit order,
and applied when they are due — lazily, right before any GSI read and before
DescribeTable counts them. Local indexes stay synchronous, as on DynamoDB.
"""

from __future__ import annotations

import struct

import orjson

from ...storage.base import Store, WriteTxn
from .clock import Clock

PENDING_SPACE = b"\x02"
SEQUENCE_ROW = b"\x00seq-gsi-lag"


class GsiLag:
    def __init__(self, lag_ms: int, clock: Clock) -> None:
        self.lag_ms = lag_ms
        self._clock = clock

    def defer(self, txn: WriteTxn, key: bytes, value: bytes | None, weight: int) -> None:
        """Queue one index row put (value) or delete (None), due lag_ms from now.

        The sequence number comes from a row of the store, incremented inside
        the writer's own transaction, so mutations apply in commit order even
        when several processes write.
        """
        raw = txn.get(SEQUENCE_ROW)
        seq = 1 if raw is None else int(raw) + 1
        txn.put(SEQUENCE_ROW, str(seq).encode())
        due = int(self._clock.now() * 1000) + self.lag_ms
        pending = PENDING_SPACE + struct.pack(">QQ", due, seq)
        txn.put(pending, orjson.dumps([key.hex(), None if value is None else value.decode(), weight]))

    def apply_due(self, store: Store) -> None:
        """Apply every queued mutation whose time has come, oldest first."""
        now = int(self._clock.now() * 1000)
        end = PENDING_SPACE + struct.pack(">QQ", now + 1, 0)
        if next(iter(store.range(PENDING_SPACE, end, limit=1)), None) is None:
            return
        with store.write() as txn:
            for pending, raw in list(txn.range(PENDING_SPACE, end)):
                key_hex, value, weight = orjson.loads(raw)
                key = bytes.fromhex(key_hex)
                if value is None:
                    txn.delete(key)
                else:
                    txn.put(key, value.encode(), weight)
                txn.delete(pending)
