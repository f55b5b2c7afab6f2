"""Two workers on one store: a write decided on a catalog read before another worker
enabled (or disabled) the table's stream gets its record exactly when the stream is on
at its commit (engine level, SQLite file).

The race (the write's catalog read before the other worker's UpdateTable, its
transaction after) cannot be timed through HTTP; two engines on one file, a
table read from the first engine's catalog before the second engine's commit,
and the first engine's write path reproduce it exactly (as test_backup_workers.py
does for the change log).
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import STORE

from partita.api.dispatch import handle
from partita.engine.engine import Engine
from partita.engine.items.writes import store_item
from partita.engine.streams.keys import RECORD_SPACE
from partita.storage.sqlite import SQLiteStore

pytestmark = pytest.mark.skipif(STORE != "memory", reason="engine level, store-independent: runs once")

CREATE = {
    "TableName": "shared", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}], "BillingMode": "PAY_PER_REQUEST",
}
ON = {"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"}


def _write_with(engine: Engine, table: Any, key: str) -> None:
    """What a PutItem does once it holds `table`: the write transaction and `store_item`."""
    item = {"pk": {"S": key}}
    with engine.store.write() as txn:
        store_item(txn, table, table.row_key(item), None, item, engine.items._rules)  # noqa: SLF001


def _recorded(engine: Engine, stream_id: int) -> list[str]:
    """The keys of the stream's records, in sequence order."""
    start = RECORD_SPACE + struct.pack(">I", stream_id)
    end = RECORD_SPACE + struct.pack(">I", stream_id + 1)
    records = [orjson.loads(raw[8:]) for _, raw in engine.store.range(start, end)]
    return [r["dynamodb"]["Keys"]["pk"]["S"] for r in sorted(records, key=lambda r: r["dynamodb"]["SequenceNumber"])]


def _engines(tmp_path: Path) -> tuple[Engine, Engine]:
    path = tmp_path / "partita.db"
    return Engine(SQLiteStore(path), background=False), Engine(SQLiteStore(path), background=False)


def test_a_stale_catalog_read_still_records_into_a_just_enabled_stream(tmp_path: Path) -> None:
    first, second = _engines(tmp_path)
    try:
        first.tables.create(CREATE)
        stale = first.catalog.get("shared")  # the first worker's request read the catalog ...
        assert stale is not None and "_Stream" not in stale.description
        handle(second, "UpdateTable", {"TableName": "shared", "StreamSpecification": ON})  # ... then this
        _write_with(first, stale, "raced")
        enabled = second.catalog.get("shared")
        assert enabled is not None
        stream_id = enabled.description["_Stream"]["id"]
        assert _recorded(second, stream_id) == ["raced"]
        # A fresh read costs no re-check and records as before.
        fresh = first.catalog.get("shared")
        assert fresh is not None and fresh is not stale and first.catalog.current(fresh)
        _write_with(first, fresh, "after")
        assert _recorded(second, stream_id) == ["raced", "after"]
    finally:
        first.close()
        second.close()


def test_a_stale_catalog_read_records_nothing_into_a_just_disabled_stream(tmp_path: Path) -> None:
    first, second = _engines(tmp_path)
    try:
        first.tables.create({**CREATE, "StreamSpecification": ON})
        stale = first.catalog.get("shared")
        assert stale is not None
        stream_id = stale.description["_Stream"]["id"]
        _write_with(first, stale, "before")
        handle(second, "UpdateTable", {"TableName": "shared", "StreamSpecification": {"StreamEnabled": False}})
        _write_with(first, stale, "raced")  # committed after the stream was disabled: no record
        assert _recorded(second, stream_id) == ["before"]
    finally:
        first.close()
        second.close()
