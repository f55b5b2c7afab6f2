"""Applying an update (SET/REMOVE/ADD/DELETE) to an item, as DynamoDB does.

The rules, and why they are implemented the way they are:

* Every SET value is computed from the item as it was before the update,
  before anything changes (`SET a = b, b = a` swaps). Only then are the
  actions applied.
* The actions of one update never overlap (validation rejects two paths where
  one is a prefix of the other), so each action can be applied on its own in
  any order, with one exception: list positions. Every list index in an
  update names a position in the *original* list. So in-place replacements
  happen first, removals of list elements are collected and done afterwards
  from the highest index down (`REMOVE a[0], a[1]` removes the first two
  elements), and assignments past the end of a list are appended last, in
  index order (`SET a[7] = :x, a[9] = :y` on a 2-element list gives 4
  elements).
* A value copied from the item (`SET b = a`) is deep-copied, because the
  same update may still change the list it came from.
* The messages are DynamoDB's: a missing parent is "The document path
  provided in the update expression is invalid for update"; a missing source
  attribute "The provided expression refers to an attribute that does not
  exist in the item"; a wrong type "An operand in the update expression has an
  incorrect data type" (the legacy AttributeUpdates form words it "Type
  mismatch for attribute to update", so the message is a parameter).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from decimal import Context, Decimal
from typing import Any

from ...errors import ValidationException
from ..expressions import (
    AddAction,
    Arith,
    Call,
    Path,
    Projection,
    RemoveAction,
    SetAction,
    Update,
    Value,
    get_path,
    project,
    resolve_path,
)
from ..expressions.ast import Operand, PathElement, UpdateAction
from ..expressions.validate import static_update_paths
from ..model.values import (
    MAX_NESTING_DEPTH,
    MSG_NESTING,
    MSG_OVERFLOW,
    MSG_TOO_MANY_DIGITS,
    normalize_number,
    value_depth,
)
from ..tables.schema import Table

AttributeValue = dict[str, Any]
Item = dict[str, AttributeValue]
ResolvedPath = tuple[PathElement, ...]

MAX_ITEM_BYTES = 400 * 1024
INVALID_PATH = "The document path provided in the update expression is invalid for update"
MISSING_ATTRIBUTE = "The provided expression refers to an attribute that does not exist in the item"
WRONG_TYPE = "An operand in the update expression has an incorrect data type"
LEGACY_WRONG_TYPE = "Type mismatch for attribute to update"
ITEM_TOO_LARGE = "Item size to update has exceeded the maximum allowed size"
INDEX_KEY_TYPE = (
    "The update expression attempted to update the secondary index key to unsupported type"
)
#: SET of an empty S or B on an index key, UpdateItem and TransactWriteItems' Update alike (a
#: top-level ValidationException in a transaction), with no IndexName: recorded on AWS in 2026
#: (a conformance suite's updateItem and transactIndexKeys tests; moto's recordings agree).
EMPTY_INDEX_KEY_UPDATE = (
    "One or more parameter values are not valid. The update expression attempted to update a secondary "
    "index key to a value that is not supported. The AttributeValue for a key attribute cannot contain an empty "
)
_EMPTY_KEY_KIND = {"S": "string", "B": "binary"}

_SETS = frozenset(("SS", "NS", "BS"))
# Enough digits for any exact sum of two in-range numbers (1E125 + 1E-130).
_ARITHMETIC = Context(prec=300)


def arithmetic_result(result: Decimal) -> AttributeValue:
    """The number an addition or subtraction stores, held to the rules for stored numbers.

    A result that needs more than 38 significant digits is refused with the
    overflow message, not the stored-number one: DynamoDB answers SET b =
    :v1 - :v2 (and +) with 1e50 and 1 that way (Alternator's AWS-checked
    test_number.py), and its TransactWriteItems reference lists "Number
    overflow" among the update errors. ADD (expression or AttributeUpdates)
    shares this arithmetic; its wording there is inferred, not observed.
    A literal with too many digits keeps its own message (`values.py`).
    """
    try:
        return {"N": normalize_number(str(result))}
    except ValidationException as error:
        if error.message == MSG_TOO_MANY_DIGITS:
            raise ValidationException(MSG_OVERFLOW) from None
        raise


@dataclass(frozen=True, slots=True)
class BoundUpdate:
    """An update with one request's placeholders resolved: what `apply_update` needs.

    `paths[i]` is the resolved target of `actions[i]`; `type_error` is the
    message for a wrong operand type (it differs between the expression and
    the legacy form).
    """

    actions: tuple[UpdateAction, ...]
    paths: tuple[ResolvedPath, ...]
    names: Mapping[str, str]
    values: Mapping[str, AttributeValue]
    type_error: str = WRONG_TYPE
    #: Some value is nested one level past the item limit (a transaction accepts
    #: such ExpressionAttributeValues): every SET checks what it writes.
    deep_values: bool = False


def bind_update(
    update: Update,
    names: Mapping[str, str],
    values: Mapping[str, AttributeValue],
    type_error: str = WRONG_TYPE,
    deep_values: bool = False,
) -> BoundUpdate:
    """Resolve an update's target paths for one request (placeholders were checked)."""
    static = None if update.names else static_update_paths(update)
    if static is not None:
        return BoundUpdate(update.actions, static, names, values, type_error, deep_values)
    paths = []
    for action in update.actions:
        resolved = resolve_path(action.path, names)
        assert resolved is not None, "placeholders are checked before binding"
        paths.append(resolved)
    return BoundUpdate(update.actions, tuple(paths), names, values, type_error, deep_values)


# -- static checks against the table's keys -------------------------------------


def _key_error(name: str) -> ValidationException:
    return ValidationException(
        f"One or more parameter values were invalid: Cannot update attribute {name}. "
        "This attribute is part of the key"
    )


def check_key_updates(table: Table, update: BoundUpdate) -> None:
    """No action may touch a primary key attribute, not even a path inside one."""
    for key in table.key_names:
        if any(path[0] == key for path in update.paths):
            raise _key_error(key)


def _static_type(action: UpdateAction, values: Mapping[str, AttributeValue]) -> str | None:
    """The type an action gives its target when it is known before reading the item."""
    if isinstance(action, RemoveAction):
        return None
    operand = action.value
    if isinstance(operand, Value):
        return next(iter(values[operand.name]))
    if isinstance(operand, Arith):
        return "N"
    if isinstance(operand, Call) and operand.name == "list_append":
        return "L"
    return None


def _operand_paths(operand: Operand, names: Mapping[str, str]) -> Iterator[ResolvedPath]:
    if isinstance(operand, Path):
        resolved = resolve_path(operand, names)
        if resolved is not None:
            yield resolved
    elif isinstance(operand, Call):
        for arg in operand.args:
            yield from _operand_paths(arg, names)
    elif isinstance(operand, Arith):
        yield from _operand_paths(operand.left, names)
        yield from _operand_paths(operand.right, names)


def _all_paths(update: BoundUpdate) -> Iterator[ResolvedPath]:
    yield from update.paths
    for action in update.actions:
        if isinstance(action, SetAction):
            yield from _operand_paths(action.value, update.names)


def check_index_updates(table: Table, update: BoundUpdate) -> None:
    """Index key attributes: a value of the declared type, and never a path inside one.

    DynamoDB checks what it can before reading the item: the type an action
    would give a top-level index key attribute, and document paths (targets or
    operands) that reach into an index key attribute.
    """
    if not table.indexes:
        return
    for index in table.checked_indexes:
        for attr in index.key_attributes:
            for action, path in zip(update.actions, update.paths, strict=True):
                if path != (attr.name,):
                    continue
                actual = _static_type(action, update.values)
                if actual is not None and actual != attr.type:
                    raise ValidationException(
                        "One or more parameter values were invalid: Type mismatch for Index Key "
                        f"{attr.name} Expected: {attr.type} Actual: {actual} IndexName: {index.name}"
                    )
                break
    check_index_update_paths(table, update)


def check_index_update_paths(table: Table, update: BoundUpdate) -> None:
    """No path (target or operand) may reach inside an index key attribute, and no SET may
    give one an empty string or binary.

    The half of check_index_updates a transaction keeps as a plain
    ValidationException; a wrong type is that action's cancellation reason.
    """
    if not table.indexes:
        return
    index_keys = {attr.name for index in table.indexes for attr in index.key_attributes}
    for path in _all_paths(update):
        if len(path) > 1 and path[0] in index_keys:
            raise ValidationException(
                "Key attributes must be scalars; list random access '[]' and map lookup '.' are not "
                f"allowed: IndexKey: {path[0]}"
            )
    for action, path in zip(update.actions, update.paths, strict=True):
        operand = action.value if isinstance(action, SetAction) else None
        if len(path) == 1 and path[0] in index_keys and isinstance(operand, Value):
            ((kind, raw),) = update.values[operand.name].items()
            if raw == "" and kind in _EMPTY_KEY_KIND:
                raise ValidationException(EMPTY_INDEX_KEY_UPDATE + _EMPTY_KEY_KIND[kind] + " value.")


def check_index_values(table: Table, update: BoundUpdate, item: Item) -> None:
    """After a SET, a top-level index key attribute must still have its declared type."""
    for index in table.indexes:
        for attr in index.key_attributes:
            value = item.get(attr.name)
            if value is not None and attr.type not in value and (attr.name,) in update.paths:
                raise ValidationException(INDEX_KEY_TYPE)


# -- computing SET values ---------------------------------------------------------


def clone(value: AttributeValue) -> AttributeValue:
    """A deep copy of a wire-form value (scalars are immutable and shared)."""
    ((kind, raw),) = value.items()
    if kind == "L":
        return {"L": [clone(v) for v in raw]}
    if kind == "M":
        return {"M": {k: clone(v) for k, v in raw.items()}}
    if kind in _SETS:
        return {kind: list(raw)}
    return value


class _Evaluator:
    """Computes SET operands against the item before the update."""

    def __init__(self, update: BoundUpdate, item: Item) -> None:
        self.update = update
        self.item = item

    def typed(self, operand: Operand, kind: str) -> AttributeValue:
        value = self.value(operand)
        if kind not in value:
            raise ValidationException(self.update.type_error)
        return value

    def path(self, path: Path) -> AttributeValue | None:
        resolved = resolve_path(path, self.update.names)
        assert resolved is not None
        return get_path(self.item, resolved)

    def value(self, operand: Operand) -> AttributeValue:
        if isinstance(operand, Value):
            return self.update.values[operand.name]
        if isinstance(operand, Path):
            found = self.path(operand)
            if found is None:
                raise ValidationException(MISSING_ATTRIBUTE)
            return found
        if isinstance(operand, Arith):
            left = Decimal(self.typed(operand.left, "N")["N"])
            right = Decimal(self.typed(operand.right, "N")["N"])
            result = (
                _ARITHMETIC.add(left, right)
                if operand.op == "+"
                else _ARITHMETIC.subtract(left, right)
            )
            return arithmetic_result(result)
        assert isinstance(operand, Call)
        if operand.name == "if_not_exists":
            target, default = operand.args
            assert isinstance(target, Path)
            found = self.path(target)
            return found if found is not None else self.value(default)
        first = self.typed(operand.args[0], "L")
        second = self.typed(operand.args[1], "L")
        return {"L": first["L"] + second["L"]}


# -- applying actions ---------------------------------------------------------------


def _container(item: Item, path: ResolvedPath) -> dict[str, AttributeValue] | list[AttributeValue]:
    """The map (dict) or list holding the last element of `path`, or DynamoDB's error."""
    if len(path) == 1:
        return item
    parent = get_path(item, path[:-1])
    kind = "L" if isinstance(path[-1], int) else "M"
    if parent is None or kind not in parent:
        raise ValidationException(INVALID_PATH)
    return parent[kind]


def _existing(
    container: dict[str, AttributeValue] | list[AttributeValue], last: PathElement
) -> AttributeValue | None:
    if isinstance(container, list):
        assert isinstance(last, int)
        return container[last] if last < len(container) else None
    assert isinstance(last, str)
    return container.get(last)


def _set_union(existing: AttributeValue, added: AttributeValue) -> AttributeValue:
    ((kind, members),) = existing.items()
    present = set(members)
    return {kind: members + [m for m in added[kind] if m not in present]}


def _set_difference(existing: AttributeValue, removed: AttributeValue) -> list[str]:
    ((kind, members),) = existing.items()
    gone = set(removed[kind])
    return [m for m in members if m not in gone]


class _Applier:
    """Applies bound actions to a private copy of the item (see the module notes)."""

    def __init__(self, update: BoundUpdate, item: Item) -> None:
        self.update = update
        self.item = item
        self.removals: dict[int, tuple[list[AttributeValue], set[int]]] = {}
        self.appends: dict[int, tuple[list[AttributeValue], list[tuple[int, AttributeValue]]]] = {}

    def put(self, path: ResolvedPath, value: AttributeValue) -> None:
        container = _container(self.item, path)
        last = path[-1]
        if isinstance(container, dict):
            container[last] = value  # type: ignore[index]
            return
        assert isinstance(last, int)
        if last < len(container):
            container[last] = value
        else:
            self.appends.setdefault(id(container), (container, []))[1].append((last, value))

    def remove(self, path: ResolvedPath) -> None:
        container = _container(self.item, path)
        last = path[-1]
        if isinstance(container, dict):
            container.pop(last, None)  # type: ignore[call-overload]
            return
        assert isinstance(last, int)
        if last < len(container):
            self.removals.setdefault(id(container), (container, set()))[1].add(last)

    def add(self, path: ResolvedPath, value: AttributeValue) -> None:
        existing = _existing(_container(self.item, path), path[-1])
        if existing is None:
            self.put(path, clone(value))
            return
        kind = next(iter(value))
        if kind not in existing:
            raise ValidationException(self.update.type_error)
        if kind == "N":
            self.put(path, arithmetic_result(_ARITHMETIC.add(Decimal(existing["N"]), Decimal(value["N"]))))
        else:
            self.put(path, _set_union(existing, value))

    def delete(self, path: ResolvedPath, value: AttributeValue) -> None:
        existing = _existing(_container(self.item, path), path[-1])
        if existing is None:
            return
        kind = next(iter(value))
        if kind not in existing:
            raise ValidationException(self.update.type_error)
        remaining = _set_difference(existing, value)
        if remaining:
            self.put(path, {kind: remaining})
        else:
            self.remove(path)

    def finish(self) -> None:
        """Close the gaps of removed list elements, then append past-the-end assignments."""
        for container, indexes in self.removals.values():
            for index in sorted(indexes, reverse=True):
                del container[index]
        for container, added in self.appends.values():
            container.extend(value for _, value in sorted(added, key=lambda pair: pair[0]))


def apply_update(update: BoundUpdate, item: Item) -> Item:
    """Apply the update to `item` (a private copy the caller owns) and return it."""
    evaluator = _Evaluator(update, item)
    computed = [
        clone(evaluator.value(action.value)) if isinstance(action, SetAction) else None
        for action in update.actions
    ]
    applier = _Applier(update, item)
    for action, path, value in zip(update.actions, update.paths, computed, strict=True):
        if isinstance(action, SetAction):
            assert value is not None
            if (len(path) > 1 or update.deep_values) and len(path) - 1 + value_depth(value) > MAX_NESTING_DEPTH:
                # The same refusal as for a written item nested too deeply.
                raise ValidationException(MSG_NESTING)
            applier.put(path, value)
        elif isinstance(action, RemoveAction):
            applier.remove(path)
        elif isinstance(action, AddAction):
            applier.add(path, update.values[action.value.name])
        else:
            applier.delete(path, update.values[action.value.name])
    applier.finish()
    return item


# -- UPDATED_OLD / UPDATED_NEW ----------------------------------------------------------


def updated_attributes(item: Item | None, paths: tuple[ResolvedPath, ...]) -> Item:
    """The parts of `item` at the update's target paths, shaped like a projection.

    DynamoDB returns the top-level attributes that contain the touched paths,
    cut down to those paths (list elements by their index in `item`).
    """
    if item is None or not paths:
        return {}
    names: dict[str, str] = {}
    placeholder_paths = []
    for path in paths:
        elements: list[PathElement] = []
        for element in path:
            if isinstance(element, str):
                placeholder = f"#p{len(names)}"
                names[placeholder] = element
                elements.append(placeholder)
            else:
                elements.append(element)
        placeholder_paths.append(Path(tuple(elements)))
    projection = Projection("UpdateExpression", "", tuple(placeholder_paths), frozenset(names))
    return project(item, projection, names)
