"""A parsed statement plus its parameters, compiled into the JSON operation's request.

SELECT becomes a Query when its WHERE fixes the partition key of the table
(or index) with `=` or `IN`, with the first usable sort-key term as the sort
key condition and everything else as the filter; otherwise a Scan with the
whole WHERE as filter. INSERT is a PutItem guarded by
attribute_not_exists(partition key); UPDATE an UpdateItem guarded by
attribute_exists(partition key) plus the WHERE's other terms; DELETE a
DeleteItem with the WHERE's other terms as its condition. The requests are
the same dicts a client would send, so the operations' rules apply as they are.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..engine.engine import Engine
from ..engine.tables.schema import Table
from ..errors import ValidationException
from . import ast
from .errors import KEY_EQUALITY
from .expressions import AttributeValue, Builder, conjoin, conjuncts, equality_value

# DynamoDB Local's words (its PartiQL translator); no recording of the service's.
ORDER_BY_NEEDS_WHERE = "Must have WHERE clause in the statement when using ORDER BY clause."
ORDER_BY_NEEDS_KEY = (
    "Must have at least one non-optional hash key condition in WHERE clause when using ORDER BY clause."
)
BATCH_SINGLE_ITEM = "Only single item select is supported"
TRANSACTION_KEY = "Select statements within ExecuteTransaction must specify the primary key in the where clause."
TRANSACTION_INDEX = "Reads on indices are not supported within transactions."
# Not on record anywhere: the service's words for these refusals.
ORDER_BY_SORT_KEY = "ORDER BY is supported only on the key attributes of the table or index"
MULTI_ATTRIBUTE_INDEX = "SELECT is not supported on an index with a multi-attribute key schema"
_RANGE_OPERATORS = ("=", "<", "<=", ">", ">=")


def _index_key_schema(table: Table, name: str) -> list[dict[str, Any]] | None:
    for kind in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes"):
        for description in table.description.get(kind, ()):
            if description["IndexName"] == name:
                return list(description["KeySchema"])
    return None


def _key_names(engine: Engine, target: ast.Target) -> tuple[Table, str, str | None]:
    table = engine.tables.get(target.table)
    if target.index is None:
        return table, table.hash_key.name, table.range_key.name if table.range_key else None
    schema = _index_key_schema(table, target.index)
    index = table.index(target.index)
    if schema is None or index is None:
        raise ValidationException(f"The table does not have the specified index: {target.index}")
    hashes = sum(1 for element in schema if element["KeyType"] == "HASH")
    if len(schema) > 2 or hashes > 1:
        raise ValidationException(MULTI_ATTRIBUTE_INDEX)
    return table, index.hash_key.name, index.range_key.name if index.range_key else None


# -- writes ---------------------------------------------------------------------------------


def _full_key(table: Table, where: ast.Expr | None, builder: Builder) -> tuple[dict[str, AttributeValue], list[ast.Expr]]:
    """The primary key fixed by the WHERE's top-level equalities, and the WHERE's other terms."""
    terms = conjuncts(where)
    key: dict[str, AttributeValue] = {}
    for attribute in table.key_names:
        for i, term in enumerate(terms):
            value = equality_value(term, attribute)
            if value is not None:
                key[attribute] = builder.bind(value)
                del terms[i]
                break
        else:
            raise ValidationException(KEY_EQUALITY)
    return key, terms


def _condition(builder: Builder, terms: list[ast.Expr], guard: str | None) -> str | None:
    rest = conjoin(terms)
    text = None if rest is None else builder.condition(rest)
    if guard is None:
        return text
    return guard if text is None else f"{guard} AND ({text})"


def compile_insert(engine: Engine, statement: ast.Insert, builder: Builder) -> dict[str, Any]:
    table = engine.tables.get(statement.target.table)
    if statement.target.index is not None:
        raise ValidationException(f"The table does not have the specified index: {statement.target.index}")
    value = builder.bind(statement.value)
    item = value.get("M")
    if item is None:
        # Recorded for a value that is not a tuple.
        raise ValidationException("Statement wasn't well formed, can't be processed: Expected a tuple in VALUE")
    guard = f"attribute_not_exists({builder.name(table.hash_key.name)})"
    return builder.attach({"TableName": table.name, "Item": item, "ConditionExpression": guard})


def compile_update(engine: Engine, statement: ast.Update, builder: Builder) -> dict[str, Any]:
    table = engine.tables.get(statement.target.table)
    key, rest = _full_key(table, statement.where, builder)
    sets: list[str] = []
    adds: list[str] = []
    deletes: list[str] = []
    for path, value in statement.sets:
        if isinstance(value, ast.Call) and value.name in ("set_add", "set_delete"):
            if len(value.args) != 2 or value.args[0] != path:
                # Not on record.
                raise ValidationException(f"{value.name} must take the updated attribute as its first argument")
            clause = f"{builder.path(path)} {builder.operand(value.args[1])}"
            (adds if value.name == "set_add" else deletes).append(clause)
        else:
            sets.append(f"{builder.path(path)} = {builder.set_value(value)}")
    removes = [builder.path(path) for path in statement.removes]
    parts = []
    for keyword, clauses in (("SET", sets), ("REMOVE", removes), ("ADD", adds), ("DELETE", deletes)):
        if clauses:
            parts.append(f"{keyword} {', '.join(clauses)}")
    guard = f"attribute_exists({builder.name(table.hash_key.name)})"
    request: dict[str, Any] = {
        "TableName": table.name,
        "Key": key,
        "UpdateExpression": " ".join(parts),
        "ConditionExpression": _condition(builder, rest, guard),
    }
    if statement.returning is not None:
        request["ReturnValues"] = statement.returning.return_values
    return builder.attach(request)


def compile_delete(engine: Engine, statement: ast.Delete, builder: Builder) -> dict[str, Any]:
    returning = statement.returning
    if returning is not None and (returning.scope, returning.timing) != ("ALL", "OLD"):
        raise ValidationException(
            f"Invalid returning clause: {returning.text()}. Only RETURNING ALL OLD * is allowed in DELETE statements."
        )
    table = engine.tables.get(statement.target.table)
    key, rest = _full_key(table, statement.where, builder)
    request: dict[str, Any] = {"TableName": table.name, "Key": key}
    condition = _condition(builder, rest, None)
    if condition is not None:
        request["ConditionExpression"] = condition
    if returning is not None:
        request["ReturnValues"] = "ALL_OLD"
    return builder.attach(request)


def compile_check(engine: Engine, statement: ast.Exists, builder: Builder) -> dict[str, Any]:
    """EXISTS(SELECT ...): a ConditionCheck that the item exists and the WHERE's other terms hold."""
    select = statement.select
    table = engine.tables.get(select.target.table)
    key, rest = _full_key(table, select.where, builder)
    guard = f"attribute_exists({builder.name(table.hash_key.name)})"
    condition = _condition(builder, rest, guard)
    return builder.attach({"TableName": table.name, "Key": key, "ConditionExpression": condition})


def compile_get(engine: Engine, statement: ast.Select, builder: Builder, *, transaction: bool) -> dict[str, Any]:
    """A SELECT of one item by its full key and nothing else (batches and transactions read only that way)."""
    refusal = TRANSACTION_KEY if transaction else BATCH_SINGLE_ITEM
    if statement.target.index is not None:
        raise ValidationException(TRANSACTION_INDEX if transaction else refusal)
    table = engine.tables.get(statement.target.table)
    if statement.order:
        _order_needs_key(statement)
    try:
        key, rest = _full_key(table, statement.where, builder)
    except ValidationException as error:
        if error.message != KEY_EQUALITY:
            raise
        raise ValidationException(refusal) from None
    if rest:
        raise ValidationException(refusal)
    request: dict[str, Any] = {"TableName": table.name, "Key": key}
    if statement.projection is not None:
        request["ProjectionExpression"] = ", ".join(builder.path(p) for p in statement.projection)
    return builder.attach(request)


# -- SELECT ---------------------------------------------------------------------------------


@dataclass(slots=True)
class SelectPlan:
    """One SELECT as a Query (one per partition key value) or a Scan."""

    request: dict[str, Any]
    hash_values: list[AttributeValue] = field(default_factory=list)  # empty for a Scan
    hash_placeholder: str = ""

    @property
    def is_query(self) -> bool:
        return bool(self.hash_values)


def _range_term(term: ast.Expr, name: str) -> bool:
    """Whether `term` can be a Query's sort key condition on `name`."""

    def is_key(node: ast.Expr) -> bool:
        return isinstance(node, ast.Path) and node.is_top and node.head == name

    values = ast.VALUE_NODES
    if isinstance(term, ast.Compare) and term.op in _RANGE_OPERATORS:
        return (is_key(term.left) and isinstance(term.right, values)) or (
            is_key(term.right) and isinstance(term.left, values)
        )
    if isinstance(term, ast.Between):
        return is_key(term.operand) and isinstance(term.low, values) and isinstance(term.high, values)
    if isinstance(term, ast.Call) and term.name == "begins_with" and len(term.args) == 2:
        return is_key(term.args[0]) and isinstance(term.args[1], values)
    return False


def _hash_values(term: ast.Expr, name: str, builder: Builder) -> list[AttributeValue] | None:
    value = equality_value(term, name)
    if value is not None:
        return [builder.bind(value)]
    if (
        isinstance(term, ast.In)
        and isinstance(term.operand, ast.Path)
        and term.operand.is_top
        and term.operand.head == name
        and all(isinstance(item, ast.VALUE_NODES) for item in term.items)
    ):
        out: list[AttributeValue] = []
        for item in term.items:
            bound = builder.bind(item)
            if bound not in out:
                out.append(bound)
        return out
    return None


def plan_select(engine: Engine, statement: ast.Select, builder: Builder) -> SelectPlan:
    table, hash_name, range_name = _key_names(engine, statement.target)
    request: dict[str, Any] = {"TableName": table.name}
    if statement.target.index is not None:
        request["IndexName"] = statement.target.index
    terms = conjuncts(statement.where)
    hash_values = None
    for i, term in enumerate(terms):
        hash_values = _hash_values(term, hash_name, builder)
        if hash_values is not None:
            del terms[i]
            break
    plan = SelectPlan(request)
    if hash_values is not None:
        plan.hash_values = hash_values
        plan.hash_placeholder = ":pk"
        key_condition = f"{builder.name(hash_name)} = :pk"
        if range_name is not None:
            for i, term in enumerate(terms):
                if _range_term(term, range_name):
                    key_condition += f" AND {builder.condition(term)}"
                    del terms[i]
                    break
        request["KeyConditionExpression"] = key_condition
        _order(statement, request, hash_name, range_name)
    elif statement.order:
        _order_needs_key(statement)
    rest = conjoin(terms)
    if rest is not None:
        request["FilterExpression"] = builder.condition(rest)
    if statement.projection is not None:
        request["ProjectionExpression"] = ", ".join(builder.path(p) for p in statement.projection)
    builder.attach(request)
    return plan


def _order_needs_key(statement: ast.Select) -> None:
    raise ValidationException(ORDER_BY_NEEDS_WHERE if statement.where is None else ORDER_BY_NEEDS_KEY)


def _order(statement: ast.Select, request: dict[str, Any], hash_name: str, range_name: str | None) -> None:
    for path, descending in statement.order:
        if not path.is_top or path.head not in (hash_name, range_name):
            raise ValidationException(ORDER_BY_SORT_KEY)
        if path.head == range_name and descending:
            request["ScanIndexForward"] = False
