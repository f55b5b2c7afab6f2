"""Evaluation of conditions and projections against wire-form items.

`bind` turns a parsed condition plus one request's names and values into a
plain Python predicate: placeholders are resolved and constant operands are
pre-decoded once, so a Scan that tests a million items pays for them once.
Nothing here copies item data; results share the item's value objects.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .ast import (
    And,
    Between,
    Call,
    Compare,
    Condition,
    In,
    Node,
    Not,
    Operand,
    Or,
    Path,
    PathElement,
    Projection,
    Value,
)
from .compare import binary, number, sort_key, type_of, values_equal
from .validate import resolve_path

AttributeValue = dict[str, Any]
Item = Mapping[str, AttributeValue]
Getter = Callable[[Item], AttributeValue | None]
Predicate = Callable[[Item], bool]

_SET_ELEMENT = {"SS": "S", "NS": "N", "BS": "B"}


def _resolved(path: Path, names: Mapping[str, str]) -> tuple[PathElement, ...]:
    resolved = resolve_path(path, names)
    if resolved is None:
        missing = next(
            e for e in path.elements if isinstance(e, str) and e not in names and e[0] == "#"
        )
        raise KeyError(f"expression attribute name not defined: {missing}")
    return resolved


def get_path(item: Item, elements: tuple[PathElement, ...]) -> AttributeValue | None:
    """The value at a resolved document path, or None when any step is missing."""
    value = item.get(elements[0])  # type: ignore[call-overload]
    for e in elements[1:]:
        if value is None:
            return None
        if isinstance(e, int):
            lst = value.get("L")
            if lst is None or e >= len(lst):
                return None
            value = lst[e]
        else:
            m = value.get("M")
            if m is None:
                return None
            value = m.get(e)
    return value


def _path_getter(elements: tuple[PathElement, ...]) -> Getter:
    if len(elements) == 1:
        name = elements[0]
        return lambda item: item.get(name)  # type: ignore[call-overload]
    return lambda item: get_path(item, elements)


def _utf16_len(s: str) -> int:
    if s.isascii():
        return len(s)
    return len(s) + sum(1 for c in s if ord(c) > 0xFFFF)


def size_of(value: AttributeValue | None) -> AttributeValue | None:
    """DynamoDB's size(): UTF-16 units of S, bytes of B, members of sets, L and M."""
    if value is None:
        return None
    t = type_of(value)
    raw = value[t]
    if t == "S":
        n = _utf16_len(raw)
    elif t == "B":
        n = len(binary(raw))
    elif t in ("SS", "NS", "BS", "L", "M"):
        n = len(raw)
    else:
        return None
    return {"N": str(n)}


class _Binder:
    def __init__(self, names: Mapping[str, str], values: Mapping[str, AttributeValue]) -> None:
        self.names = names
        self.values = values

    def operand(self, op: Operand) -> Getter:
        if isinstance(op, Path):
            return _path_getter(_resolved(op, self.names))
        if isinstance(op, Value):
            const = self.values[op.name]
            return lambda item: const
        if isinstance(op, Call) and op.name == "size":
            inner = self.operand(op.args[0])
            return lambda item: size_of(inner(item))
        raise ValueError(f"not an operand: {op!r}")  # rejected by validation

    def node(self, node: Node) -> Predicate:
        if isinstance(node, And):
            left, right = self.node(node.left), self.node(node.right)
            return lambda item: left(item) and right(item)
        if isinstance(node, Or):
            left, right = self.node(node.left), self.node(node.right)
            return lambda item: left(item) or right(item)
        if isinstance(node, Not):
            inner = self.node(node.operand)
            return lambda item: not inner(item)
        if isinstance(node, Compare):
            return self.compare(node)
        if isinstance(node, Between):
            return self.between(node)
        if isinstance(node, In):
            return self.in_(node)
        return self.function(node)

    def compare(self, node: Compare) -> Predicate:
        left, right = self.operand(node.left), self.operand(node.right)
        op = node.op
        if op == "=":

            def eq(item: Item) -> bool:
                a = left(item)
                if a is None:
                    return False
                b = right(item)
                return b is not None and values_equal(a, b)

            return eq
        if op == "<>":

            def ne(item: Item) -> bool:
                a = left(item)
                b = right(item)
                return a is None or b is None or not values_equal(a, b)

            return ne
        key_left = self.key(node.left, left)
        key_right = self.key(node.right, right)
        test: Callable[[Any, Any], bool] = {
            "<": lambda a, b: a < b,
            "<=": lambda a, b: a <= b,
            ">": lambda a, b: a > b,
            ">=": lambda a, b: a >= b,
        }[op]

        def ordered(item: Item) -> bool:
            a = key_left(item)
            if a is None:
                return False
            b = key_right(item)
            return b is not None and a[0] == b[0] and test(a[1], b[1])

        return ordered

    def key(self, op: Operand, getter: Getter) -> Callable[[Item], tuple[str, Any] | None]:
        """(type, sortable key) of an operand for ordering; None if missing or unordered."""
        if isinstance(op, Value):
            const = _key(self.values[op.name])
            return lambda item: const
        return lambda item: _key(getter(item))

    def between(self, node: Between) -> Predicate:
        value = self.key(node.operand, self.operand(node.operand))
        low = self.key(node.low, self.operand(node.low))
        high = self.key(node.high, self.operand(node.high))

        def between(item: Item) -> bool:
            v = value(item)
            if v is None:
                return False
            lo = low(item)
            hi = high(item)
            if lo is None or hi is None or not (v[0] == lo[0] == hi[0]):
                return False
            return lo[1] <= v[1] <= hi[1]

        return between

    def in_(self, node: In) -> Predicate:
        value = self.operand(node.operand)
        options = [self.operand(o) for o in node.options]

        def is_in(item: Item) -> bool:
            v = value(item)
            if v is None:
                return False
            for option in options:
                o = option(item)
                if o is not None and values_equal(v, o):
                    return True
            return False

        return is_in

    def function(self, call: Call) -> Predicate:
        name = call.name
        if name == "attribute_exists":
            getter = self.operand(call.args[0])
            return lambda item: getter(item) is not None
        if name == "attribute_not_exists":
            getter = self.operand(call.args[0])
            return lambda item: getter(item) is None
        if name == "attribute_type":
            getter = self.operand(call.args[0])
            wanted_of = self.operand(call.args[1])

            def has_type(item: Item) -> bool:
                v = getter(item)
                w = wanted_of(item)
                return v is not None and w is not None and w.get("S") == type_of(v)

            return has_type
        if name == "begins_with":
            whole, prefix = self.operand(call.args[0]), self.operand(call.args[1])
            return lambda item: _begins_with(whole(item), prefix(item))
        if name == "contains":
            whole, part = self.operand(call.args[0]), self.operand(call.args[1])
            return lambda item: _contains(whole(item), part(item))
        raise ValueError(f"not a condition function: {name}")  # rejected by validation


def _key(value: AttributeValue | None) -> tuple[str, Any] | None:
    if value is None:
        return None
    t = type_of(value)
    if t not in ("N", "S", "B"):
        return None
    return (t, sort_key(t, value[t]))


def _begins_with(whole: AttributeValue | None, prefix: AttributeValue | None) -> bool:
    if whole is None or prefix is None:
        return False
    t = type_of(whole)
    if t != type_of(prefix):
        return False
    if t == "S":
        return whole["S"].startswith(prefix["S"])
    if t == "B":
        return binary(whole["B"]).startswith(binary(prefix["B"]))
    return False


def _contains(whole: AttributeValue | None, part: AttributeValue | None) -> bool:
    if whole is None or part is None:
        return False
    t = type_of(whole)
    pt = type_of(part)
    raw = whole[t]
    if t == "S":
        return pt == "S" and part["S"] in raw
    if t == "B":
        return pt == "B" and binary(part["B"]) in binary(raw)
    if t in _SET_ELEMENT:
        if _SET_ELEMENT[t] != pt:
            return False
        member = part[pt]
        if member in raw:
            return True
        if pt == "N":
            n = number(member)
            return any(number(m) == n for m in raw)
        if pt == "B":
            b = binary(member)
            return any(binary(m) == b for m in raw)
        return False
    if t == "L":
        return any(values_equal(e, part) for e in raw)
    return False


def bind(
    condition: Condition,
    names: Mapping[str, str] | None,
    values: Mapping[str, AttributeValue] | None,
) -> Predicate:
    """A predicate over items for one request; call once per request, then per item.

    The condition must have passed `check_placeholders` for these names and
    values. A missing item is passed as an empty mapping.
    """
    return _Binder(names or {}, values or {}).node(condition.root)


_EMPTY: Mapping[str, AttributeValue] = {}


def evaluate(
    condition: Condition,
    item: Item | None,
    names: Mapping[str, str] | None,
    values: Mapping[str, AttributeValue] | None,
) -> bool:
    """Whether `item` (None: no item) satisfies the condition. Prefer `bind` in loops."""
    return bind(condition, names, values)(item if item is not None else _EMPTY)


# -- projection -----------------------------------------------------------


def bind_projection(
    projection: Projection, names: Mapping[str, str] | None
) -> Callable[[Item], dict[str, AttributeValue]]:
    """A function projecting items for one request (names resolved once)."""
    paths = [_resolved(p, names or {}) for p in projection.paths]
    if all(len(p) == 1 for p in paths):
        tops = [p[0] for p in paths]

        def top_level(item: Item) -> dict[str, AttributeValue]:
            out: dict[str, AttributeValue] = {}
            for name in tops:
                v = item.get(name)  # type: ignore[call-overload]
                if v is not None:
                    out[name] = v  # type: ignore[index]
            return out

        return top_level
    return lambda item: _project(item, paths)


def project(
    item: Item, projection: Projection, names: Mapping[str, str] | None
) -> dict[str, AttributeValue]:
    """The attributes of `item` that the projection names, shaped as DynamoDB returns them.

    Nested paths keep their enclosing maps; list elements picked by index come
    back as a shorter list in index order; missing paths are left out.
    """
    return bind_projection(projection, names)(item)


def _project(item: Item, paths: list[tuple[PathElement, ...]]) -> dict[str, AttributeValue]:
    # Build a tree of dicts: map levels keyed by name, list levels keyed by
    # index; leaves are the item's own value objects. Overlapping paths were
    # rejected by validation, so a leaf never collides with a subtree.
    tree: dict[Any, Any] = {}
    kinds: dict[int, str] = {}  # id(subtree) -> "M" | "L"
    for path in paths:
        value = get_path(item, path)
        if value is None:
            continue
        node = tree
        for depth in range(len(path) - 1):
            key = path[depth]
            child = node.get(key)
            if child is None:
                child = {}
                node[key] = child
                kinds[id(child)] = "L" if isinstance(path[depth + 1], int) else "M"
            node = child
        node[path[-1]] = value
    return {name: _materialize(sub, kinds) for name, sub in tree.items()}


def _materialize(node: Any, kinds: dict[int, str]) -> AttributeValue:
    kind = kinds.get(id(node))
    if kind is None:
        return node  # a leaf: the item's value
    if kind == "L":
        return {"L": [_materialize(node[i], kinds) for i in sorted(node)]}
    return {"M": {k: _materialize(v, kinds) for k, v in node.items()}}
