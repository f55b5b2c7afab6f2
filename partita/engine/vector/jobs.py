"""Online vector index changes for `index_jobs`: backfill a CREATING index, drop a DELETING one.

Same scheme as the GSI jobs: small transactions that re-read the rows they
index, a cursor kept in the table description (`_VectorBackfill`), client
writes maintaining the CREATING index meanwhile (the write path skips only
DELETING indexes), and a drop that removes the rows, the version counter
and the index document in one commit. `index_jobs` calls `step` only when
the change's phase allows work (`index_phases`); a finished backfill waits
there for its minimum time before the index is ACTIVE.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import orjson

from ...storage.base import Store, WriteTxn
from ..model.keys import prefix_successor
from ..tables import index_phases as phases
from ..tables.definitions import prune_definitions
from .entries import backfill_entry, bump_version

BATCH_ROWS = 500


def step(store: Store, catalog: Any, table_name: str, index_name: str,
         put: Callable[[WriteTxn, Any, dict[str, Any]], None], now: float) -> None:
    """One transaction of work on one index (at server time `now`); `put` stores a changed description."""
    with store.write() as txn:
        table = catalog.get(table_name, txn)
        if table is None:
            return
        index = next((i for i in table.vector_indexes if i.name == index_name), None)
        if index is None:
            return
        description = copy.deepcopy(table.description)
        if index.status == "DELETING":
            end = prefix_successor(index.prefix)
            assert end is not None
            txn.delete_range(index.prefix, end)
            txn.delete(index.version_key)
            log_end = prefix_successor(index.log_prefix)
            assert log_end is not None
            txn.delete_range(index.log_prefix, log_end)
            kept = [d for d in description["VectorIndexes"] if d["IndexName"] != index_name]
            if kept:
                description["VectorIndexes"] = kept
            else:
                del description["VectorIndexes"]
            description["_IndexIds"].pop(index_name, None)
            description.get("_VectorBackfill", {}).pop(index_name, None)
            if not description.get("_VectorBackfill", True):
                del description["_VectorBackfill"]
            phases.forget(description, index_name)
            prune_definitions(description)
            put(txn, table, description)
            return
        cursors = description.setdefault("_VectorBackfill", {})
        start, end = table.data_range()
        cursor = cursors.get(index_name)
        if cursor is not None:
            start = bytes.fromhex(cursor) + b"\x00"
        rows = list(txn.range(start, end, limit=BATCH_ROWS))
        skip = len(table.prefix)
        for key, raw in rows:
            backfill_entry(txn, index, table.key_names, key[skip:], orjson.loads(raw))
        if rows:
            bump_version(txn, index)
        if len(rows) < BATCH_ROWS:
            cursors.pop(index_name, None)
            phases.finish_backfill(description, index_name, now)
        else:
            cursors[index_name] = rows[-1][0].hex()
        if not cursors:
            description.pop("_VectorBackfill", None)
        put(txn, table, description)
