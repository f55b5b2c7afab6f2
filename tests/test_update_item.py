"""UpdateItem with UpdateExpression against a real server, with DynamoDB's exact messages.

Expected outcomes come from DynamoDB's documentation and from behaviour
recorded against the real service (dynalite's updateItem suite, ExtendDB's
and Alternator's conformance notes).
"""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import error_of

KEY = {"pk": {"S": "k"}}
INVALID_PATH = "The document path provided in the update expression is invalid for update"
MISSING_ATTRIBUTE = "The provided expression refers to an attribute that does not exist in the item"
WRONG_TYPE = "An operand in the update expression has an incorrect data type"


def N(n: int | str) -> dict[str, str]:  # noqa: N802 - reads like the wire type
    return {"N": str(n)}


def S(s: str) -> dict[str, str]:  # noqa: N802
    return {"S": s}


def L(*values: dict[str, Any]) -> dict[str, Any]:  # noqa: N802
    return {"L": list(values)}


def update(
    ddb: Any,
    table: str,
    expression: str | None,
    values: dict[str, Any] | None = None,
    names: dict[str, str] | None = None,
    key: dict[str, Any] = KEY,
    **extra: Any,
) -> dict[str, Any]:
    params: dict[str, Any] = {"TableName": table, "Key": key, **extra}
    if expression is not None:
        params["UpdateExpression"] = expression
    if values:
        params["ExpressionAttributeValues"] = values
    if names:
        params["ExpressionAttributeNames"] = names
    return ddb.update_item(**params)


def failure(ddb: Any, table: str, expression: str | None, values: dict[str, Any] | None = None,
            names: dict[str, str] | None = None, **extra: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        update(ddb, table, expression, values, names, **extra)
    return error_of(excinfo)


def get(ddb: Any, table: str, key: dict[str, Any] = KEY) -> dict[str, Any] | None:
    return ddb.get_item(TableName=table, Key=key, ConsistentRead=True).get("Item")


def put(ddb: Any, table: str, **attributes: dict[str, Any]) -> dict[str, Any]:
    item = {**KEY, **attributes}
    ddb.put_item(TableName=table, Item=item)
    return item


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
    """Results follow the rules for stored numbers (the service's wording here is unverified)."""
    put(ddb, hash_table, big=N("9" * 38))
    update(ddb, hash_table, "SET round = big + :one", {":one": N(1)})
    assert get(ddb, hash_table)["round"] == N("1" + "0" * 38)  # type: ignore[index]
    assert failure(ddb, hash_table, "SET big = big + :tenth", {":tenth": N("0.1")}) == (
        "ValidationException", "Attempting to store more than 38 significant digits in a Number",
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


# -- clauses, overlaps, syntax --------------------------------------------------------------


def test_all_clauses_in_any_order_on_a_missing_item(ddb: Any, hash_table: str) -> None:
    values = {":c": {"SS": ["a", "b"]}, ":d": N(5), ":e": {"SS": ["a", "b"]}, ":f": L(S("a"), N(1))}
    out = update(ddb, hash_table, "REMOVE b DELETE c :c ADD d :d, e :e SET f = :f", values,
                 ReturnValues="UPDATED_NEW")
    assert out["Attributes"] == {"d": N(5), "e": {"SS": ["a", "b"]}, "f": L(S("a"), N(1))}
    assert get(ddb, hash_table) == {**KEY, "d": N(5), "e": {"SS": ["a", "b"]}, "f": L(S("a"), N(1))}


@pytest.mark.parametrize(("expression", "section"), [
    ("SET a = :v SET b = :v", "SET"),
    ("REMOVE a SET b = :v REMOVE c", "REMOVE"),
    ("ADD a :n SET b = :v ADD c :n", "ADD"),
    ("DELETE a :s SET b = :v DELETE c :s", "DELETE"),
])
def test_each_clause_only_once(ddb: Any, hash_table: str, expression: str, section: str) -> None:
    values = {":v": N(1), ":n": N(1), ":s": {"SS": ["a"]}}
    used = {k: v for k, v in values.items() if k in expression}
    assert failure(ddb, hash_table, expression, used) == (
        "ValidationException",
        f'Invalid UpdateExpression: The "{section}" section can only be used once in an update expression;',
    )


@pytest.mark.parametrize(("expression", "one", "two"), [
    ("SET a = :v REMOVE a", "[a]", "[a]"),
    ("SET a = :v, a.b = :v", "[a]", "[a, b]"),
    ("SET a.b = :v REMOVE a", "[a, b]", "[a]"),
    ("ADD a.b[1] :v REMOVE a.b", "[a, b, [1]]", "[a, b]"),
    ("SET #c[3].#d = :v, #c[3] = :v", "[c, [3], [3]]", "[c, [3]]"),
])
def test_overlapping_paths(ddb: Any, hash_table: str, expression: str, one: str, two: str) -> None:
    names = {k: v for k, v in {"#c": "c", "#d": "[3]"}.items() if k in expression}
    assert failure(ddb, hash_table, expression, {":v": N(1)}, names) == (
        "ValidationException",
        "Invalid UpdateExpression: Two document paths overlap with each other; must remove or rewrite one of "
        f"these paths; path one: {one}, path two: {two}",
    )


def test_conflicting_paths(ddb: Any, hash_table: str) -> None:
    assert failure(ddb, hash_table, "remove a.#c set a[1] = :v", {":v": N(1)}, {"#c": "c"}) == (
        "ValidationException",
        "Invalid UpdateExpression: Two document paths conflict with each other; must remove or rewrite one of "
        "these paths; path one: [a, c], path two: [a, [1]]",
    )


@pytest.mark.parametrize(("expression", "token", "near"), [
    ("SET a", "<EOF>", "a"),
    ("SET a = :v,", "<EOF>", ","),
    ("REMOVE a = :v", "=", "a = :v"),
    ("whatever", "whatever", "whatever"),
])
def test_syntax_errors(ddb: Any, hash_table: str, expression: str, token: str, near: str) -> None:
    values = {":v": N(1)} if ":v" in expression else None
    assert failure(ddb, hash_table, expression, values) == (
        "ValidationException", f'Invalid UpdateExpression: Syntax error; token: "{token}", near: "{near}"',
    )


def test_reserved_word_and_functions(ddb: Any, hash_table: str) -> None:
    assert failure(ddb, hash_table, "SET #a = :v REMOVE Absolute", {":v": N(1)}, {"#a": "a"}) == (
        "ValidationException",
        "Invalid UpdateExpression: Attribute name is a reserved keyword; reserved keyword: Absolute",
    )
    assert failure(ddb, hash_table, "SET a = size(b)") == (
        "ValidationException",
        "Invalid UpdateExpression: The function is not allowed in an update expression; function: size",
    )
    assert failure(ddb, hash_table, "SET a = if_not_exists(b)") == (
        "ValidationException",
        "Invalid UpdateExpression: Incorrect number of operands for operator or function; "
        "operator or function: if_not_exists, number of operands: 1",
    )


def test_expression_attribute_rules(ddb: Any, hash_table: str) -> None:
    cases = [
        (dict(UpdateExpression="SET a = :a", ExpressionAttributeValues={":a": N(1), ":b": N(2)}),
         "Value provided in ExpressionAttributeValues unused in expressions: keys: {:b}"),
        (dict(UpdateExpression="SET a = :a", ExpressionAttributeValues={":a": N(1)},
              ExpressionAttributeNames={"#x": "x"}),
         "Value provided in ExpressionAttributeNames unused in expressions: keys: {#x}"),
        (dict(ExpressionAttributeValues={":a": N(1)}),
         "ExpressionAttributeValues can only be specified when using expressions: "
         "UpdateExpression and ConditionExpression are null"),
        (dict(UpdateExpression="SET #a = :a", ExpressionAttributeValues={":a": N(1)}),
         "Invalid UpdateExpression: An expression attribute name used in the document path is not defined; "
         "attribute name: #a"),
        (dict(UpdateExpression=""), "Invalid UpdateExpression: The expression can not be empty;"),
        (dict(UpdateExpression="SET a = :a", AttributeUpdates={"a": {"Value": N(1)}},
              ExpressionAttributeValues={":a": N(1)}),
         "Can not use both expression and non-expression parameters in the same request: "
         "Non-expression parameters: {AttributeUpdates} Expression parameters: {UpdateExpression}"),
    ]
    for params, message in cases:
        with pytest.raises(ClientError) as excinfo:
            ddb.update_item(TableName=hash_table, Key=KEY, **params)
        assert error_of(excinfo) == ("ValidationException", message), params
    assert get(ddb, hash_table) is None


# -- keys, upsert, conditions ------------------------------------------------------------


@pytest.mark.parametrize("expression", [
    "SET pk = :v", "REMOVE pk", "ADD pk.b :n", "SET a = :v REMOVE pk", "SET pk = pk",
])
def test_key_attributes_cannot_be_updated(ddb: Any, hash_table: str, expression: str) -> None:
    values = {k: v for k, v in {":v": S("x"), ":n": N(1)}.items() if k in expression}
    assert failure(ddb, hash_table, expression, values) == (
        "ValidationException",
        "One or more parameter values were invalid: Cannot update attribute pk. This attribute is part of the key",
    )
    assert get(ddb, hash_table) is None


def test_range_key_cannot_be_updated(ddb: Any, range_table: str) -> None:
    key = {"pk": S("a"), "sk": N(1)}
    with pytest.raises(ClientError) as excinfo:
        update(ddb, range_table, "SET d[1] = :a ADD sk :a", {":a": N(1)}, key=key)
    assert error_of(excinfo) == (
        "ValidationException",
        "One or more parameter values were invalid: Cannot update attribute sk. This attribute is part of the key",
    )


def test_key_must_match_the_schema_and_table_must_exist(ddb: Any, hash_table: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        update(ddb, hash_table, "SET a = :v", {":v": N(1)}, key={"pk": N(1)})
    assert error_of(excinfo) == ("ValidationException", "The provided key element does not match the schema")
    with pytest.raises(ClientError) as excinfo:
        update(ddb, hash_table + "-absent", "SET a = :v", {":v": N(1)})
    assert error_of(excinfo) == ("ResourceNotFoundException", "Requested resource not found")


def test_update_without_actions_creates_the_key(ddb: Any, range_table: str) -> None:
    key = {"pk": S("a"), "sk": N("1.50")}
    assert "Attributes" not in update(ddb, range_table, None, key=key, ReturnValues="ALL_OLD")
    assert get(ddb, range_table, {"pk": S("a"), "sk": N("1.5")}) == {"pk": S("a"), "sk": N("1.5")}


def test_remove_on_a_missing_item_creates_it(ddb: Any, hash_table: str) -> None:
    update(ddb, hash_table, "REMOVE a")
    assert get(ddb, hash_table) == KEY


def test_condition_expression(ddb: Any, hash_table: str) -> None:
    assert failure(ddb, hash_table, "SET a = :v", {":v": N(1)}, ConditionExpression="attribute_exists(pk)") == (
        "ConditionalCheckFailedException", "The conditional request failed",
    )
    assert get(ddb, hash_table) is None
    update(ddb, hash_table, "SET a = :v", {":v": N(1)}, ConditionExpression="attribute_not_exists(pk)")
    update(ddb, hash_table, "SET a = a + :v", {":v": N(1)}, ConditionExpression="a = :v")
    assert get(ddb, hash_table) == {**KEY, "a": N(2)}


def test_condition_is_checked_before_the_update_is_applied(ddb: Any, hash_table: str) -> None:
    put(ddb, hash_table, a=S("x"))
    assert failure(ddb, hash_table, "SET a = a + :v", {":v": N(1)}, ConditionExpression="a = :v") == (
        "ConditionalCheckFailedException", "The conditional request failed",
    )


def test_return_values_on_condition_check_failure(ddb: Any, hash_table: str) -> None:
    item = put(ddb, hash_table, a=N(1))
    with pytest.raises(ClientError) as excinfo:
        update(ddb, hash_table, "SET a = :v", {":v": N(2)}, ConditionExpression="a > :v",
               ReturnValuesOnConditionCheckFailure="ALL_OLD")
    assert error_of(excinfo)[0] == "ConditionalCheckFailedException"
    assert excinfo.value.response["Item"] == item
    with pytest.raises(ClientError) as excinfo:
        update(ddb, hash_table, "SET a = :v", {":v": N(2)}, ConditionExpression="a > :v",
               ReturnValuesOnConditionCheckFailure="NONE")
    assert "Item" not in excinfo.value.response


# -- ReturnValues ---------------------------------------------------------------------------


def test_return_values(ddb: Any, hash_table: str) -> None:
    put(ddb, hash_table, a=S("a"), b=S("b"), c=S("c"))
    expression, values = "SET a = :x, d = :x REMOVE b", {":x": S("x")}
    assert "Attributes" not in update(ddb, hash_table, expression, values)
    assert "Attributes" not in update(ddb, hash_table, expression, values, ReturnValues="NONE")
    put(ddb, hash_table, a=S("a"), b=S("b"), c=S("c"))
    assert update(ddb, hash_table, expression, values, ReturnValues="ALL_OLD")["Attributes"] == {
        **KEY, "a": S("a"), "b": S("b"), "c": S("c"),
    }
    put(ddb, hash_table, a=S("a"), b=S("b"), c=S("c"))
    assert update(ddb, hash_table, expression, values, ReturnValues="UPDATED_OLD")["Attributes"] == {
        "a": S("a"), "b": S("b"),
    }
    put(ddb, hash_table, a=S("a"), b=S("b"), c=S("c"))
    assert update(ddb, hash_table, expression, values, ReturnValues="ALL_NEW")["Attributes"] == {
        **KEY, "a": S("x"), "c": S("c"), "d": S("x"),
    }
    put(ddb, hash_table, a=S("a"), b=S("b"), c=S("c"))
    assert update(ddb, hash_table, expression, values, ReturnValues="UPDATED_NEW")["Attributes"] == {
        "a": S("x"), "d": S("x"),
    }


def test_empty_updated_values_are_left_out(ddb: Any, hash_table: str) -> None:
    put(ddb, hash_table, m={"M": {"x": N(1)}})
    assert "Attributes" not in update(ddb, hash_table, "REMOVE m", ReturnValues="UPDATED_NEW")
    assert "Attributes" not in update(ddb, hash_table, "SET fresh = :v", {":v": N(1)}, ReturnValues="UPDATED_OLD")
    other = {"pk": S("other")}
    assert "Attributes" not in update(ddb, hash_table, "SET a = :v", {":v": N(1)}, key=other,
                                      ReturnValues="ALL_OLD")


def test_updated_values_of_nested_paths(ddb: Any, hash_table: str) -> None:
    put(ddb, hash_table, m={"M": {"x": N(1), "y": N(2), "z": L(N(0), N(1), N(2))}}, other=S("o"))
    expression = "SET m.x = :v, m.z[2] = :v REMOVE m.z[0]"
    out = update(ddb, hash_table, expression, {":v": S("new")}, ReturnValues="UPDATED_OLD")
    assert out["Attributes"] == {"m": {"M": {"x": N(1), "z": L(N(0), N(2))}}}
    put(ddb, hash_table, m={"M": {"x": N(1), "y": N(2), "z": L(N(0), N(1), N(2))}}, other=S("o"))
    out = update(ddb, hash_table, expression, {":v": S("new")}, ReturnValues="UPDATED_NEW")
    # Indexes are read in the new item: z is now [1, "new"], so z[0] and z[2] give [1].
    assert out["Attributes"] == {"m": {"M": {"x": S("new"), "z": L(N(1))}}}


# -- capacity and size ------------------------------------------------------------------------


def test_consumed_capacity(ddb: Any, hash_table: str) -> None:
    """dynalite's 1 KB boundaries (checked against DynamoDB), then a shrinking update."""
    key = {"pk": S("k")}
    # pk+k 3, b+1007, c+12.3456 5, d+2 bytes 3, e+4 bytes 5: exactly 1024 bytes.
    small = {"b": S("b" * 1007), "c": N("12.3456"), "d": {"B": b"\x01\x02"},
             "e": {"BS": [b"\x01\x02", b"\x02", b"\x01"]}}
    out = update_legacy(ddb, hash_table, key, small, ReturnConsumedCapacity="TOTAL")
    assert out["ConsumedCapacity"] == {"TableName": hash_table, "CapacityUnits": 1.0}
    out = update_legacy(ddb, hash_table, key, {"b": S("b" * 1008)}, ReturnConsumedCapacity="INDEXES")
    assert out["ConsumedCapacity"] == {"TableName": hash_table, "CapacityUnits": 2.0, "Table": {"CapacityUnits": 2.0}}
    update(ddb, hash_table, "SET big = :big", {":big": S("x" * 5000)})
    out = update(ddb, hash_table, "REMOVE big", ReturnConsumedCapacity="TOTAL")
    assert out["ConsumedCapacity"]["CapacityUnits"] == 6.0  # charged on the larger, old item
    out = update(ddb, hash_table, "REMOVE b, c, d, e", ReturnConsumedCapacity="TOTAL")
    assert out["ConsumedCapacity"]["CapacityUnits"] == 2.0
    assert "ConsumedCapacity" not in update(ddb, hash_table, None, ReturnConsumedCapacity="NONE")


def update_legacy(ddb: Any, table: str, key: dict[str, Any], values: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return ddb.update_item(TableName=table, Key=key,
                           AttributeUpdates={k: {"Value": v} for k, v in values.items()}, **extra)


def test_updated_item_size_limit(ddb: Any, hash_table: str) -> None:
    fits = 409600 - 4  # "pk" + "k" + "v" + value
    update(ddb, hash_table, "SET v = :v", {":v": S("x" * fits)})
    before = get(ddb, hash_table)
    assert failure(ddb, hash_table, "SET w = :w", {":w": S("")}) == (
        "ValidationException", "Item size to update has exceeded the maximum allowed size",
    )
    assert get(ddb, hash_table) == before
    update(ddb, hash_table, "SET v = :v", {":v": S("short")})
    assert get(ddb, hash_table) == {**KEY, "v": S("short")}


# -- secondary index keys ------------------------------------------------------------------------


@pytest.fixture
def gsi_table(ddb: Any, table_name: str) -> str:
    ddb.create_table(
        TableName=table_name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexes=[{"IndexName": "by-g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}],
        BillingMode="PAY_PER_REQUEST",
    )
    return table_name


def test_index_key_rules(ddb: Any, gsi_table: str) -> None:
    assert failure(ddb, gsi_table, "SET g = :n", {":n": N(1)}) == (
        "ValidationException",
        "One or more parameter values were invalid: Type mismatch for Index Key g Expected: S Actual: N "
        "IndexName: by-g",
    )
    assert failure(ddb, gsi_table, "SET a = g.x") == (
        "ValidationException",
        "Key attributes must be scalars; list random access '[]' and map lookup '.' are not allowed: IndexKey: g",
    )
    update(ddb, gsi_table, "SET n = :n", {":n": N(1)})
    assert failure(ddb, gsi_table, "SET g = n") == (
        "ValidationException", "The update expression attempted to update the secondary index key to unsupported type",
    )
    out = update(ddb, gsi_table, "SET g = :s", {":s": S("x")}, ReturnConsumedCapacity="INDEXES")
    assert out["ConsumedCapacity"] == {
        "TableName": gsi_table, "CapacityUnits": 2.0, "Table": {"CapacityUnits": 1.0},
        "GlobalSecondaryIndexes": {"by-g": {"CapacityUnits": 1.0}},
    }
