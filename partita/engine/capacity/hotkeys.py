"""The hottest keys of each table and GSI, by consumed units and by throttles, shared by workers.

A fixed table of slots in the shared region, one per recently seen key
(partition key, plus sort key where the request named one), found by a
64-bit digest of the key's row bytes. A new key takes a free slot among a
few probes, or evicts the coldest of them (the space-saving idea: a key
that keeps coming back keeps its slot, a key seen once is soon replaced).
Each slot keeps per-minute windows, as Contributor Insights ranks keys per
minute, and the key itself as JSON (cut at 150 bytes: enough to recognise a
key; the digest, not the text, identifies it).
"""

from __future__ import annotations

import heapq
import struct
import zlib
from collections.abc import Callable
from typing import Any

import orjson

from .partitions import row_hash
from .shared import RegionLock, SlotTable

_KEY = struct.Struct("<IIQ")
_HEAD = struct.Struct("<Q10dH")  # partition hash; window fields; key text length
MIN, READ, PREV_READ, WRITE, PREV_WRITE, THR, PREV_THR, TOTAL_READ, TOTAL_WRITE, TOTAL_THR = range(10)
TEXT_BYTES = 150
HOT_SLOT_BYTES = 16 + _HEAD.size + TEXT_BYTES
HOT_SLOTS = 8192
_PROBES = 8
#: Keys of one table or GSI a process adds to the shared slots per flush (the hottest).
KEEP = 64
#: Distinct keys gathered before a flush is forced (bounds a process's memory).
MAX_PENDING = 65536


class _Pending:
    """One table's or GSI's counts since the last flush, by row key: reads, writes, throttles, key text.

    Dicts of bytes to floats and bytes, which CPython's garbage collector
    does not track: holding the requests' key dicts (and a list per key)
    for a quarter of a second made every collection walk them, and promoted
    enough of them that full collections over the whole store ran often,
    costing the emulation more than all its arithmetic.
    """

    __slots__ = ("units", "throttles", "texts")

    def __init__(self) -> None:
        self.units: tuple[dict[bytes, float], dict[bytes, float]] = ({}, {})
        self.throttles: dict[bytes, int] = {}
        self.texts: dict[bytes, bytes] = {}

    def weight(self, row: bytes) -> float:
        return self.units[0].get(row, 0.0) + self.units[1].get(row, 0.0) + 1000.0 * self.throttles.get(row, 0)


def digest(row: bytes) -> int:
    return zlib.crc32(row) | (zlib.adler32(row) << 32)


def _heat(fields: tuple[Any, ...], minute: float) -> float:
    if fields[1 + MIN] != minute:
        return 0.0
    return fields[1 + READ] + fields[1 + WRITE] + 1000.0 * fields[1 + THR]


class HotKeys:
    """Counts gathered per process and added to the shared table every 0.25 s (the meter's publish).

    Adding to the shared slots on every request would cost more than the
    rest of the meter (a digest, probes, a JSON key); a ranking per minute
    loses nothing by arriving a second late. A request costs a few dict
    look-ups here (and the key as JSON, the first time its row comes in an
    interval). At a flush (the meter's publish, from the request path or
    a reader or an idle process's tick) only the `KEEP` keys of each table or GSI
    with the most units and throttles in that interval are added to the
    shared slots: a key outside a process's top 64 of a second is not hot,
    and recording every key of a uniform workload (10,000 distinct keys a
    second) would cost more than the requests it ranks.
    """

    def __init__(self, table: SlotTable, lock: RegionLock, now: Callable[[], float]) -> None:
        self.table = table
        self._lock = lock
        self._now = now  # the server clock, for a flush forced by MAX_PENDING
        #: (table id, tag) -> its counts since the last flush
        self._pending: dict[tuple[int, int], _Pending] = {}
        self._count = 0

    def add(self, token: tuple[int, int], dim: int, row: bytes, key: Any, units: float) -> None:
        """Count `units` of dimension `dim` consumed on `row` (whose key is `key`) of the table or GSI `token`."""
        pending = self._pending.get(token)
        if pending is None or row not in pending.texts:
            pending = self._new(token, row, key)
        counts = pending.units[dim]
        counts[row] = counts.get(row, 0.0) + units

    def throttle(self, token: tuple[int, int], row: bytes, key: Any) -> None:
        """Count one throttled request on `row`."""
        pending = self._pending.get(token)
        if pending is None or row not in pending.texts:
            pending = self._new(token, row, key)
        pending.throttles[row] = pending.throttles.get(row, 0) + 1

    def _new(self, token: tuple[int, int], row: bytes, key: Any) -> _Pending:
        """Start counting `row` (flushing first when MAX_PENDING keys wait); the counts to add to."""
        if self._count >= MAX_PENDING:
            self.flush(self._now())
        pending = self._pending.get(token)
        if pending is None:
            pending = self._pending[token] = _Pending()
        pending.texts[row] = orjson.dumps(key)[:TEXT_BYTES]
        self._count += 1
        return pending

    def drop_all(self) -> None:
        self._pending.clear()
        self._count = 0

    def drop_table(self, table_id: int) -> None:
        for token in [t for t in self._pending if t[0] == table_id]:
            del self._pending[token]

    def flush(self, now: float) -> None:
        pending, self._pending = self._pending, {}
        self._count = 0
        if not pending:
            return
        with self._lock.held():
            for (table_id, tag), counts in pending.items():
                rows = counts.texts
                chosen = rows if len(rows) <= KEEP else heapq.nlargest(KEEP, rows, key=counts.weight)
                reads, writes = counts.units
                for row in chosen:
                    self._record(table_id, tag, row, rows[row], row_hash(row), reads.get(row, 0.0),
                                 writes.get(row, 0.0), counts.throttles.get(row, 0), now)

    def _record(self, table_id: int, tag: int, row: bytes, text: bytes, hash_value: int,
                reads: float, writes: float, throttles: int, now: float) -> None:
        """Add one key's counts to its shared slot; call with the region lock held."""
        buf = self.table.buffer
        key_digest = digest(row)
        minute = float(int(now // 60))
        first = key_digest % self.table.count
        chosen = None
        coldest = None
        for probe in range(_PROBES):
            at = self.table.base + ((first + probe) % self.table.count) * self.table.size
            found_table, found_tag, found = _KEY.unpack_from(buf, at)
            if found_tag == 0 or (found_table, found_tag, found) == (table_id, tag, key_digest):
                chosen = at
                break
            heat = _heat(_HEAD.unpack_from(buf, at + 16), minute)
            if coldest is None or heat < coldest[0]:
                coldest = (heat, at)
        fresh = False
        if chosen is None:
            assert coldest is not None
            chosen = coldest[1]
            fresh = True
        else:
            fresh = _KEY.unpack_from(buf, chosen)[1] == 0
        if fresh:
            _KEY.pack_into(buf, chosen, table_id, tag, key_digest)
            fields = [hash_value & (2**64 - 1)] + [0.0] * 10 + [len(text)]
            buf[chosen + 16 + _HEAD.size : chosen + 16 + _HEAD.size + len(text)] = text
        else:
            fields = list(_HEAD.unpack_from(buf, chosen + 16))
        if fields[1 + MIN] != minute:
            recent = fields[1 + MIN] == minute - 1
            for cur, prev in ((READ, PREV_READ), (WRITE, PREV_WRITE), (THR, PREV_THR)):
                fields[1 + prev] = fields[1 + cur] if recent else 0.0
                fields[1 + cur] = 0.0
            fields[1 + MIN] = minute
        fields[1 + THR] += throttles
        fields[1 + TOTAL_THR] += throttles
        fields[1 + READ] += reads
        fields[1 + TOTAL_READ] += reads
        fields[1 + WRITE] += writes
        fields[1 + TOTAL_WRITE] += writes
        _HEAD.pack_into(buf, chosen + 16, *fields)

    def entries(self, table_id: int, tag: int, now: float) -> list[dict[str, Any]]:
        """Every tracked key of one table or GSI, with its last-minute and total usage."""
        buf = self.table.buffer
        minute = float(int(now // 60))
        fraction = (now % 60.0) / 60.0
        out = []
        for found_table, found_tag, _, at in self.table.slots():
            if found_table != table_id or found_tag != tag:
                continue
            head = _HEAD.unpack_from(buf, at + 16)
            fields = list(head[1:11])
            if fields[MIN] != minute:
                recent = fields[MIN] == minute - 1
                for cur, prev in ((READ, PREV_READ), (WRITE, PREV_WRITE), (THR, PREV_THR)):
                    fields[prev] = fields[cur] if recent else 0.0
                    fields[cur] = 0.0
            text = bytes(buf[at + 16 + _HEAD.size : at + 16 + _HEAD.size + head[11]])
            try:
                key: Any = orjson.loads(text)
            except orjson.JSONDecodeError:
                key = text.decode("utf-8", "replace")  # cut inside a long key
            out.append({
                "key": key,
                "partition_hash": head[0],
                "read_units_per_minute": fields[READ] + fields[PREV_READ] * (1 - fraction),
                "write_units_per_minute": fields[WRITE] + fields[PREV_WRITE] * (1 - fraction),
                "throttles_per_minute": fields[THR] + fields[PREV_THR] * (1 - fraction),
                "read_units_total": fields[TOTAL_READ],
                "write_units_total": fields[TOTAL_WRITE],
                "throttled_requests_total": fields[TOTAL_THR],
            })
        return out
