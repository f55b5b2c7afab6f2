"""The change log: one entry per item change, written in the change's own commit.

A table writes it while point-in-time recovery is on, a snapshot of it is
being taken or a Kinesis streaming destination is live (`_PointInTimeRecovery`,
`_Capture` or `_KinesisLive` in its catalog document: `CHANGE_LOG_MARKERS`);
`store_item` calls :meth:`ChangeLog.record`, so an entry exists exactly when
its change committed. Entries carry the old and the new item: snapshots undo
changes made after their instant with the old one, point-in-time restores
replay the new one.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from ...storage.base import ReadView, WriteTxn
from ..tables.catalog import Catalog
from ..tables.schema import CHANGE_LOG_MARKERS, Table
from ..time.clock import Clock
from .keys import counter_key, end_of, log_key, log_n, log_prefix

Item = dict[str, dict[str, Any]]
_HEAD = struct.Struct(">dI")


def logging(description: dict[str, Any]) -> bool:
    return any(marker in description for marker in CHANGE_LOG_MARKERS)


@dataclass(slots=True)
class Change:
    n: int
    time: float
    suffix: bytes
    old: Item | None
    new: Item | None
    #: The userIdentity of the change (TTL deletions), else None.
    identity: dict[str, str] | None = None


class ChangeLog:
    def __init__(self, clock: Clock, catalog: Catalog | None = None) -> None:
        self._clock = clock
        self._catalog = catalog
        #: The last re-check: (transaction, table id, whether it logs), so a batch re-reads once.
        self._checked: tuple[object, int, bool] | None = None

    def wanted(self, txn: WriteTxn, table: Table) -> bool:
        """Whether this change must be logged, judged on the catalog as it is inside `txn`.

        `table` was usually read before the transaction began; another worker
        may have started a backup or turned recovery on since. If the
        catalog moved (or `table` is not its cached copy), the table's row is
        re-read in this transaction, so the decision and the write commit
        together and no logged table misses an entry. The common case costs
        a generation read.
        """
        if table.logs_changes:
            return True
        catalog = self._catalog
        if catalog is None or catalog.current(table):
            return False
        checked = self._checked
        if checked is not None and checked[0] is txn and checked[1] == table.table_id:
            return checked[2]
        fresh = self._catalog.get(table.name, txn)
        wanted = fresh is not None and fresh.table_id == table.table_id and logging(fresh.description)
        self._checked = (txn, table.table_id, wanted)
        return wanted

    def record(self, txn: WriteTxn, table: Table, row: bytes, old: Item | None, new: Item | None,
               identity: dict[str, str] | None = None) -> None:
        n = position(txn, table.table_id) + 1
        txn.put(counter_key(table.table_id), b"%d" % n)
        suffix = row[len(table.prefix):]
        images = [old, new] if identity is None else [old, new, identity]
        value = _HEAD.pack(self._clock.now(), len(suffix)) + suffix + orjson.dumps(images)
        txn.put(log_key(table.table_id, n), value)


def position(view: ReadView, table_id: int) -> int:
    """The n of the table's last change (0 before the first)."""
    raw = view.get(counter_key(table_id))
    return 0 if raw is None else int(raw)


def decode(key: bytes, raw: bytes) -> Change:
    time, length = _HEAD.unpack_from(raw)
    start = _HEAD.size
    suffix = raw[start:start + length]
    images = orjson.loads(raw[start + length:])
    return Change(log_n(key), time, suffix, images[0], images[1], images[2] if len(images) > 2 else None)


def changes(view: ReadView, table_id: int, after: int, limit: int | None = None) -> Iterator[Change]:
    """The table's changes with n > after, in commit order."""
    start = log_key(table_id, after + 1)
    for key, raw in view.range(start, end_of(log_prefix(table_id)), limit=limit):
        yield decode(key, raw)
