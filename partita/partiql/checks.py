"""Statement-wide checks that need no table: operand types, and the attributes a WHERE names.

They walk the tree with an explicit stack rather than recursion: a statement
may hold thousands of terms, and no walk over it may run out of stack.
"""

from __future__ import annotations

from collections.abc import Iterator

from . import ast
from .errors import operand_type
from .expressions import Builder

_ORDERED = frozenset({"S", "N", "B"})
_ORDERING = frozenset({"<", "<=", ">", ">="})


def _children(node: ast.Expr) -> tuple[ast.Expr, ...]:
    """The sub-expressions of a node, left to right (a literal's elements are not visited)."""
    if isinstance(node, ast.And | ast.Or | ast.Compare | ast.Arith):
        return node.left, node.right
    if isinstance(node, ast.Not | ast.Is):
        return (node.operand,)
    if isinstance(node, ast.Between):
        return node.operand, node.low, node.high
    if isinstance(node, ast.In):
        return (node.operand, *node.items)
    if isinstance(node, ast.Call):
        return node.args
    return ()


def walk(node: ast.Expr | None) -> Iterator[ast.Expr]:
    """Every node of an expression in pre-order, left to right, without recursion."""
    stack = [] if node is None else [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(_children(current)))


def _constant_type(node: ast.Expr, builder: Builder) -> str | None:
    """The attribute-value type of a constant operand (literal or parameter); None for anything else."""
    if not isinstance(node, ast.VALUE_NODES) or isinstance(node, ast.Missing):
        return None
    return next(iter(builder.bind(node)))


def check_operands(statement: ast.Statement, builder: Builder) -> None:
    """Refuse a constant of a type without an order under <, <=, >, >= or BETWEEN, and a
    constant that is not a number under SET's + or -.

    DynamoDB answers these before it looks at the table (recorded in 2026, see
    docs/decisions.md); an attribute of such a type is no error, it just does
    not match.
    """
    if isinstance(statement, ast.Exists):
        statement = statement.select
    if isinstance(statement, ast.Update):
        for _, value in statement.sets:
            for node in walk(value):
                if isinstance(node, ast.Arith):
                    for side in (node.left, node.right):
                        kind = _constant_type(side, builder)
                        if kind is not None and kind != "N":
                            raise operand_type(node.op, kind)
    if isinstance(statement, ast.Insert):
        return
    for node in walk(statement.where):
        if isinstance(node, ast.Compare) and node.op in _ORDERING:
            sides: tuple[ast.Expr, ...] = (node.left, node.right)
            operator = node.op
        elif isinstance(node, ast.Between):
            sides, operator = (node.operand, node.low, node.high), "BETWEEN"
        else:
            continue
        for side in sides:
            kind = _constant_type(side, builder)
            if kind is not None and kind not in _ORDERED:
                raise operand_type(operator, kind)


def attribute_roots(node: ast.Expr | None) -> list[str]:
    """The top-level attributes an expression reads, once each, in the order written."""
    seen: dict[str, None] = {}
    for current in walk(node):
        if isinstance(current, ast.Path):
            seen.setdefault(current.head)
    return list(seen)


def _java_hash(text: str) -> int:
    """Java's String.hashCode (over UTF-16 code units), spread as java.util.HashMap spreads it."""
    h = 0
    data = text.encode("utf-16-le")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] | data[i + 1] << 8)) & 0xFFFFFFFF
    return h ^ (h >> 16)


def java_hash_set_order(names: list[str]) -> list[str]:
    """`names` in the order a java.util.HashSet filled in that order iterates them.

    The service lists an index's unprojected filter attributes in this order:
    the recorded answers ("[a, b]" for `b` then `a`, "[zz, aa, mm]" for three
    names that share a bucket) are a HashSet's, neither the order written nor
    sorted. A bucket keeps insertion order; the table starts at 16 buckets and
    doubles when it holds more than three quarters of its size, or when one
    bucket would hold a ninth name while the table is under 64 buckets.
    """
    capacity = 16
    buckets: list[list[str]] = [[] for _ in range(capacity)]
    size = 0

    def grow() -> None:
        nonlocal capacity, buckets
        capacity *= 2
        grown: list[list[str]] = [[] for _ in range(capacity)]
        for old in buckets:
            for member in old:
                grown[_java_hash(member) & (capacity - 1)].append(member)
        buckets = grown

    for name in dict.fromkeys(names):
        bucket = buckets[_java_hash(name) & (capacity - 1)]
        bucket.append(name)
        if len(bucket) > 8 and capacity < 64:
            grow()
        size += 1
        if size > capacity * 3 // 4:
            grow()
    return [name for bucket in buckets for name in bucket]
