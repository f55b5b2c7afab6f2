"""Single-item reads and writes: PutItem, GetItem, DeleteItem, UpdateItem.

Each write is one store transaction: read the old item, check the
condition against it, write. The store's write transaction is
serializable, so a condition can never pass against a stale item.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from ..errors import ConditionalCheckFailedException, ValidationException
from ..storage.base import Store
from .capacity import Consumed, read_units, write_units
from .expressions import evaluate
from .item_keys import check_item_key, check_key
from .tables import TableOps
from .updates import (
    ITEM_TOO_LARGE,
    MAX_ITEM_BYTES,
    BoundUpdate,
    apply_update,
    check_index_updates,
    check_index_values,
    check_key_updates,
)
from .values import item_size
from .writes import WriteRules, check_index_keys, store_item

Item = dict[str, dict[str, Any]]
CONDITION_FAILED = "The conditional request failed"


@dataclass(slots=True)
class Condition:
    """A parsed ConditionExpression and the placeholders it is evaluated with."""

    expression: Any
    names: dict[str, str]
    values: dict[str, dict[str, Any]]

    def holds(self, item: Item | None) -> bool:
        return evaluate(self.expression, item, self.names, self.values)


@dataclass(slots=True)
class WriteResult:
    old: Item | None
    consumed: Consumed
    #: Bytes of the written item's collection, on tables with a local index.
    collection_bytes: int | None = None


@dataclass(slots=True)
class UpdateResult:
    """The item before and after an UpdateItem (`old` is None when it was created)."""

    old: Item | None
    new: Item
    consumed: Consumed
    collection_bytes: int | None = None


def _check_condition(condition: Condition | None, old: Item | None, return_old_on_fail: bool) -> None:
    if condition is None or condition.holds(old):
        return
    if return_old_on_fail and old is not None:
        raise ConditionalCheckFailedException(CONDITION_FAILED, Item=old)
    raise ConditionalCheckFailedException(CONDITION_FAILED)


class ItemOps:
    def __init__(self, store: Store, tables: TableOps, rules: WriteRules) -> None:
        self._store = store
        self._tables = tables
        self._rules = rules

    def put(
        self,
        table_name: str,
        item: Item,
        condition: Condition | None = None,
        return_old_on_fail: bool = False,
    ) -> WriteResult:
        table = self._tables.get(table_name)
        check_item_key(table, item)
        check_index_keys(table, item)
        row = table.row_key(item)
        size = item_size(item)
        with self._store.write() as txn:
            raw = txn.get(row)
            old = None if raw is None else orjson.loads(raw)
            _check_condition(condition, old, return_old_on_fail)
            effects = store_item(txn, table, row, old, item, self._rules)
        old_size = 0 if old is None else item_size(old)
        consumed = Consumed(table.name, write_units(max(size, old_size)), effects.local, effects.global_)
        return WriteResult(old, consumed, effects.collection_bytes)

    def get(self, table_name: str, key: Item, consistent: bool) -> tuple[Item | None, Consumed]:
        table = self._tables.get(table_name)
        check_key(table, key)
        raw = self._store.get(table.row_key(key))
        item = None if raw is None else orjson.loads(raw)
        size = 0 if item is None else item_size(item)
        return item, Consumed(table.name, read_units(size, consistent))

    def delete(
        self,
        table_name: str,
        key: Item,
        condition: Condition | None = None,
        return_old_on_fail: bool = False,
    ) -> WriteResult:
        table = self._tables.get(table_name)
        check_key(table, key)
        row = table.row_key(key)
        with self._store.write() as txn:
            raw = txn.get(row)
            old = None if raw is None else orjson.loads(raw)
            _check_condition(condition, old, return_old_on_fail)
            effects = store_item(txn, table, row, old, None, self._rules)
        size = 0 if old is None else item_size(old)
        consumed = Consumed(table.name, write_units(size), effects.local, effects.global_)
        return WriteResult(old, consumed, effects.collection_bytes)

    def update(
        self,
        table_name: str,
        key: Item,
        update: BoundUpdate | None,
        condition: Condition | None = None,
        return_old_on_fail: bool = False,
    ) -> UpdateResult:
        """UpdateItem: read, check the condition, apply the update, store; one transaction.

        A missing item is created from its key (an upsert), even when the
        update has no actions. What DynamoDB can reject without the item
        (key attributes, index key types) is rejected before reading it.
        """
        table = self._tables.get(table_name)
        check_key(table, key)
        if update is not None:
            check_key_updates(table, update)
            check_index_updates(table, update)
        row = table.row_key(key)
        with self._store.write() as txn:
            raw = txn.get(row)
            old = None if raw is None else orjson.loads(raw)
            _check_condition(condition, old, return_old_on_fail)
            new = dict(key) if raw is None else orjson.loads(raw)
            if update is not None:
                apply_update(update, new)
                check_index_values(table, update, new)
            check_index_keys(table, new)
            size = item_size(new)
            if size > MAX_ITEM_BYTES:
                raise ValidationException(ITEM_TOO_LARGE)
            effects = store_item(txn, table, row, old, new, self._rules)
        old_size = 0 if old is None else item_size(old)
        consumed = Consumed(
            table.name, write_units(max(size, old_size)), effects.local, effects.global_
        )
        return UpdateResult(old, new, consumed, effects.collection_bytes)
