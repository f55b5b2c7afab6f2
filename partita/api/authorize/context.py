"""The condition keys a request carries: what a policy's Condition reads of it.

`context_of` computes, for one item operation on one table, the keys of
fine-grained access control that the caller wants: dynamodb:LeadingKeys
(the partition key values the request touches), dynamodb:Attributes (the
top-level attribute names it reads or writes), dynamodb:Select,
dynamodb:ReturnValues, dynamodb:ReturnConsumedCapacity. A Select the
request leaves out is SPECIFIC_ATTRIBUTES when it projects and
ALL_ATTRIBUTES otherwise (so that `StringEqualsIfExists dynamodb:Select
SPECIFIC_ATTRIBUTES` refuses an unprojected read, as DynamoDB's documented
attribute-level policy expects).

`Unknowable` marks values a request touches but cannot name: the partition
keys of a PartiQL SELECT that scans are every key of the table. The policy
evaluator (protocol/auth/policies.py) makes any condition on such a key
fail closed.
"""

from __future__ import annotations

import base64
from typing import Any

from ...engine.expressions import parse_condition, parse_projection, parse_update
from ...engine.expressions.ast import And, Compare, Path, Value
from ...engine.tables.schema import Table
from ...errors import DynamoDBError
from .rules import ATTRIBUTES, LEADING_KEYS, RETURN_CONSUMED_CAPACITY, RETURN_VALUES, SELECT

Context = dict[str, list[str]]


class Unknowable(list[str]):
    """A key's values that the request touches but cannot enumerate (an empty list of this class)."""


UNKNOWABLE = Unknowable()

READS = frozenset({"GetItem", "Query", "Scan", "BatchGetItem", "TransactGetItems"})


class All:
    """Every condition key (a table's resource policy may read any)."""

    def __contains__(self, key: object) -> bool:
        return True


ALL = All()
Wanted = frozenset[str] | All


def common(operation: str, request: dict[str, Any], wanted: Wanted) -> Context:
    """The keys every item operation reads the same way: ReturnValues, ReturnConsumedCapacity, Select."""
    context: Context = {}
    for member, key in (("ReturnValues", RETURN_VALUES), ("ReturnConsumedCapacity", RETURN_CONSUMED_CAPACITY)):
        value = request.get(member)
        if isinstance(value, str) and key in wanted:
            context[key] = [value]
    if operation in READS and SELECT in wanted:
        select = request.get("Select")
        if not isinstance(select, str):
            projects = request.get("ProjectionExpression") or request.get("AttributesToGet")
            select = "SPECIFIC_ATTRIBUTES" if projects else "ALL_ATTRIBUTES"
        context[SELECT] = [select]
    return context


def context_of(operation: str, table: Table | None, request: dict[str, Any], wanted: Wanted) -> Context:
    """The keys of one GetItem, PutItem, UpdateItem, DeleteItem, Query or Scan request (or an
    element of a transaction, or a compiled PartiQL statement, shaped as one)."""
    context = common(operation, request, wanted)
    names = request.get("ExpressionAttributeNames") or {}
    attributes: list[str] = []
    leading: list[str] = []
    hash_name = table.hash_key.name if table is not None and LEADING_KEYS in wanted else None
    want_attributes = ATTRIBUTES in wanted
    if operation in ("GetItem", "DeleteItem", "UpdateItem"):
        key = request.get("Key") or {}
        if hash_name:
            _leading(leading, hash_name, key)
        if not want_attributes:
            pass
        elif operation == "GetItem":
            attributes = projected(request, names)
        else:
            attributes = list(key)
            if operation == "UpdateItem":
                attributes += _updated(request, names)
    elif operation == "PutItem":
        item = request.get("Item") or {}
        if want_attributes:
            attributes = list(item)
        if hash_name:
            _leading(leading, hash_name, item)
    elif operation in ("Query", "Scan"):
        if want_attributes:
            attributes = projected(request, names)
        if operation == "Query" and hash_name and table is not None:
            _leading_of_query(leading, table, request, names)
    if leading:
        context[LEADING_KEYS] = leading
    if attributes:
        context[ATTRIBUTES] = unique(attributes)
    return context


def batch_context(operation: str, table: Table | None, body: Any, request: dict[str, Any], wanted: Wanted) -> Context:
    """The keys of one table's part of a BatchGetItem or BatchWriteItem."""
    context = common(operation, request, wanted)
    hash_name = table.hash_key.name if table is not None else None
    leading: list[str] = []
    attributes: list[str] = []
    if operation == "BatchGetItem":
        for key in body.get("Keys") or ():
            if hash_name:
                _leading(leading, hash_name, key)
        attributes = projected(body, body.get("ExpressionAttributeNames") or {})
        if SELECT in context and (body.get("ProjectionExpression") or body.get("AttributesToGet")):
            context[SELECT] = ["SPECIFIC_ATTRIBUTES"]
    else:
        for write in body:
            put, delete = write.get("PutRequest"), write.get("DeleteRequest")
            values = (put or {}).get("Item") or (delete or {}).get("Key") or {}
            attributes += list(values)
            if hash_name:
                _leading(leading, hash_name, values)
    if leading and LEADING_KEYS in wanted:
        context[LEADING_KEYS] = unique(leading)
    if attributes and ATTRIBUTES in wanted:
        context[ATTRIBUTES] = unique(attributes)
    return context


def unique(values: list[str]) -> list[str]:
    return list(dict.fromkeys(values))


def key_string(value: Any) -> str | None:
    """A key value as IAM sees it: the string of an S or N, the base64 of a B."""
    if not isinstance(value, dict) or len(value) != 1:
        return None
    (kind, raw), = value.items()
    if kind in ("S", "N") and isinstance(raw, str):
        return raw
    if kind == "B":
        return raw if isinstance(raw, str) else base64.b64encode(raw).decode()
    return None


def _leading(out: list[str], hash_name: str, values: Any) -> None:
    if isinstance(values, dict):
        text = key_string(values.get(hash_name))
        if text is not None:
            out.append(text)


def _top_name(path: Path, names: dict[str, str]) -> str | None:
    first = path.elements[0] if path.elements else None
    if not isinstance(first, str):
        return None
    return names.get(first) if first.startswith("#") else first


def projected(request: dict[str, Any], names: dict[str, str]) -> list[str]:
    text = request.get("ProjectionExpression")
    if isinstance(text, str) and text:
        try:
            projection = parse_projection(text)
        except DynamoDBError:
            return []
        return [n for n in (_top_name(p, names) for p in projection.paths) if n is not None]
    return [n for n in request.get("AttributesToGet") or () if isinstance(n, str)]


def _updated(request: dict[str, Any], names: dict[str, str]) -> list[str]:
    text = request.get("UpdateExpression")
    if isinstance(text, str) and text:
        try:
            update = parse_update(text)
        except DynamoDBError:
            return []
        return [n for n in (_top_name(a.path, names) for a in update.actions) if n is not None]
    return list(request.get("AttributeUpdates") or ())


def _leading_of_query(out: list[str], table: Table, request: dict[str, Any], names: dict[str, str]) -> None:
    """The partition key value a Query names (its key condition's equality)."""
    hash_name = table.hash_key.name
    index_name = request.get("IndexName")
    if isinstance(index_name, str):
        index = table.index(index_name)
        if index is None:
            return
        hash_name = index.hash_key.name
    legacy = request.get("KeyConditions")
    if isinstance(legacy, dict):
        condition = legacy.get(hash_name)
        if isinstance(condition, dict):
            for value in condition.get("AttributeValueList") or ():
                text = key_string(value)
                if text is not None:
                    out.append(text)
        return
    text = request.get("KeyConditionExpression")
    if not isinstance(text, str):
        return
    try:
        parsed = parse_condition(text, "KeyConditionExpression")
    except DynamoDBError:
        return
    values = request.get("ExpressionAttributeValues") or {}
    stack: list[Any] = [parsed.root]
    while stack:
        node = stack.pop()
        if isinstance(node, And):
            stack += [node.left, node.right]
        elif isinstance(node, Compare) and node.op == "=":
            for path, value in ((node.left, node.right), (node.right, node.left)):
                if isinstance(path, Path) and isinstance(value, Value) and _top_name(path, names) == hash_name:
                    key = key_string(values.get(value.name))
                    if key is not None:
                        out.append(key)
