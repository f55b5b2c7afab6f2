"""The pre-2014 parameter forms, translated into the expression AST.

Older SDKs and object mappers still send `Expected` (with `Exists`,
`ComparisonOperator` and `ConditionalOperator`), `QueryFilter`/`ScanFilter`,
`KeyConditions`, `AttributeUpdates` and `AttributesToGet`. Rather than a
second evaluator, each form is validated the way DynamoDB validates it and
rebuilt as the same nodes the expression parser produces, so one evaluator
(and one set of comparison and update rules) serves both.

Attribute names in the legacy forms are whole top-level names, never document
paths: `a.b` is the attribute called "a.b". So every name and value becomes a
generated placeholder (`#n0`, `:v0`) bound through its own names/values maps;
a literal name could otherwise be mistaken for a placeholder or a path.

Semantics worth knowing (checked against the service by ScyllaDB's Alternator
test suite and dynalite's): `NE` is true when the attribute is missing, but
`NOT_CONTAINS` is false when it is missing, so it translates to
`attribute_exists(a) AND NOT contains(a, :v)`; `IN` takes any number of values
(the expression language's 100-operand limit does not apply).

Messages are the ones dynalite's suite pins against the service, and for
`ConditionalOperator` the ones recorded from the service by ExtendDB.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from partita.errors import RequestFault, ValidationException

from ..model.values import MSG_EMPTY_NAME, compare, normalize_value
from .ast import (
    AddAction,
    And,
    Between,
    Call,
    Compare,
    Condition,
    DeleteAction,
    In,
    Node,
    Not,
    Or,
    Path,
    Projection,
    RemoveAction,
    SetAction,
    Update,
    UpdateAction,
    Value,
)
from .parser import MAX_IN_OPERANDS

AttributeValue = dict[str, Any]

_INVALID = "One or more parameter values were invalid: "
_ORDERED = frozenset(("S", "N", "B"))

# How many values each operator takes: an exact count, or None for "one or more".
_ARITY: dict[str, int | None] = {
    "EQ": 1,
    "NE": 1,
    "LE": 1,
    "LT": 1,
    "GE": 1,
    "GT": 1,
    "CONTAINS": 1,
    "NOT_CONTAINS": 1,
    "BEGINS_WITH": 1,
    "NULL": 0,
    "NOT_NULL": 0,
    "IN": None,
    "BETWEEN": 2,
}

# The value types each operator accepts; EQ and NE accept every type
# (DynamoDB documents them as "supported for all data types, including lists
# and maps"), so they are absent here.
_VALUE_TYPES: dict[str, frozenset[str]] = {
    "LE": _ORDERED,
    "LT": _ORDERED,
    "GE": _ORDERED,
    "GT": _ORDERED,
    "BETWEEN": _ORDERED,
    "IN": _ORDERED,
    "CONTAINS": _ORDERED,
    "NOT_CONTAINS": _ORDERED,
    "BEGINS_WITH": frozenset(("S", "B")),
}

_COMPARATORS = {"EQ": "=", "NE": "<>", "LE": "<=", "LT": "<", "GE": ">=", "GT": ">"}

WITHOUT_FILTER = "ConditionalOperator cannot be used without Filter or Expected"
TWO_OR_MORE = (
    "ConditionalOperator can only be used when Filter or Expected has two or more elements"
)


@dataclass(frozen=True, slots=True)
class LegacyCondition:
    """A legacy condition map as an expression AST plus the placeholders it binds.

    Evaluate it like a parsed expression:
    `bind(legacy.condition, legacy.names, legacy.values)(item)`.
    """

    condition: Condition
    names: dict[str, str]
    values: dict[str, AttributeValue]


@dataclass(frozen=True, slots=True)
class LegacyProjection:
    """`AttributesToGet` as a Projection plus the names its placeholders stand for."""

    projection: Projection
    names: dict[str, str]


class _Builder:
    """Hands out placeholders and remembers what they stand for."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self.values: dict[str, AttributeValue] = {}

    def path(self, attribute: str) -> Path:
        placeholder = f"#n{len(self.names)}"
        self.names[placeholder] = attribute
        return Path((placeholder,))

    def value(self, value: AttributeValue) -> Value:
        placeholder = f":v{len(self.values)}"
        self.values[placeholder] = value
        return Value(placeholder)

    def finish(self, kind: str, nodes: list[Node], use_or: bool) -> LegacyCondition:
        root = nodes[0]
        for node in nodes[1:]:
            root = Or(root, node) if use_or else And(root, node)
        condition = Condition(kind, "", root, frozenset(self.names), frozenset(self.values))
        return LegacyCondition(condition, self.names, self.values)


# -- ConditionalOperator ------------------------------------------------------


def check_conditional_operator(request: Mapping[str, Any], condition_params: Sequence[str]) -> None:
    """ConditionalOperator needs a legacy condition map with two or more entries.

    `condition_params` names the maps it may combine (`Expected`, or
    `QueryFilter`/`ScanFilter`; never `KeyConditions`).
    """
    if request.get("ConditionalOperator") is None:
        return
    maps = [request[p] for p in condition_params if request.get(p)]
    if not maps:
        raise ValidationException(WITHOUT_FILTER)
    if any(len(m) < 2 for m in maps):
        raise ValidationException(TWO_OR_MORE)


# -- one comparison -----------------------------------------------------------


def _type_of(value: AttributeValue) -> str:
    return next(iter(value))


def _check_arguments(operator: str, values: list[AttributeValue]) -> None:
    """Argument count, types the operator takes, one type for all, ordered bounds.

    The order is the service's: `BETWEEN [S, SS]` is reported as SS not being
    valid for BETWEEN, not as a mix of types. The first three are faults of the
    request's parameters (RequestFault: enveloped by PutItem, UpdateItem and
    DeleteItem, as recorded in 2026).
    """
    arity = _ARITY[operator]
    if (arity is None and not values) or (arity is not None and len(values) != arity):
        raise RequestFault(
            f"{_INVALID}Invalid number of argument(s) for the {operator} ComparisonOperator"
        )
    if not values:
        return
    allowed = _VALUE_TYPES.get(operator)
    for value in values:
        kind = _type_of(value)
        if allowed is not None and kind not in allowed:
            raise RequestFault(
                f"{_INVALID}ComparisonOperator {operator} is not valid for {kind} AttributeValue type"
            )
    first = _type_of(values[0])
    if any(_type_of(v) != first for v in values):
        raise RequestFault(
            f"{_INVALID}AttributeValues inside AttributeValueList must be of same type"
        )
    if operator == "BETWEEN" and compare(values[0], values[1]) > 0:
        raise ValidationException(
            "The BETWEEN condition was provided a range where the lower bound is greater than "
            "the upper bound"
        )


def _comparison(
    builder: _Builder, attribute: str, operator: str, values: list[AttributeValue]
) -> Node:
    """The AST of `attribute <operator> values`, for an already validated comparison."""
    path = builder.path(attribute)
    if operator in _COMPARATORS:
        return Compare(_COMPARATORS[operator], path, builder.value(values[0]))
    if operator == "NULL":
        return Call("attribute_not_exists", (path,))
    if operator == "NOT_NULL":
        return Call("attribute_exists", (path,))
    if operator == "CONTAINS":
        return Call("contains", (path, builder.value(values[0])))
    if operator == "NOT_CONTAINS":
        # False on a missing attribute, unlike `NOT contains(...)`.
        contains = Call("contains", (path, builder.value(values[0])))
        return And(Call("attribute_exists", (path,)), Not(contains))
    if operator == "BEGINS_WITH":
        return Call("begins_with", (path, builder.value(values[0])))
    if operator == "IN":
        return In(path, tuple(builder.value(v) for v in values))
    low, high = values
    return Between(path, builder.value(low), builder.value(high))


#: Most values an AttributeValueList may carry: the expression language's IN
#: limit (100 operands, the attribute included), since a legacy condition is
#: evaluated as that expression. DynamoDB documents no limit of its own for
#: legacy IN; without one, 600,000 values took seconds and 600 MB per Scan.
MAX_ATTRIBUTE_VALUES = MAX_IN_OPERANDS - 1


def _normalized(values: Any, operator: str) -> list[AttributeValue]:
    """The list's values in canonical form; too many are refused before any is looked at."""
    if values and len(values) > MAX_ATTRIBUTE_VALUES:
        raise ValidationException(
            f"{_INVALID}Invalid number of argument(s) for the {operator} ComparisonOperator"
        )
    return [normalize_value(v) for v in values or ()]


# -- Expected -----------------------------------------------------------------


def _expected_entry(builder: _Builder, attribute: str, entry: Mapping[str, Any]) -> Node:
    """One `Expected` entry, validated in the service's order, as an AST node."""
    has_list = entry.get("AttributeValueList") is not None
    has_value = entry.get("Value") is not None
    has_exists = entry.get("Exists") is not None
    operator = entry.get("ComparisonOperator")
    if has_list and has_value:
        raise RequestFault(
            f"{_INVALID}Value and AttributeValueList cannot be used together for Attribute: {attribute}"
        )
    if operator is not None:
        if has_exists:
            raise RequestFault(
                f"{_INVALID}Exists and ComparisonOperator cannot be used together for Attribute: {attribute}"
            )
        if operator not in ("NULL", "NOT_NULL") and not has_list and not has_value:
            raise RequestFault(
                f"{_INVALID}Value or AttributeValueList must be used with ComparisonOperator: "
                f"{operator} for Attribute: {attribute}"
            )
        values = _normalized(
            entry["AttributeValueList"] if has_list else [entry["Value"]] if has_value else [],
            operator,
        )
        _check_arguments(operator, values)
        return _comparison(builder, attribute, operator, values)
    if has_list:
        raise RequestFault(
            f"{_INVALID}AttributeValueList can only be used with a ComparisonOperator for Attribute: {attribute}"
        )
    exists = entry.get("Exists")
    if exists is False:
        if has_value:
            raise RequestFault(
                f"{_INVALID}Value cannot be used when Exists is false for Attribute: {attribute}"
            )
        return Call("attribute_not_exists", (builder.path(attribute),))
    if not has_value:
        shown = "null" if exists is None else "true"
        raise RequestFault(
            f"{_INVALID}Value must be provided when Exists is {shown} for Attribute: {attribute}"
        )
    return Compare("=", builder.path(attribute), builder.value(normalize_value(entry["Value"])))


def translate_expected(
    expected: Mapping[str, Mapping[str, Any]] | None, conditional_operator: str | None
) -> LegacyCondition | None:
    """`Expected` (+ `ConditionalOperator`) as a condition; None when there is nothing to check."""
    if not expected:
        return None
    builder = _Builder()
    nodes = [_expected_entry(builder, name, entry) for name, entry in expected.items()]
    return builder.finish("Expected", nodes, conditional_operator == "OR")


# -- QueryFilter, ScanFilter, KeyConditions -------------------------------------


def translate_conditions(
    conditions: Mapping[str, Mapping[str, Any]] | None,
    conditional_operator: str | None,
    kind: str,
) -> LegacyCondition | None:
    """A `QueryFilter`/`ScanFilter`/`KeyConditions` map as a condition.

    `kind` is the parameter's name. Every entry needs a ComparisonOperator
    (the request shape requires it); values are validated as DynamoDB does
    for filters. KeyConditions are always ANDed: pass None as the operator.
    Key-specific rules (which operators a key accepts, which attributes) are
    the caller's.
    """
    if not conditions:
        return None
    builder = _Builder()
    nodes: list[Node] = []
    for attribute, entry in conditions.items():
        operator = entry["ComparisonOperator"]
        values = _normalized(entry.get("AttributeValueList"), operator)
        _check_arguments(operator, values)
        nodes.append(_comparison(builder, attribute, operator, values))
    return builder.finish(kind, nodes, conditional_operator == "OR")


# -- AttributesToGet ------------------------------------------------------------


def translate_attributes_to_get(attributes: Sequence[str] | None) -> LegacyProjection | None:
    """`AttributesToGet` as a Projection of top-level names; duplicates are rejected."""
    if attributes is None:
        return None
    seen: set[str] = set()
    for name in attributes:
        if not name:
            raise ValidationException(MSG_EMPTY_NAME)  # wording unconfirmed (values.py)
        if name in seen:
            raise ValidationException(f"{_INVALID}Duplicate value in attribute name: {name}")
        seen.add(name)
    names = {f"#n{i}": name for i, name in enumerate(attributes)}
    paths = tuple(Path((placeholder,)) for placeholder in names)
    return LegacyProjection(Projection("AttributesToGet", "", paths, frozenset(names)), names)


# -- AttributeUpdates -------------------------------------------------------------------

_ADD_TYPES = frozenset(("N", "L", "SS", "NS", "BS"))
_SET_TYPES = frozenset(("SS", "NS", "BS"))


@dataclass(frozen=True, slots=True)
class LegacyUpdate:
    """`AttributeUpdates` as an Update AST plus the placeholders it binds."""

    update: Update
    names: dict[str, str]
    values: dict[str, AttributeValue]


def _attribute_update(builder: _Builder, attribute: str, entry: Mapping[str, Any]) -> UpdateAction:
    """One AttributeUpdates entry, validated as DynamoDB does, as an update action.

    PUT is SET, DELETE without a value is REMOVE, DELETE with a set is DELETE,
    ADD of a number or set is ADD, and ADD of a list (which only the legacy
    form allows) appends: `SET a = list_append(if_not_exists(a, []), :v)`.
    """
    if not attribute:
        raise ValidationException(MSG_EMPTY_NAME)  # wording unconfirmed (values.py)
    action = entry.get("Action") or "PUT"
    raw = entry.get("Value")
    if raw is None:
        if action != "DELETE":
            raise ValidationException(
                f"{_INVALID}Only DELETE action is allowed when no attribute value is specified"
            )
        return RemoveAction(builder.path(attribute))
    value = normalize_value(raw)
    kind = _type_of(value)
    if action == "DELETE":
        if kind not in _SET_TYPES:
            raise ValidationException(
                f"{_INVALID}DELETE action with value is not supported for the type {kind}"
            )
        return DeleteAction(builder.path(attribute), builder.value(value))
    if action == "ADD":
        if kind not in _ADD_TYPES:
            raise ValidationException(f"{_INVALID}ADD action is not supported for the type {kind}")
        if kind == "L":
            path = builder.path(attribute)
            current = Call("if_not_exists", (path, builder.value({"L": []})))
            return SetAction(path, Call("list_append", (current, builder.value(value))))
        return AddAction(builder.path(attribute), builder.value(value))
    return SetAction(builder.path(attribute), builder.value(value))


def translate_attribute_updates(
    updates: Mapping[str, Mapping[str, Any]] | None,
) -> LegacyUpdate | None:
    """`AttributeUpdates` as an update; None when absent or empty."""
    if not updates:
        return None
    builder = _Builder()
    actions = tuple(_attribute_update(builder, name, entry) for name, entry in updates.items())
    update = Update(
        "AttributeUpdates", "", actions, frozenset(builder.names), frozenset(builder.values)
    )
    return LegacyUpdate(update, builder.names, builder.values)
