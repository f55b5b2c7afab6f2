"""The checks that need the request's ExpressionAttributeNames and Values.

DynamoDB validates a condition one atomic comparison or function at a time,
left to right; inside one it reports, in this order: an undefined name or
value (whichever comes first in the text), a wrong number of operands, a
non-distinct first operand, a wrong operand type. The ordering operators
(<, <=, >, >= and BETWEEN) order S, N and B only, so a constant of another
type among their operands is refused before any item is read ("Incorrect
operand type for operator or function; operator or function: <, operand
type: L"), while an attribute of such a type merely makes the condition
false. An update reports all its
undefined names, then values, then overlapping/conflicting paths, then operand
types; a projection its undefined names, then overlapping paths. The unused
name/value checks run last, over every expression of the request.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from partita.errors import ValidationException

from .ast import (
    AddAction,
    And,
    Arith,
    Between,
    Call,
    Compare,
    Condition,
    DeleteAction,
    In,
    Node,
    Not,
    Operand,
    Or,
    Parsed,
    Path,
    PathElement,
    Projection,
    SetAction,
    Update,
    Value,
    path_str,
)
from .compare import ORDERED_TYPES, compare, type_of
from .errors import invalid
from .parser import CONDITION_FUNCTIONS, UPDATE_FUNCTIONS

VALID_TYPES = frozenset(("S", "SS", "N", "NS", "B", "BS", "BOOL", "NULL", "L", "M"))
_ANY_TYPE = "{NS,SS,L,BS,N,M,B,BOOL,NULL,S}"
_ORDERING = frozenset(("<", "<=", ">", ">="))
_VALID_TYPES_TEXT = "{B,NULL,SS,BOOL,L,BS,N,NS,S,M}"
_UPDATE_TYPE_NAMES = {
    "S": "STRING",
    "N": "NUMBER",
    "B": "BINARY",
    "NULL": "NULL",
    "BOOL": "BOOLEAN",
    "L": "LIST",
    "M": "MAP",
}


def check_placeholders(
    parsed: Iterable[Parsed],
    names: Mapping[str, str] | None,
    values: Mapping[str, dict[str, Any]] | None,
) -> None:
    """Every placeholder-dependent check of one request, in DynamoDB's order."""
    names = names or {}
    values = values or {}
    exprs = list(parsed)
    for expr in exprs:
        if isinstance(expr, Condition):
            _check_condition(expr, names, values)
        elif isinstance(expr, Update):
            _check_update(expr, names, values)
        else:
            _check_projection(expr, names)
    used_names: set[str] = set()
    used_values: set[str] = set()
    for expr in exprs:
        used_names |= expr.names
        used_values |= expr.values
    unused = [k for k in names if k not in used_names]
    if unused:
        raise ValidationException(
            "Value provided in ExpressionAttributeNames unused in expressions: "
            f"keys: {{{', '.join(unused)}}}"
        )
    unused = [k for k in values if k not in used_values]
    if unused:
        raise ValidationException(
            "Value provided in ExpressionAttributeValues unused in expressions: "
            f"keys: {{{', '.join(unused)}}}"
        )


def resolve_path(path: Path, names: Mapping[str, str]) -> tuple[PathElement, ...] | None:
    """The path with `#placeholders` replaced, or None if one is undefined."""
    out: list[PathElement] = []
    for e in path.elements:
        if isinstance(e, str) and e[0] == "#":
            real = names.get(e)
            if real is None:
                return None
            out.append(real)
        else:
            out.append(e)
    return tuple(out)


# -- conditions ---------------------------------------------------------


def _atoms(node: Node) -> Iterator[Node]:
    if isinstance(node, (And, Or)):
        yield from _atoms(node.left)
        yield from _atoms(node.right)
    elif isinstance(node, Not):
        yield from _atoms(node.operand)
    else:
        yield node


class _AtomCheck:
    """The four error slots of one atomic condition; the first filled in order wins."""

    __slots__ = ("names", "values", "undefined", "operands", "distinct", "function")

    def __init__(self, names: Mapping[str, str], values: Mapping[str, dict[str, Any]]) -> None:
        self.names = names
        self.values = values
        self.undefined: str | None = None
        self.operands: str | None = None
        self.distinct: str | None = None
        self.function: str | None = None

    def result(self) -> str | None:
        return self.undefined or self.operands or self.distinct or self.function

    # textual walk for undefined placeholders
    def scan(self, operand: Operand) -> None:
        if self.undefined is not None:
            return
        if isinstance(operand, Path):
            for e in operand.elements:
                if isinstance(e, str) and e[0] == "#" and e not in self.names:
                    self.undefined = (
                        "An expression attribute name used in the document path is not defined; "
                        f"attribute name: {e}"
                    )
                    return
        elif isinstance(operand, Value):
            if operand.name not in self.values:
                self.undefined = (
                    "An expression attribute value used in expression is not defined; "
                    f"attribute value: {operand.name}"
                )
        elif isinstance(operand, Call):
            for arg in operand.args:
                self.scan(arg)
        elif isinstance(operand, Arith):
            self.scan(operand.left)
            self.scan(operand.right)

    def value_type(self, operand: Operand) -> str | None:
        """The type DynamoDB knows before reading the item: a value's, or a function's result."""
        if isinstance(operand, Value):
            v = self.values.get(operand.name)
            return type_of(v) if v else None
        if isinstance(operand, Call):
            return "N" if operand.name == "size" else "BOOL"
        return None

    def check_distinct(self, op: str, first: Operand, rest: tuple[Operand, ...]) -> None:
        if self.distinct is not None or not isinstance(first, Path):
            return
        resolved = resolve_path(first, self.names)
        if resolved is None:
            return
        for other in rest:
            if isinstance(other, Path) and resolve_path(other, self.names) == resolved:
                self.distinct = (
                    "The first operand must be distinct from the remaining operands for this "
                    f"operator or function; operator: {op}, first operand: {path_str(resolved)}"
                )
                return

    def type_error(self, name: str, type_name: str) -> None:
        if self.function is None:
            self.function = (
                "Incorrect operand type for operator or function; "
                f"operator or function: {name}, operand type: {type_name}"
            )

    def call(self, call: Call) -> None:
        for arg in call.args:
            if isinstance(arg, Call):
                self.call(arg)
        name = call.name
        args = call.args
        arity = CONDITION_FUNCTIONS.get(name) or UPDATE_FUNCTIONS.get(name)
        if arity is None:
            return
        if len(args) != arity:
            if self.operands is None:
                self.operands = (
                    "Incorrect number of operands for operator or function; "
                    f"operator or function: {name}, number of operands: {len(args)}"
                )
            return
        if len(args) == 2:
            self.check_distinct(name, args[0], args[1:])
        if name in ("attribute_exists", "attribute_not_exists"):
            if not isinstance(args[0], Path) and self.function is None:
                self.function = (
                    f"Operator or function requires a document path; operator or function: {name}"
                )
        elif name == "begins_with":
            for arg in args:
                t = self.value_type(arg)
                if t is not None and t not in ("S", "B"):
                    self.type_error(name, t)
                    break
        elif name == "attribute_type":
            t = self.value_type(args[1])
            if t != "S":
                self.type_error(name, t or _ANY_TYPE)
            else:
                wanted = self.values[args[1].name]["S"]  # type: ignore[union-attr]
                if wanted not in VALID_TYPES and self.function is None:
                    self.function = (
                        f"Invalid attribute type name found; type: {wanted}, "
                        f"valid types: {_VALID_TYPES_TEXT}"
                    )
        elif name == "size":
            t = self.value_type(args[0])
            if t in ("N", "BOOL", "NULL"):
                self.type_error(name, t)  # type: ignore[arg-type]

    def operands_of(self, operands: tuple[Operand, ...]) -> None:
        for op in operands:
            if isinstance(op, Call):
                self.call(op)

    def atom(self, node: Node) -> str | None:
        if isinstance(node, Compare):
            self.scan(node.left)
            self.scan(node.right)
            self.operands_of((node.left, node.right))
            self.check_distinct(node.op, node.left, (node.right,))
            if node.op in _ORDERING:
                self.ordered_operands(node.op, (node.left, node.right))
        elif isinstance(node, Between):
            self.scan(node.operand)
            self.scan(node.low)
            self.scan(node.high)
            self.operands_of((node.operand, node.low, node.high))
            self.ordered_operands("BETWEEN", (node.operand, node.low, node.high))
            self.between_bounds(node.low, node.high)
        elif isinstance(node, In):
            self.scan(node.operand)
            for o in node.options:
                self.scan(o)
            self.operands_of((node.operand, *node.options))
        elif isinstance(node, Call):
            self.scan(node)
            self.call(node)
        return self.result()

    def ordered_operands(self, op: str, operands: tuple[Operand, ...]) -> None:
        """An ordering operator's constants must be S, N or B; the first other one is named.

        Known before the item is read, so it is a ValidationException, not a
        false condition: observed on the service for "a < :l" with a list
        (issue 26's record), with this wording for a BOOL constant in a
        FilterExpression (a DynamoDB connector's recorded error) and in PartiQL
        (the nubo-db conformance suite). Operands are checked in order, and
        before BETWEEN's bound checks, as DynamoDB Local's OperatorValidator
        does. A path's type is not known here; size() is a number.
        """
        for operand in operands:
            if isinstance(operand, Value):
                value = self.values.get(operand.name)
                if value:
                    kind = type_of(value)
                    if kind not in ORDERED_TYPES:
                        self.type_error(op, kind)
                        return

    def between_bounds(self, low: Operand, high: Operand) -> None:
        if self.function is not None or not isinstance(low, Value) or not isinstance(high, Value):
            return
        lo = self.values.get(low.name)
        hi = self.values.get(high.name)
        if not lo or not hi:
            return
        tlo = type_of(lo)
        thi = type_of(hi)
        shown = (
            f"lower bound operand: AttributeValue: {{{tlo}:{_show(lo[tlo])}}}, "
            f"upper bound operand: AttributeValue: {{{thi}:{_show(hi[thi])}}}"
        )
        if tlo != thi:
            self.function = (
                f"The BETWEEN operator requires same data type for lower and upper bounds; {shown}"
            )
        elif tlo in ORDERED_TYPES and compare(lo, hi) > 0:
            self.function = (
                "The BETWEEN operator requires upper bound to be greater than or equal to "
                f"lower bound; {shown}"
            )


def _show(raw: Any) -> str:
    if isinstance(raw, list):
        return "[" + ", ".join(str(x) for x in raw) + "]"
    return str(raw)


def _check_condition(
    cond: Condition, names: Mapping[str, str], values: Mapping[str, dict[str, Any]]
) -> None:
    for atom in _atoms(cond.root):
        error = _AtomCheck(names, values).atom(atom)
        if error is not None:
            raise invalid(cond.kind, error)


# -- projections and updates --------------------------------------------


def _first_undefined_name(paths: Iterable[Path], names: Mapping[str, str]) -> str | None:
    for path in paths:
        for e in path.elements:
            if isinstance(e, str) and e[0] == "#" and e not in names:
                return e
    return None


def _overlap_error(paths: list[tuple[PathElement, ...]]) -> str | None:
    """DynamoDB's overlap/conflict check between every pair of paths, in text order."""
    conflict: str | None = None
    for j, later in enumerate(paths):
        for earlier in paths[:j]:
            for a, b in zip(earlier, later, strict=False):
                if isinstance(a, int) != isinstance(b, int):
                    if conflict is None:
                        conflict = (
                            "Two document paths conflict with each other; must remove or rewrite "
                            f"one of these paths; path one: {path_str(earlier)}, "
                            f"path two: {path_str(later)}"
                        )
                    break
                if a != b:
                    break
            else:
                return (
                    "Two document paths overlap with each other; must remove or rewrite one of "
                    f"these paths; path one: {path_str(earlier)}, path two: {path_str(later)}"
                )
    return conflict


def _check_projection(proj: Projection, names: Mapping[str, str]) -> None:
    missing = _first_undefined_name(proj.paths, names)
    if missing is not None:
        raise invalid(
            proj.kind,
            "An expression attribute name used in the document path is not defined; "
            f"attribute name: {missing}",
        )
    resolved = [resolve_path(p, names) for p in proj.paths]
    error = _overlap_error(resolved)  # type: ignore[arg-type]
    if error is not None:
        raise invalid(proj.kind, error)


def _update_operands(update: Update) -> Iterator[Operand]:
    """Every operand of the update in text order (paths included)."""
    for action in update.actions:
        yield action.path
        if isinstance(action, SetAction):
            yield action.value
        elif isinstance(action, (AddAction, DeleteAction)):
            yield action.value


def _walk(operand: Operand) -> Iterator[Operand]:
    yield operand
    if isinstance(operand, Call):
        for arg in operand.args:
            yield from _walk(arg)
    elif isinstance(operand, Arith):
        yield from _walk(operand.left)
        yield from _walk(operand.right)


class _UpdatePlan:
    """What `_check_update` learns from an update's text alone, worked out once per parsed update.

    The placeholders it uses, in the order the checks meet them (so the first
    undefined one is the one reported); and, when no target path has a
    `#name`, the resolved targets and their overlap/conflict error, which
    then cannot differ between requests.
    """

    __slots__ = ("update", "names", "values", "paths", "overlap", "typed", "computed")

    def __init__(self, update: Update) -> None:
        self.update = update
        flat = [o for top in _update_operands(update) for o in _walk(top)]
        names: dict[str, None] = {}
        values: dict[str, None] = {}
        for o in flat:
            if isinstance(o, Path):
                for e in o.elements:
                    if isinstance(e, str) and e[0] == "#":
                        names.setdefault(e)
            elif isinstance(o, Value):
                values.setdefault(o.name)
        self.names = tuple(names)
        self.values = tuple(values)
        paths = [resolve_path(a.path, {}) for a in update.actions]
        self.paths: tuple[tuple[PathElement, ...], ...] | None = None
        self.overlap: str | None = None
        if all(p is not None for p in paths):
            self.paths = tuple(paths)  # type: ignore[arg-type]
            self.overlap = _overlap_error(paths)  # type: ignore[arg-type]
        #: ADD/DELETE actions (their operand's type is checked), SET actions whose value is not a plain :value.
        self.typed = tuple(a for a in update.actions if isinstance(a, (AddAction, DeleteAction)))
        self.computed = tuple(
            a for a in update.actions if isinstance(a, SetAction) and not isinstance(a.value, Value)
        )


_PLANS: dict[int, _UpdatePlan] = {}
_MAX_PLANS = 4096  # parsed updates are cached by text (a bounded cache), so are their plans


def _plan(update: Update) -> _UpdatePlan:
    plan = _PLANS.get(id(update))
    if plan is None or plan.update is not update:
        if len(_PLANS) >= _MAX_PLANS:
            _PLANS.clear()
        plan = _PLANS[id(update)] = _UpdatePlan(update)
    return plan


def static_update_paths(update: Update) -> tuple[tuple[PathElement, ...], ...] | None:
    """The update's resolved target paths when they use no `#name` (the same for every request)."""
    return _plan(update).paths


def _check_update(
    update: Update, names: Mapping[str, str], values: Mapping[str, dict[str, Any]]
) -> None:
    kind = update.kind
    plan = _plan(update)
    for e in plan.names:
        if e not in names:
            raise invalid(
                kind,
                "An expression attribute name used in the document path is not defined; "
                f"attribute name: {e}",
            )
    for v in plan.values:
        if v not in values:
            raise invalid(
                kind,
                "An expression attribute value used in expression is not defined; "
                f"attribute value: {v}",
            )
    if plan.paths is not None:
        error = plan.overlap
    else:
        error = _overlap_error([resolve_path(a.path, names) for a in update.actions])  # type: ignore[misc]
    if error is not None:
        raise invalid(kind, error)
    for action in plan.typed:
        op = "ADD" if isinstance(action, AddAction) else "DELETE"
        t = type_of(values[action.value.name])
        if t in _UPDATE_TYPE_NAMES and not (op == "ADD" and t == "N"):
            raise invalid(
                kind,
                "Incorrect operand type for operator or function; "
                f"operator: {op}, operand type: {_UPDATE_TYPE_NAMES[t]}",
            )
    for action in plan.computed:
        error = _set_value_error(action.value, values)
        if error is not None:
            raise invalid(kind, error)


def _set_value_error(operand: Operand, values: Mapping[str, dict[str, Any]]) -> str | None:
    """Arity and operand-type errors of SET's functions and arithmetic, innermost first."""
    if isinstance(operand, Call):
        for arg in operand.args:
            error = _set_value_error(arg, values)
            if error is not None:
                return error
        name, args = operand.name, operand.args
        if len(args) != UPDATE_FUNCTIONS.get(name, len(args)):
            return (
                "Incorrect number of operands for operator or function; "
                f"operator or function: {name}, number of operands: {len(args)}"
            )
        if name == "if_not_exists" and not isinstance(args[0], Path):
            return f"Operator or function requires a document path; operator or function: {name}"
        if name == "list_append":
            return _literal_type_error(name, args, "L", values)
        return None
    if isinstance(operand, Arith):
        for side in (operand.left, operand.right):
            error = _set_value_error(side, values)
            if error is not None:
                return error
        return _literal_type_error(operand.op, (operand.left, operand.right), "N", values)
    return None


def _literal_type_error(
    name: str, args: tuple[Operand, ...], wanted: str, values: Mapping[str, dict[str, Any]]
) -> str | None:
    for arg in args:
        if isinstance(arg, Value):
            t = type_of(values[arg.name])
            if t != wanted:
                return (
                    "Incorrect operand type for operator or function; "
                    f"operator or function: {name}, operand type: {t}"
                )
    return None
