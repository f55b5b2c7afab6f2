"""Single-item reads and writes, as steps every write path shares.

PutItem, DeleteItem, UpdateItem, the requests of a BatchWriteItem and the
actions of a TransactWriteItems all do the same three things, so each is one
function here and nothing else repeats them:

1. ``prepare_*``: what DynamoDB rejects without reading the item (the key,
   index key types, key attributes an update may not touch) becomes an
   :class:`ItemAction` that knows its table, row and key;
2. :func:`resolve`: read the current item, check the condition against it and
   compute the new item (an update is applied here);
3. :func:`store`: write the new item and its index entries (``store_item``).

A single-item operation runs 2 and 3 in one store write transaction; a batch
runs every request's steps in one; a transaction first resolves every action
(collecting each one's failure) and only then stores them all. The store's
write transaction is serializable, so a condition never passes against a
stale item.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import orjson

from ...errors import ConditionalCheckFailedException, DynamoDBError, ValidationException
from ...storage.base import ReadView, Store, WriteTxn
from ..capacity import Consumed, read_units, write_units
from ..capacity.charges import charge_write
from ..capacity.meter import READ, Meter
from ..expressions import DeleteAction, RemoveAction
from ..model.item_keys import check_item_key, check_key, key_of
from ..model.sizes import item_size
from ..model.values import MSG_EMPTY_NAME
from ..tables.lifecycle import TableOps
from ..tables.schema import Table
from ..vector.model import billed_size, write_request_bytes
from .actions import ActionKind, Condition, Item, ItemAction, UpdateResult, WriteResult
from .updates import (
    ITEM_TOO_LARGE,
    MAX_ITEM_BYTES,
    BoundUpdate,
    apply_update,
    check_index_updates,
    check_index_values,
    check_key_updates,
)
from .writes import WriteEffects, WriteRules, check_index_keys, store_item

if TYPE_CHECKING:
    from ..advisor.advisor import Advisor
    from ..schema_guard.guard import SchemaGuard

CONDITION_FAILED = "The conditional request failed"
PUT_ITEM_TOO_LARGE = "Item size has exceeded the maximum allowed size"
KEY_SCHEMA_MISMATCH = "The provided key element does not match the schema"


# -- step 1: what can be rejected without the item ------------------------------------


def check_item_size(item: Item) -> int:
    """A put's item must fit in 400 KB (checked before the table is looked up); its size.

    Every put passes here before its table is looked up, so this is also
    where an attribute named "" is refused (a name over 65535 characters is
    refused earlier, by the request's shape).
    """
    if "" in item:
        raise ValidationException(MSG_EMPTY_NAME)
    size = item_size(item)
    if size > MAX_ITEM_BYTES:
        raise ValidationException(PUT_ITEM_TOO_LARGE)
    return size


def check_listed_key(table: Table, item: Item) -> None:
    """BatchWriteItem words a missing or mistyped key attribute as a Key mismatch.

    PutItem says "Missing the key ..." or "Type mismatch for key ...";
    BatchWriteItem answers both with the schema mismatch (localstack's
    snapshot recorded against AWS). A transaction's Put keeps PutItem's
    words, as its cancellation reason (engine/transactions.py). Values
    (empty, too long) keep PutItem's words: call :func:`check_item_key` after this.
    """
    for attr in (table.hash_key, table.range_key):
        if attr is None:
            continue
        value = item.get(attr.name)
        if value is None or attr.type not in value:
            raise ValidationException(KEY_SCHEMA_MISMATCH)


def prepare_put(
    table: Table,
    item: Item,
    condition: Condition | None = None,
    return_old_on_fail: bool = False,
    size: int | None = None,
) -> ItemAction:
    """`size` is the item's size when the caller already measured it (check_item_size)."""
    check_item_key(table, item)
    check_index_keys(table, item)
    key = key_of(table, item)
    return ItemAction(
        ActionKind.PUT, table, table.row_key(item), key, condition, return_old_on_fail, item=item,
        new_size=item_size(item) if size is None else size,
    )


def prepare_delete(
    table: Table, key: Item, condition: Condition | None = None, return_old_on_fail: bool = False
) -> ItemAction:
    check_key(table, key)
    return ItemAction(ActionKind.DELETE, table, table.row_key(key), key, condition, return_old_on_fail)


def prepare_check(table: Table, key: Item, condition: Condition, return_old_on_fail: bool = False) -> ItemAction:
    check_key(table, key)
    return ItemAction(ActionKind.CHECK, table, table.row_key(key), key, condition, return_old_on_fail)


def prepare_update(
    table: Table,
    key: Item,
    update: BoundUpdate | None,
    condition: Condition | None = None,
    return_old_on_fail: bool = False,
) -> ItemAction:
    """What DynamoDB rejects before reading: key attributes and index key types in the update."""
    check_key(table, key)
    if update is not None:
        check_key_updates(table, update)
        check_index_updates(table, update)
    return ItemAction(
        ActionKind.UPDATE, table, table.row_key(key), key, condition, return_old_on_fail, update=update
    )


# -- step 2: read, check, compute ---------------------------------------------------------


def check_condition(condition: Condition | None, old: Item | None, return_old_on_fail: bool) -> None:
    if condition is None or condition.holds(old):
        return
    if return_old_on_fail and old is not None:
        raise ConditionalCheckFailedException(CONDITION_FAILED, Item=old)
    raise ConditionalCheckFailedException(CONDITION_FAILED)


def only_deletes(update: BoundUpdate | None) -> bool:
    """Whether an update has actions and every one of them deletes (REMOVE, set DELETE)."""
    return update is not None and bool(update.actions) and all(
        isinstance(action, (RemoveAction, DeleteAction)) for action in update.actions
    )


def _updated(action: ItemAction, raw: bytes | None) -> Item | None:
    """The item after an update: a private copy of the stored item (or the key) changed.

    A missing item is created from its key (an upsert), even when the update
    has no actions (no UpdateExpression, or AttributeUpdates {}). But an
    update whose actions all delete leaves a missing item missing: None, so
    nothing is written and no stream record made. DynamoDB documents this for
    AttributeUpdates DELETE ("If no item with the specified Key is found ...
    DELETE - Nothing happens") and does the same for REMOVE and a set DELETE
    (Alternator's AWS-checked suite, issue 5862); it does not even look at
    the paths, so "REMOVE a.b" on a missing item is no error either.
    """
    if raw is None:
        if only_deletes(action.update):
            return None
        new = dict(action.key)
    else:
        new = orjson.loads(raw)
    if action.update is not None:
        apply_update(action.update, new)
        check_index_values(action.table, action.update, new)
    check_index_keys(action.table, new)
    action.new_size = item_size(new)
    if action.new_size > MAX_ITEM_BYTES:
        raise ValidationException(ITEM_TOO_LARGE)
    return new


def resolve(view: ReadView, action: ItemAction, guard: SchemaGuard | None = None) -> tuple[Item | None, Item | None]:
    """(old item, new item) of one action, read in `view`; nothing is written.

    Raises ConditionalCheckFailedException when the condition fails and
    ValidationException when the update cannot apply to this item. A
    condition check's new item is the old one (it changes nothing). With a
    schema `guard` (`--schema`), the item a Put or an Update would store is
    checked last, after DynamoDB's own checks: in reject mode a violation
    raises ValidationException, in warn mode it is kept on the action for
    `store` to record.
    """
    stored = view.get_weighted(action.row)
    raw = None if stored is None else stored[0]
    old = None if raw is None else orjson.loads(raw)
    action.old_size = 0 if stored is None else stored[1]
    check_condition(action.condition, old, action.return_old_on_fail)
    if action.kind is ActionKind.PUT:
        new = action.item
    elif action.kind is ActionKind.UPDATE:
        new = _updated(action, raw)
    elif action.kind is ActionKind.DELETE:
        return old, None
    else:
        return old, old
    if guard is not None and new is not None:
        action.violation = guard.check(action.table.name, new, action.key, action.kind.value)
    return old, new


# -- step 3: write -------------------------------------------------------------------------


def store(txn: WriteTxn, action: ItemAction, old: Item | None, new: Item | None, rules: WriteRules) -> WriteEffects:
    """Write a resolved action through `store_item` (a condition check writes nothing)."""
    if action.kind is ActionKind.CHECK:
        return WriteEffects()
    if action.violation is not None:
        assert rules.guard is not None
        rules.guard.record(txn, action.violation)
    return store_item(txn, action.table, action.row, old, new, rules, action.new_size)


def write_capacity(action: ItemAction, old: Item | None, new: Item | None, effects: WriteEffects) -> Consumed:
    """Write units of one action: the larger of the old and new item, plus its index writes."""
    vectors = action.table.vector_indexes
    old_size = 0 if old is None else billed_size(vectors, old, action.old_size) if vectors else action.old_size
    if new is None:
        new_size = 0
    elif action.kind is ActionKind.CHECK:
        new_size = old_size
    else:
        new_size = billed_size(vectors, new, action.new_size) if vectors else action.new_size
    size = max(old_size, new_size)
    vector = write_request_bytes(effects.vector) if effects.vector else None
    return Consumed(action.table.name, write_units(size), effects.local, effects.global_, vector)


class ItemOps:
    def __init__(self, store: Store, tables: TableOps, rules: WriteRules, meter: Meter | None = None,
                 advisor: Advisor | None = None) -> None:
        self._store = store
        self._tables = tables
        self._rules = rules
        #: Every request is charged (metered); --emulate-throughput decides whether the meter refuses.
        self._meter = meter
        #: GetItem's shapes (table, key tags) for the access-pattern advisor.
        self._advisor = advisor

    def _execute(self, action: ItemAction) -> tuple[Item | None, Item | None, WriteEffects]:
        """Resolve and store one action in its own write transaction (a throttled one stores nothing)."""
        with self._store.write() as txn:
            old, new = resolve(txn, action, self._rules.guard)
            if self._meter is not None:
                charge_write(self._meter, action, old, new)
            effects = store(txn, action, old, new, self._rules)
        return old, new, effects

    def _write(self, action: ItemAction) -> WriteResult:
        old, new, effects = self._execute(action)
        return WriteResult(old, write_capacity(action, old, new, effects), effects.collection_bytes)

    def put(
        self,
        table_name: str,
        item: Item,
        condition: Condition | None = None,
        return_old_on_fail: bool = False,
        size: int | None = None,
    ) -> WriteResult:
        table = self._tables.get(table_name)
        return self._write(prepare_put(table, item, condition, return_old_on_fail, size))

    def delete(
        self,
        table_name: str,
        key: Item,
        condition: Condition | None = None,
        return_old_on_fail: bool = False,
    ) -> WriteResult:
        return self._write(prepare_delete(self._tables.get(table_name), key, condition, return_old_on_fail))

    def read_ahead(self, gets: list[tuple[str, Item, bool]]) -> None:
        """Hint the store at the rows of GetItems about to run, (table, key, ConsistentRead) each.

        Only stores that read ahead (`Store.reads_ahead`) are asked, with the
        rows of each read kind together. A request this cannot place (no such
        table, a wrong key) is left out: it meets its error when it runs.
        """
        rows: dict[int, tuple[Store, list[bytes]]] = {}
        for table_name, key, consistent in gets:
            store = self._store if consistent else self._store.eventual
            if not store.reads_ahead:
                continue
            try:
                table = self._tables.get(table_name)
                check_key(table, key)
                row = table.row_key(key)
            except DynamoDBError:
                continue
            rows.setdefault(id(store), (store, []))[1].append(row)
        for store, keys in rows.values():
            if len(keys) > 1:  # one row alone gains nothing over its own read
                store.read_ahead(keys)

    def forget_read_ahead(self) -> None:
        """The turn those GetItems belonged to is over: nothing read ahead is served any more."""
        self._store.forget_ahead()

    def get(
        self, table_name: str, key: Item, consistent: bool, as_stored: bool = False
    ) -> tuple[Item | None, Consumed]:
        """The item and its read units; `as_stored`: the item as its stored JSON (an orjson.Fragment)."""
        table = self._tables.get(table_name)
        check_key(table, key)
        row = table.row_key(key)
        stored = (self._store if consistent else self._store.eventual).get_weighted(row)
        units = read_units(0 if stored is None else stored[1], consistent)
        meter = self._meter
        if meter is not None:
            meter.charge_table(table, READ, row, units, key)
        if self._advisor is not None:
            self._advisor.point_read("GetItem", table, key, units, stored is not None)
        if stored is None:
            return None, Consumed(table.name, units)
        if as_stored:
            return orjson.Fragment(stored[0]), Consumed(table.name, units)  # type: ignore[return-value]
        return orjson.loads(stored[0]), Consumed(table.name, units)

    def update(
        self,
        table_name: str,
        key: Item,
        update: BoundUpdate | None,
        condition: Condition | None = None,
        return_old_on_fail: bool = False,
    ) -> UpdateResult:
        """UpdateItem: read, check the condition, apply the update, store; one transaction."""
        action = prepare_update(self._tables.get(table_name), key, update, condition, return_old_on_fail)
        old, new, effects = self._execute(action)
        return UpdateResult(old, new, write_capacity(action, old, new, effects), effects.collection_bytes)
