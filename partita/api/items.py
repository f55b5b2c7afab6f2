"""Single-item operations: PutItem, GetItem, DeleteItem, UpdateItem.

Each handler validates what DynamoDB validates before the table lookup
(values, expressions, sizes), calls the engine, and shapes the answer.
The legacy parameters (`Expected` + `ConditionalOperator`,
`AttributeUpdates`, `AttributesToGet`) are translated into the same
expression trees, so the engine sees one form.
"""

from __future__ import annotations

from typing import Any

from ..engine.engine import Engine
from ..engine.expressions import project
from ..engine.expressions.legacy import (
    check_conditional_operator,
    translate_attribute_updates,
    translate_attributes_to_get,
    translate_expected,
)
from ..engine.items.actions import Condition, UpdateResult
from ..engine.items.single import check_item_size
from ..engine.items.updates import LEGACY_WRONG_TYPE, BoundUpdate, bind_update, updated_attributes
from ..engine.model.values import normalize_item
from ..engine.tables.schema import Table
from ..errors import DynamoDBError, RequestFault, ValueFault
from .expression_params import CURRENT, ENVELOPED, Expressions, read_expressions
from .layers import ENVELOPED_FAULTS, current_wording, enveloped

# Non-expression parameters in the order DynamoDB lists them in its mixing message.
_CONDITION_LEGACY = ("Expected", "ConditionalOperator")
_UPDATE_LEGACY = ("AttributeUpdates", "Expected", "ConditionalOperator")

Item = dict[str, dict[str, Any]]


def _read_conditional(
    request: dict[str, Any], expression_params: tuple[str, ...], legacy_params: tuple[str, ...]
) -> Expressions:
    """The request's expressions, after the mixing and ConditionalOperator rules."""
    expressions = read_expressions(request, expression_params, legacy_params, layer=ENVELOPED)
    check_conditional_operator(request, ("Expected",))
    return expressions


def _condition(request: dict[str, Any], expressions: Expressions) -> Condition | None:
    """ConditionExpression, or the legacy Expected translated into the same tree."""
    parsed = expressions.get("ConditionExpression")
    if parsed is not None:
        return Condition(parsed, expressions.names, expressions.values)
    legacy = translate_expected(request.get("Expected"), request.get("ConditionalOperator"))
    if legacy is None:
        return None
    return Condition(legacy.condition, legacy.names, legacy.values)


def _return_values(request: dict[str, Any]) -> bool:
    """PutItem and DeleteItem only know NONE and ALL_OLD."""
    mode = request.get("ReturnValues", "NONE")
    if mode not in ("NONE", "ALL_OLD"):
        raise RequestFault("ReturnValues can only be ALL_OLD or NONE")
    return mode == "ALL_OLD"


def _add_metrics(out: dict[str, Any], engine: Engine, request: dict[str, Any], key: Item, result: Any) -> None:
    """ConsumedCapacity and ItemCollectionMetrics, when asked for (metrics only exist with a local index)."""
    consumed = result.consumed.document(request.get("ReturnConsumedCapacity"))
    if consumed is not None:
        out["ConsumedCapacity"] = consumed
    if request.get("ReturnItemCollectionMetrics") == "SIZE" and result.collection_bytes is not None:
        table = engine.tables.get(request["TableName"])
        out["ItemCollectionMetrics"] = item_collection_metrics(table, key, result.collection_bytes)


def item_collection_metrics(table: Table, key: Item, collection_bytes: int) -> dict[str, Any]:
    """One ItemCollectionMetrics entry: the collection's partition key and its size range in GB."""
    hash_name = table.hash_key.name
    lower = float(collection_bytes // 1024**3)
    return {"ItemCollectionKey": {hash_name: key[hash_name]}, "SizeEstimateRangeGB": [lower, lower + 1.0]}


def _write_answer(
    engine: Engine, request: dict[str, Any], key: Item, result: Any, return_old: bool
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if return_old and result.old is not None:
        out["Attributes"] = result.old
    _add_metrics(out, engine, request, key, result)
    return out


def put_item(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    try:
        item = normalize_item(request["Item"])
        expressions = _read_conditional(request, ("ConditionExpression",), _CONDITION_LEGACY)
        condition = _condition(request, expressions)
        return_old = _return_values(request)
    except ENVELOPED_FAULTS as fault:
        raise enveloped(fault) from None
    size = check_item_size(item)
    result = engine.items.put(
        request["TableName"],
        item,
        condition,
        request.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD",
        size,
    )
    return _write_answer(engine, request, item, result, return_old)


def delete_item(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    try:
        key = normalize_item(request["Key"])
        expressions = _read_conditional(request, ("ConditionExpression",), _CONDITION_LEGACY)
        condition = _condition(request, expressions)
        return_old = _return_values(request)
    except ENVELOPED_FAULTS as fault:
        raise enveloped(fault) from None
    result = engine.items.delete(
        request["TableName"],
        key,
        condition,
        request.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD",
    )
    return _write_answer(engine, request, key, result, return_old)


def get_item(engine: Engine, request: dict[str, Any], as_stored: bool = False) -> dict[str, Any]:
    """GetItem; `as_stored`: the answer only goes to orjson (see `get_item_operation`)."""
    try:
        key = normalize_item(request["Key"])
        expressions = read_expressions(request, ("ProjectionExpression",), ("AttributesToGet",), layer=CURRENT)
    except ValueFault as fault:
        raise current_wording(fault) from None
    legacy = translate_attributes_to_get(request.get("AttributesToGet"))
    projection = expressions.get("ProjectionExpression")
    item, consumed = engine.items.get(
        request["TableName"], key, bool(request.get("ConsistentRead")),
        as_stored and projection is None and legacy is None,
    )
    out: dict[str, Any] = {}
    if item is not None:
        if projection is not None:
            item = project(item, projection, expressions.names)
        elif legacy is not None:
            item = project(item, legacy.projection, legacy.names)
        out["Item"] = item
    document = consumed.document(request.get("ReturnConsumedCapacity"))
    if document is not None:
        out["ConsumedCapacity"] = document
    return out


def read_ahead(engine: Engine, requests: list[Any]) -> None:
    """Hint the engine at a loop turn's GetItems, about to run (protocol/server.py, `answer_pending`).

    Before any validation: a request whose table and key this cannot read is
    left out, and meets its error when it runs.
    """
    gets = []
    for request in requests:
        if request.__class__ is not dict:
            continue
        table_name = request.get("TableName")
        if table_name.__class__ is not str:
            continue
        try:
            gets.append((table_name, normalize_item(request.get("Key")), bool(request.get("ConsistentRead"))))
        except DynamoDBError:
            continue
    engine.items.read_ahead(gets)


def get_item_operation(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    """The JSON API's GetItem: its answer only goes to orjson, so a whole item is sent as stored.

    The stored value of an item is its canonical JSON (as for Query's pages:
    `PageSpec.as_stored`), so it goes into the answer as an `orjson.Fragment`
    instead of being decoded and encoded again. In-process callers that read
    the item (the console) call `get_item`.
    """
    return get_item(engine, request, as_stored=True)


def _update(request: dict[str, Any], expressions: Expressions) -> BoundUpdate | None:
    """UpdateExpression, or the legacy AttributeUpdates translated into the same tree."""
    parsed = expressions.get("UpdateExpression")
    if parsed is not None:
        return bind_update(parsed, expressions.names, expressions.values)
    legacy = translate_attribute_updates(request.get("AttributeUpdates"))
    if legacy is None:
        return None
    return bind_update(legacy.update, legacy.names, legacy.values, LEGACY_WRONG_TYPE)


def _update_attributes(mode: str, result: UpdateResult, update: BoundUpdate | None) -> dict[str, Any]:
    """What ReturnValues asks for; empty when there is nothing to return."""
    if mode == "ALL_OLD":
        return result.old or {}
    if mode == "ALL_NEW":
        return result.new or {}
    paths = () if update is None else update.paths
    if mode == "UPDATED_OLD":
        return updated_attributes(result.old, paths)
    if mode == "UPDATED_NEW":
        return updated_attributes(result.new, paths)
    return {}


def update_item(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    try:
        key = normalize_item(request["Key"])
        expressions = _read_conditional(
            request, ("UpdateExpression", "ConditionExpression"), _UPDATE_LEGACY
        )
        update = _update(request, expressions)
        condition = _condition(request, expressions)
    except ENVELOPED_FAULTS as fault:
        raise enveloped(fault) from None
    result = engine.items.update(
        request["TableName"],
        key,
        update,
        condition,
        request.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD",
    )
    out: dict[str, Any] = {}
    attributes = _update_attributes(request.get("ReturnValues", "NONE"), result, update)
    if attributes:
        out["Attributes"] = attributes
    _add_metrics(out, engine, request, key, result)
    return out
