"""Online vector index changes for `index_jobs`: backfill a CREATING index, drop a DELETING one.

Same scheme as the GSI jobs: small transactions that re-read the rows they
index, a cursor kept in the table description (`_VectorBackfill`), client
writes maintaining the CREATING index meanwhile (the write path skips only
DELETING indexes), and a drop that removes the rows, the version counter
and the index document in one commit.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import orjson

from ...storage.base import Store, WriteTxn
from ..model.keys import prefix_successor
from .entries import backfill_entry, bump_version

BATCH_ROWS = 500


def pending(description: dict[str, Any]) -> str | None:
    """The name of a vector index with work left, or None."""
    for doc in description.get("VectorIndexes", []):
        if doc.get("IndexStatus") in ("CREATING", "DELETING"):
            return doc["IndexName"]
    return None


def step(store: Store, catalog: Any, table_name: str, index_name: str,
         put: Callable[[WriteTxn, Any, dict[str, Any]], None]) -> None:
    """One transaction of work on one index; `put` stores a changed description."""
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
            for doc in description["VectorIndexes"]:
                if doc["IndexName"] == index_name:
                    doc["IndexStatus"] = "ACTIVE"
                    doc.pop("Backfilling", None)
        else:
            cursors[index_name] = rows[-1][0].hex()
        if not cursors:
            description.pop("_VectorBackfill", None)
        put(txn, table, description)
