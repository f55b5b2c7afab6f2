"""What a shape's first request says about it, for the findings to explain: attribute names and types only.

Run once per new shape (never per request). A filter is reduced to the
top-level attributes it tests, each with how it is tested (EQ for `=`,
IN, RANGE for `<`/`<=`/`>`/`>=`/BETWEEN/begins_with, OTHER for the rest)
and the type of the value it is compared with; a projection to the
top-level attributes it keeps. No value is kept: a fix names attributes
and types (AttributeDefinitions), never data.
"""

from __future__ import annotations

from typing import Any

from ..expressions.ast import And, Between, Call, Compare, In, Not, Or, Path, Value

Item = dict[str, dict[str, Any]]
_RANGE_CALLS = {"begins_with"}


def _head(path: Path, names: dict[str, str]) -> str | None:
    first = path.elements[0] if path.elements else None
    if not isinstance(first, str):
        return None
    return names.get(first, first) if first.startswith("#") else first


def _type(operand: Any, values: Item) -> str | None:
    if isinstance(operand, Value):
        value = values.get(operand.name)
        if isinstance(value, dict) and len(value) == 1:
            return next(iter(value))
    return None


def describe_filter(root: Any, names: dict[str, str], values: Item) -> dict[str, dict[str, Any]]:
    """{attribute: {"ops": [...], "type": S|N|B|...|None}} of a filter expression's tree."""
    out: dict[str, dict[str, Any]] = {}

    def note(operand: Any, op: str, value: Any = None) -> None:
        if not isinstance(operand, Path):
            return
        head = _head(operand, names)
        if head is None:
            return
        entry = out.setdefault(head, {"ops": [], "type": None})
        if op not in entry["ops"]:
            entry["ops"].append(op)
        if entry["type"] is None and len(operand.elements) == 1:
            entry["type"] = _type(value, values)

    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, And | Or):
            stack += [node.right, node.left]
        elif isinstance(node, Not):
            stack.append(node.operand)
        elif isinstance(node, Compare):
            op = "EQ" if node.op == "=" else "OTHER" if node.op == "<>" else "RANGE"
            if isinstance(node.left, Path):
                note(node.left, op, node.right)
            else:
                note(node.right, op, node.left)
        elif isinstance(node, Between):
            note(node.operand, "RANGE", node.low)
        elif isinstance(node, In):
            note(node.operand, "IN", node.options[0] if node.options else None)
        elif isinstance(node, Call) and node.args:
            note(node.args[0], "RANGE" if node.name in _RANGE_CALLS else "OTHER",
                 node.args[1] if len(node.args) > 1 else None)
    return out


_LEGACY_OPS = {"EQ": "EQ", "IN": "IN", "LT": "RANGE", "LE": "RANGE", "GT": "RANGE", "GE": "RANGE",
               "BETWEEN": "RANGE", "BEGINS_WITH": "RANGE"}


def describe_legacy_filter(conditions: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The same for a legacy QueryFilter/ScanFilter ({attribute: {ComparisonOperator, AttributeValueList}})."""
    out: dict[str, dict[str, Any]] = {}
    for name, entry in conditions.items():
        if not isinstance(entry, dict):
            continue
        values = entry.get("AttributeValueList") or []
        first = values[0] if values and isinstance(values[0], dict) and len(values[0]) == 1 else None
        op = _LEGACY_OPS.get(entry.get("ComparisonOperator", ""), "OTHER")
        out[name] = {"ops": [op], "type": None if first is None else next(iter(first))}
    return out


def legacy_filter_text(conditions: dict[str, Any]) -> str:
    """A legacy filter's shape as text (attribute and operator, no values): part of a shape's key."""
    parts = []
    for name in sorted(conditions):
        entry = conditions[name]
        op = entry.get("ComparisonOperator", "?") if isinstance(entry, dict) else "?"
        parts.append(f"{name} {op}")
    return "legacy: " + " AND ".join(parts)


def describe_projection(paths: list[Path] | tuple[Path, ...], names: dict[str, str]) -> list[str]:
    """The top-level attributes a projection keeps, in order, once each."""
    out: list[str] = []
    for path in paths:
        head = _head(path, names)
        if head is not None and head not in out:
            out.append(head)
    return out
