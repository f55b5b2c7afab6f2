"""Rows of global tables in the store.

Per region (in that region's namespace, written by its engine):

- `VERSION | table id | row suffix`: the item's replication version, the
  hidden per-item timestamp last-writer-wins compares: microseconds on the
  server clock (8 bytes) and the region that wrote it. Kept after a delete
  (a tombstone), so an older write arriving later cannot bring an item back.
- `OUTBOX | table id | n`: one change to send to the other replicas, written
  in the commit of the item write it describes (JSON: time, version, row
  suffix, new item or null).
- `COUNTER | table id`: the last n given out.
- `CURSOR | table id | region`: the last n that region has applied.

In the home region's rows (one per server, every region's):

- `JOB | region | 0 | table name`: a replica being created, updated or
  deleted, moved along by `jobs.py` on the server clock.
- `HOLD`: present while replication is held (tests make conflicts with it).

All of them lie in the data range a reset clears (tables/reset.py).
"""

from __future__ import annotations

import struct

from ..model.keys import prefix_successor

SPACE = b"\x11"
VERSION = SPACE + b"v"
OUTBOX = SPACE + b"o"
OUTBOX_END = SPACE + b"p"
COUNTER = SPACE + b"n"
CURSOR = SPACE + b"c"
JOB = SPACE + b"j"
JOB_END = SPACE + b"k"
HOLD = SPACE + b"h"
_VERSION = struct.Struct(">Q")


def end_of(prefix: bytes) -> bytes:
    end = prefix_successor(prefix)
    assert end is not None
    return end


def version_key(table_id: int, suffix: bytes) -> bytes:
    return VERSION + struct.pack(">I", table_id) + suffix


def versions_of(table_id: int) -> tuple[bytes, bytes]:
    prefix = VERSION + struct.pack(">I", table_id)
    return prefix, end_of(prefix)


def pack_version(micros: int, region: str) -> bytes:
    return _VERSION.pack(micros) + region.encode()


def unpack_version(raw: bytes) -> tuple[int, str]:
    return _VERSION.unpack_from(raw)[0], raw[8:].decode()


def outbox_key(table_id: int, n: int) -> bytes:
    return OUTBOX + struct.pack(">IQ", table_id, n)


def outbox_of(table_id: int) -> tuple[bytes, bytes]:
    prefix = OUTBOX + struct.pack(">I", table_id)
    return prefix, end_of(prefix)


def outbox_entry(key: bytes) -> tuple[int, int]:
    """(table id, n) of an outbox row key."""
    return struct.unpack_from(">IQ", key, len(OUTBOX))  # type: ignore[return-value]


def counter_key(table_id: int) -> bytes:
    return COUNTER + struct.pack(">I", table_id)


def cursor_key(table_id: int, region: str) -> bytes:
    return CURSOR + struct.pack(">I", table_id) + region.encode()


def cursors_of(table_id: int) -> tuple[bytes, bytes]:
    prefix = CURSOR + struct.pack(">I", table_id)
    return prefix, end_of(prefix)


def job_key(region: str, name: str) -> bytes:
    return JOB + region.encode() + b"\x00" + name.encode()


def read_int(raw: bytes | None) -> int:
    return 0 if raw is None else int(raw)
