"""Property tests: random update expressions applied by the server match a small model.

The model below is written from DynamoDB's documented rules, independently of
the server's code: SET values are computed from the item before the update;
list indexes name positions in the original list (removed elements are
marked, then dropped; assignments past the end are appended in index order);
ADD adds numbers or unions sets (a missing target counts as nothing);
DELETE subtracts sets and drops an emptied one; a missing parent is an
invalid path, a missing source attribute or a wrong type are errors. The
server's answer (the stored item, UPDATED_OLD/UPDATED_NEW, or the error
message) must equal the model's.
"""

from __future__ import annotations

import copy
import itertools
from dataclasses import dataclass
from typing import Any

import pytest
from botocore.exceptions import ClientError
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

INVALID_PATH = "The document path provided in the update expression is invalid for update"
MISSING_ATTRIBUTE = "The provided expression refers to an attribute that does not exist in the item"
WRONG_TYPE = "An operand in the update expression has an incorrect data type"

Path = tuple[str | int, ...]
AV = dict[str, Any]

# -- strategies ------------------------------------------------------------------------------

numbers = st.integers(-5, 5).map(lambda i: {"N": str(i)})
strings = st.sampled_from(["x", "y", ""]).map(lambda s: {"S": s})
string_sets = st.sets(st.sampled_from(["p", "q", "r"]), min_size=1).map(lambda s: {"SS": sorted(s)})
number_sets = st.sets(st.sampled_from(["1", "2", "3"]), min_size=1).map(lambda s: {"NS": sorted(s)})
scalars = st.one_of(numbers, strings)
lists = st.lists(st.one_of(numbers, strings, string_sets), max_size=5).map(lambda v: {"L": v})
long_lists = st.lists(st.one_of(numbers, strings, string_sets), min_size=3, max_size=6).map(
    lambda v: {"L": v}
)
maps = st.dictionaries(st.sampled_from(["x", "y"]), st.one_of(numbers, strings, string_sets, lists),
                       max_size=2).map(lambda v: {"M": v})
values = st.one_of(numbers, strings, string_sets, number_sets, lists, maps)


@st.composite
def items(draw: Any, on_lists: bool = False) -> dict[str, AV]:
    """A random item; for list-focused updates `l` is always a list of 3 to 6 elements."""
    item: dict[str, AV] = {}
    for name, strategy in (("a", values), ("b", values), ("c", values), ("n", numbers), ("s", strings),
                           ("l", st.one_of(long_lists, long_lists, lists, scalars)), ("m", st.one_of(maps, maps, scalars))):
        if draw(st.integers(0, 3)) > 0:  # present three times in four
            item[name] = draw(strategy)
    if on_lists:
        item["l"] = draw(long_lists)
    return item


TARGETS: list[Path] = [
    ("a",), ("b",), ("c",), ("n",), ("s",), ("l",), ("m",), ("absent",),
    ("l", 0), ("l", 1), ("l", 2), ("l", 3), ("l", 6), ("l", 0), ("l", 1), ("l", 2), ("l", 1, 0),
    ("m", "x"), ("m", "y"), ("m", "x", 0), ("m", "x", 2),
    ("m", "z", "w"), ("absent", "x"), ("absent", 2),
]
SOURCES: list[Path] = [("a",), ("b",), ("c",), ("n",), ("n",), ("s",), ("l",), ("l", 0), ("m",), ("m", "x"),
                       ("absent",)]


def _clash(p: Path, q: Path) -> bool:
    """Overlap (one a prefix of the other) or conflict (index against name), as DynamoDB defines them."""
    for x, y in zip(p, q, strict=False):
        if isinstance(x, int) != isinstance(y, int):
            return True
        if x != y:
            return False
    return True


@dataclass(frozen=True)
class Action:
    clause: str  # SET REMOVE ADD DELETE
    path: Path
    form: str = ""  # for SET: value path plus minus ine append prepend
    source: Path = ()
    value: AV | None = None


@st.composite
def actions(draw: Any, path: Path, on_lists: bool) -> Action:
    """One action on `path`; on list elements mostly SET a value and REMOVE, rarely ADD."""
    clauses = ["SET", "SET", "REMOVE", "REMOVE", "ADD"] if on_lists else ["SET", "SET", "REMOVE", "ADD", "DELETE"]
    clause = draw(st.sampled_from(clauses))
    if clause == "REMOVE":
        return Action("REMOVE", path)
    if clause == "ADD":
        return Action("ADD", path, value=draw(st.one_of(numbers, string_sets, number_sets)))
    if on_lists:
        return Action("SET", path, "value", (), draw(values))
    if clause == "DELETE":
        return Action("DELETE", path, value=draw(st.one_of(string_sets, number_sets)))
    form = draw(st.sampled_from(["value", "value", "path", "plus", "minus", "ine", "append", "prepend"]))
    source = draw(st.sampled_from(SOURCES))
    if form in ("plus", "minus"):
        value = draw(numbers)
    elif form in ("append", "prepend"):
        value = draw(lists)
    else:
        value = draw(values)
    return Action("SET", path, form, source, value)


# Half of the updates work on list elements only, where positions make the rules subtle.
LIST_TARGETS: list[Path] = [("l", 0), ("l", 1), ("l", 2), ("l", 3), ("l", 4), ("l", 7), ("l", 9)]


@st.composite
def updates(draw: Any, on_lists: bool) -> list[Action]:
    universe = LIST_TARGETS if on_lists else TARGETS
    wanted = draw(st.lists(st.sampled_from(universe), min_size=1, max_size=5))
    targets: list[Path] = []
    for path in wanted:
        if path not in targets and not any(_clash(path, kept) for kept in targets):
            targets.append(path)
    chosen = [draw(actions(path, on_lists)) for path in targets]
    clause_order = draw(st.permutations(["SET", "REMOVE", "ADD", "DELETE"]))
    # The expression groups actions by clause; the model applies them in that text order.
    return [a for clause in clause_order for a in chosen if a.clause == clause]


@st.composite
def cases(draw: Any) -> tuple[dict[str, AV], list[Action]]:
    """An item and an update for it; half of them work on the elements of one list."""
    on_lists = draw(st.booleans())
    return draw(items(on_lists)), draw(updates(on_lists))


# -- rendering -----------------------------------------------------------------------------------


def render_path(path: Path) -> str:
    out = ""
    for element in path:
        out += f"[{element}]" if isinstance(element, int) else (f".{element}" if out else element)
    return out


def render_set_value(action: Action, value: str) -> str:
    """The right-hand side of a SET action, with `value` the placeholder of its literal."""
    source = render_path(action.source)
    forms = {
        "value": value,
        "path": source,
        "plus": f"{source} + {value}",
        "minus": f"{value} - {source}",
        "ine": f"if_not_exists({source}, {value})",
        "append": f"list_append({source}, {value})",
        "prepend": f"list_append({value}, {source})",
    }
    return forms[action.form]


def render(update: list[Action]) -> tuple[str, dict[str, AV]]:
    """The UpdateExpression text (clauses in the actions' order) and its values."""
    placeholders: dict[str, AV] = {}
    clauses: dict[str, list[str]] = {}
    for action in update:
        target = render_path(action.path)
        if action.value is not None and (action.clause != "SET" or action.form != "path"):
            name = f":v{len(placeholders)}"
            placeholders[name] = action.value
        if action.clause == "REMOVE":
            text = target
        elif action.clause in ("ADD", "DELETE"):
            text = f"{target} {name}"
        else:
            text = f"{target} = {render_set_value(action, name if action.form != 'path' else '')}"
        clauses.setdefault(action.clause, []).append(text)
    return " ".join(f"{clause} {', '.join(parts)}" for clause, parts in clauses.items()), placeholders


# -- the model -----------------------------------------------------------------------------------


class ModelError(Exception):
    pass


_REMOVED = object()


def lookup(item: dict[str, AV], path: Path) -> AV | None:
    current: Any = {"M": item}
    for element in path:
        if isinstance(element, int):
            elements = current.get("L") if isinstance(current, dict) else None
            if elements is None or element >= len(elements) or elements[element] is _REMOVED:
                return None
            current = elements[element]
        else:
            members = current.get("M") if isinstance(current, dict) else None
            if members is None or element not in members:
                return None
            current = members[element]
    return current


def operand(item: dict[str, AV], action: Action) -> AV:
    def source() -> AV:
        found = lookup(item, action.source)
        if found is None:
            raise ModelError(MISSING_ATTRIBUTE)
        return found

    def number(v: AV) -> int:
        if "N" not in v:
            raise ModelError(WRONG_TYPE)
        return int(v["N"])

    def items_of(v: AV) -> list[AV]:
        if "L" not in v:
            raise ModelError(WRONG_TYPE)
        return v["L"]

    assert action.value is not None
    if action.form == "value":
        return action.value
    if action.form == "path":
        return source()
    if action.form == "plus":
        return {"N": str(number(source()) + number(action.value))}
    if action.form == "minus":
        return {"N": str(number(action.value) - number(source()))}
    if action.form == "ine":
        found = lookup(item, action.source)
        return found if found is not None else action.value
    if action.form == "append":
        return {"L": items_of(source()) + items_of(action.value)}
    return {"L": items_of(action.value) + items_of(source())}


class Model:
    def __init__(self, item: dict[str, AV]) -> None:
        self.item = copy.deepcopy(item)
        self.appends: list[tuple[list[Any], int, AV]] = []
        self.touched_lists: list[list[Any]] = []

    def parent(self, path: Path) -> dict[str, AV] | list[Any]:
        if len(path) == 1:
            return self.item
        holder = lookup(self.item, path[:-1])
        kind = "L" if isinstance(path[-1], int) else "M"
        if holder is None or kind not in holder:
            raise ModelError(INVALID_PATH)
        return holder[kind]

    def current(self, path: Path) -> AV | None:
        self.parent(path)
        return lookup(self.item, path)

    def write(self, path: Path, value: AV) -> None:
        parent = self.parent(path)
        last = path[-1]
        if isinstance(parent, list):
            assert isinstance(last, int)
            if last < len(parent):
                parent[last] = value
            else:
                self.appends.append((parent, last, value))
        else:
            parent[last] = value  # type: ignore[index]

    def erase(self, path: Path) -> None:
        parent = self.parent(path)
        last = path[-1]
        if isinstance(parent, list):
            assert isinstance(last, int)
            if last < len(parent):
                parent[last] = _REMOVED
                self.touched_lists.append(parent)
        else:
            parent.pop(last, None)  # type: ignore[call-overload]

    def add(self, path: Path, value: AV) -> None:
        existing = self.current(path)
        if existing is None:
            self.write(path, copy.deepcopy(value))
            return
        kind = next(iter(value))
        if kind not in existing:
            raise ModelError(WRONG_TYPE)
        if kind == "N":
            self.write(path, {"N": str(int(existing["N"]) + int(value["N"]))})
        else:
            merged = list(existing[kind]) + [m for m in value[kind] if m not in existing[kind]]
            self.write(path, {kind: merged})

    def delete(self, path: Path, value: AV) -> None:
        existing = self.current(path)
        if existing is None:
            return
        kind = next(iter(value))
        if kind not in existing:
            raise ModelError(WRONG_TYPE)
        left = [m for m in existing[kind] if m not in value[kind]]
        if left:
            self.write(path, {kind: left})
        else:
            self.erase(path)

    def run(self, update: list[Action]) -> dict[str, AV]:
        computed = [copy.deepcopy(operand(self.item, a)) if a.clause == "SET" else None for a in update]
        for action, value in zip(update, computed, strict=True):
            if action.clause == "SET":
                assert value is not None
                self.write(action.path, value)
            elif action.clause == "REMOVE":
                self.erase(action.path)
            elif action.clause == "ADD":
                assert action.value is not None
                self.add(action.path, action.value)
            else:
                assert action.value is not None
                self.delete(action.path, action.value)
        for touched in self.touched_lists:
            touched[:] = [e for e in touched if e is not _REMOVED]
        for target, _, value in sorted(self.appends, key=lambda entry: entry[1]):
            target.append(value)
        return self.item


def model_projection(item: dict[str, AV] | None, paths: list[Path]) -> dict[str, AV]:
    """The touched paths of `item`, nested as DynamoDB returns them (lists in index order)."""
    tree: dict[Any, Any] = {}
    for path in paths:
        found = None if item is None else lookup(item, path)
        if found is None:
            continue
        node = tree
        for element, following in itertools.pairwise(path):
            node = node.setdefault(element, {"__kind__": "L" if isinstance(following, int) else "M"})
        node[path[-1]] = {"__leaf__": found}

    def build(node: dict[Any, Any]) -> AV:
        if "__leaf__" in node:
            return node["__leaf__"]
        children = {k: v for k, v in node.items() if k != "__kind__"}
        if node["__kind__"] == "L":
            return {"L": [build(children[i]) for i in sorted(children)]}
        return {"M": {k: build(v) for k, v in children.items()}}

    return {name: build(sub) for name, sub in tree.items()}


def canonical(value: Any) -> Any:
    """Sets compare without order; everything else as is."""
    if isinstance(value, dict):
        return {k: sorted(v) if k in ("SS", "NS") else canonical(v) for k, v in value.items()}
    if isinstance(value, list):
        return [canonical(v) for v in value]
    return value


# -- the property ------------------------------------------------------------------------------

_keys = itertools.count()


@pytest.fixture(scope="module")
def property_table(ddb: Any) -> str:
    name = f"props-{next(_keys)}-{id(ddb)}"
    ddb.create_table(TableName=name, KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                     BillingMode="PAY_PER_REQUEST")
    return name


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=cases(), mode=st.sampled_from(["UPDATED_NEW", "UPDATED_OLD"]))
def test_random_updates_match_the_model(
    ddb: Any, property_table: str, case: tuple[dict[str, AV], list[Action]], mode: str
) -> None:
    item, update = case
    key = {"pk": {"S": f"item-{next(_keys)}"}}
    ddb.put_item(TableName=property_table, Item={**key, **item})
    expression, placeholders = render(update)
    request: dict[str, Any] = {"TableName": property_table, "Key": key, "UpdateExpression": expression,
                               "ReturnValues": mode}
    if placeholders:
        request["ExpressionAttributeValues"] = placeholders
    try:
        expected = Model(item).run(update)
    except ModelError as error:
        event(f"error: {error}")
        with pytest.raises(ClientError) as excinfo:
            ddb.update_item(**request)
        assert excinfo.value.response["Error"]["Message"] == str(error), expression
        stored = ddb.get_item(TableName=property_table, Key=key)["Item"]
        assert canonical(stored) == canonical({**key, **item})
        return
    event("applied")
    answer = ddb.update_item(**request).get("Attributes", {})
    stored = ddb.get_item(TableName=property_table, Key=key)["Item"]
    assert canonical(stored) == canonical({**key, **expected}), expression
    shown = model_projection(expected if mode == "UPDATED_NEW" else item, [a.path for a in update])
    assert canonical(answer) == canonical(shown), expression
