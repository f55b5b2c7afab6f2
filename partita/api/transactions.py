"""TransactWriteItems and TransactGetItems: validate every action, then one engine call.

What DynamoDB can reject without reading an item (the action's shape, its
values and expressions, the table, the key, the same item twice, the 4 MB
aggregate) is a plain ValidationException or ResourceNotFoundException and
nothing is written. What depends on the items (a condition, an update that
cannot apply, an item collection over its limit) cancels the transaction
with one reason per action: that happens in the engine, inside the store
transaction.

Capacity is DynamoDB's transactional charge: every unit doubled, per table,
index writes included; the document carries Write/ReadCapacityUnits beside
CapacityUnits as the service's transactional answers do.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from typing import Any

import orjson

from ..engine.capacity import Consumed
from ..engine.engine import Engine
from ..engine.expressions import project
from ..engine.items.actions import ActionKind, Condition, ItemAction
from ..engine.items.batch import KeyRead, sum_by_table
from ..engine.items.single import (
    check_action_key,
    check_item_size,
    check_listed_key,
    prepare_check,
    prepare_delete,
    prepare_put,
    prepare_update,
)
from ..engine.items.transactions import MAX_TRANSACTION_BYTES, TRANSACTION_TOO_LARGE, ClientToken
from ..engine.items.updates import bind_update
from ..engine.model.sizes import item_size
from ..engine.model.values import normalize_item
from ..errors import ValidationException
from .batch import collection_metrics, deserialized_first
from .expression_params import Expressions, read_expressions

Item = dict[str, dict[str, Any]]

DUPLICATE_ITEM = "Transaction request cannot include multiple operations on one item"
# moto's wording; the service's own for this case is not on record.
NOT_ONE_ACTION = "TransactItems can only contain one of Check, Put, Update or Delete"
_ACTION_NAMES = ("ConditionCheck", "Put", "Delete", "Update")
# Request members that do not make a repeated token a different request: the
# documentation has a repeat differ in its ConsumedCapacity.
_NOT_IDEMPOTENCY_RELEVANT = ("ClientRequestToken", "ReturnConsumedCapacity")


def _condition(expressions: Expressions) -> Condition | None:
    parsed = expressions.get("ConditionExpression")
    return None if parsed is None else Condition(parsed, expressions.names, expressions.values)


def _on_fail(body: dict[str, Any]) -> bool:
    return body.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD"


def _put(engine: Engine, body: dict[str, Any]) -> tuple[ItemAction, Expressions]:
    item = normalize_item(body["Item"])
    expressions = read_expressions(body, ("ConditionExpression",))
    size = check_item_size(item)
    table = engine.tables.get(body["TableName"])
    check_listed_key(table, item)
    return prepare_put(table, item, _condition(expressions), _on_fail(body), size), expressions


def _delete(engine: Engine, body: dict[str, Any]) -> tuple[ItemAction, Expressions]:
    key = normalize_item(body["Key"])
    expressions = read_expressions(body, ("ConditionExpression",))
    table = engine.tables.get(body["TableName"])
    check_action_key(table, key)
    return prepare_delete(table, key, _condition(expressions), _on_fail(body)), expressions


def _check(engine: Engine, body: dict[str, Any]) -> tuple[ItemAction, Expressions]:
    key = normalize_item(body["Key"])
    expressions = read_expressions(body, ("ConditionExpression",))
    condition = _condition(expressions)
    assert condition is not None, "ConditionExpression is required by the request shape"
    table = engine.tables.get(body["TableName"])
    check_action_key(table, key)
    return prepare_check(table, key, condition, _on_fail(body)), expressions


def _update(engine: Engine, body: dict[str, Any]) -> tuple[ItemAction, Expressions]:
    key = normalize_item(body["Key"])
    expressions = read_expressions(body, ("UpdateExpression", "ConditionExpression"))
    update = bind_update(expressions.get("UpdateExpression"), expressions.names, expressions.values)
    table = engine.tables.get(body["TableName"])
    check_action_key(table, key)
    return prepare_update(table, key, update, _condition(expressions), _on_fail(body)), expressions


_BUILDERS: dict[str, Callable[[Engine, dict[str, Any]], tuple[ItemAction, Expressions]]] = {
    "ConditionCheck": _check,
    "Put": _put,
    "Delete": _delete,
    "Update": _update,
}


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
    """Every action prepared, in order; one item twice, or more than 4 MB, is rejected."""
    actions = []
    rows = set()
    total = 0
    for entry in entries:
        name, body = _action_body(entry)
        action, expressions = _BUILDERS[name](engine, body)
        if action.row in rows:
            raise ValidationException(DUPLICATE_ITEM)
        rows.add(action.row)
        measured = action.new_size if action.item is not None else item_size(action.key)
        total += measured + item_size(expressions.values)
        actions.append(action)
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
        rows = set()
        for entry in entries:
            get = entry["Get"]
            key = normalize_item(get["Key"])
            expressions = read_expressions(get, ("ProjectionExpression",))
            table = engine.tables.get(get["TableName"])
            check_action_key(table, key)
            row = table.row_key(key)
            if row in rows:
                raise ValidationException(DUPLICATE_ITEM)
            rows.add(row)
            reads.append(KeyRead(table, key, True))
            projections.append(_projector(expressions))
    result = engine.transactions.get(reads)
    responses = []
    for item, projector in zip(result.items, projections, strict=True):
        if item is None:
            responses.append({})
        else:
            responses.append({"Item": item if projector is None else projector(item)})
    out: dict[str, Any] = {"Responses": responses}
    documents = transactional_documents(result.consumed, request.get("ReturnConsumedCapacity"), "ReadCapacityUnits")
    if documents is not None:
        out["ConsumedCapacity"] = documents
    return out


def _projector(expressions: Expressions) -> Callable[[Item], Item] | None:
    projection = expressions.get("ProjectionExpression")
    if projection is None:
        return None
    names = expressions.names
    return lambda item: project(item, projection, names)
