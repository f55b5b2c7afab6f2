"""A KeyConditionExpression's form: per-attribute key terms, or the service's refusal.

The expression parser accepts any condition; a key condition may only take the
forms that can select a key range (no OR/NOT/IN/<>, one condition per key
attribute, no nested paths or operations, the key first in BETWEEN and
begins_with). This module turns a parsed KeyConditionExpression into
:class:`KeyTerm` s, the same per-attribute form legacy KeyConditions take, and
refuses every other form in DynamoDB's words before the table is looked up.
Split from reads.py, which checks the terms against the table's key schema.

Sources for the texts: dynalite's query tests (recorded against the real
service). See docs/decisions.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...engine.expressions import (
    And,
    Between,
    Call,
    Compare,
    Condition,
    In,
    Not,
    Or,
    Path,
    Value,
    resolve_path,
)
from ...errors import ValidationException

AttributeValue = dict[str, Any]

KCE = "KeyConditionExpression"

_EXPRESSION_OPS = {"=": "EQ", "<": "LT", "<=": "LE", ">": "GT", ">=": "GE"}
_MIRRORED = {"=": "=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_NOT_KEY_FUNCTIONS = frozenset(("attribute_exists", "attribute_not_exists", "attribute_type", "contains"))


@dataclass(slots=True)
class KeyTerm:
    """One condition of a query's key conditions: an attribute, an operator, its values.

    Operators use the legacy API's names (EQ, LT, ... BEGINS_WITH), which is
    what both KeyConditions and a converted KeyConditionExpression become.
    """

    op: str
    values: list[AttributeValue]


def key_terms_from_expression(
    condition: Condition, names: Mapping[str, str], values: Mapping[str, AttributeValue]
) -> dict[str, KeyTerm]:
    """Turn a KeyConditionExpression into per-attribute terms, rejecting forms no key allows.

    The walk and the order of its checks follow the service as dynalite
    recorded it: the node's own operator first, then its operands left to
    right (a second attribute name, a nested path, a nested function), then
    whether the condition names a key at all and whether that key already has
    a condition. The placeholders have been checked already.
    """
    terms: dict[str, KeyTerm] = {}
    _key_node(condition.root, names, values, terms)
    return terms


def _invalid_operator(name: str) -> ValidationException:
    return ValidationException(f"Invalid operator used in {KCE}: {name}")


def _invalid_condition(message: str) -> ValidationException:
    return ValidationException(f"Invalid condition in {KCE}: {message}")


def _nested_operations() -> ValidationException:
    return ValidationException("KeyConditionExpressions cannot contain nested operations")


def _key_node(
    node: Any,
    names: Mapping[str, str],
    values: Mapping[str, AttributeValue],
    terms: dict[str, KeyTerm],
) -> None:
    if isinstance(node, And):
        _key_node(node.left, names, values, terms)
        _key_node(node.right, names, values, terms)
        return
    if isinstance(node, Or):
        raise _invalid_operator("OR")
    if isinstance(node, Not):
        raise _invalid_operator("NOT")
    if isinstance(node, In):
        raise _invalid_operator("IN")
    if isinstance(node, Compare):
        if node.op == "<>":
            raise _invalid_operator("<>")
        operands: tuple[Any, ...] = (node.left, node.right)
        op = node.op
    elif isinstance(node, Between):
        if not isinstance(node.operand, Path):
            raise _invalid_condition("BETWEEN operator must have the key attribute as its first operand")
        operands = (node.operand, node.low, node.high)
        op = "BETWEEN"
    elif isinstance(node, Call):
        if node.name in _NOT_KEY_FUNCTIONS:
            raise _invalid_operator(node.name)
        if node.name != "begins_with":
            raise _nested_operations()
        if not isinstance(node.args[0], Path):
            raise _invalid_condition("begins_with operator must have the key attribute as its first operand")
        operands = node.args
        op = "BEGINS_WITH"
    else:  # pragma: no cover - the parser produces no other condition nodes
        raise _nested_operations()
    attribute: str | None = None
    position = 0
    for index, operand in enumerate(operands):
        if isinstance(operand, Path):
            if attribute is not None:
                raise _invalid_condition("Multiple attribute names used in one condition")
            if len(operand.elements) > 1:
                raise ValidationException("KeyConditionExpressions cannot have conditions on nested attributes")
            resolved = resolve_path(operand, names)
            assert resolved is not None  # placeholders were checked
            attribute = str(resolved[0])
            position = index
        elif isinstance(operand, Call):
            raise _nested_operations()
    if attribute is None:
        raise _invalid_condition("No key attribute specified")
    if attribute in terms:
        # Named as the expression's own fault since the 2026 wording (dynalite's recording was bare).
        raise ValidationException(f"Invalid {KCE}: KeyConditionExpressions must only contain one condition per key")
    if op in _MIRRORED:
        op = _EXPRESSION_OPS[_MIRRORED[op] if position else op]
    terms[attribute] = KeyTerm(op, [values[o.name] for o in operands if isinstance(o, Value)])
