"""The violations of `warn` mode: rows in the store, written in the offending write's own commit.

Why the store and not process memory: a row committed with the write is
recorded exactly when the write happened (a cancelled transaction, a
rolled-back or re-run commit leaves none, or one), every worker process and
every server over one PostgreSQL database sees the same list, and
`partita.testing`'s reset drops it with the tables (it lies in the data
range). Each violation is its own row under a unique key (time, process,
sequence), so concurrent writers never contend on it.

The list is bounded: a background duty folds the oldest rows beyond `KEEP`
into one totals row, so the count of violations (`/metrics`) is exact while
the rows kept for the console and the admin API are the latest ones.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from itertools import count
from typing import Any

import orjson

from ...storage.base import ReadView, Store, WriteTxn

GUARD_SPACE = b"\x0e"
_ENTRY = GUARD_SPACE + b"v"
_ENTRY_END = GUARD_SPACE + b"w"
_TOTALS = GUARD_SPACE + b"t"
#: Violations kept as rows (the newest); older ones only count.
KEEP = 1000

_sequence = count()
_process: tuple[int, bytes] = (0, b"")


def _process_tag() -> bytes:
    """This process's part of a row key: its pid and random bytes drawn once per process (a
    forked worker draws its own, and servers on two hosts may share a pid)."""
    global _process
    pid = os.getpid()
    if _process[0] != pid:
        _process = (pid, struct.pack(">I", pid) + os.urandom(4))
    return _process[1]


def write_violation(
    txn: WriteTxn, table: str, entity: str, write: str, key: dict[str, Any], errors: list[str], now: float
) -> None:
    row = _ENTRY + struct.pack(">Q", int(now * 1000)) + _process_tag() + struct.pack(">Q", next(_sequence))
    txn.put(row, orjson.dumps({"table": table, "entity": entity, "write": write, "key": key,
                               "errors": errors, "at": now}))


def _entries(view: ReadView, reverse: bool, limit: int | None = None) -> Iterator[tuple[bytes, dict[str, Any]]]:
    for row, raw in view.range(_ENTRY, _ENTRY_END, reverse=reverse, limit=limit):
        yield row, orjson.loads(raw)


def recent(view: ReadView, limit: int, table: str | None = None) -> list[dict[str, Any]]:
    """The latest violations kept, newest first (of one table, if given)."""
    out = []
    for _, doc in _entries(view, reverse=True):
        if table is None or doc["table"] == table:
            out.append(doc)
            if len(out) >= limit:
                break
    return out


def totals(view: ReadView) -> dict[tuple[str, str], int]:
    """Violations recorded since the store began (or was reset), by (table, entity)."""
    raw = view.get(_TOTALS)
    folded: dict[str, dict[str, int]] = {} if raw is None else orjson.loads(raw)
    out = {(table, entity): n for table, entities in folded.items() for entity, n in entities.items()}
    for _, doc in _entries(view, reverse=False):
        key = (doc["table"], doc["entity"])
        out[key] = out.get(key, 0) + 1
    return out


def trim(store: Store, keep: int = KEEP) -> bool:
    """A duty: fold the oldest rows beyond `keep` into the totals row; whether it did."""
    if store.stats(_ENTRY, _ENTRY_END)[0] <= keep:
        return False
    with store.write() as txn:
        excess = txn.stats(_ENTRY, _ENTRY_END)[0] - keep
        if excess <= 0:
            return False
        raw = txn.get(_TOTALS)
        folded: dict[str, dict[str, int]] = {} if raw is None else orjson.loads(raw)
        for row, doc in list(_entries(txn, reverse=False, limit=excess)):
            entities = folded.setdefault(doc["table"], {})
            entities[doc["entity"]] = entities.get(doc["entity"], 0) + 1
            txn.delete(row)
        txn.put(_TOTALS, orjson.dumps(folded))
    return True
