"""Two workers on one store: a write decided on a catalog read before another worker's
CreateBackup or UpdateContinuousBackups still logs its change (engine level, SQLite file).

The race (the write's catalog read before the other worker's commit, its
transaction after) cannot be timed through HTTP; two engines on one file, a
table read from the first engine's catalog before the second engine's commit,
and the first engine's write path reproduce it exactly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import STORE

from partita.api.dispatch import handle
from partita.engine.backups.changelog import changes
from partita.engine.engine import Engine
from partita.engine.items.writes import store_item
from partita.storage.sqlite import SQLiteStore

pytestmark = pytest.mark.skipif(STORE != "memory", reason="engine level, store-independent: runs once")

CREATE = {
    "TableName": "shared", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}], "BillingMode": "PAY_PER_REQUEST",
}


def _write_with(engine: Engine, table: Any, key: str) -> None:
    """What a PutItem does once it holds `table`: the write transaction and `store_item`."""
    item = {"pk": {"S": key}}
    with engine.store.write() as txn:
        store_item(txn, table, table.row_key(item), None, item, engine.items._rules)  # noqa: SLF001


@pytest.mark.parametrize("start", ["backup", "pitr"])
def test_a_stale_catalog_read_still_logs_the_write(tmp_path: Path, start: str) -> None:
    path = tmp_path / "partita.db"
    first = Engine(SQLiteStore(path), background=False)
    second = Engine(SQLiteStore(path), background=False)
    try:
        first.tables.create(CREATE)
        stale = first.catalog.get("shared")  # the first worker's request read the catalog ...
        assert stale is not None and "_Capture" not in stale.description
        if start == "backup":  # ... then the second worker committed
            handle(second, "CreateBackup", {"TableName": "shared", "BackupName": "race"})
        else:
            handle(second, "UpdateContinuousBackups", {
                "TableName": "shared", "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True},
            })
        _write_with(first, stale, "raced")
        logged = [change.new for change in changes(second.store, stale.table_id, 0)]
        assert logged == [{"pk": {"S": "raced"}}]
        # A fresh read costs no re-check and logs as before.
        fresh = first.catalog.get("shared")
        assert fresh is not None and fresh is not stale and first.catalog.current(fresh)
        _write_with(first, fresh, "after")
        assert len(list(changes(second.store, stale.table_id, 0))) == 2
    finally:
        first.close()
        second.close()


def test_an_unchanged_catalog_logs_nothing(tmp_path: Path) -> None:
    engine = Engine(SQLiteStore(tmp_path / "partita.db"), background=False)
    try:
        engine.tables.create(CREATE)
        table = engine.catalog.get("shared")
        assert table is not None and engine.catalog.current(table)
        _write_with(engine, table, "plain")
        assert list(changes(engine.store, table.table_id, 0)) == []
    finally:
        engine.close()
