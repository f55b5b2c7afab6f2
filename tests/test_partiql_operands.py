"""Ordering comparisons in PartiQL WHERE against every type, as constants and as attributes (Hypothesis).

DynamoDB orders S, N and B only. A constant of another type (BOOL, NULL, L,
M, a set) under <, <=, >, >= or BETWEEN is refused, whichever side it is on,
however deeply the comparison sits, before the table is looked up (recorded in
2026: "Incorrect operand type for operator or function; operator or function:
<, operand type: BOOL"); an attribute of such a type is no error and simply
does not match. The class is operator x constant type x literal-or-parameter
x position x statement kind.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import create_table, error_of, put_all
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

MESSAGE = "Incorrect operand type for operator or function; operator or function: {}, operand type: {}"
ITEM = {
    "pk": {"S": "a"},
    "v": {"N": "5"},
    "s": {"S": "m"},
    "bin": {"B": b"m"},
    "b": {"BOOL": True},
    "nul": {"NULL": True},
    "l": {"L": [{"N": "5"}]},
    "m": {"M": {"k": {"N": "5"}}},
    "ss": {"SS": ["m"]},
}
# (PartiQL literal text or None, parameter value, type)
UNORDERED = [
    ("true", {"BOOL": True}, "BOOL"),
    ("false", {"BOOL": False}, "BOOL"),
    ("null", {"NULL": True}, "NULL"),
    ("[1, 'a']", {"L": [{"N": "1"}, {"S": "a"}]}, "L"),
    ("{'k': 1}", {"M": {"k": {"N": "1"}}}, "M"),
    ("<<1, 2>>", {"NS": ["1", "2"]}, "NS"),
    ("<<'a'>>", {"SS": ["a"]}, "SS"),
    (None, {"BS": [b"a"]}, "BS"),
]
_ORDER: dict[str, Callable[[Any, Any], bool]] = {
    "<": lambda x, y: x < y,
    "<=": lambda x, y: x <= y,
    ">": lambda x, y: x > y,
    ">=": lambda x, y: x >= y,
}
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


@pytest.fixture(scope="module")
def typed_table(ddb: Any) -> str:
    name = f"pq-operands-{uuid.uuid4().hex[:8]}"
    create_table(ddb, name)
    put_all(ddb, name, [ITEM])
    return name


class Constant:
    """One constant operand: written as a literal, or passed as a parameter."""

    def __init__(self, literal: str | None, value: dict[str, Any], use_parameter: bool) -> None:
        self.parameter = use_parameter or literal is None
        self.text = "?" if self.parameter else str(literal)
        self.value = value

    def params(self) -> list[dict[str, Any]]:
        return [self.value] if self.parameter else []


@st.composite
def unordered_constant(draw: st.DrawFn) -> tuple[Constant, str]:
    literal, value, kind = draw(st.sampled_from(UNORDERED))
    return Constant(literal, value, draw(st.booleans())), kind


@st.composite
def refused_condition(draw: st.DrawFn) -> tuple[str, list[dict[str, Any]], str]:
    """(condition text, parameters, the message it gets)."""
    bad, kind = draw(unordered_constant())
    attribute = draw(st.sampled_from(sorted(ITEM)))
    operator = draw(st.sampled_from(["<", "<=", ">", ">=", "BETWEEN"]))
    if operator == "BETWEEN":
        position = draw(st.sampled_from(["operand", "low", "high"]))
        parts = {"operand": attribute, "low": "1", "high": "9", position: bad.text}
        text = f"{parts['operand']} BETWEEN {parts['low']} AND {parts['high']}"
    elif draw(st.booleans()):
        text = f"{attribute} {operator} {bad.text}"
    else:
        text = f"{bad.text} {operator} {attribute}"
    wrap = draw(st.sampled_from(["plain", "not", "or", "parens"]))
    text = {"plain": text, "not": f"NOT {text}", "or": f"(s = 'zz' OR {text})", "parens": f"(({text}))"}[wrap]
    return text, bad.params(), MESSAGE.format(operator, kind)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    case=refused_condition(),
    kind=st.sampled_from(["select", "scan", "update", "delete", "missing-table", "batch", "transaction"]),
)
def test_an_unordered_constant_is_refused_before_the_table(ddb: Any, typed_table: str, case: Any, kind: str) -> None:
    condition, params, message = case
    t = typed_table
    statement = {
        "select": f"SELECT * FROM \"{t}\" WHERE pk = 'a' AND {condition}",
        "scan": f'SELECT * FROM "{t}" WHERE {condition}',
        "update": f"UPDATE \"{t}\" SET touched = 1 WHERE pk = 'a' AND {condition}",
        "delete": f"DELETE FROM \"{t}\" WHERE pk = 'a' AND {condition}",
        "missing-table": f'SELECT * FROM "pq-no-such-table" WHERE {condition}',
        "batch": f"UPDATE \"{t}\" SET touched = 1 WHERE pk = 'a' AND {condition}",
        "transaction": f"UPDATE \"{t}\" SET touched = 1 WHERE pk = 'a' AND {condition}",
    }[kind]
    member: dict[str, Any] = {"Statement": statement}
    if params:
        member["Parameters"] = params
    if kind == "batch":
        out = ddb.batch_execute_statement(Statements=[member])
        assert out["Responses"] == [{"Error": {"Code": "ValidationError", "Message": message}}], statement
    else:
        with pytest.raises(ClientError) as excinfo:
            if kind == "transaction":
                ddb.execute_transaction(TransactStatements=[member])
            else:
                ddb.execute_statement(**member)
        if kind == "transaction":
            message = f"Validation failed in TransactStatements[0]: {message}"
        assert error_of(excinfo) == ("ValidationException", message), statement
    assert ddb.get_item(TableName=t, Key={"pk": {"S": "a"}})["Item"] == ITEM


def _ordered_constants() -> st.SearchStrategy[tuple[Constant, str, Any]]:
    """An S, N or B constant: (operand, its type, its Python value for the model)."""
    numbers = st.integers(0, 9).map(lambda n: (Constant(str(n), {"N": str(n)}, False), "N", n))
    number_params = st.integers(0, 9).map(lambda n: (Constant(None, {"N": str(n)}, True), "N", n))
    strings = st.sampled_from("alm mz").map(lambda c: (Constant(f"'{c}'", {"S": c}, False), "S", c))
    binaries = st.sampled_from([b"a", b"m", b"z"]).map(lambda b: (Constant(None, {"B": b}, True), "B", b))
    return st.one_of(numbers, number_params, strings, binaries)


_MODEL: dict[str, tuple[str, Any]] = {"v": ("N", 5), "s": ("S", "m"), "bin": ("B", b"m")}


@st.composite
def evaluated_condition(draw: st.DrawFn) -> tuple[str, list[dict[str, Any]], bool]:
    """A comparison with an S, N or B constant against any attribute, and whether the item matches."""
    attribute = draw(st.sampled_from(sorted(set(ITEM) - {"pk"})))
    held = _MODEL.get(attribute)
    if draw(st.booleans()):
        # Bounds of one type, in order: bounds that are not are another rule's business.
        (low, kind, lo), (high, _, hi) = draw(
            st.tuples(_ordered_constants(), _ordered_constants()).filter(lambda b: b[0][1] == b[1][1] and b[0][2] <= b[1][2])
        )
        text = f"{attribute} BETWEEN {low.text} AND {high.text}"
        params = low.params() + high.params()
        matched = held is not None and held[0] == kind and lo <= held[1] <= hi
    else:
        constant, kind, value = draw(_ordered_constants())
        operator = draw(st.sampled_from(sorted(_ORDER)))
        params = constant.params()
        if draw(st.booleans()):
            text = f"{attribute} {operator} {constant.text}"
        else:
            text, operator = f"{constant.text} {operator} {attribute}", _FLIP[operator]
        matched = held is not None and held[0] == kind and _ORDER[operator](held[1], value)
    if draw(st.booleans()):
        text, matched = f"NOT ({text})", not matched
    return text, params, matched


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=evaluated_condition())
def test_ordered_constants_compare_and_other_attribute_types_do_not_match(ddb: Any, typed_table: str, case: Any) -> None:
    condition, params, matched = case
    statement = f"SELECT pk FROM \"{typed_table}\" WHERE pk = 'a' AND {condition}"
    extra = {"Parameters": params} if params else {}
    items = ddb.execute_statement(Statement=statement, **extra)["Items"]
    assert items == ([{"pk": {"S": "a"}}] if matched else []), statement


def test_recorded_cases(ddb: Any, typed_table: str) -> None:
    t = typed_table
    with pytest.raises(ClientError) as excinfo:
        ddb.execute_statement(Statement=f"SELECT pk FROM \"{t}\" WHERE pk = 'a' AND v < ?", Parameters=[{"BOOL": True}])
    assert error_of(excinfo) == ("ValidationException", MESSAGE.format("<", "BOOL"))
    with pytest.raises(ClientError) as excinfo:
        ddb.execute_statement(Statement=f"SELECT pk FROM \"{t}\" WHERE pk = 'a' AND attribute_exists(v) > false")
    assert error_of(excinfo) == ("ValidationException", MESSAGE.format(">", "BOOL"))
    # SET's + and - take numbers (recorded), ahead of the WHERE's condition.
    for value, operator, kind in (("'a' + 1", "+", "S"), ("v - null", "-", "NULL"), ("v + [1]", "+", "L")):
        with pytest.raises(ClientError) as excinfo:
            ddb.execute_statement(Statement=f"UPDATE \"{t}\" SET v = {value} WHERE pk = 'a' AND nope = 'x'")
        assert error_of(excinfo) == ("ValidationException", MESSAGE.format(operator, kind))
    # An attribute of an unordered type is no error: the comparison is false, its negation true.
    for attribute in ("b", "nul", "l", "m", "ss"):
        where = f"pk = 'a' AND {attribute} < 3"
        assert ddb.execute_statement(Statement=f'SELECT pk FROM "{t}" WHERE {where}')["Items"] == []
        where = f"pk = 'a' AND NOT {attribute} >= 'a'"
        assert ddb.execute_statement(Statement=f'SELECT pk FROM "{t}" WHERE {where}')["Items"] == [{"pk": {"S": "a"}}]
