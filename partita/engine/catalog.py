"""Where table definitions live: catalog rows in the same store as the items.

Keeping the catalog in the store (not in process memory) lets several
worker processes, or several servers over one database, agree on which
tables exist. Each lookup reads the catalog row and reuses the parsed
`Table` while the stored bytes are unchanged, so a table created or deleted
by another process is seen on its next request.
"""

from __future__ import annotations

from collections.abc import Iterator

import orjson

from ..storage.base import ReadView, Store, WriteTxn
from .schema import Table

CATALOG_SPACE = b"\x00"
_TABLE_ROW = CATALOG_SPACE + b"t"
_TABLE_ROW_END = CATALOG_SPACE + b"u"
_SEQUENCE_ROW = CATALOG_SPACE + b"seq"


def _row(name: str) -> bytes:
    return _TABLE_ROW + name.encode()


class Catalog:
    def __init__(self, store: Store) -> None:
        self._store = store
        self._cache: dict[str, tuple[bytes, Table]] = {}

    def get(self, name: str, view: ReadView | None = None) -> Table | None:
        raw = (view or self._store).get(_row(name))
        if raw is None:
            self._cache.pop(name, None)
            return None
        cached = self._cache.get(name)
        if cached is not None and cached[0] == raw:
            return cached[1]
        table = self._decode(raw)
        self._cache[name] = (raw, table)
        return table

    def names(self, start_after: str | None) -> Iterator[str]:
        """Table names in DynamoDB's ListTables order (byte order), after start_after."""
        start = _TABLE_ROW if start_after is None else _row(start_after) + b"\x00"
        for key, _ in self._store.range(start, _TABLE_ROW_END):
            yield key[len(_TABLE_ROW):].decode()

    def put(self, txn: WriteTxn, table: Table) -> None:
        raw = orjson.dumps({"id": table.table_id, "description": table.description})
        txn.put(_row(table.name), raw)

    def delete(self, txn: WriteTxn, name: str) -> None:
        txn.delete(_row(name))
        self._cache.pop(name, None)

    def next_table_id(self, txn: WriteTxn) -> int:
        """A table id never used before, so a re-created table never sees old rows."""
        raw = txn.get(_SEQUENCE_ROW)
        value = 1 if raw is None else int(raw) + 1
        txn.put(_SEQUENCE_ROW, str(value).encode())
        return value

    @staticmethod
    def _decode(raw: bytes) -> Table:
        doc = orjson.loads(raw)
        return Table.from_description(doc["description"], doc["id"])
