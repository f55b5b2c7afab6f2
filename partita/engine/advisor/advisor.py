"""The advisor's front door: what the request paths record into, and the findings when asked.

One per engine. The request paths record into `shapes` (reads) and
`traces` (writes to indexed tables, GSI Queries); `findings` and `entities`
read them with the partition statistics, and are imported only when first
asked for (nothing of them is paid at start-up or per request). They take
the engine as a plain object: importing its class here would be a cycle.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..time.clock import Clock
from .settings import AdvisorSettings
from .shapes import REQUESTS, RETURNED, UNITS, Shapes, tag_of
from .traces import Traces

__all__ = ["Advisor", "tag_of"]


class Advisor:
    def __init__(self, clock: Clock, settings: AdvisorSettings, directory: Path | None,
                 collection_limit: int, gsi_lag_ms: int) -> None:
        self.settings = settings
        self.shapes = Shapes(directory, settings.max_shapes)
        #: operation -> table id -> (partition-key name, sort-key name or None, tags -> the shape's counts)
        self._points: dict[str, dict[int, tuple[str, str | None, dict[Any, Any]]]] = {
            "GetItem": {}, "BatchGetItem": {}}
        self.shapes.on_drop = self._drop_points
        self.traces = Traces(clock, settings.gsi_read_window_ms / 1000.0)
        #: The cap of an item collection under a local index (10 GB, or --item-collection-limit).
        self.collection_limit = collection_limit
        #: --gsi-lag-ms: a read after a write within it really misses the write.
        self.gsi_lag_ms = gsi_lag_ms

    def point_read(self, operation: str, table: Any, key: dict[str, Any], units: float, found: bool) -> None:
        """One GetItem (or one key of a batch): its shape is the table and the key's tags.

        Its counts are found through nested dicts (operation, table id, tags)
        that point at the shape's counts, rather than by building and hashing
        the ten-member shape: this runs on every GetItem, where each
        allocation and look-up shows (bench/tree_cost.py, docs/decisions.md).
        """
        per_table = self._points[operation].get(table.table_id)
        if per_table is None:
            sort = table.range_key
            per_table = self._points[operation][table.table_id] = (
                table.hash_key.name, None if sort is None else sort.name, {})
        hash_name, sort_name, by_tag = per_table
        pk_tag = tag_of(key[hash_name].get("S"))
        if sort_name is None:
            sk_tag = None
            counts = by_tag.get(pk_tag)
        else:
            sk_tag = tag_of(key[sort_name].get("S"))
            inner = by_tag.get(pk_tag)
            counts = None if inner is None else inner.get(sk_tag)
        if counts is None:
            self._new_point(operation, table.table_id, per_table, pk_tag, sk_tag, units, found)
            return
        counts[REQUESTS] += 1  # a point read's logical queries, pages and items read: see Shapes.merged
        if found:
            counts[RETURNED] += 1
        counts[UNITS] += units
        self.shapes.changes += 1

    def _new_point(self, operation: str, table_id: int, per_table: tuple[str, str | None, dict[Any, Any]],
                   pk_tag: str | None, sk_tag: str | None, units: float, found: bool) -> None:
        hash_name, sort_name, by_tag = per_table
        shape = (operation, table_id, None, pk_tag, "=", sk_tag, None, None, False, None)
        shapes = self.shapes
        if shapes.read(shape, 1, 1 if found else 0, 0, units, True):
            counts = shapes.counts[shape]
        else:
            shapes.add(shape, {"keys": [hash_name, sort_name]}, 1, 1 if found else 0, 0, units, True)
            counts = shapes.counts[shape]
        if sort_name is None:
            by_tag[pk_tag] = counts
        else:
            by_tag.setdefault(pk_tag, {})[sk_tag] = counts

    def _drop_points(self) -> None:
        """A shape was dropped or forgotten: the point reads find theirs again through `shapes`."""
        for per_operation in self._points.values():
            per_operation.clear()

    def tick(self) -> None:
        self.shapes.tick()

    def forget(self, table_id: int) -> None:
        self.shapes.forget(table_id)
        self._drop_points()
        self.traces.forget(table_id)

    def clear(self) -> None:
        self.shapes.clear()
        self._drop_points()
        self.traces.clear()

    def findings(self, engine: Any, table: str | None = None) -> list[dict[str, Any]]:
        """Every finding (of one table, by name), computed now from the shapes and the partition statistics."""
        from .findings import findings

        return findings(engine, self, table)

    def entities(self, engine: Any, table: str, index: str | None = None) -> dict[str, Any]:
        """The entity types of a table or index, by key tag, from a bounded sample of its items."""
        from .entities import entities

        return entities(engine, self, table, index)
