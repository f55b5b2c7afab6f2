"""Ordering comparisons against constants of unordered types (issue 26, facts C1 and C2).

<, <=, >, >= and BETWEEN order S, N and B only. A constant
(ExpressionAttributeValues) of any other type among their operands is known
before the item is read, so DynamoDB refuses the request: "Invalid
ConditionExpression: Incorrect operand type for operator or function;
operator or function: <, operand type: L" (observed on the service; the same
words for a BOOL constant in a FilterExpression are quoted by a DynamoDB
connector, and for PartiQL by the nubo-db conformance suite). An attribute of
the item of such a type only makes the condition false. BETWEEN with two
constant bounds also refuses bounds of different types or in the wrong order
(dynalite's recordings of the service). The property test below draws the
operator, each operand (a constant or an attribute, of every type, or a
missing attribute) and the expression parameter, and compares the server
with a model written from these rules.
"""

from __future__ import annotations

import base64
import itertools
from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import create_table, error_of
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

ORDERED = ("S", "N", "B")
TYPES = ("S", "N", "B", "BOOL", "NULL", "L", "M", "SS", "NS", "BS")

#: Three values of each ordered type, in ascending order; one of each other type.
SCALARS: dict[str, list[Any]] = {
    "S": [{"S": "a"}, {"S": "m"}, {"S": "z"}],
    "N": [{"N": "-1"}, {"N": "5"}, {"N": "12"}],
    "B": [{"B": b"\x01"}, {"B": b"\x05"}, {"B": b"\x10"}],
}
OTHERS: dict[str, Any] = {
    "BOOL": {"BOOL": True},
    "NULL": {"NULL": True},
    "L": {"L": [{"N": "1"}, {"N": "2"}]},
    "M": {"M": {"x": {"N": "1"}}},
    "SS": {"SS": ["a"]},
    "NS": {"NS": ["1"]},
    "BS": {"BS": [b"\x01"]},
}
#: The item every condition reads: one attribute per value above.
ITEM: dict[str, Any] = {"pk": {"S": "k"}}
ATTRIBUTES: dict[tuple[str, int], str] = {}
for kind, values in SCALARS.items():
    for i, value in enumerate(values):
        ITEM[f"{kind.lower()}{i}"] = value
        ATTRIBUTES[(kind, i)] = f"{kind.lower()}{i}"
for kind, value in OTHERS.items():
    ITEM[f"{kind.lower()}x"] = value
    ATTRIBUTES[(kind, 0)] = f"{kind.lower()}x"

_counter = itertools.count()


def _value(kind: str, rank: int) -> Any:
    return SCALARS[kind][rank] if kind in SCALARS else OTHERS[kind]


def _shown(value: dict[str, Any]) -> str:
    """How the BETWEEN messages show a constant: AttributeValue: {N:5}."""
    ((kind, raw),) = value.items()
    if kind == "B":
        raw = base64.b64encode(raw).decode()  # shown as sent on the wire (unconfirmed for B)
    return f"AttributeValue: {{{kind}:{raw}}}"


def _key(value: dict[str, Any]) -> Any:
    ((kind, raw),) = value.items()
    return int(raw) if kind == "N" else raw


# An operand: ("value", kind, rank) for a constant, ("path", kind, rank) for an attribute,
# ("missing",) for an attribute the item does not have.
operands = st.one_of(
    st.tuples(st.sampled_from(["value", "path"]), st.sampled_from(TYPES), st.integers(0, 2)).map(
        lambda t: (t[0], t[1], t[2] if t[1] in SCALARS else 0)
    ),
    st.just(("missing",)),
)


def _model(op: str, ops: list[tuple[Any, ...]]) -> tuple[str, Any]:
    """("error", message tail) or ("result", bool), from the rules in the module docstring."""
    for operand in ops:
        if operand[0] == "value" and operand[1] not in ORDERED:
            return "error", f"Incorrect operand type for operator or function; operator or function: {op}, " \
                            f"operand type: {operand[1]}"
    if op == "BETWEEN" and ops[1][0] == "value" and ops[2][0] == "value":
        low, high = _value(ops[1][1], ops[1][2]), _value(ops[2][1], ops[2][2])
        bounds = f"lower bound operand: {_shown(low)}, upper bound operand: {_shown(high)}"
        if ops[1][1] != ops[2][1]:
            return "error", f"The BETWEEN operator requires same data type for lower and upper bounds; {bounds}"
        if _key(low) > _key(high):
            return "error", "The BETWEEN operator requires upper bound to be greater than or equal to lower " \
                            f"bound; {bounds}"
    if any(operand[0] == "missing" or operand[1] not in ORDERED for operand in ops):
        return "result", False
    if len({operand[1] for operand in ops}) != 1:
        return "result", False
    keys = [_key(_value(operand[1], operand[2])) for operand in ops]
    if op == "BETWEEN":
        return "result", keys[1] <= keys[0] <= keys[2]
    left, right = keys
    return "result", {"<": left < right, "<=": left <= right, ">": left > right, ">=": left >= right}[op]


def _expression(op: str, ops: list[tuple[Any, ...]]) -> tuple[str, dict[str, Any]]:
    texts = []
    values: dict[str, Any] = {}
    for i, operand in enumerate(ops):
        if operand[0] == "value":
            texts.append(f":c{i}")
            values[f":c{i}"] = _value(operand[1], operand[2])
        elif operand[0] == "path":
            texts.append(ATTRIBUTES[(operand[1], operand[2])])
        else:
            texts.append("absent")
    if op == "BETWEEN":
        return f"{texts[0]} BETWEEN {texts[1]} AND {texts[2]}", values
    return f"{texts[0]} {op} {texts[1]}", values


@pytest.fixture(scope="module")
def condition_table(ddb: Any) -> str:
    name = f"cmp-{next(_counter)}-{id(ddb)}"
    create_table(ddb, name)
    ddb.put_item(TableName=name, Item=ITEM)
    return name


def _run(ddb: Any, table: str, param: str, text: str, values: dict[str, Any]) -> tuple[str, Any]:
    """("error", (code, message)) or ("result", whether the condition held)."""
    try:
        if param == "ConditionExpression":
            ddb.update_item(TableName=table, Key={"pk": {"S": "k"}}, UpdateExpression="SET z = :z",
                            ConditionExpression=text, ExpressionAttributeValues={**values, ":z": {"N": "1"}})
            return "result", True
        out = ddb.query(TableName=table, KeyConditionExpression="pk = :pk", FilterExpression=text,
                        ExpressionAttributeValues={**values, ":pk": {"S": "k"}})
        return "result", out["Count"] == 1
    except ClientError as error:
        code, message = error.response["Error"]["Code"], error.response["Error"]["Message"]
        if code == "ConditionalCheckFailedException":
            assert message == "The conditional request failed"
            return "result", False
        return "error", (code, message)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(op=st.sampled_from(["<", "<=", ">", ">=", "BETWEEN"]), ops=st.lists(operands, min_size=3, max_size=3),
       param=st.sampled_from(["ConditionExpression", "FilterExpression"]))
def test_ordering_operators_against_every_type(ddb: Any, condition_table: str, op: str,
                                              ops: list[tuple[Any, ...]], param: str) -> None:
    ops = ops if op == "BETWEEN" else ops[:2]
    # The same attribute twice is another rule ("The first operand must be distinct ...").
    assume(ops[0][0] == "value" or ops[0] not in ops[1:])
    text, values = _expression(op, ops)
    kind, expected = _model(op, ops)
    outcome = _run(ddb, condition_table, param, text, values)
    if kind == "error":
        assert outcome == ("error", ("ValidationException", f"Invalid {param}: {expected}")), text
    else:
        assert outcome == ("result", expected), text


# -- the observed cases, one by one --------------------------------------------------------


@pytest.mark.parametrize("condition", ["a < :l", ":l < a", "a <= :l", ":l >= a", "a > :l", "a >= :l"])
def test_a_list_constant_is_refused_on_an_existing_item(ddb: Any, hash_table: str, condition: str) -> None:
    ddb.put_item(TableName=hash_table, Item={"pk": {"S": "k"}, "a": {"N": "1"}})
    op = condition.split()[1]
    with pytest.raises(ClientError) as excinfo:
        ddb.update_item(TableName=hash_table, Key={"pk": {"S": "k"}}, UpdateExpression="SET z = :newval",
                        ConditionExpression=condition,
                        ExpressionAttributeValues={":newval": {"N": "2"}, ":l": {"L": [{"N": "1"}, {"N": "2"}]}})
    assert error_of(excinfo) == ("ValidationException", "Invalid ConditionExpression: Incorrect operand type for "
                                 f"operator or function; operator or function: {op}, operand type: L")
    assert ddb.get_item(TableName=hash_table, Key={"pk": {"S": "k"}})["Item"] == {"pk": {"S": "k"}, "a": {"N": "1"}}


def test_the_constant_is_checked_before_the_item_is_read(ddb: Any, hash_table: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        ddb.delete_item(TableName=hash_table, Key={"pk": {"S": "absent"}}, ConditionExpression="a > :m",
                        ExpressionAttributeValues={":m": {"M": {}}})
    assert error_of(excinfo) == ("ValidationException", "Invalid ConditionExpression: Incorrect operand type for "
                                 "operator or function; operator or function: >, operand type: M")


@pytest.mark.parametrize(("condition", "values", "message"), [
    ("a BETWEEN :v1 AND :v2", {":v1": {"L": [{"N": "1"}, {"N": "2"}]}, ":v2": {"L": [{"N": "2"}, {"N": "3"}]}},
     "Incorrect operand type for operator or function; operator or function: BETWEEN, operand type: L"),
    ("a between :v1 and :v2", {":v1": {"N": "2"}, ":v2": {"N": "1"}},
     "The BETWEEN operator requires upper bound to be greater than or equal to lower bound; "
     "lower bound operand: AttributeValue: {N:2}, upper bound operand: AttributeValue: {N:1}"),
    ("a BETWEEN :v1 AND :v2", {":v1": {"N": "2"}, ":v2": {"S": "x"}},
     "The BETWEEN operator requires same data type for lower and upper bounds; "
     "lower bound operand: AttributeValue: {N:2}, upper bound operand: AttributeValue: {S:x}"),
    # A bound of an unordered type is named before the bounds are compared.
    ("a BETWEEN :v1 AND :v2", {":v1": {"N": "2"}, ":v2": {"SS": ["x"]}},
     "Incorrect operand type for operator or function; operator or function: BETWEEN, operand type: SS"),
    (":v1 BETWEEN a AND two", {":v1": {"BOOL": False}},
     "Incorrect operand type for operator or function; operator or function: BETWEEN, operand type: BOOL"),
])
def test_between_with_constant_bounds(ddb: Any, hash_table: str, condition: str, values: dict[str, Any],
                                      message: str) -> None:
    ddb.put_item(TableName=hash_table, Item={"pk": {"S": "k"}, "a": {"N": "1"}, "two": {"N": "2"}})
    with pytest.raises(ClientError) as excinfo:
        ddb.update_item(TableName=hash_table, Key={"pk": {"S": "k"}}, UpdateExpression="SET z = :z",
                        ConditionExpression=condition, ExpressionAttributeValues={**values, ":z": {"N": "0"}})
    assert error_of(excinfo) == ("ValidationException", f"Invalid ConditionExpression: {message}")


@pytest.mark.parametrize(("condition", "values"), [
    ("a BETWEEN x AND y", {}),
    ("a between x and y", {}),
    ("a BETWEEN two AND :v", {":v": {"N": "1"}}),
    ("a BETWEEN :v AND two", {":v": {"N": "3"}}),
    ("a BETWEEN two AND :v", {":v": {"S": "x"}}),
    ("x < :v", {":v": {"N": "3"}}),
    ("a < :v", {":v": {"S": "x"}}),
    ("absent < :v", {":v": {"N": "3"}}),
])
def test_attributes_of_any_type_only_make_the_condition_false(ddb: Any, hash_table: str, condition: str,
                                                              values: dict[str, Any]) -> None:
    item = {"pk": {"S": "k"}, "a": {"N": "1"}, "two": {"N": "2"}, "x": {"L": [{"N": "1"}, {"N": "2"}]},
            "y": {"L": [{"N": "2"}, {"N": "3"}]}}
    ddb.put_item(TableName=hash_table, Item=item)
    with pytest.raises(ClientError) as excinfo:
        ddb.update_item(TableName=hash_table, Key={"pk": {"S": "k"}}, UpdateExpression="SET z = :z",
                        ConditionExpression=condition, ExpressionAttributeValues={**values, ":z": {"N": "0"}})
    assert error_of(excinfo) == ("ConditionalCheckFailedException", "The conditional request failed")
    assert ddb.get_item(TableName=hash_table, Key={"pk": {"S": "k"}})["Item"] == item


@pytest.mark.parametrize(("condition", "op", "kind"), [
    ("pk = :p AND sk < :c", "<", "NULL"),
    ("pk = :p AND sk >= :c", ">=", "BS"),
    ("pk = :p AND sk BETWEEN :c AND :d", "BETWEEN", "NS"),
])
def test_key_conditions_refuse_them_too(ddb: Any, range_table: str, condition: str, op: str, kind: str) -> None:
    values = {":p": {"S": "k"}, ":c": {"NULL": True} if kind == "NULL" else {kind: [b"1"] if kind == "BS" else ["1"]}}
    if ":d" in condition:
        values[":d"] = {"N": "9"}
    with pytest.raises(ClientError) as excinfo:
        ddb.query(TableName=range_table, KeyConditionExpression=condition, ExpressionAttributeValues=values)
    assert error_of(excinfo) == ("ValidationException", "Invalid KeyConditionExpression: Incorrect operand type for "
                                 f"operator or function; operator or function: {op}, operand type: {kind}")


def test_scan_filter_names_its_parameter(ddb: Any, hash_table: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        ddb.scan(TableName=hash_table, FilterExpression="size(a) <= :b", ExpressionAttributeValues={":b": {"BOOL": True}})
    assert error_of(excinfo) == ("ValidationException", "Invalid FilterExpression: Incorrect operand type for "
                                 "operator or function; operator or function: <=, operand type: BOOL")


def test_equality_and_in_accept_every_type(ddb: Any, hash_table: str) -> None:
    ddb.put_item(TableName=hash_table, Item={"pk": {"S": "k"}, "l": {"L": [{"N": "1"}]}})
    ddb.update_item(TableName=hash_table, Key={"pk": {"S": "k"}}, UpdateExpression="SET z = :z",
                    ConditionExpression="l = :l AND l IN (:m, :l) AND l <> :m",
                    ExpressionAttributeValues={":l": {"L": [{"N": "1"}]}, ":m": {"M": {}}, ":z": {"N": "1"}})
    assert ddb.get_item(TableName=hash_table, Key={"pk": {"S": "k"}})["Item"]["z"] == {"N": "1"}
