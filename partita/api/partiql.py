"""ExecuteStatement, BatchExecuteStatement and ExecuteTransaction.

Each statement is parsed (cached by text), compiled into the request of the
JSON operation it stands for, and run through that operation's handler, so
a PartiQL read is charged as the Query or Scan it is and a write obeys
every rule PutItem/UpdateItem/DeleteItem and the transactions obey.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from typing import Any

import orjson

from ..engine.engine import Engine
from ..engine.items.transactions import TransactionCanceledException, cancellation
from ..engine.model.values import java_numbers_fault, normalize_value
from ..errors import ConditionalCheckFailedException, DynamoDBError, ValidationException
from ..partiql import ast, parse
from ..partiql.checks import check_operands
from ..partiql.compiler import (
    SelectPlan,
    compile_check,
    compile_delete,
    compile_get,
    compile_insert,
    compile_update,
    plan_select,
    write_table,
)
from ..partiql.errors import (
    DUPLICATE_ITEM,
    PARAMETER_COUNT,
    TRANSACTION_MIX,
    TRANSACTION_RETURNING,
    DuplicateItemException,
)
from ..partiql.expressions import AttributeValue, Builder
from . import items, reads, transactions

Item = dict[str, AttributeValue]

# Not on record: the service's words for these refusals.
INVALID_NEXT_TOKEN = "Invalid NextToken"
EXISTS_OUTSIDE_TRANSACTION = "EXISTS is supported only in ExecuteTransaction"
BATCH_MIX = "BatchExecuteStatement API does not support both read and write operations in the same request."


class ParameterError(ValidationException):
    """A parameter value DynamoDB refuses while binding it: ExecuteTransaction reports it
    without the "Validation failed in TransactStatements[i]: " of a statement's own faults
    (a 2026 conformance suite's partiqlParameterNumbers tests: unconvertible numbers, nesting)."""


# The JSON operations' "Invalid FilterExpression: " (Condition, Update, ...) prefix. PartiQL
# reports the same faults without it (recorded in 2026: attribute_exists('a') answers
# "Operator or function requires a document path; ..." alone, as the ordering check
# answers "Incorrect operand type ..." alone).
_EXPRESSION_PREFIX = re.compile(r"Invalid (?:Filter|Condition|KeyCondition|Update|Projection)Expression: ")


def _unprefixed(error: DynamoDBError) -> DynamoDBError:
    """`error` as PartiQL words it: a compiled expression's fault loses the JSON prefix."""
    message = error.message or ""
    match = _EXPRESSION_PREFIX.match(message)
    if isinstance(error, ValidationException) and match:
        return ValidationException(message[match.end() :])
    return error


def _bound_value(value: Any) -> Any:
    fault = java_numbers_fault(value)
    if fault is not None:
        raise ParameterError(fault)
    try:
        return normalize_value(value)
    except ValidationException as error:
        raise ParameterError(error.message) from None


def bind_statement(statement: str, parameters: list[Any] | None) -> tuple[ast.Parsed, Builder]:
    """Parse, bind the parameters and make the checks that need no table (operand types)."""
    parsed = parse(statement)
    given = parameters or []
    if len(given) != parsed.parameters:
        raise ValidationException(PARAMETER_COUNT)
    builder = Builder([_bound_value(p) for p in given])
    check_operands(parsed.statement, builder)
    return parsed, builder


# -- capacity -------------------------------------------------------------------------------


def _add_capacity(total: dict[str, Any] | None, doc: dict[str, Any] | None) -> dict[str, Any] | None:
    """Sum two ConsumedCapacity documents of one table (a SELECT ... IN runs several Queries)."""
    if doc is None:
        return total
    if total is None:
        return orjson.loads(orjson.dumps(doc))
    for member, value in doc.items():
        if isinstance(value, float | int) and not isinstance(value, bool):
            total[member] = total.get(member, 0) + value
        elif isinstance(value, dict):
            if "CapacityUnits" in value:
                total[member] = _add_capacity(total.get(member), value)
            else:
                inner = total.setdefault(member, {})
                for name, entry in value.items():
                    inner[name] = _add_capacity(inner.get(name), entry)
    return total


def _capacity_list(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    by_table: dict[str, dict[str, Any]] = {}
    for doc in docs:
        name = doc["TableName"]
        by_table[name] = _add_capacity(by_table.get(name), doc)  # type: ignore[assignment]
    return list(by_table.values())


# -- SELECT ---------------------------------------------------------------------------------


def _token_digest(request: dict[str, Any]) -> str:
    material = orjson.dumps([request["Statement"], request.get("Parameters")], option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(material).hexdigest()[:24]


def _encode_token(request: dict[str, Any], position: int, start_key: Item | None) -> str:
    body = orjson.dumps({"d": _token_digest(request), "i": position, "k": start_key})
    return base64.b64encode(body).decode("ascii")


def _decode_token(request: dict[str, Any]) -> tuple[int, Item | None]:
    token = request.get("NextToken")
    if token is None:
        return 0, None
    try:
        body = orjson.loads(base64.b64decode(token.encode("ascii"), validate=True))
        position, start_key = body["i"], body["k"]
        valid = body["d"] == _token_digest(request) and isinstance(position, int) and position >= 0
    except (ValueError, KeyError, TypeError, binascii.Error, UnicodeEncodeError):
        valid = False
    if not valid or not (start_key is None or isinstance(start_key, dict)):
        raise ValidationException(INVALID_NEXT_TOKEN)
    return position, start_key


def _leaf(path: ast.Path) -> str:
    """The name a projected nested path answers under: its last named step.

    Not confirmed against the service; emulators recorded against it answer
    `a.b.c` as `c`, as PartiQL names a projected path by its last step.
    """
    for step in reversed(path.steps):
        if isinstance(step, str):
            return step
    return path.head


def _lookup(item: Item, path: ast.Path) -> AttributeValue | None:
    value = item.get(path.head)
    for step in path.steps:
        if value is None:
            return None
        if isinstance(step, int):
            elements = value.get("L")
            value = elements[step] if elements is not None and step < len(elements) else None
        else:
            members = value.get("M")
            value = None if members is None else members.get(step)
    return value


def _reshape(rows: list[Item], projection: tuple[ast.Path, ...] | None) -> list[Item]:
    if projection is None or all(path.is_top for path in projection):
        return rows
    out = []
    for row in rows:
        shaped = {}
        for path in projection:
            value = _lookup(row, path)
            if value is not None:
                shaped[_leaf(path)] = value
        out.append(shaped)
    return out


def _run_select(engine: Engine, request: dict[str, Any], statement: ast.Select, plan: SelectPlan) -> dict[str, Any]:
    compiled = plan.request
    for member in ("ConsistentRead", "ReturnConsumedCapacity"):
        if member in request:
            compiled[member] = request[member]
    position, start_key = _decode_token(request)
    limit = request.get("Limit")
    rows: list[Item] = []
    capacity: dict[str, Any] | None = None
    next_position: int | None = None
    last_key: Item | None = None
    if not plan.is_query:
        if position != 0:
            raise ValidationException(INVALID_NEXT_TOKEN)
        if start_key is not None:
            compiled["ExclusiveStartKey"] = start_key
        if limit is not None:
            compiled["Limit"] = limit
        page = reads.scan(engine, compiled, index_view=plan.index_view)
        rows = page["Items"]
        capacity = page.get("ConsumedCapacity")
        last_key = page.get("LastEvaluatedKey")
        next_position = 0 if last_key is not None else None
    else:
        if position >= len(plan.hash_values):
            raise ValidationException(INVALID_NEXT_TOKEN)
        values = compiled.setdefault("ExpressionAttributeValues", {})
        remaining = limit
        while position < len(plan.hash_values):
            values[plan.hash_placeholder] = plan.hash_values[position]
            compiled.pop("ExclusiveStartKey", None)
            if start_key is not None:
                compiled["ExclusiveStartKey"] = start_key
            if remaining is not None:
                compiled["Limit"] = remaining
            page = reads.query(engine, compiled, key_filters=True, index_view=plan.index_view)
            rows.extend(page["Items"])
            capacity = _add_capacity(capacity, page.get("ConsumedCapacity"))
            start_key = page.get("LastEvaluatedKey")
            if remaining is not None:
                remaining -= page["ScannedCount"]
            if start_key is not None:
                next_position, last_key = position, start_key
                break
            position += 1
            if remaining is not None and remaining <= 0 and position < len(plan.hash_values):
                next_position = position
                break
    out: dict[str, Any] = {"Items": _reshape(rows, statement.projection)}
    if next_position is not None:
        out["NextToken"] = _encode_token(request, next_position, last_key)
        if last_key is not None:
            out["LastEvaluatedKey"] = last_key
    if capacity is not None:
        out["ConsumedCapacity"] = capacity
    return out


# -- writes ---------------------------------------------------------------------------------


_WRITE_OPTIONS = ("ReturnConsumedCapacity", "ReturnValuesOnConditionCheckFailure")


def _compile_write(
    engine: Engine, statement: ast.Statement, builder: Builder, options: dict[str, Any], members: tuple[str, ...]
) -> dict[str, Any]:
    """The request an INSERT/UPDATE/DELETE runs as: every check that needs no item is made here."""
    if isinstance(statement, ast.Insert):
        compiled = compile_insert(engine, statement, builder)
        members = tuple(m for m in members if m == "ReturnConsumedCapacity")
    elif isinstance(statement, ast.Update):
        compiled = compile_update(engine, statement, builder)
    elif isinstance(statement, ast.Delete):
        compiled = compile_delete(engine, statement, builder)
    else:
        raise ValidationException(EXISTS_OUTSIDE_TRANSACTION)
    _copy_options(compiled, options, members)
    return compiled


def _run_write(engine: Engine, statement: ast.Statement, compiled: dict[str, Any]) -> dict[str, Any]:
    """Run a compiled write; the answer's Items and ConsumedCapacity."""
    answer: dict[str, Any]
    if isinstance(statement, ast.Insert):
        try:
            answer = items.put_item(engine, compiled)
        except ConditionalCheckFailedException:
            raise DuplicateItemException(DUPLICATE_ITEM) from None
    elif isinstance(statement, ast.Update):
        answer = items.update_item(engine, compiled)
    else:
        answer = items.delete_item(engine, compiled)
    attributes = answer.get("Attributes")
    out: dict[str, Any] = {"Items": [attributes] if attributes else []}
    if "ConsumedCapacity" in answer:
        out["ConsumedCapacity"] = answer["ConsumedCapacity"]
    return out


def _copy_options(compiled: dict[str, Any], options: dict[str, Any], members: tuple[str, ...]) -> None:
    for member in members:
        value = options.get(member)
        if value is not None:
            compiled[member] = value


def execute_statement(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    try:
        return _execute_statement(engine, request)
    except ValidationException as error:
        fault = _unprefixed(error)
        if fault is error:
            raise
        raise fault from None


def _execute_statement(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    parsed, builder = bind_statement(request["Statement"], request.get("Parameters"))
    statement = parsed.statement
    if isinstance(statement, ast.Select):
        plan = plan_select(engine, statement, builder, consistent=bool(request.get("ConsistentRead")))
        return _run_select(engine, request, statement, plan)
    compiled = _compile_write(engine, statement, builder, request, _WRITE_OPTIONS)
    return _run_write(engine, statement, compiled)


# -- BatchExecuteStatement ------------------------------------------------------------------

_ERROR_CODES = {
    "ValidationException": "ValidationError",
    "ThrottlingException": "ThrottlingError",
}


def _batch_error(error: DynamoDBError) -> dict[str, Any]:
    """A member's Error: its code and message. Never an Item: the service returns none for a
    failed condition whatever the member's ReturnValuesOnConditionCheckFailure says (recorded)."""
    error = _unprefixed(error)
    code = _ERROR_CODES.get(error.code) or error.code.removesuffix("Exception")
    out: dict[str, Any] = {"Code": code}
    if error.message is not None:
        out["Message"] = error.message
    return out


def _batch_compile(engine: Engine, entry: dict[str, Any], statement: ast.Statement, builder: Builder) -> dict[str, Any]:
    if isinstance(statement, ast.Select):
        compiled = compile_get(engine, statement, builder, transaction=False)
        if entry.get("ConsistentRead"):
            compiled["ConsistentRead"] = True
    else:
        compiled = _compile_write(engine, statement, builder, {}, ())
    compiled["ReturnConsumedCapacity"] = "INDEXES"
    return compiled


def _batch_run(engine: Engine, statement: ast.Statement, compiled: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """One member run: its response (TableName, and the item read or RETURNING's item) and its capacity."""
    out: dict[str, Any] = {"TableName": compiled["TableName"]}
    if isinstance(statement, ast.Select):
        answer = items.get_item(engine, compiled)
        item = answer.get("Item")
    else:
        answer = _run_write(engine, statement, compiled)
        item = answer["Items"][0] if answer["Items"] else None
    if item is not None:
        out["Item"] = item
    return out, answer.get("ConsumedCapacity")


def batch_execute_statement(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    entries = request["Statements"]
    bound: list[tuple[ast.Parsed, Builder] | DynamoDBError] = []
    for entry in entries:
        try:
            bound.append(bind_statement(entry["Statement"], entry.get("Parameters")))
        except DynamoDBError as error:
            bound.append(error)
    kinds = {b[0].is_read for b in bound if not isinstance(b, DynamoDBError)}
    if len(kinds) > 1:
        raise ValidationException(BATCH_MIX)
    mode = request.get("ReturnConsumedCapacity")
    responses: list[dict[str, Any]] = []
    docs: list[dict[str, Any]] = []
    for entry, b in zip(entries, bound, strict=True):
        if isinstance(b, DynamoDBError):
            responses.append({"Error": _batch_error(b)})
            continue
        parsed, builder = b
        statement = parsed.statement
        try:
            compiled = _batch_compile(engine, entry, statement, builder)
        except DynamoDBError as error:
            # Refused before it ran: no TableName (recorded for a statement the service validates).
            responses.append({"Error": _batch_error(error)})
            continue
        try:
            response, doc = _batch_run(engine, statement, compiled)
        except DynamoDBError as error:
            responses.append({"Error": _batch_error(error), "TableName": compiled["TableName"]})
            continue
        responses.append(response)
        if doc is not None:
            docs.append(doc)
    out: dict[str, Any] = {"Responses": responses}
    if mode in ("TOTAL", "INDEXES"):
        out["ConsumedCapacity"] = [_trim(doc, mode) for doc in _capacity_list(docs)]
    return out


def _trim(doc: dict[str, Any], mode: str) -> dict[str, Any]:
    """A TOTAL document: the per-table and per-index breakdown dropped."""
    if mode == "INDEXES":
        return doc
    return {k: v for k, v in doc.items() if k not in ("Table", "LocalSecondaryIndexes", "GlobalSecondaryIndexes")}


# -- ExecuteTransaction ---------------------------------------------------------------------


def _transact_action(engine: Engine, entry: dict[str, Any], parsed: ast.Parsed, builder: Builder) -> dict[str, Any]:
    statement = parsed.statement
    if isinstance(statement, ast.Select):
        return {"Get": compile_get(engine, statement, builder, transaction=True)}
    if isinstance(statement, ast.Exists):
        body, name = compile_check(engine, statement, builder), "ConditionCheck"
    elif isinstance(statement, ast.Insert):
        body, name = compile_insert(engine, statement, builder), "Put"
    elif isinstance(statement, ast.Update):
        _no_returning(engine, statement)
        body, name = compile_update(engine, statement, builder), "Update"
    else:
        assert isinstance(statement, ast.Delete)
        _no_returning(engine, statement)
        body, name = compile_delete(engine, statement, builder), "Delete"
    on_fail = entry.get("ReturnValuesOnConditionCheckFailure")
    if on_fail is not None:
        body["ReturnValuesOnConditionCheckFailure"] = on_fail
    return {name: body}


def _no_returning(engine: Engine, statement: ast.Update | ast.Delete) -> None:
    """A transaction's writes return nothing: RETURNING is refused, after the index
    qualifier and the table are checked (recorded in that order)."""
    if statement.returning is not None:
        write_table(engine, statement.target)
        raise ValidationException(TRANSACTION_RETURNING)


def execute_transaction(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    entries = request["TransactStatements"]
    actions = []
    parsed_all = []
    for i, entry in enumerate(entries):
        try:
            parsed, builder = bind_statement(entry["Statement"], entry.get("Parameters"))
            parsed_all.append(parsed)
            actions.append(_transact_action(engine, entry, parsed, builder))
        except ParameterError:
            raise
        except ValidationException as error:
            raise ValidationException(f"Validation failed in TransactStatements[{i}]: {error.message}") from None
    reads_present = any(p.is_read for p in parsed_all)
    if reads_present and not all(p.is_read for p in parsed_all):
        raise ValidationException(TRANSACTION_MIX)
    inner: dict[str, Any] = {"TransactItems": actions}
    for member in ("ReturnConsumedCapacity", "ClientRequestToken"):
        if member in request:
            inner[member] = request[member]
    if reads_present:
        inner.pop("ClientRequestToken", None)
        return transactions.transact_get_items(engine, inner)
    try:
        answer = transactions.transact_write_items(engine, inner)
    except TransactionCanceledException as error:
        raise _insert_reasons(error, parsed_all) from None
    # A transaction of writes answers an empty Responses list, not one entry a
    # statement nor none at all (recorded on AWS in 2026: paritysuite writeResponses).
    out: dict[str, Any] = {"Responses": []}
    if "ConsumedCapacity" in answer:
        out["ConsumedCapacity"] = answer["ConsumedCapacity"]
    return out


def _insert_reasons(error: TransactionCanceledException, parsed: list[ast.Parsed]) -> TransactionCanceledException:
    """An INSERT whose guard failed is a DuplicateItem, not a ConditionalCheckFailed."""
    reasons = list(error.extra.get("CancellationReasons", ()))
    changed = False
    for i, reason in enumerate(reasons):
        if isinstance(parsed[i].statement, ast.Insert) and reason.get("Code") == "ConditionalCheckFailed":
            reasons[i] = {"Code": "DuplicateItem", "Message": DUPLICATE_ITEM}
            changed = True
    return cancellation(reasons) if changed else error
