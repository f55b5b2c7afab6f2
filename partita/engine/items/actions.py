"""The data of a single-item write as every write path passes it around (items/single.py's steps).

Kept apart from the steps themselves because the capacity charges read an
action's kind and sizes, and the steps charge capacity: both import this.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

from ..capacity import Consumed
from ..expressions import evaluate
from ..tables.schema import Table
from .updates import BoundUpdate

if TYPE_CHECKING:
    from ..schema_guard.guard import Violation

Item = dict[str, dict[str, Any]]


@dataclass(slots=True)
class Condition:
    """A parsed ConditionExpression and the placeholders it is evaluated with."""

    expression: Any
    names: dict[str, str]
    values: dict[str, dict[str, Any]]

    def holds(self, item: Item | None) -> bool:
        return evaluate(self.expression, item, self.names, self.values)


class ActionKind(Enum):
    PUT = "Put"
    UPDATE = "Update"
    DELETE = "Delete"
    CHECK = "ConditionCheck"


@dataclass(slots=True)
class ItemAction:
    """One prepared write (or condition check) of one item, not yet executed.

    ``item`` is the new item of a put, ``update`` the bound update of an
    update; a delete and a condition check need neither.
    """

    kind: ActionKind
    table: Table
    row: bytes
    key: Item
    condition: Condition | None = None
    return_old_on_fail: bool = False
    item: Item | None = None
    update: BoundUpdate | None = None
    #: DynamoDB sizes of the stored item before and after the action, measured
    #: once (the old one is the stored row's weight) and reused for the row's
    #: weight and for the capacity charged.
    old_size: int = 0
    new_size: int = 0
    #: The schema guard's finding on the new item in warn mode, recorded when it is stored.
    violation: Violation | None = None


@dataclass(slots=True)
class WriteResult:
    old: Item | None
    consumed: Consumed
    #: Bytes of the written item's collection, on tables with a local index.
    collection_bytes: int | None = None


@dataclass(slots=True)
class UpdateResult:
    """The item before and after an UpdateItem (`old` is None when it was created).

    `new` is None when the item was missing and the update only deleted, so
    nothing was created.
    """

    old: Item | None
    new: Item | None
    consumed: Consumed
    collection_bytes: int | None = None
