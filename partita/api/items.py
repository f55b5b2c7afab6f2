"""Single-item operations: PutItem, GetItem, DeleteItem.

Each handler validates what DynamoDB validates before the table lookup
(values, expressions, sizes), calls the engine, and shapes the answer.
"""

from __future__ import annotations

from typing import Any

from ..engine.engine import Engine
from ..engine.expressions import project
from ..engine.items import Condition
from ..engine.values import item_size, normalize_item
from ..errors import ValidationException
from .expression_params import Expressions, read_expressions

MAX_ITEM_BYTES = 400 * 1024


def _condition(expressions: Expressions) -> Condition | None:
    parsed = expressions.get("ConditionExpression")
    if parsed is None:
        return None
    return Condition(parsed, expressions.names, expressions.values)


def _return_values(request: dict[str, Any]) -> bool:
    """PutItem and DeleteItem only know NONE and ALL_OLD."""
    mode = request.get("ReturnValues", "NONE")
    if mode not in ("NONE", "ALL_OLD"):
        raise ValidationException("ReturnValues can only be ALL_OLD or NONE")
    return mode == "ALL_OLD"


def _write_answer(request: dict[str, Any], result: Any, return_old: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if return_old and result.old is not None:
        out["Attributes"] = result.old
    consumed = result.consumed.document(request.get("ReturnConsumedCapacity"))
    if consumed is not None:
        out["ConsumedCapacity"] = consumed
    return out


def put_item(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    item = normalize_item(request["Item"])
    expressions = read_expressions(request, ("ConditionExpression",), ("Expected",))
    return_old = _return_values(request)
    if item_size(item) > MAX_ITEM_BYTES:
        raise ValidationException("Item size has exceeded the maximum allowed size")
    result = engine.items.put(
        request["TableName"],
        item,
        _condition(expressions),
        request.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD",
    )
    return _write_answer(request, result, return_old)


def delete_item(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    key = normalize_item(request["Key"])
    expressions = read_expressions(request, ("ConditionExpression",), ("Expected",))
    return_old = _return_values(request)
    result = engine.items.delete(
        request["TableName"],
        key,
        _condition(expressions),
        request.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD",
    )
    return _write_answer(request, result, return_old)


def get_item(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    key = normalize_item(request["Key"])
    expressions = read_expressions(request, ("ProjectionExpression",), ("AttributesToGet",))
    item, consumed = engine.items.get(request["TableName"], key, bool(request.get("ConsistentRead")))
    out: dict[str, Any] = {}
    if item is not None:
        projection = expressions.get("ProjectionExpression")
        out["Item"] = item if projection is None else project(item, projection, expressions.names)
    document = consumed.document(request.get("ReturnConsumedCapacity"))
    if document is not None:
        out["ConsumedCapacity"] = document
    return out
