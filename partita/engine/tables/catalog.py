"""Where table definitions live: catalog rows in the same store as the items.

Keeping the catalog in the store (not in process memory) lets several
worker processes, or several servers over one database, agree on which
tables exist. Parsed tables are cached per process and dropped whenever the
store's generation counter moves, which every catalog write bumps after it
commits, so a table created or deleted by another process is seen on its
next request.
"""

from __future__ import annotations

from collections.abc import Iterator

import orjson

from ...storage.base import ReadView, Store, WriteTxn
from .schema import Table

CATALOG_SPACE = b"\x00"
_TABLE_ROW = CATALOG_SPACE + b"t"
_TABLE_ROW_END = CATALOG_SPACE + b"u"
SEQUENCE_ROW = CATALOG_SPACE + b"seq"


def _row(name: str) -> bytes:
    return _TABLE_ROW + name.encode()


class Catalog:
    def __init__(self, store: Store) -> None:
        self._store = store
        self._cache: dict[str, Table | None] = {}
        self._generation = store.generation()

    def get(self, name: str, view: ReadView | None = None) -> Table | None:
        """The table named `name`, or None.

        Outside a transaction the parsed table is cached until the store's
        generation moves (every catalog write bumps it, in any process), so
        the hot path costs no store read. Inside a transaction it is always
        read from the transaction, which is what a writer must decide on.
        """
        if view is not None:
            raw = view.get(_row(name))
            return None if raw is None else self._decode(raw)
        generation = self._store.generation()
        if generation != self._generation:
            self._cache.clear()
            self._generation = generation
        try:
            return self._cache[name]
        except KeyError:
            pass
        raw = self._store.get(_row(name))
        table = None if raw is None else self._decode(raw)
        if self._store.generation() == generation:
            self._cache[name] = table
        return table

    def current(self, table: Table) -> bool:
        """Whether `table` is this catalog's cached copy and no catalog commit came since.

        Inside a write transaction this tells a writer whether the table it
        read before the transaction may be stale: every store bumps the
        generation before another writer's transaction can begin (SQLite under
        the cross-process writer turn, memory under its lock, PostgreSQL
        re-reads it in each write), so an unchanged generation means no
        catalog change committed in between.
        """
        return self._store.generation() == self._generation and self._cache.get(table.name) is table

    def names(self, start_after: str | None) -> Iterator[str]:
        """Table names in DynamoDB's ListTables order (byte order), after start_after."""
        start = _TABLE_ROW if start_after is None else _row(start_after) + b"\x00"
        for key, _ in self._store.range(start, _TABLE_ROW_END):
            yield key[len(_TABLE_ROW):].decode()

    def put(self, txn: WriteTxn, table: Table) -> None:
        raw = orjson.dumps({"id": table.table_id, "description": table.description})
        txn.put(_row(table.name), raw)
        txn.bump_generation()

    def delete(self, txn: WriteTxn, name: str) -> None:
        txn.delete(_row(name))
        txn.bump_generation()

    def next_table_id(self, txn: WriteTxn) -> int:
        """A table id never used before, so a re-created table never sees old rows."""
        raw = txn.get(SEQUENCE_ROW)
        value = 1 if raw is None else int(raw) + 1
        txn.put(SEQUENCE_ROW, str(value).encode())
        return value

    @staticmethod
    def _decode(raw: bytes) -> Table:
        doc = orjson.loads(raw)
        return Table.from_description(doc["description"], doc["id"])
