"""UpdateItem's four actions against a real server: SET, REMOVE, ADD and DELETE.

What each action does to values, paths, lists, numbers and sets, and the exact
message when its operands or the item's attributes have the wrong type.
Expression syntax is in test_update_item_syntax.py; keys, conditions,
ReturnValues, capacity and size in test_update_item_results.py.

Expected outcomes come from DynamoDB's documentation and from behaviour
recorded against the real service (dynalite's updateItem suite, ExtendDB's
and Alternator's conformance notes).
"""

from __future__ import annotations

from typing import Any

import pytest
from update_helpers import KEY, L, N, S, failure, get, put, update

INVALID_PATH = "The document path provided in the update expression is invalid for update"
MISSING_ATTRIBUTE = "The provided expression refers to an attribute that does not exist in the item"
WRONG_TYPE = "An operand in the update expression has an incorrect data type"


# -- SET ----------------------------------------------------------------------------


def test_set_values_paths_and_placeholders(ddb: Any, hash_table: str) -> None:
    put(ddb, hash_table, m={"M": {"x": N(1)}}, prev=S("o"))
    update(ddb, hash_table, "SET a = :a, #b = prev, m.y = :a, #m.#x = :b",
           {":a": S("v"), ":b": N(2)}, {"#b": "b", "#m": "m", "#x": "x"})
    assert get(ddb, hash_table) == {
        **KEY, "a": S("v"), "b": S("o"), "prev": S("o"), "m": {"M": {"x": N(2), "y": S("v")}},
    }


def test_set_values_are_computed_from_the_item_before_the_update(ddb: Any, hash_table: str) -> None:
    put(ddb, hash_table, a=S("1"), b=S("2"), n=N(5))
    update(ddb, hash_table, "SET a = b, b = a, n = n + :one, m = n", {":one": N(1)})
    assert get(ddb, hash_table) == {**KEY, "a": S("2"), "b": S("1"), "n": N(6), "m": N(5)}


def test_copied_values_do_not_follow_later_changes(ddb: Any, hash_table: str) -> None:
    put(ddb, hash_table, l=L(N(0), N(1)), m={"M": {"l": L(N(0))}})
    update(ddb, hash_table, "SET c = l, d = m, l[5] = :x, m.l[3] = :x REMOVE l[0]", {":x": S("x")})
    assert get(ddb, hash_table) == {
        **KEY, "c": L(N(0), N(1)), "d": {"M": {"l": L(N(0))}}, "l": L(N(1), S("x")),
        "m": {"M": {"l": L(N(0), S("x"))}},
    }


def test_set_arithmetic(ddb: Any, hash_table: str) -> None:
    put(ddb, hash_table, n=N("10.5"), m=N(3))
    update(ddb, hash_table, "SET a = n + m, b = n - :x, c = :x - n, d = :x + :x, e = (n - m)",
           {":x": N("0.25")})
    item = get(ddb, hash_table)
    assert item is not None
    assert [item[k] for k in "abcde"] == [N("13.5"), N("10.25"), N("-10.25"), N("0.5"), N("7.5")]


def test_if_not_exists(ddb: Any, hash_table: str) -> None:
    put(ddb, hash_table, a=N(1))
    update(ddb, hash_table, "SET a = if_not_exists(a, :d), b = if_not_exists(b, :d), "
                            "c = if_not_exists(absent, a) + :d", {":d": N(7)})
    assert get(ddb, hash_table) == {**KEY, "a": N(1), "b": N(7), "c": N(8)}


def test_list_append(ddb: Any, hash_table: str) -> None:
    put(ddb, hash_table, l=L(N(1), N(2)))
    update(ddb, hash_table, "SET l = list_append(l, :tail), f = list_append(:head, l), "
                            "g = list_append(if_not_exists(g, :empty), :head)",
           {":tail": L(N(3)), ":head": L(S("h")), ":empty": L()})
    assert get(ddb, hash_table) == {
        **KEY, "l": L(N(1), N(2), N(3)), "f": L(S("h"), N(1), N(2)), "g": L(S("h")),
    }


def test_set_past_the_end_of_a_list_appends_in_index_order(ddb: Any, hash_table: str) -> None:
    put(ddb, hash_table, l=L(N(0), N(1)))
    update(ddb, hash_table, "SET l[9] = :y, l[7] = :x, l[1] = :z",
           {":x": S("x"), ":y": S("y"), ":z": S("z")})
    assert get(ddb, hash_table) == {**KEY, "l": L(N(0), S("z"), S("x"), S("y"))}


def test_nested_update_recorded_against_the_service(ddb: Any, hash_table: str) -> None:
    """dynalite's "should update nested attributes", checked against DynamoDB."""
    put(ddb, hash_table, b={"M": {"a": N(1), "b": N(2), "c": N(3)}}, c=L(N(1), N(3)))
    out = update(
        ddb, hash_table,
        "set b.c=((c[1])+(b.a)),b.a = pk,c[1] = pk, c[4] = b.a - b.b, c[2] = b.c add c[8] :b, c[6] :a",
        {":a": N(2), ":b": {"SS": ["a"]}}, ReturnValues="UPDATED_NEW",
    )
    assert out["Attributes"] == {"b": {"M": {"a": KEY["pk"], "c": N(4)}}, "c": L(KEY["pk"], N(3), N(2))}
    assert get(ddb, hash_table) == {
        **KEY,
        "b": {"M": {"a": KEY["pk"], "b": N(2), "c": N(4)}},
        "c": L(N(1), KEY["pk"], N(3), N(-1), N(2), {"SS": ["a"]}),
    }


@pytest.mark.parametrize("expression", [
    "SET absent.x = :v",      # no intermediate map
    "SET absent[0] = :v",     # no intermediate list
    "SET s.x = :v",            # a string is not a map
    "SET s[0] = :v",           # nor a list
    "SET m[0] = :v",           # a map is not a list
    "SET l.x = :v",            # a list is not a map
    "SET l[5].x = :v",         # no element 5
    "SET m.absent.deeper = :v",
])
def test_set_into_a_missing_or_wrong_parent(ddb: Any, hash_table: str, expression: str) -> None:
    item = put(ddb, hash_table, s=S("x"), m={"M": {}}, l=L(N(1)))
    assert failure(ddb, hash_table, expression, {":v": N(1)}) == ("ValidationException", INVALID_PATH)
    assert get(ddb, hash_table) == item


def test_set_nested_on_a_missing_item(ddb: Any, hash_table: str) -> None:
    for expression in ("set b.a = pk", "set b[1] = pk"):
        assert failure(ddb, hash_table, expression) == ("ValidationException", INVALID_PATH)
    assert get(ddb, hash_table) is None


@pytest.mark.parametrize("expression", [
    "SET a = absent",
    "SET a = absent + :n",
    "SET a = :n - absent",
    "SET a = list_append(absent, :l)",
    "SET a = m.absent",
    "SET a = l[3]",
])
def test_set_from_a_missing_attribute(ddb: Any, hash_table: str, expression: str) -> None:
    put(ddb, hash_table, m={"M": {}}, l=L(N(1)))
    values = {":n": N(1), ":l": L()}
    used = {k: v for k, v in values.items() if k in expression}
    assert failure(ddb, hash_table, expression, used) == ("ValidationException", MISSING_ATTRIBUTE)


@pytest.mark.parametrize("expression", [
    "SET a = s + :n",
    "SET a = :n - s",
    "SET a = l + :n",
    "SET a = list_append(s, :l)",
    "SET a = list_append(:l, n)",
    "SET a = list_append(m, :l)",
])
def test_set_operand_of_the_wrong_type(ddb: Any, hash_table: str, expression: str) -> None:
    put(ddb, hash_table, s=S("x"), n=N(1), l=L(), m={"M": {}})
    values = {":n": N(1), ":l": L()}
    used = {k: v for k, v in values.items() if k in expression}
    assert failure(ddb, hash_table, expression, used) == ("ValidationException", WRONG_TYPE)


@pytest.mark.parametrize(("expression", "value", "message"), [
    ("SET a = a + :v", S("x"), "operator or function: +, operand type: S"),
    ("SET a = :v - a", {"SS": ["x"]}, "operator or function: -, operand type: SS"),
    ("SET a = list_append(:v, a)", N(1), "operator or function: list_append, operand type: N"),
    ("SET a = list_append(a, :v)", {"M": {}}, "operator or function: list_append, operand type: M"),
])
def test_literal_operand_types_are_checked_before_the_item(
    ddb: Any, hash_table: str, expression: str, value: dict[str, Any], message: str
) -> None:
    assert failure(ddb, hash_table, expression, {":v": value}) == (
        "ValidationException",
        f"Invalid UpdateExpression: Incorrect operand type for operator or function; {message}",
    )


def test_arithmetic_results_stay_within_numbers(ddb: Any, hash_table: str) -> None:
    """Results follow the rules for stored numbers; too many digits is DynamoDB's "Number overflow".

    The service answers a result with more than 38 significant digits with the
    overflow message, not the stored-number one (Alternator's AWS-checked
    test_number.py, 1e50 - 1); see tests/test_expression_facts.py.
    """
    put(ddb, hash_table, big=N("9" * 38))
    update(ddb, hash_table, "SET round = big + :one", {":one": N(1)})
    assert get(ddb, hash_table)["round"] == N("1" + "0" * 38)  # type: ignore[index]
    assert failure(ddb, hash_table, "SET big = big + :tenth", {":tenth": N("0.1")}) == (
        "ValidationException",
        "Number overflow. Attempting to store a number with magnitude larger than supported range",
    )
    update(ddb, hash_table, "SET small = big - big")
    assert get(ddb, hash_table)["small"] == N(0)  # type: ignore[index]


# -- REMOVE ---------------------------------------------------------------------------


def test_remove_attributes_and_map_keys(ddb: Any, hash_table: str) -> None:
    put(ddb, hash_table, a=S("a"), b=S("b"), m={"M": {"x": N(1), "y": N(2)}})
    update(ddb, hash_table, "REMOVE a, m.x, nothing, m.nothing")
    assert get(ddb, hash_table) == {**KEY, "b": S("b"), "m": {"M": {"y": N(2)}}}


def test_remove_list_elements_uses_the_original_positions(ddb: Any, hash_table: str) -> None:
    put(ddb, hash_table, l=L(*(N(i) for i in range(6))), k=L(N(0), N(1)))
    update(ddb, hash_table, "REMOVE l[4], l[0], l[1], l[9], k[1]")
    assert get(ddb, hash_table) == {**KEY, "l": L(N(2), N(3), N(5)), "k": L(N(0))}


def test_remove_and_set_in_one_list(ddb: Any, hash_table: str) -> None:
    put(ddb, hash_table, l=L(N(0), N(1), N(2)))
    update(ddb, hash_table, "REMOVE l[0] SET l[2] = :two, l[5] = :five",
           {":two": S("two"), ":five": S("five")})
    assert get(ddb, hash_table) == {**KEY, "l": L(N(1), S("two"), S("five"))}


@pytest.mark.parametrize("expression", ["REMOVE absent.x", "REMOVE absent[0]", "REMOVE s.x",
                                        "REMOVE m[0]", "REMOVE l.x"])
def test_remove_under_a_missing_or_wrong_parent(ddb: Any, hash_table: str, expression: str) -> None:
    put(ddb, hash_table, s=S("x"), m={"M": {}}, l=L(N(1)))
    assert failure(ddb, hash_table, expression) == ("ValidationException", INVALID_PATH)


# -- ADD ------------------------------------------------------------------------------


def test_add_numbers(ddb: Any, hash_table: str) -> None:
    put(ddb, hash_table, n=N(5), m={"M": {"x": N("1.5")}}, l=L(N(1)))
    update(ddb, hash_table, "ADD n :minus, fresh :one, m.x :one, m.y :one, l[0] :one, l[3] :minus",
           {":one": N(1), ":minus": N(-7)})
    assert get(ddb, hash_table) == {
        **KEY, "n": N(-2), "fresh": N(1), "m": {"M": {"x": N("2.5"), "y": N(1)}}, "l": L(N(2), N(-7)),
    }


def test_add_sets(ddb: Any, hash_table: str) -> None:
    put(ddb, hash_table, ss={"SS": ["a", "b"]}, ns={"NS": ["1", "2"]}, bs={"BS": [b"\x01\x02", b"\x02"]})
    update(ddb, hash_table, "ADD ss :ss, ns :ns, bs :bs, fresh :ss",
           {":ss": {"SS": ["b", "c", "d"]}, ":ns": {"NS": ["2", "3.0"]}, ":bs": {"BS": [b"\x02", b"\x01"]}})
    item = get(ddb, hash_table)
    assert item is not None
    assert sorted(item["ss"]["SS"]) == ["a", "b", "c", "d"]
    assert sorted(item["ns"]["NS"]) == ["1", "2", "3"]
    assert sorted(item["bs"]["BS"]) == [b"\x01", b"\x01\x02", b"\x02"]
    assert sorted(item["fresh"]["SS"]) == ["b", "c", "d"]


def test_add_creates_the_item(ddb: Any, hash_table: str) -> None:
    out = update(ddb, hash_table, "ADD hits :one", {":one": N(1)}, ReturnValues="ALL_NEW")
    assert out["Attributes"] == {**KEY, "hits": N(1)}
    update(ddb, hash_table, "ADD hits :one", {":one": N(1)})
    assert get(ddb, hash_table) == {**KEY, "hits": N(2)}


@pytest.mark.parametrize(("attribute", "value"), [
    (S("x"), N(1)),
    (N(1), {"NS": ["1"]}),
    ({"SS": ["a"]}, {"NS": ["1"]}),
    ({"NS": ["1"]}, N(1)),
    ({"M": {}}, {"SS": ["a"]}),
    (L(), {"SS": ["a"]}),
])
def test_add_to_the_wrong_type(ddb: Any, hash_table: str, attribute: dict[str, Any], value: dict[str, Any]) -> None:
    put(ddb, hash_table, a=attribute)
    assert failure(ddb, hash_table, "ADD a :v", {":v": value}) == ("ValidationException", WRONG_TYPE)


@pytest.mark.parametrize(("value", "shown"), [
    (S("x"), "STRING"), (L(), "LIST"), ({"M": {}}, "MAP"), ({"BOOL": True}, "BOOLEAN"),
    ({"NULL": True}, "NULL"), ({"B": b"x"}, "BINARY"),
])
def test_add_value_types_are_checked_before_the_item(
    ddb: Any, hash_table: str, value: dict[str, Any], shown: str
) -> None:
    assert failure(ddb, hash_table, "ADD a :v", {":v": value}) == (
        "ValidationException",
        f"Invalid UpdateExpression: Incorrect operand type for operator or function; operator: ADD, operand type: {shown}",
    )


# -- DELETE ---------------------------------------------------------------------------


def test_delete_from_sets(ddb: Any, hash_table: str) -> None:
    put(ddb, hash_table, ss={"SS": ["a", "b", "c"]}, ns={"NS": ["1", "2"]}, gone={"BS": [b"x"]},
        m={"M": {"s": {"SS": ["z"]}}}, l=L({"NS": ["5"]}, N(0)))
    update(ddb, hash_table, "DELETE ss :ss, ns :ns, gone :bs, absent :ss, m.s :z, l[0] :five",
           {":ss": {"SS": ["a", "c", "q"]}, ":ns": {"NS": ["2.0"]}, ":bs": {"BS": [b"x"]},
            ":z": {"SS": ["z"]}, ":five": {"NS": ["5"]}})
    assert get(ddb, hash_table) == {
        **KEY, "ss": {"SS": ["b"]}, "ns": {"NS": ["1"]}, "m": {"M": {}}, "l": L(N(0)),
    }


@pytest.mark.parametrize(("attribute", "value"), [
    ({"SS": ["a"]}, {"NS": ["1"]}),
    (N(1), {"NS": ["1"]}),
    ({"M": {}}, {"SS": ["a"]}),
])
def test_delete_from_the_wrong_type(ddb: Any, hash_table: str, attribute: dict[str, Any], value: dict[str, Any]) -> None:
    put(ddb, hash_table, a=attribute)
    assert failure(ddb, hash_table, "DELETE a :v", {":v": value}) == ("ValidationException", WRONG_TYPE)


@pytest.mark.parametrize(("value", "shown"), [(N(1), "NUMBER"), (S("x"), "STRING"), (L(), "LIST")])
def test_delete_value_types_are_checked_before_the_item(
    ddb: Any, hash_table: str, value: dict[str, Any], shown: str
) -> None:
    assert failure(ddb, hash_table, "DELETE a :v", {":v": value}) == (
        "ValidationException",
        f"Invalid UpdateExpression: Incorrect operand type for operator or function; operator: DELETE, operand type: {shown}",
    )
