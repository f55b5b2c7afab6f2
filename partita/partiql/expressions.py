"""PartiQL terms to DynamoDB expression text with generated placeholders.

The compiled request carries `#n0`-style names for every path element and
`:v0`-style values for every literal and parameter, so the JSON operation's
own parser and checks see an ordinary request; no user text is ever pasted
into the expression.
"""

from __future__ import annotations

from typing import Any

from ..engine.model.values import normalize_value
from ..errors import ValidationException
from . import ast
from .errors import EMPTY_BAG, operand_count, too_nested, unrecognized_function

# An attribute value has at most 32 levels, the value itself being the first.
MAX_VALUE_LEVELS = 32

AttributeValue = dict[str, Any]

# The functions of a condition and their DynamoDB spelling.
_CONDITION_FUNCTIONS = {
    "begins_with": "begins_with",
    "contains": "contains",
    "attribute_type": "attribute_type",
    "attribute_exists": "attribute_exists",
    "attribute_not_exists": "attribute_not_exists",
}
# What a WHERE may call; any other name (EXISTS(path), set_add, ...) is "Unrecognized function".
WHERE_FUNCTIONS = frozenset({*_CONDITION_FUNCTIONS, "size"})


def unsupported(what: str) -> ValidationException:
    # The form of the service's recorded "Unsupported operation: IsType"; the
    # names after the colon for other nodes are not on record.
    return ValidationException(f"Unsupported operation: {what}")


class Builder:
    """Collects the names and values one compiled request uses."""

    __slots__ = ("names", "values", "params", "_name_keys")

    def __init__(self, params: list[AttributeValue]) -> None:
        self.names: dict[str, str] = {}
        self.values: dict[str, AttributeValue] = {}
        self.params = params
        self._name_keys: dict[str, str] = {}

    def name(self, name: str) -> str:
        key = self._name_keys.get(name)
        if key is None:
            key = f"#n{len(self._name_keys)}"
            self._name_keys[name] = key
            self.names[key] = name
        return key

    def value(self, value: AttributeValue) -> str:
        key = f":v{len(self.values)}"
        self.values[key] = value
        return key

    def path(self, path: ast.Path) -> str:
        out = self.name(path.head)
        for step in path.steps:
            out += f"[{step}]" if isinstance(step, int) else "." + self.name(step)
        return out

    def attach(self, request: dict[str, Any]) -> dict[str, Any]:
        """Put the collected names and values on `request` (an empty map is not allowed there)."""
        if self.names:
            request["ExpressionAttributeNames"] = self.names
        if self.values:
            request["ExpressionAttributeValues"] = self.values
        return request

    # -- values -----------------------------------------------------------------------------

    def bind(self, node: ast.Expr, where: str = "root", level: int = 1) -> AttributeValue:
        """A value node (literal, parameter, collection of them) as an attribute value.

        `where` names the node as the service's messages do ("root" is the value
        itself, "root.a[0]" an element within it) and `level` is its depth: an
        element deeper than an attribute value may be is refused there, the
        first such element on the way down being the one named.
        """
        if level > MAX_VALUE_LEVELS or isinstance(node, ast.TooDeep):
            raise too_nested(where)
        if isinstance(node, ast.Lit):
            if node.kind == "S":
                return {"S": node.text}
            if node.kind == "N":
                try:
                    return normalize_value({"N": node.text})
                except ValidationException as error:
                    raise ValidationException(f"{error.message} under {where}") from None
            if node.kind == "BOOL":
                return {"BOOL": node.text == "TRUE"}
            return {"NULL": True}
        if isinstance(node, ast.Param):
            return self.params[node.index]
        if isinstance(node, ast.ListExpr):
            return {"L": [self.bind(item, f"{where}[{i}]", level + 1) for i, item in enumerate(node.items)]}
        if isinstance(node, ast.MapExpr):
            out: dict[str, AttributeValue] = {}
            for key, item in node.pairs:
                if not (isinstance(key, ast.Lit) and key.kind == "S"):
                    # Not on record; the service needs string keys in a tuple.
                    raise ValidationException("Unsupported type for map key: key must be a string")
                out[key.text] = self.bind(item, f"{where}.{key.text}", level + 1)
            return {"M": out}
        if isinstance(node, ast.BagExpr):
            return self._bag(node, where, level)
        if isinstance(node, ast.Missing):
            raise unsupported("Missing")
        if isinstance(node, ast.Call):
            # Recorded for set_add in an INSERT's item: "root" though it sat under a key.
            raise ValidationException(f"Unsupported data type: {node.name} under key root at {node.at}")
        raise unsupported(type(node).__name__)

    def _bag(self, node: ast.BagExpr, where: str, level: int) -> AttributeValue:
        if not node.items:
            raise ValidationException(EMPTY_BAG)
        members = [self.bind(item, where, level + 1) for item in node.items]
        kinds = {next(iter(m)) for m in members}
        if len(kinds) != 1 or next(iter(kinds)) not in ("S", "N", "B"):
            # DynamoDB Local's wording for a bag it cannot make a set of.
            raise ValidationException("Unsupported data type in Bag")
        kind = next(iter(kinds))
        return normalize_value({kind + "S": [m[kind] for m in members]})

    # -- conditions -------------------------------------------------------------------------

    def operand(self, node: ast.Expr) -> str:
        if isinstance(node, ast.Path):
            return self.path(node)
        if isinstance(node, ast.VALUE_NODES):
            return self.value(self.bind(node))
        if isinstance(node, ast.Call) and node.name not in WHERE_FUNCTIONS:
            raise unrecognized_function(node.name, node.at)
        if isinstance(node, ast.Call) and node.name == "size" and len(node.args) == 1:
            return f"size({self.operand(node.args[0])})"
        if isinstance(node, ast.Arith):
            raise unsupported("Arithmetic")
        raise unsupported(type(node).__name__)

    def condition(self, node: ast.Expr) -> str:
        if isinstance(node, ast.And):
            return f"({self.condition(node.left)}) AND ({self.condition(node.right)})"
        if isinstance(node, ast.Or):
            return f"({self.condition(node.left)}) OR ({self.condition(node.right)})"
        if isinstance(node, ast.Not):
            return f"NOT ({self.condition(node.operand)})"
        if isinstance(node, ast.Compare):
            return self._compare(node)
        if isinstance(node, ast.Between):
            return (
                f"{self.operand(node.operand)} BETWEEN {self.operand(node.low)} AND {self.operand(node.high)}"
            )
        if isinstance(node, ast.In):
            items = ", ".join(self.operand(item) for item in node.items)
            return f"{self.operand(node.operand)} IN ({items})"
        if isinstance(node, ast.Is):
            return self._is(node)
        if isinstance(node, ast.Call):
            function = _CONDITION_FUNCTIONS.get(node.name)
            if function is None:
                raise unrecognized_function(node.name, node.at)
            if not node.args:
                # Recorded for attribute_exists(); more operands are counted by the expression layer.
                raise operand_count(node.name, 0)
            args = ", ".join(self.operand(arg) for arg in node.args)
            return f"{function}({args})"
        raise unsupported(type(node).__name__)

    def _compare(self, node: ast.Compare) -> str:
        for side, other in ((node.left, node.right), (node.right, node.left)):
            if isinstance(side, ast.Missing) and isinstance(other, ast.Path) and node.op in ("=", "<>"):
                function = "attribute_not_exists" if node.op == "=" else "attribute_exists"
                return f"{function}({self.path(other)})"
            truth = self._truth(other) if node.op in ("=", "<>") else None
            if isinstance(side, ast.Call) and side.name in _CONDITION_FUNCTIONS and truth is not None:
                # A condition function's answer is a boolean the WHERE may compare
                # (AWS filtered on `attribute_exists(ss) = true` in 2026): the
                # comparison is the condition itself or its negation.
                test = self.condition(side)
                return test if truth == (node.op == "=") else f"NOT ({test})"
        return f"{self.operand(node.left)} {node.op} {self.operand(node.right)}"

    def _truth(self, node: ast.Expr) -> bool | None:
        """The boolean a TRUE/FALSE literal or a BOOL parameter stands for, else None."""
        if isinstance(node, ast.Lit) and node.kind == "BOOL":
            return node.text == "TRUE"
        if isinstance(node, ast.Param):
            value = self.params[node.index]
            if set(value) == {"BOOL"}:
                return bool(value["BOOL"])
        return None

    def _is(self, node: ast.Is) -> str:
        if not isinstance(node.operand, ast.Path):
            raise unsupported("IsType")
        path = self.path(node.operand)
        if node.what == "MISSING":
            return f"attribute_exists({path})" if node.negated else f"attribute_not_exists({path})"
        text = f"attribute_type({path}, {self.value({'S': node.what})})"
        return f"NOT ({text})" if node.negated else text

    # -- updates ----------------------------------------------------------------------------

    def set_value(self, node: ast.Expr) -> str:
        """The right-hand side of a SET: a value, a path, one + or -, list_append, if_not_exists."""
        if isinstance(node, ast.Arith):
            return f"{self._set_operand(node.left)} {node.op} {self._set_operand(node.right)}"
        return self._set_operand(node)

    def _set_operand(self, node: ast.Expr) -> str:
        if isinstance(node, ast.Call) and node.name in ("list_append", "if_not_exists") and len(node.args) == 2:
            return f"{node.name}({self._set_operand(node.args[0])}, {self._set_operand(node.args[1])})"
        if isinstance(node, ast.Path):
            return self.path(node)
        if isinstance(node, ast.VALUE_NODES):
            return self.value(self.bind(node))
        if isinstance(node, ast.Call):
            raise ValidationException(f"Unsupported function: {node.name}")
        raise unsupported(type(node).__name__)


def conjuncts(node: ast.Expr | None) -> list[ast.Expr]:
    """The terms of a top-level AND chain (parenthesised ORs stay whole), left to right."""
    out: list[ast.Expr] = []
    stack = [] if node is None else [node]
    while stack:
        current = stack.pop()
        if isinstance(current, ast.And):
            stack += (current.right, current.left)
        else:
            out.append(current)
    return out


def conjoin(terms: list[ast.Expr]) -> ast.Expr | None:
    return ast.balanced(terms, ast.And) if terms else None


def equality_value(term: ast.Expr, name: str) -> ast.Expr | None:
    """The value side of `name = value` (either way round), when `term` is that."""
    if not isinstance(term, ast.Compare) or term.op != "=":
        return None
    for side, other in ((term.left, term.right), (term.right, term.left)):
        if isinstance(side, ast.Path) and side.is_top and side.head == name and isinstance(other, ast.VALUE_NODES):
            if not isinstance(other, ast.Missing):
                return other
    return None
