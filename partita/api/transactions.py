"""TransactWriteItems and TransactGetItems: validate every action, then one engine call.

Three kinds of refusal, in this order (docs/decisions.md, "Batches and
transactions"):

1. A plain ValidationException or ResourceNotFoundException: first what
   the request alone shows (each action's values and expressions, the
   Put's size), for every action in order; then, action by action, the
   table and what its key names show (empty key values, updates of a key).
2. A key that does not fit its table's schema (a key attribute missing, of
   another type, or not a scalar; an index key of another type): the
   transaction is cancelled with that action's ValidationError, the first
   such action only (``engine.transactions.check_schemas``).
3. One item twice, more than 4 MB: a plain ValidationException again.

What depends on the items (a condition, an update that cannot apply, an
item collection over its limit) then cancels the transaction with one
reason per action, in the engine, inside the store transaction.

Capacity is DynamoDB's transactional charge: every unit doubled, per table,
index writes included; the document carries Write/ReadCapacityUnits beside
CapacityUnits as the service's transactional answers do.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from ..engine.capacity import Consumed
from ..engine.engine import Engine
from ..engine.expressions import project
from ..engine.items.actions import ActionKind, Condition, ItemAction
from ..engine.items.batch import KeyRead, sum_by_table
from ..engine.items.single import (
    check_item_size,
    prepare_check,
    prepare_delete,
    prepare_put,
    prepare_update,
)
from ..engine.items.transactions import (
    MAX_TRANSACTION_BYTES,
    TRANSACTION_TOO_LARGE,
    ClientToken,
    check_schemas,
)
from ..engine.items.updates import (
    BoundUpdate,
    bind_update,
    check_index_update_paths,
    check_key_updates,
)
from ..engine.items.writes import check_index_key_values
from ..engine.model.item_keys import check_key, check_key_values
from ..engine.model.sizes import item_size
from ..engine.model.values import normalize_item
from ..engine.tables.schema import Table
from ..errors import ValidationException
from .batch import collection_metrics, deserialized_first
from .expression_params import Expressions, read_expressions

Item = dict[str, dict[str, Any]]

DUPLICATE_ITEM = "Transaction request cannot include multiple operations on one item"
# moto's wording; the service's own for this case is not on record.
NOT_ONE_ACTION = "TransactItems can only contain one of Check, Put, Update or Delete"
_ACTION_NAMES = ("ConditionCheck", "Put", "Delete", "Update")
_EXPRESSIONS = {
    "ConditionCheck": ("ConditionExpression",),
    "Put": ("ConditionExpression",),
    "Delete": ("ConditionExpression",),
    "Update": ("UpdateExpression", "ConditionExpression"),
}
# Request members that do not make a repeated token a different request: the
# documentation has a repeat differ in its ConsumedCapacity.
_NOT_IDEMPOTENCY_RELEVANT = ("ClientRequestToken", "ReturnConsumedCapacity")


def _condition(expressions: Expressions) -> Condition | None:
    parsed = expressions.get("ConditionExpression")
    return None if parsed is None else Condition(parsed, expressions.names, expressions.values)


@dataclass(slots=True)
class _Planned:
    """One write action after step 1: everything the request alone lets us refuse was refused."""

    kind: str
    table: Table
    #: The Put's item, or the other actions' Key.
    value: Item
    expressions: Expressions
    return_old_on_fail: bool
    size: int = 0
    update: BoundUpdate | None = None

    def prepare(self) -> ItemAction:
        """Step 2: the checks against the table's key schema (each failure is a cancellation reason)."""
        condition = _condition(self.expressions)
        if self.kind == "Put":
            return prepare_put(self.table, self.value, condition, self.return_old_on_fail, self.size)
        if self.kind == "Delete":
            return prepare_delete(self.table, self.value, condition, self.return_old_on_fail)
        if self.kind == "Update":
            return prepare_update(self.table, self.value, self.update, condition, self.return_old_on_fail)
        assert condition is not None, "ConditionExpression is required by the request shape"
        return prepare_check(self.table, self.value, condition, self.return_old_on_fail)


@dataclass(slots=True)
class _Read:
    """One write action as the request alone shows it: values, expressions and the Put's size checked."""

    kind: str
    body: dict[str, Any]
    #: The Put's item, or the other actions' Key.
    value: Item
    expressions: Expressions
    size: int
    update: BoundUpdate | None


def _read(entry: dict[str, Any]) -> _Read:
    """Step 1a for one action: what needs no table (a plain ValidationException).

    ExpressionAttributeValues may nest one level past the item limit here
    (recorded: TransactWriteItems accepts a 32-level value UpdateItem
    refuses; writing it into an item is then the action's cancellation).
    """
    kind, body = _action_body(entry)
    value = normalize_item(body["Item"] if kind == "Put" else body["Key"])
    expressions = read_expressions(body, _EXPRESSIONS[kind], values_one_level_deeper=True)
    size = check_item_size(value) if kind == "Put" else 0
    update = None
    if kind == "Update":
        update = bind_update(expressions.get("UpdateExpression"), expressions.names, expressions.values,
                             deep_values=expressions.deep_values)
    return _Read(kind, body, value, expressions, size, update)


def _plan(engine: Engine, read: _Read) -> _Planned:
    """Step 1b for one action: its table and what the table's key names show (ResourceNotFound, ValidationException)."""
    kind, body, value, update = read.kind, read.body, read.value, read.update
    table = engine.tables.get(body["TableName"])
    check_key_values(table, value)
    if kind == "Put":
        check_index_key_values(table, value)
    elif update is not None:
        check_key_updates(table, update)
        check_index_update_paths(table, update)
    on_fail = body.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD"
    return _Planned(kind, table, value, read.expressions, on_fail, read.size, update)


def _action_body(entry: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The one action of a TransactItems entry; zero or several is DynamoDB's ValidationException."""
    present = [name for name in _ACTION_NAMES if entry.get(name) is not None]
    if len(present) != 1:
        raise ValidationException(NOT_ONE_ACTION)
    return present[0], entry[present[0]]


def _write_maps(entries: list[dict[str, Any]]) -> Iterator[Any]:
    for entry in entries:
        for name in _ACTION_NAMES:
            body = entry.get(name)
            if body is not None:
                yield body.get("Item")
                yield body.get("Key")
                yield body.get("ExpressionAttributeValues")


def _write_actions(engine: Engine, entries: list[dict[str, Any]]) -> list[ItemAction]:
    """Every action prepared, in order (steps 1 to 3 of the module's docstring).

    Every action's request-only checks run before any table is looked up: on
    DynamoDB a later action's malformed or unused expression part beats an
    earlier action's missing table (recorded in us-east-1 and eu-west-2).
    """
    reads = [_read(entry) for entry in entries]
    planned = [_plan(engine, read) for read in reads]
    actions = check_schemas([plan.prepare for plan in planned])
    rows = set()
    total = 0
    for action, plan in zip(actions, planned, strict=True):
        if action.row in rows:
            raise ValidationException(DUPLICATE_ITEM)
        rows.add(action.row)
        measured = action.new_size if action.item is not None else item_size(action.key)
        total += measured + item_size(plan.expressions.values)
    if total > MAX_TRANSACTION_BYTES:
        raise ValidationException(TRANSACTION_TOO_LARGE)
    return actions


def _client_token(request: dict[str, Any]) -> ClientToken | None:
    """The token with a digest of everything in the request that makes it "the same request"."""
    token = request.get("ClientRequestToken")
    if token is None:
        return None
    relevant = {k: v for k, v in request.items() if k not in _NOT_IDEMPOTENCY_RELEVANT}
    digest = hashlib.sha256(orjson.dumps(relevant, option=orjson.OPT_SORT_KEYS)).hexdigest()
    return ClientToken(token, digest)


def transactional_documents(
    parts: list[Consumed], mode: str | None, units_member: str
) -> list[dict[str, Any]] | None:
    """ConsumedCapacity of a transaction: per table, every unit doubled, with Read/WriteCapacityUnits."""
    if mode not in ("TOTAL", "INDEXES"):
        return None
    out = []
    for total in sum_by_table(parts):
        doubled = Consumed(
            total.table_name,
            2 * total.table,
            {name: 2 * units for name, units in total.local_indexes.items()},
            {name: 2 * units for name, units in total.global_indexes.items()},
            total.vector_indexes,  # bytes replicated to the index, not doubled (our reading)
        )
        doc = doubled.document(mode)
        assert doc is not None
        doc[units_member] = doc["CapacityUnits"]
        if "Table" in doc:
            doc["Table"][units_member] = doc["Table"]["CapacityUnits"]
        for kind in ("LocalSecondaryIndexes", "GlobalSecondaryIndexes"):
            for entry in doc.get(kind, {}).values():
                entry[units_member] = entry["CapacityUnits"]
        out.append(doc)
    return out


def transact_write_items(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    entries = request["TransactItems"]
    with deserialized_first(lambda: _write_maps(entries)):
        actions = _write_actions(engine, entries)
    if engine.global_tables is not None:
        from ..engine.regions.strong import (
            refuse_transaction,  # only on a server of several regions
        )
        refuse_transaction(action.table for action in actions)
    result = engine.transactions.write(actions, _client_token(request))
    out: dict[str, Any] = {}
    units = "ReadCapacityUnits" if result.replayed else "WriteCapacityUnits"
    consumed = transactional_documents(result.consumed, request.get("ReturnConsumedCapacity"), units)
    if consumed is not None:
        out["ConsumedCapacity"] = consumed
    if request.get("ReturnItemCollectionMetrics") == "SIZE":
        written = (
            (action, size)
            for action, size in zip(actions, result.collection_bytes, strict=True)
            if action.kind is not ActionKind.CHECK
        )
        metrics = collection_metrics(written)
        if metrics:
            out["ItemCollectionMetrics"] = metrics
    return out


# -- TransactGetItems -----------------------------------------------------------------------


def _get_maps(entries: list[dict[str, Any]]) -> Iterator[Any]:
    for entry in entries:
        yield entry["Get"].get("Key")


def transact_get_items(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    entries = request["TransactItems"]
    reads = []
    projections: list[Callable[[Item], Item] | None] = []
    with deserialized_first(lambda: _get_maps(entries)):
        # As for writes: every Get's key values and projection before any table.
        keys = []
        for entry in entries:
            get = entry["Get"]
            keys.append(normalize_item(get["Key"]))
            projections.append(_projector(read_expressions(get, ("ProjectionExpression",))))
        planned = []
        for entry, key in zip(entries, keys, strict=True):
            table = engine.tables.get(entry["Get"]["TableName"])
            check_key_values(table, key)
            planned.append((table, key))
        check_schemas([_key_check(table, key) for table, key in planned])
        if engine.global_tables is not None:
            from ..engine.regions.strong import (
                refuse_transaction,  # only on a server of several regions
            )
            refuse_transaction(table for table, _ in planned)
        rows = set()
        for table, key in planned:
            row = table.row_key(key)
            if row in rows:
                raise ValidationException(DUPLICATE_ITEM)
            rows.add(row)
            reads.append(KeyRead(table, key, True))
    result = engine.transactions.get(reads)
    responses: list[dict[str, Any]] = []
    for item, projector in zip(result.items, projections, strict=True):
        if item is not None and projector is not None:
            item = projector(item)
        # A projection that matches nothing on a present item leaves no Item, as for a
        # missing one (recorded: Ketlark/dynamodb-conformance tier2 transactGet).
        responses.append({"Item": item} if item else {})
    out: dict[str, Any] = {"Responses": responses}
    documents = transactional_documents(result.consumed, request.get("ReturnConsumedCapacity"), "ReadCapacityUnits")
    if documents is not None:
        out["ConsumedCapacity"] = documents
    return out


def _key_check(table: Table, key: Item) -> Callable[[], None]:
    return lambda: check_key(table, key)


def _projector(expressions: Expressions) -> Callable[[Item], Item] | None:
    projection = expressions.get("ProjectionExpression")
    if projection is None:
        return None
    names = expressions.names
    return lambda item: project(item, projection, names)
