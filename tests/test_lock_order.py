"""Nothing under the meter's lock reads the store (engine/capacity/meter.py, Meter._lock).

The server thread takes the meter's lock while its open write group holds
the store's lock. A background thread that read the store while holding the
meter's lock would wait for the server thread, which waits for it: a SQLite
server under load once stopped answering this way (the duties' tick read the
clock, which re-reads its row from the store after an advance or a new
table). Engine level, because the rule is about which lock is held when the
store is called; the store is wrapped to record reads made under the lock.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from partita.engine.capacity.hotkeys import MAX_PENDING
from partita.engine.capacity.meter import WRITE
from partita.engine.engine import Engine
from partita.storage.sqlite import SQLiteStore

STORE_CALLS = ("get", "get_weighted", "range", "stats", "snapshot", "write")


@pytest.fixture()
def engine(tmp_path: Path) -> Iterator[Engine]:
    store = SQLiteStore(tmp_path / "partita.sqlite3")
    engine = Engine(store, background=False, emulate_throughput=True, capacity_path=tmp_path / "partita.capacity")
    engine.tables.create({
        "TableName": "orders", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "BillingMode": "PROVISIONED", "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5},
    })
    yield engine
    engine.close()


def _record_reads_under_the_lock(engine: Engine) -> list[str]:
    """Wrap the store's entry points; the names of those this thread called while the meter's lock was held.

    Each test runs the code that takes the lock on its own thread; other
    threads (an index job) may use the store meanwhile, legitimately.
    """
    store: Any = engine.store
    lock = engine.meter._lock
    mine = threading.get_ident()
    seen: list[str] = []
    for name in STORE_CALLS:
        original = getattr(store, name)

        def watched(*args: Any, _name: str = name, _original: Any = original, **kwargs: Any) -> Any:
            if lock.locked() and threading.get_ident() == mine:
                seen.append(_name)
            return _original(*args, **kwargs)

        setattr(store, name, watched)
    return seen


def test_the_tick_reads_the_clock_before_the_lock(engine: Engine) -> None:
    engine.clock.advance(5)  # the generation moves: the next clock read goes to the store
    seen = _record_reads_under_the_lock(engine)
    engine.meter.tick()
    assert seen == []
    assert engine.clock.offset() == 5.0  # and the tick did read it


def test_a_changed_table_settles_its_leases_without_reading_under_the_lock(engine: Engine) -> None:
    table = engine.tables.get("orders")
    engine.meter.charge_table(table, WRITE, b"\x00" * 8 + b"row", 1.0, None)  # a lease to settle
    engine.table_updates.update({"TableName": "orders",
                                 "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 10}})
    engine.clock.advance(5)
    changed = engine.tables.get("orders")
    assert changed.description is not table.description
    seen = _record_reads_under_the_lock(engine)
    engine.meter.resources(changed)
    assert seen == []


def test_a_forced_hot_key_flush_reads_no_store(engine: Engine) -> None:
    engine.clock.advance(5)
    seen = _record_reads_under_the_lock(engine)
    token = engine.meter.table_resource(engine.tables.get("orders")).hot_token
    with engine.meter._lock:  # as the request path adds keys
        for i in range(MAX_PENDING + 1):
            engine.meter.hot.add(token, WRITE, b"\x00" * 8 + i.to_bytes(4, "big"), {"pk": {"S": str(i)}}, 1.0)
    assert seen == []
