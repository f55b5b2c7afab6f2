"""A parsed statement plus its parameters, compiled into the JSON operation's request.

SELECT becomes a Query when its WHERE fixes the partition key of the table
(or index) with `=` or `IN`, with the first usable sort-key term as the sort
key condition and everything else as the filter; otherwise a Scan with the
whole WHERE as filter. INSERT is a PutItem guarded by
attribute_not_exists(partition key); UPDATE an UpdateItem guarded by
attribute_exists(partition key) plus the WHERE's other terms; DELETE a
DeleteItem with the WHERE's other terms as its condition. The requests are
the same dicts a client would send, so the operations' rules apply as they are.

A DELETE's other terms are guarded by `attribute_not_exists(partition key) OR`:
DynamoDB deletes nothing and succeeds when the key holds no item, and fails
the condition only for an item that is there. Index qualifiers: a SELECT reads
the index (refusing what the index cannot serve, as the service does), UPDATE
and DELETE refuse it, and INSERT cannot name one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..engine.engine import Engine
from ..engine.tables.schema import Index, Table
from ..errors import ValidationException
from . import ast
from .checks import attribute_roots, java_hash_set_order
from .errors import (
    BATCH_KEY,
    EMPTY_COMPONENT,
    EXISTS_CONDITION,
    GSI_CONSISTENT,
    INDEX_WRITE,
    INSERT_INDEX,
    INVALID,
    KEY_EQUALITY,
    MULTI_ATTRIBUTE_INDEX,
    NO_INDEX,
    PATH_COMPONENTS,
    TRANSACTION_INDEX,
    TRANSACTION_KEY,
    VECTOR_INDEX,
)
from .expressions import AttributeValue, Builder, conjoin, conjuncts, equality_value

# DynamoDB Local's words (its PartiQL translator); no recording of the service's.
ORDER_BY_NEEDS_WHERE = "Must have WHERE clause in the statement when using ORDER BY clause."
ORDER_BY_NEEDS_KEY = (
    "Must have at least one non-optional hash key condition in WHERE clause when using ORDER BY clause."
)
# DynamoDB Local's words for an index-qualified EXISTS; no recording of the service's.
TRANSACTION_INDEX_CHECK = "Operations on indices are not supported in transactions"
# Not on record anywhere: the service's words for these refusals.
ORDER_BY_SORT_KEY = "ORDER BY is supported only on the key attributes of the table or index"
_RANGE_OPERATORS = ("=", "<", "<=", ">", ">=")


# -- the FROM source --------------------------------------------------------------------------


def _check_path(target: ast.Target) -> None:
    """The FROM path's own rules, answered before the table is looked up."""
    if target.empty:
        raise ValidationException(EMPTY_COMPONENT)
    if target.components > 2:
        raise ValidationException(PATH_COMPONENTS)


def write_table(engine: Engine, target: ast.Target) -> Table:
    """The table an UPDATE or DELETE writes: an index qualifier is refused before the table is looked up."""
    _check_path(target)
    if target.index is not None:
        raise ValidationException(INDEX_WRITE)
    return engine.tables.get(target.table)


def _index(table: Table, name: str) -> Index:
    """The index a qualified SELECT reads. The service's message does not name it (Query's and Scan's do)."""
    index = table.index(name)
    if index is None:
        if any(v.name == name for v in table.vector_indexes):
            # Recorded for `SELECT * FROM "t"."vix"` (nubo-db/dynamodb-conformance, 2026-08-11);
            # that a WHERE on the key gets the same answer is our reading.
            raise ValidationException(VECTOR_INDEX)
        raise ValidationException(NO_INDEX)
    if index.multi:
        raise ValidationException(MULTI_ATTRIBUTE_INDEX)
    return index


def _held(table: Table, index: Index) -> frozenset[str] | None:
    """The attributes an index's entries hold; None when they hold every attribute."""
    if index.projection == "ALL":
        return None
    held = set(table.key_names) | set(index.key_names)
    if index.projection == "INCLUDE":
        held |= index.non_key
    return frozenset(held)


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


def _item(statement: ast.Insert, builder: Builder) -> dict[str, AttributeValue]:
    """The INSERT's tuple as an item. Each attribute's value is bound as a value of its own
    ("root" in the service's messages), as the recorded messages name them."""
    value = statement.value
    if isinstance(value, ast.MapExpr):
        item: dict[str, AttributeValue] = {}
        for key, member in value.pairs:
            if not (isinstance(key, ast.Lit) and key.kind == "S"):
                return builder.bind(value)["M"]  # refuses the key, as for any tuple
            item[key.text] = builder.bind(member)
        return item
    bound = builder.bind(value).get("M")
    if bound is None:
        # Recorded for a value that is not a tuple.
        raise ValidationException("Statement wasn't well formed, can't be processed: Expected a tuple in VALUE")
    return bound


def compile_insert(engine: Engine, statement: ast.Insert, builder: Builder) -> dict[str, Any]:
    if statement.target.components > 1:
        raise ValidationException(INSERT_INDEX)
    table = engine.tables.get(statement.target.table)
    item = _item(statement, builder)
    guard = f"attribute_not_exists({builder.name(table.hash_key.name)})"
    return builder.attach({"TableName": table.name, "Item": item, "ConditionExpression": guard})


def _check_set_call(path: ast.Path, call: ast.Call, builder: Builder) -> None:
    """set_add/set_delete's own rules, in the order the service checks them (recorded in 2026:
    the count, then the first argument, then a second that is a constant but no set, the
    last placed at the first argument)."""
    name = call.name.upper()
    if len(call.args) != 2:
        raise ValidationException(f"{name} must have exactly two arguments at {call.at}")
    if call.args[0] != path:
        raise ValidationException(f"The first argument to {name} must equal the assignment value at {call.at}")
    second = call.args[1]
    if isinstance(second, ast.VALUE_NODES) and not isinstance(second, ast.BagExpr | ast.Missing | ast.TooDeep):
        if next(iter(builder.bind(second))) not in ("SS", "NS", "BS"):
            raise ValidationException(f"The second argument to {name} must be a value with type SET at {call.arg_at[0]}")


def compile_update(engine: Engine, statement: ast.Update, builder: Builder) -> dict[str, Any]:
    table = write_table(engine, statement.target)
    key, rest = _full_key(table, statement.where, builder)
    sets: list[str] = []
    adds: list[str] = []
    deletes: list[str] = []
    for path, value in statement.sets:
        if isinstance(value, ast.Call) and value.name in ("set_add", "set_delete"):
            _check_set_call(path, value, builder)
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
    table = write_table(engine, statement.target)
    key, rest = _full_key(table, statement.where, builder)
    request: dict[str, Any] = {"TableName": table.name, "Key": key}
    condition = _condition(builder, rest, None)
    if condition is not None:
        # Documented: no item under the key is a success with nothing deleted; only an
        # item that is there can fail the WHERE's other terms.
        absent = f"attribute_not_exists({builder.name(table.hash_key.name)})"
        request["ConditionExpression"] = f"{absent} OR ({condition})"
    if returning is not None:
        request["ReturnValues"] = "ALL_OLD"
    return builder.attach(request)


def compile_check(engine: Engine, statement: ast.Exists, builder: Builder) -> dict[str, Any]:
    """EXISTS(SELECT ...): a ConditionCheck that the item exists and the WHERE's other terms hold."""
    select = statement.select
    _check_path(select.target)
    if select.target.index is not None:
        raise ValidationException(TRANSACTION_INDEX_CHECK)
    table = engine.tables.get(select.target.table)
    _check_projection(select)
    key, rest = _full_key(table, select.where, builder)
    if not rest:
        # Recorded in 2026 (paritysuite partiqlFunctions): a bare key read checks nothing.
        raise ValidationException(EXISTS_CONDITION)
    guard = f"attribute_exists({builder.name(table.hash_key.name)})"
    condition = _condition(builder, rest, guard)
    return builder.attach({"TableName": table.name, "Key": key, "ConditionExpression": condition})


def _key_only(table: Table, where: ast.Expr | None, builder: Builder) -> dict[str, AttributeValue] | None:
    """The key a WHERE names when it names nothing else: every term an equality (or a one-value
    IN) on a key attribute, each key attribute given one value (repeating it is allowed).
    Recorded: `pk IN ['a'] AND sk = 1` reads one item, `pk = 'a' AND sk = 1 AND pk = 'b'` does not."""
    key: dict[str, AttributeValue] = {}
    for term in conjuncts(where):
        name, value = _key_equality(term, table.key_names)
        if name is None or value is None:
            return None
        bound = builder.bind(value)
        if key.setdefault(name, bound) != bound:
            return None
    return key if len(key) == len(table.key_names) else None


def _key_equality(term: ast.Expr, names: tuple[str, ...]) -> tuple[str | None, ast.Expr | None]:
    for name in names:
        value = equality_value(term, name)
        if value is not None:
            return name, value
        if (
            isinstance(term, ast.In)
            and len(term.items) == 1
            and isinstance(term.operand, ast.Path)
            and term.operand.is_top
            and term.operand.head == name
            and isinstance(term.items[0], ast.VALUE_NODES)
            and not isinstance(term.items[0], ast.Missing)
        ):
            return name, term.items[0]
    return None, None


def compile_get(engine: Engine, statement: ast.Select, builder: Builder, *, transaction: bool) -> dict[str, Any]:
    """A SELECT of one item by its full key and nothing else (batches and transactions read only that way).

    The table is looked up first, then the index: a transaction refuses any
    index read; a batch refuses an unknown or multi-attribute index as a single
    SELECT does and any other as not naming the table's key (recorded).
    """
    refusal = TRANSACTION_KEY if transaction else BATCH_KEY
    _check_path(statement.target)
    table = engine.tables.get(statement.target.table)
    if statement.target.index is not None:
        if transaction:
            raise ValidationException(TRANSACTION_INDEX)
        _index(table, statement.target.index)
        _check_projection(statement)
        raise ValidationException(refusal)
    _check_projection(statement)
    if statement.order:
        _order_needs_key(statement)
    key = _key_only(table, statement.where, builder)
    if key is None:
        raise ValidationException(refusal)
    request: dict[str, Any] = {"TableName": table.name, "Key": key}
    if statement.projection is not None:
        request["ProjectionExpression"] = ", ".join(builder.path(p) for p in statement.projection)
    return builder.attach(request)


# -- SELECT ---------------------------------------------------------------------------------


@dataclass(slots=True)
class SelectPlan:
    """One SELECT as a Query (one per partition key value) or a Scan.

    `index_view`: the read names an index, whose WHERE sees only what the
    index's entries hold (an attribute the index does not project is missing
    there, even where an LSI fetches it from the table for the projection).
    """

    request: dict[str, Any]
    hash_values: list[AttributeValue] = field(default_factory=list)  # empty for a Scan
    hash_placeholder: str = ""
    index_view: bool = False

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


def _check_projection(statement: ast.Select) -> None:
    """A call in the projection is refused once the table and index are known (see
    Parser.projected_call)."""
    if statement.projection_refusal is not None:
        raise ValidationException(statement.projection_refusal)


def _check_index_read(table: Table, index: Index, statement: ast.Select, consistent: bool) -> None:
    """What a read of an index may ask for, in the order the service checks it (recorded)."""
    if consistent and index.is_global:
        raise ValidationException(GSI_CONSISTENT)
    held = _held(table, index)
    if index.is_global and held is not None and statement.projection is not None:
        missing = [path.head for path in statement.projection if path.head not in held]
        if missing:
            # The statement's order (recorded); the JSON Query sorts its list.
            raise ValidationException(f"{INVALID}Global secondary index {index.name} does not project [{', '.join(missing)}]")


def _check_keyed_filter(table: Table, index: Index, where: ast.Expr | None) -> None:
    """A read keyed on the index may not filter on an attribute the index does not hold
    (an unkeyed one may: it scans the index, where such an attribute is simply missing)."""
    held = _held(table, index)
    if held is None:
        return
    missing = [name for name in attribute_roots(where) if name not in held]
    if missing:
        listed = ", ".join(java_hash_set_order(missing))
        raise ValidationException(
            f"{INVALID}Secondary index {index.name} does not project one or more filter attributes: [{listed}]"
        )


def plan_select(engine: Engine, statement: ast.Select, builder: Builder, *, consistent: bool = False) -> SelectPlan:
    target = statement.target
    _check_path(target)
    table = engine.tables.get(target.table)
    request: dict[str, Any] = {"TableName": table.name}
    index = None
    if target.index is None:
        _check_projection(statement)
        hash_name, range_name = table.hash_key.name, table.range_key.name if table.range_key else None
    else:
        index = _index(table, target.index)
        _check_projection(statement)
        _check_index_read(table, index, statement, consistent)
        hash_name, range_name = index.hash_key.name, index.range_key.name if index.range_key else None
        request["IndexName"] = target.index
    terms = conjuncts(statement.where)
    hash_values = None
    for i, term in enumerate(terms):
        hash_values = _hash_values(term, hash_name, builder)
        if hash_values is not None:
            del terms[i]
            break
    plan = SelectPlan(request, index_view=index is not None)
    if hash_values is not None:
        if index is not None:
            _check_keyed_filter(table, index, statement.where)
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
