"""The parsed forms of DynamoDB expressions.

Every node is an immutable, slotted dataclass, so one parsed expression can be
cached by its text and shared by every request and thread that uses it.
Placeholders stay unresolved in the tree (`#n` as a path element, `:v` as a
`Value`): the same text is used with different ExpressionAttributeNames and
Values, and resolution happens once per request when the tree is bound.

A document path is a tuple of elements: `str` for an attribute name (a literal
name, or a `#placeholder`; literal names can never start with `#`), `int` for
a list index.
"""

from __future__ import annotations

from dataclasses import dataclass

PathElement = str | int


@dataclass(frozen=True, slots=True)
class Path:
    elements: tuple[PathElement, ...]


@dataclass(frozen=True, slots=True)
class Value:
    name: str  # ":v"


@dataclass(frozen=True, slots=True)
class Call:
    """A function call; a condition (attribute_exists ...) or an operand (size, if_not_exists ...)."""

    name: str
    args: tuple[Operand, ...]


@dataclass(frozen=True, slots=True)
class Arith:
    """`a + b` / `a - b`, only on the right-hand side of an update's SET."""

    op: str
    left: Operand
    right: Operand


Operand = Path | Value | Call | Arith


@dataclass(frozen=True, slots=True)
class Compare:
    op: str  # = <> < <= > >=
    left: Operand
    right: Operand


@dataclass(frozen=True, slots=True)
class Between:
    operand: Operand
    low: Operand
    high: Operand


@dataclass(frozen=True, slots=True)
class In:
    operand: Operand
    options: tuple[Operand, ...]


@dataclass(frozen=True, slots=True)
class And:
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class Or:
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class Not:
    operand: Node


Node = Compare | Between | In | And | Or | Not | Call


@dataclass(frozen=True, slots=True)
class Condition:
    """A parsed ConditionExpression, FilterExpression or KeyConditionExpression."""

    kind: str
    text: str
    root: Node
    names: frozenset[str]
    values: frozenset[str]


@dataclass(frozen=True, slots=True)
class Projection:
    kind: str
    text: str
    paths: tuple[Path, ...]
    names: frozenset[str]
    values: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class SetAction:
    path: Path
    value: Operand  # Path | Value | Call(if_not_exists/list_append) | Arith


@dataclass(frozen=True, slots=True)
class RemoveAction:
    path: Path


@dataclass(frozen=True, slots=True)
class AddAction:
    path: Path
    value: Value


@dataclass(frozen=True, slots=True)
class DeleteAction:
    path: Path
    value: Value


UpdateAction = SetAction | RemoveAction | AddAction | DeleteAction


@dataclass(frozen=True, slots=True)
class Update:
    """A parsed UpdateExpression; `actions` keeps the text's order across clauses."""

    kind: str
    text: str
    actions: tuple[UpdateAction, ...]
    names: frozenset[str]
    values: frozenset[str]

    @property
    def set(self) -> tuple[SetAction, ...]:
        return tuple(a for a in self.actions if isinstance(a, SetAction))

    @property
    def remove(self) -> tuple[RemoveAction, ...]:
        return tuple(a for a in self.actions if isinstance(a, RemoveAction))

    @property
    def add(self) -> tuple[AddAction, ...]:
        return tuple(a for a in self.actions if isinstance(a, AddAction))

    @property
    def delete(self) -> tuple[DeleteAction, ...]:
        return tuple(a for a in self.actions if isinstance(a, DeleteAction))


Parsed = Condition | Projection | Update


def path_str(elements: tuple[PathElement, ...]) -> str:
    """A path as DynamoDB prints it in messages: `[a, b, [2]]`."""
    return "[" + ", ".join(f"[{e}]" if isinstance(e, int) else e for e in elements) + "]"
