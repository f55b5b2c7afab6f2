"""Rows of backups, snapshots and the change log in the store.

- `LOG_SPACE | table id | n`: one change of one item (n counts the table's
  changes in commit order); the value is the server-clock time (8 bytes), the
  length of the row-key suffix (4 bytes), the suffix (the row key after the
  table prefix: hash, partition and sort key bytes) and the JSON
  `[old item, new item]`.
- `COUNTER_SPACE | table id`: the last n given out.
- `SNAP_SPACE | snapshot id | row-key suffix`: one item of a snapshot (a
  backup, a point-in-time base, an export's materialized instant).
- `META_SPACE | kind | id`: backups, jobs, exports, imports, point-in-time
  state, ClientTokens (`tokens`), as JSON.
"""

from __future__ import annotations

import struct

from ..model.keys import prefix_successor

LOG_SPACE = b"\x0a"
COUNTER_SPACE = b"\x0b"
SNAP_SPACE = b"\x0c"
META_SPACE = b"\x0d"
BACKUP_ROW = META_SPACE + b"b"
JOB_ROW = META_SPACE + b"j"
EXPORT_ROW = META_SPACE + b"e"
IMPORT_ROW = META_SPACE + b"i"
PITR_ROW = META_SPACE + b"p"
TOKEN_ROW = META_SPACE + b"t"
SEQUENCE_ROW = b"\x00seq-backups"


def end_of(prefix: bytes) -> bytes:
    end = prefix_successor(prefix)
    assert end is not None
    return end


def log_prefix(table_id: int) -> bytes:
    return LOG_SPACE + struct.pack(">I", table_id)


def log_key(table_id: int, n: int) -> bytes:
    return LOG_SPACE + struct.pack(">IQ", table_id, n)


def log_n(key: bytes) -> int:
    (n,) = struct.unpack_from(">Q", key, 5)
    return n


def log_table(key: bytes) -> int:
    (table_id,) = struct.unpack_from(">I", key, 1)
    return table_id


def counter_key(table_id: int) -> bytes:
    return COUNTER_SPACE + struct.pack(">I", table_id)


def snap_prefix(snap_id: int) -> bytes:
    return SNAP_SPACE + struct.pack(">Q", snap_id)


def job_key(job_id: int) -> bytes:
    return JOB_ROW + struct.pack(">Q", job_id)


def pitr_key(table_id: int) -> bytes:
    return PITR_ROW + struct.pack(">I", table_id)


def next_id(txn: object) -> int:
    """A number never given out before (snapshot and job ids)."""
    raw = txn.get(SEQUENCE_ROW)  # type: ignore[attr-defined]
    value = 1 if raw is None else int(raw) + 1
    txn.put(SEQUENCE_ROW, b"%d" % value)  # type: ignore[attr-defined]
    return value


def resource_id(now: float) -> str:
    """The id part of a backup, export or import ARN: milliseconds then 8 hex digits, as DynamoDB's."""
    import secrets  # (hmac, hashlib): the engine imports this module at start-up for its key spaces

    return f"{int(now * 1000):014d}-{secrets.token_hex(4)}"
