"""Drop every table at once: per-test isolation without restarting the server.

`partita.testing` calls this between tests (directly in-process, through
`POST /partita/v1/reset` for a subprocess server). One write transaction
removes every table's catalog row and every data row (items, indexes, GSI
lag queue, idempotency tokens, TTL index, stream records and metadata), so
a concurrent request sees either the old tables or none, never half.

Kept on purpose: the id sequences (a table created after the reset never
gets an id an old one had, so no per-process cache keyed by id can serve a
stale answer) and the stream signing key. The clock offset goes back to
zero unless asked to keep it: a test that moved the clock 25 hours must not
make the next test's TTL items expire on arrival.
"""

from __future__ import annotations

from typing import Any

from ...storage.base import Conflict
from ...storage.namespace import within
from ..time.clock import CLOCK_ROW
from .catalog import CATALOG_SPACE

_TABLES = (CATALOG_SPACE + b"t", CATALOG_SPACE + b"u")
# Everything after the catalog space is per-table data (see the *_SPACE
# constants: rows, GSI lag, tokens, TTL, streams...): one range covers the
# spaces that exist now and any added later.
_DATA = (b"\x01", b"\xff\xff\xff\xff\xff\xff\xff\xff")
_ATTEMPTS = 5


def reset(engine: Any, *, keep_clock: bool = False) -> int:
    """Drop every table (deletion protection does not apply); how many there were.

    On a server of several regions, the home engine's data range holds
    every other region's namespace too (storage/namespace.py): one reset
    drops every region's tables, and counts them all.
    """
    store = engine.store
    others = [other.store for other in (engine.regions or {}).values() if other is not engine]
    for attempt in range(_ATTEMPTS):
        store.generation()  # a PostgreSQL writer checks the catalog against the value last handed out
        try:
            with store.write() as txn:
                dropped = sum(1 for _ in txn.range(*_TABLES))
                dropped += sum(1 for other in others for _ in within(other, txn).range(*_TABLES))
                txn.delete_range(*_TABLES)
                txn.delete_range(*_DATA)
                if not keep_clock:
                    txn.delete(CLOCK_ROW)
                txn.bump_generation()
            break
        except Conflict:  # another server's catalog change or write came first: nothing was written
            if attempt == _ATTEMPTS - 1:
                raise
    # Every table is metered (and advised on): free their shared slots and counters, or a test
    # suite resetting between tests would fill the meter's fixed region.
    engine.meter.forget_all()
    for each in (engine, *(other for other in (engine.regions or {}).values() if other is not engine)):
        each.advisor.clear()
    return dropped
