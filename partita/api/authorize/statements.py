"""A PartiQL statement as IAM sees it: its action, its resource, and the keys of what it compiles to.

DynamoDB checks `dynamodb:PartiQLSelect` (Insert, Update, Delete) on the
table or index a statement names, with the condition keys of fine-grained
access control: the statement is compiled here exactly as it will run
(api/partiql.py binds and compiles the same way), and its keys are those of
the JSON request it compiles to. A SELECT that fixes the partition key is a
GetItem or a Query: its dynamodb:LeadingKeys are the values it names and
dynamodb:FullTableScan is false. A SELECT that does not is a Scan: it
touches every partition key of the table, which no request can list, so
its LeadingKeys are `Unknowable` (any condition on them fails closed) and
FullTableScan is true. A statement that does not compile (an unknown
table, a WHERE that names no key, a bad parameter) is refused by the
operation anyway; its keys are all Unknowable, so that a principal whose
policy reads them is refused here whatever happens between this check and
the run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...engine.engine import Engine
from ...errors import DynamoDBError
from ...partiql import ast, parse
from ...partiql.compiler import (
    compile_check,
    compile_delete,
    compile_get,
    compile_insert,
    compile_update,
    plan_select,
)
from ..partiql import bind_statement
from .context import UNKNOWABLE, Context, Wanted, context_of, key_string
from .rules import FULL_TABLE_SCAN, LEADING_KEYS, PARTIQL_KEYS

ACTIONS = {
    ast.Select: "PartiQLSelect",
    ast.Exists: "PartiQLSelect",
    ast.Insert: "PartiQLInsert",
    ast.Update: "PartiQLUpdate",
    ast.Delete: "PartiQLDelete",
}

STATEMENT = "ExecuteStatement"
BATCH = "BatchExecuteStatement"
TRANSACTION = "ExecuteTransaction"


@dataclass(frozen=True, slots=True)
class Target:
    """What a statement names, read from its text alone: its action, table and index."""

    action: str
    table: str
    index: str | None


def target(text: str) -> Target | None:
    """The statement's action and resource; None when it does not parse (the operation says why)."""
    try:
        statement = parse(text).statement
    except DynamoDBError:
        return None
    action = ACTIONS[type(statement)]
    if isinstance(statement, ast.Exists):
        statement = statement.select
    return Target(action, statement.target.table, statement.target.index)


def keys_of(
    engine: Engine, operation: str, entry: dict[str, Any], action: str, wanted: Wanted
) -> Context:
    """The condition keys of one statement (an ExecuteStatement request, or a member of a batch
    or transaction), limited to those of `action` the caller wants."""
    keys = PARTIQL_KEYS[action]
    wanted = keys if not isinstance(wanted, frozenset) else wanted & keys
    if not wanted:
        return {}
    try:
        compiled, kind, leading = _compile(engine, operation, entry)
        table = engine.tables.get(compiled["TableName"])
    except DynamoDBError:
        return {key: UNKNOWABLE for key in wanted}
    if kind in ("Query", "Scan"):
        context = context_of("Scan", table, compiled, wanted)  # Select, Attributes: as a read's
        if kind == "Query":
            if LEADING_KEYS in wanted:
                context[LEADING_KEYS] = [text for text in map(key_string, leading) if text is not None]
        elif LEADING_KEYS in wanted:
            context[LEADING_KEYS] = UNKNOWABLE
    else:
        context = context_of(kind, table, compiled, wanted)
    if FULL_TABLE_SCAN in wanted:
        context[FULL_TABLE_SCAN] = ["true" if kind == "Scan" else "false"]
    return context


def _compile(engine: Engine, operation: str, entry: dict[str, Any]) -> tuple[dict[str, Any], str, list[Any]]:
    """(the JSON request the statement runs as, that operation's name, a Query's partition key values).

    The same compile step as the run's (api/partiql.py): a SELECT of
    ExecuteStatement is planned as a Query or a Scan; one of a batch or a
    transaction reads one item by its key; EXISTS is a condition check on one key.
    """
    parsed, builder = bind_statement(entry["Statement"], entry.get("Parameters"))
    statement = parsed.statement
    if isinstance(statement, ast.Select):
        if operation == STATEMENT:
            plan = plan_select(engine, statement, builder, consistent=bool(entry.get("ConsistentRead")))
            return plan.request, "Query" if plan.is_query else "Scan", plan.hash_values
        return compile_get(engine, statement, builder, transaction=operation == TRANSACTION), "GetItem", []
    if isinstance(statement, ast.Exists):
        compiled = compile_check(engine, statement, builder)
        return {"TableName": compiled["TableName"], "Key": compiled["Key"]}, "GetItem", []
    if isinstance(statement, ast.Insert):
        return compile_insert(engine, statement, builder), "PutItem", []
    if isinstance(statement, ast.Update):
        return compile_update(engine, statement, builder), "UpdateItem", []
    return compile_delete(engine, statement, builder), "DeleteItem", []


__all__ = ["Target", "keys_of", "target"]
