"""The one place an item is stored: its table row and every index entry, in one commit.

Every write path (PutItem, UpdateItem, DeleteItem, batches, transactions,
TTL) ends here, so indexes can never drift from their table. It also
reports the index write units DynamoDB charges: an item entering or leaving
an index costs one write of its index entry, a changed index key costs two
(the old entry deleted, the new one put), a changed projection costs one,
and an index the write does not touch costs nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from ..errors import ValidationException
from ..storage.base import WriteTxn
from .capacity import write_units
from .schema import Index, Table
from .values import item_size

Item = dict[str, dict[str, Any]]
_EMPTY_KIND = {"S": "string", "B": "binary"}


@dataclass(slots=True)
class IndexUnits:
    """Write units charged per index by one item write."""

    local: dict[str, float] = field(default_factory=dict)
    global_: dict[str, float] = field(default_factory=dict)

    def add(self, index: Index, units: float) -> None:
        target = self.global_ if index.is_global else self.local
        target[index.name] = target.get(index.name, 0.0) + units


def check_index_keys(table: Table, item: Item) -> None:
    """Index key attributes, where present, must have the declared type and not be empty."""
    for index in table.indexes:
        for attr in (index.hash_key, index.range_key):
            if attr is None or attr.name not in item:
                continue
            value = item[attr.name]
            if attr.type not in value:
                actual = next(iter(value))
                raise ValidationException(
                    "One or more parameter values were invalid: Type mismatch for Index Key "
                    f"{attr.name} Expected: {attr.type} Actual: {actual} IndexName: {index.name}"
                )
            if value[attr.type] == "" and attr.type in _EMPTY_KIND:
                raise ValidationException(
                    "One or more parameter values are not valid. A value specified for a secondary index key "
                    "is not supported. The AttributeValue for a key attribute cannot contain an empty "
                    f"{_EMPTY_KIND[attr.type]} value. IndexName: {index.name}, IndexKey: {attr.name}"
                )


def _entry(table: Table, index: Index, item: Item | None) -> tuple[bytes, Item] | None:
    if item is None or not index.covers(item):
        return None
    return table.index_row_key(index, item), index.project(item, table.key_names)


def _write_index(txn: WriteTxn, table: Table, index: Index, old: Item | None, new: Item | None) -> float:
    before = _entry(table, index, old)
    after = _entry(table, index, new)
    units = 0.0
    if before is not None and (after is None or before[0] != after[0]):
        txn.delete(before[0])
        units += write_units(item_size(before[1]))
        before = None
    if after is not None:
        if before is not None and before[1] == after[1]:
            return units
        size = item_size(after[1])
        txn.put(after[0], orjson.dumps(after[1]), size)
        charged = size if before is None else max(size, item_size(before[1]))
        units += write_units(charged)
    return units


def store_item(txn: WriteTxn, table: Table, row: bytes, old: Item | None, new: Item | None) -> IndexUnits:
    """Replace `old` by `new` (None = absent) at `row`, keeping every index exact."""
    if new is None:
        if old is not None:
            txn.delete(row)
    else:
        txn.put(row, orjson.dumps(new), item_size(new))
    charges = IndexUnits()
    for index in table.indexes:
        units = _write_index(txn, table, index, old, new)
        if units:
            charges.add(index, units)
    return charges


def store_index_entry(txn: WriteTxn, table: Table, index: Index, item: Item) -> None:
    """Write one item's entry into one index (backfill); a no-op for items the index skips."""
    entry = _entry(table, index, item)
    if entry is not None:
        txn.put(entry[0], orjson.dumps(entry[1]), item_size(entry[1]))
