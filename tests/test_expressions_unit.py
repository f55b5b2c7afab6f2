"""Pure-function tests of the expression package: parse, check, evaluate, project.

Expected messages are DynamoDB's, as recorded by suites checked against the
real service (dynalite's tests, ScyllaDB's alternator tests, the
dynamodb-conformance suite) and by users quoting real errors.
"""

from __future__ import annotations

from typing import Any

import pytest

from partita.engine.expressions import (
    RESERVED_WORDS,
    And,
    Compare,
    Not,
    Or,
    bind,
    check_placeholders,
    evaluate,
    parse_condition,
    parse_projection,
    parse_update,
    project,
)
from partita.errors import ValidationException


def cond_error(
    text: str,
    names: dict[str, str] | None = None,
    values: dict[str, Any] | None = None,
    kind: str = "FilterExpression",
) -> str:
    with pytest.raises(ValidationException) as info:
        parsed = parse_condition(text, kind)
        check_placeholders([parsed], names, values)
    return info.value.message or ""


def check_ok(text: str, names: dict[str, str] | None = None, values: dict[str, Any] | None = None):
    parsed = parse_condition(text, "ConditionExpression")
    check_placeholders([parsed], names, values)
    return parsed


def matches(
    text: str,
    item: dict[str, Any] | None,
    values: dict[str, Any] | None = None,
    names: dict[str, str] | None = None,
) -> bool:
    parsed = check_ok(text, names, values)
    return evaluate(parsed, item, names or {}, values or {})


# -- syntax errors ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "token", "near"),
    [
        ("things are not gonna be ok", "are", "things are not"),
        ("a > 4", "4", "> 4"),
        ("!!!", "!", "!!"),
        ("a b", "b", "a b"),
        ("attribute_type()", ")", "()"),
        ("a", "<EOF>", "a"),
        ("a >", "<EOF>", ">"),
        ("a in b", "b", "in b"),
        ("a in ()", ")", "()"),
        ("ü > a", "ü", "ü >"),
        ("a[-1] = b", "-", "[-1"),
        ("a > between", "between", "> between"),
        ("size(a).b > a", ".", ").b"),
    ],
)
def test_condition_syntax_errors(text: str, token: str, near: str) -> None:
    assert cond_error(text) == (
        f'Invalid FilterExpression: Syntax error; token: "{token}", near: "{near}"'
    )


def test_update_and_projection_syntax_errors_match_real_messages() -> None:
    cases = {
        "ADD hits : incr": ('":"', '"hits : incr"'),
        "SET numx = numx / :v": ('"/"', '"numx / :v"'),
        "SET a = :v +": ('"<EOF>"', '"+"'),
        "INVALID SYNTAX HERE": ('"INVALID"', '"INVALID SYNTAX"'),
        "SET": ('"<EOF>"', '"SET"'),
    }
    for text, (token, near) in cases.items():
        with pytest.raises(ValidationException) as info:
            parse_update(text)
        assert info.value.message == (
            f"Invalid UpdateExpression: Syntax error; token: {token}, near: {near}"
        )
    with pytest.raises(ValidationException) as info:
        parse_projection("!!! INVALID !!!")
    assert (
        info.value.message == 'Invalid ProjectionExpression: Syntax error; token: "!", near: "!!"'
    )
    with pytest.raises(ValidationException) as info:
        parse_projection("a,")
    assert info.value.message == (
        'Invalid ProjectionExpression: Syntax error; token: "<EOF>", near: ","'
    )


@pytest.mark.parametrize("kind", ["ConditionExpression", "KeyConditionExpression"])
def test_empty_expression(kind: str) -> None:
    assert cond_error("  ", kind=kind) == f"Invalid {kind}: The expression can not be empty;"
    with pytest.raises(ValidationException, match="ProjectionExpression: The expression can not"):
        parse_projection("")
    with pytest.raises(ValidationException, match="UpdateExpression: The expression can not"):
        parse_update("")


def test_expression_size_limit() -> None:
    ok = " AND ".join(f"a{i}=:v" for i in range(300))[:4096]
    text = "x = :v" + " " * (4097 - len("x = :v"))
    assert len(text.encode()) == 4097
    assert cond_error(text) == (
        "Invalid FilterExpression: Expression size has exceeded the maximum allowed size; "
        "expression size: 4097"
    )
    parse_condition("x = :v" + " " * (4096 - 6))  # exactly 4096 bytes is fine
    assert ok  # built to be long, just a sanity guard


# -- text-level errors and their order ------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "a=a and a > ((views))",
        "a > whatever((:things), ((a)))",
        "a=a AND ((a=a AND a=a)) AND a=a",
        "a=a OR ((a=a OR (a=a OR a=a)))",
        "((attribute_not_exists(pk)))",
        "NOT ((a = b))",
    ],
)
def test_redundant_parentheses(text: str) -> None:
    assert cond_error(text) == "Invalid FilterExpression: The expression has redundant parentheses;"


@pytest.mark.parametrize(
    "text",
    [
        "(attribute_not_exists(pk)) AND (attribute_not_exists(#s))",
        "(attribute_not_exists(pk) AND (attribute_not_exists(#s)))",
        "(a) = b",
        "(a)between(b)and(c)",
        "size((a)) > b",
        "a IN ((b), c)",
    ],
)
def test_parentheses_that_are_not_redundant(text: str) -> None:
    parse_condition(text)


def test_unknown_and_misused_functions() -> None:
    assert cond_error("a=a and whatever((:things)) > a") == (
        "Invalid FilterExpression: Invalid function name; function: whatever"
    )
    # function names are case-sensitive; unknown beats reserved (views)
    assert cond_error("attRIbute_exIsts((views), #a)") == (
        "Invalid FilterExpression: Invalid function name; function: attRIbute_exIsts"
    )
    misused = "Invalid FilterExpression: The function is not allowed to be used this way in an expression; function: "
    for text, fn in [
        ("a=a and attribute_exists((views), (#a)) > b", "attribute_exists"),
        ("attribute_not_exists(things) > b", "attribute_not_exists"),
        ("size(contains(a, b)) > a", "contains"),
        ("size(things)", "size"),
        ("a between b and attribute_exists(things)", "attribute_exists"),
        ("a in (b, attribute_exists(things))", "attribute_exists"),
        ("if_not_exists(a, a) = b", "if_not_exists"),
        ("list_append(a, a) = b", "list_append"),
    ]:
        assert cond_error(text) == misused + fn


def test_reserved_words() -> None:
    assert len(RESERVED_WORDS) == 573
    prefix = "Invalid FilterExpression: Attribute name is a reserved keyword; reserved keyword: "
    assert cond_error("attribute_exists(views, #a)") == prefix + "views"
    assert cond_error(":a < abOrT") == prefix + "abOrT"
    assert cond_error("#l[0].COMMENT = :v") == prefix + "COMMENT"
    with pytest.raises(ValidationException, match="reserved keyword: status$"):
        parse_update("SET status = :v")
    with pytest.raises(ValidationException, match="reserved keyword: Comment$"):
        parse_projection("Comment")


def test_nesting_levels_and_in_operand_count() -> None:
    parse_projection("a" + ".b" * 31)
    with pytest.raises(ValidationException) as info:
        parse_projection("a" + ".b" * 32)
    assert info.value.message == (
        "Invalid ProjectionExpression: The document path has too many nesting levels; "
        "nesting levels: 33"
    )
    ok = ", ".join(f":v{i}" for i in range(99))
    parse_condition(f"a IN ({ok})")
    too_many = ", ".join(f":v{i}" for i in range(100))
    assert cond_error(f"a IN ({too_many})") == (
        "Invalid FilterExpression: The IN operator is provided with too many operands; "
        "number of operands: 101"
    )


# -- placeholder-dependent checks -------------------------------------------------------


def test_undefined_names_and_values() -> None:
    name = "Invalid FilterExpression: An expression attribute name used in the document path is not defined; attribute name: "
    value = "Invalid FilterExpression: An expression attribute value used in expression is not defined; attribute value: "
    assert cond_error("attribute_exists(#Pictures.RearView, :a) and a=a") == name + "#Pictures"
    assert cond_error("(#P between :lo and :hi) and (#PC in (:cat1, :cat2))") == name + "#P"
    assert cond_error("#4g > a") == name + "#4g"
    assert cond_error("(a)between(b.c[45].#d)and(:a)") == name + "#d"
    # names and values share one slot: the first in the text wins
    assert cond_error("begins_with(:hello, #a, #b)") == value + ":hello"
    assert cond_error(":_ > a") == value + ":_"


def test_operand_count_type_and_distinct_errors() -> None:
    count = "Invalid FilterExpression: Incorrect number of operands for operator or function; operator or function: "
    assert (
        cond_error("attribute_exists(things, a) and a=a")
        == count + "attribute_exists, number of operands: 2"
    )
    assert (
        cond_error("begins_with(things, size(a), b)")
        == count + "begins_with, number of operands: 3"
    )
    assert cond_error("size(things, a) > b") == count + "size, number of operands: 2"

    typ = "Invalid FilterExpression: Incorrect operand type for operator or function; operator or function: "
    assert (
        cond_error("begins_with(a, :a)", values={":a": {"N": "1"}})
        == typ + "begins_with, operand type: N"
    )
    assert (
        cond_error("begins_with(:a, a)", values={":a": {"SS": ["1"]}})
        == typ + "begins_with, operand type: SS"
    )
    assert (
        cond_error("attribute_type(a, :a)", values={":a": {"L": []}})
        == typ + "attribute_type, operand type: L"
    )
    assert (
        cond_error("size(size(a)) > :a", values={":a": {"N": "1"}}) == typ + "size, operand type: N"
    )
    assert (
        cond_error("attribute_not_exists(size(:a))", values={":a": {"N": "1"}})
        == typ + "size, operand type: N"
    )
    assert cond_error("attribute_type(a, :a)", values={":a": {"S": "DOG"}}) == (
        "Invalid FilterExpression: Invalid attribute type name found; type: DOG, "
        "valid types: {B,NULL,SS,BOOL,L,BS,N,NS,S,M}"
    )
    path = "Invalid FilterExpression: Operator or function requires a document path; operator or function: "
    assert (
        cond_error("attribute_exists(:a) and a=a", values={":a": {"S": "1"}})
        == path + "attribute_exists"
    )
    assert (
        cond_error("attribute_not_exists(size(:a))", values={":a": {"S": "1"}})
        == path + "attribute_not_exists"
    )

    distinct = "Invalid FilterExpression: The first operand must be distinct from the remaining operands for this operator or function; operator: "
    names = {"#a": "a"}
    assert (
        cond_error("a = a AND #a = b AND :views > a", names=names)
        == distinct + "=, first operand: [a]"
    )
    assert cond_error("#a <> a", names=names) == distinct + "<>, first operand: [a]"
    assert cond_error("contains(ab.bc[1].a, ab.bc[1].#a)", names=names) == (
        distinct + "contains, first operand: [ab, bc, [1], a]"
    )
    check_ok(":a > :a", values={":a": {"N": "1"}})


def test_between_bounds() -> None:
    assert cond_error("a BETWEEN :lo AND :hi", values={":lo": {"N": "5"}, ":hi": {"N": "1"}}) == (
        "Invalid FilterExpression: The BETWEEN operator requires upper bound to be greater than "
        "or equal to lower bound; lower bound operand: AttributeValue: {N:5}, upper bound "
        "operand: AttributeValue: {N:1}"
    )
    assert cond_error("a BETWEEN :lo AND :hi", values={":lo": {"N": "1"}, ":hi": {"S": "x"}}) == (
        "Invalid FilterExpression: The BETWEEN operator requires same data type for lower and "
        "upper bounds; lower bound operand: AttributeValue: {N:1}, upper bound operand: "
        "AttributeValue: {S:x}"
    )


def test_first_failing_atomic_condition_wins() -> None:
    # the undefined name in the first comparison beats the arity error after it
    assert "attribute name: #x" in cond_error(
        "#x = :y AND attribute_exists(a, b)", values={":y": {"N": "1"}}
    )
    assert "number of operands: 2" in cond_error(
        "attribute_exists(a, b) AND #x = :y", values={":y": {"N": "1"}}
    )


def test_unused_names_and_values_across_expressions() -> None:
    cond = parse_condition("#a = :v")
    proj = parse_projection("#b")
    check_placeholders([cond, proj], {"#a": "a", "#b": "b"}, {":v": {"S": "x"}})
    with pytest.raises(ValidationException) as info:
        check_placeholders(
            [cond], {"#a": "a", "#u": "u", "#w": "w"}, {":v": {"S": "x"}, ":z": {"S": "x"}}
        )
    assert (
        info.value.message
        == "Value provided in ExpressionAttributeNames unused in expressions: keys: {#u, #w}"
    )
    with pytest.raises(ValidationException) as info:
        check_placeholders([cond], {"#a": "a"}, {":v": {"S": "x"}, ":z": {"S": "x"}})
    assert (
        info.value.message
        == "Value provided in ExpressionAttributeValues unused in expressions: keys: {:z}"
    )
    assert cond.names == frozenset({"#a"}) and cond.values == frozenset({":v"})


# -- parse trees --------------------------------------------------------------------


def test_precedence_not_and_or() -> None:
    root = parse_condition("NOT a = b AND c = d OR e = f").root
    assert isinstance(root, Or)
    assert isinstance(root.left, And)
    assert isinstance(root.left.left, Not)
    assert isinstance(root.left.left.operand, Compare)
    between = parse_condition("a BETWEEN b AND c AND d = e").root
    assert isinstance(between, And)


def test_parse_is_cached() -> None:
    assert parse_condition("x = :v") is parse_condition("x = :v")
    assert parse_condition("x = :v", "FilterExpression") is not parse_condition("x = :v")
    assert parse_update("SET a = :v") is parse_update("SET a = :v")


# -- evaluation ---------------------------------------------------------------------


ITEM: dict[str, Any] = {
    "s": {"S": "hello"},
    "n": {"N": "10"},
    "b": {"B": "aGkgdGhlcmU="},  # b"hi there"
    "ss": {"SS": ["a", "b"]},
    "ns": {"NS": ["1", "2.5"]},
    "l": {"L": [{"N": "2"}, {"S": "dog"}, {"L": [{"N": "3"}]}]},
    "m": {"M": {"x": {"N": "1"}, "y": {"M": {"z": {"S": "deep"}}}}},
    "t": {"BOOL": True},
    "u": {"S": "é𝄞"},
}


@pytest.mark.parametrize(
    ("text", "values", "expected"),
    [
        ("n = :v", {":v": {"N": "10.0"}}, True),
        ("n = :v", {":v": {"S": "10"}}, False),
        ("n <> :v", {":v": {"S": "10"}}, True),
        ("nope <> :v", {":v": {"N": "1"}}, True),
        ("nope = zz", None, False),
        ("nope <> zz", None, True),
        ("n < :v", {":v": {"N": "9.5"}}, False),
        ("n > :v", {":v": {"N": "9.5"}}, True),
        ("n < :v", {":v": {"S": "z"}}, False),
        ("s >= :v", {":v": {"S": "hell"}}, True),
        ("b < :v", {":v": {"B": "aGk="}}, False),  # b"hi there" > b"hi"
        ("n BETWEEN :a AND :b", {":a": {"N": "10"}, ":b": {"N": "11"}}, True),
        ("n BETWEEN :a AND :b", {":a": {"S": "1"}, ":b": {"S": "2"}}, False),
        ("n IN (:a, :b)", {":a": {"S": "dog"}, ":b": {"N": "10"}}, True),
        ("attribute_exists(m.y.z)", None, True),
        ("attribute_exists(l[2][0])", None, True),
        ("attribute_exists(l[3])", None, False),
        ("attribute_not_exists(m.q)", None, True),
        ("attribute_type(ns, :t)", {":t": {"S": "NS"}}, True),
        ("attribute_type(ns, :t)", {":t": {"S": "SS"}}, False),
        ("begins_with(s, :p)", {":p": {"S": "hel"}}, True),
        ("begins_with(b, :p)", {":p": {"B": "aGk="}}, True),
        ("begins_with(n, :p)", {":p": {"S": "1"}}, False),
        ("contains(s, :p)", {":p": {"S": "ell"}}, True),
        ("contains(b, :p)", {":p": {"B": "aGVyZQ=="}}, True),
        ("contains(ss, :p)", {":p": {"S": "b"}}, True),
        ("contains(ns, :p)", {":p": {"N": "2.50"}}, True),
        ("contains(l, :p)", {":p": {"S": "dog"}}, True),
        ("contains(l, :p)", {":p": {"L": [{"N": "3"}]}}, True),
        ("contains(m, :p)", {":p": {"S": "x"}}, False),
        ("size(s) = :v", {":v": {"N": "5"}}, True),
        ("size(u) = :v", {":v": {"N": "3"}}, True),  # UTF-16 code units
        ("size(b) = :v", {":v": {"N": "8"}}, True),
        ("size(l) = :v", {":v": {"N": "3"}}, True),
        ("size(m) = :v", {":v": {"N": "2"}}, True),
        ("size(n) = :v", {":v": {"N": "2"}}, False),
        ("size(t) <> :v", {":v": {"N": "1"}}, True),
        ("NOT (n = :v OR s = :v)", {":v": {"N": "10"}}, False),
        ("t = :v AND size(ss) = :two", {":v": {"BOOL": True}, ":two": {"N": "2"}}, True),
    ],
)
def test_evaluate(text: str, values: dict[str, Any] | None, expected: bool) -> None:
    assert matches(text, ITEM, values) is expected


def test_evaluate_names_and_missing_item() -> None:
    assert matches(
        "#k.#z = :v",
        {"and": {"M": {"or": {"N": "2"}}}},
        {":v": {"N": "2"}},
        {"#k": "and", "#z": "or"},
    )
    assert matches("attribute_not_exists(id)", None)
    assert not matches("attribute_exists(id)", None)
    predicate = bind(check_ok("n > :v", values={":v": {"N": "1"}}), {}, {":v": {"N": "1"}})
    assert [predicate(i) for i in ({"n": {"N": "2"}}, {"n": {"N": "0"}}, {})] == [
        True,
        False,
        False,
    ]


# -- projection -----------------------------------------------------------------------


DOC: dict[str, Any] = {
    "p": {"S": "k"},
    "a": {
        "M": {
            "b": {"L": [{"N": "2"}, {"N": "4"}, {"M": {"x": {"S": "hi"}, "y": {"S": "yo"}}}]},
            "c": {"N": "5"},
        }
    },
    "b": {"S": "hello"},
}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a.b", {"a": {"M": {"b": DOC["a"]["M"]["b"]}}}),
        ("a.b[2].y", {"a": {"M": {"b": {"L": [{"M": {"y": {"S": "yo"}}}]}}}}),
        ("a.b[2], a.b[0]", {"a": {"M": {"b": {"L": [{"N": "2"}, DOC["a"]["M"]["b"]["L"][2]]}}}}),
        ("a.x, a.b[0], x, a.b[3].x", {"a": {"M": {"b": {"L": [{"N": "2"}]}}}}),
        ("a.c, b", {"a": {"M": {"c": {"N": "5"}}}, "b": {"S": "hello"}}),
        ("a.b.x", {}),
        ("a[0]", {}),
        ("a.b[0][0]", {}),
        ("p, nothing", {"p": {"S": "k"}}),
    ],
)
def test_project(text: str, expected: dict[str, Any]) -> None:
    assert project(DOC, parse_projection(text), {}) == expected


def test_projection_names_and_overlaps() -> None:
    proj = parse_projection("#n1.#n2")
    check_placeholders([proj], {"#n1": "a", "#n2": "c"}, None)
    assert project(DOC, proj, {"#n1": "a", "#n2": "c"}) == {"a": {"M": {"c": {"N": "5"}}}}
    overlap = "Invalid ProjectionExpression: Two document paths overlap with each other; must remove or rewrite one of these paths; "
    conflict = "Invalid ProjectionExpression: Two document paths conflict with each other; must remove or rewrite one of these paths; "
    for text, message in [
        ("a, a", overlap + "path one: [a], path two: [a]"),
        ("a.b, a", overlap + "path one: [a, b], path two: [a]"),
        ("a, a.b[2].c", overlap + "path one: [a], path two: [a, b, [2], c]"),
        ("a.b, a[1]", conflict + "path one: [a, b], path two: [a, [1]]"),
        ("#a, #a.#b", overlap + "path one: [a], path two: [a, b]"),
    ]:
        with pytest.raises(ValidationException) as info:
            check_placeholders(
                [parse_projection(text)], {"#a": "a", "#b": "b"} if "#" in text else None, None
            )
        assert info.value.message == message
    for text in ["a, b", "a.b, a.c", "a[1], a[2]", "a.b, a.c[2]"]:
        check_placeholders([parse_projection(text)], None, None)


# -- update expressions ------------------------------------------------------------------


def test_update_parse_tree() -> None:
    upd = parse_update(
        "SET a = :v, b = c + :one, d = list_append(if_not_exists(d, :empty), :l) "
        "REMOVE e[1], f.g ADD n :one DELETE ss :s"
    )
    assert [type(a).__name__ for a in upd.actions] == [
        "SetAction",
        "SetAction",
        "SetAction",
        "RemoveAction",
        "RemoveAction",
        "AddAction",
        "DeleteAction",
    ]
    assert len(upd.set) == 3 and len(upd.remove) == 2 and len(upd.add) == 1 and len(upd.delete) == 1
    assert upd.values == frozenset({":v", ":one", ":empty", ":l", ":s"})
    lower = parse_update("set a = :v remove b")
    assert len(lower.actions) == 2


def update_error(
    text: str, names: dict[str, str] | None = None, values: dict[str, Any] | None = None
) -> str:
    with pytest.raises(ValidationException) as info:
        check_placeholders([parse_update(text)], names, values)
    return info.value.message or ""


def test_update_errors() -> None:
    n = {":v": {"N": "1"}}
    assert update_error("SET a = :v SET b = :v", None, n) == (
        'Invalid UpdateExpression: The "SET" section can only be used once in an update expression;'
    )
    assert update_error("SET a = size(b)") == (
        "Invalid UpdateExpression: The function is not allowed in an update expression; function: size"
    )
    assert (
        update_error("SET a = foo(b)")
        == "Invalid UpdateExpression: Invalid function name; function: foo"
    )
    assert update_error("SET #a = :v", None, n) == (
        "Invalid UpdateExpression: An expression attribute name used in the document path is not "
        "defined; attribute name: #a"
    )
    assert update_error("SET a = :w") == (
        "Invalid UpdateExpression: An expression attribute value used in expression is not "
        "defined; attribute value: :w"
    )
    assert update_error("SET a = :v, a.b = :v", None, n) == (
        "Invalid UpdateExpression: Two document paths overlap with each other; must remove or "
        "rewrite one of these paths; path one: [a], path two: [a, b]"
    )
    assert update_error("SET a.b = :v REMOVE a[0]", None, n) == (
        "Invalid UpdateExpression: Two document paths conflict with each other; must remove or "
        "rewrite one of these paths; path one: [a, b], path two: [a, [0]]"
    )
    assert update_error("ADD a :s", None, {":s": {"S": "x"}}) == (
        "Invalid UpdateExpression: Incorrect operand type for operator or function; operator: ADD, "
        "operand type: STRING"
    )
    assert update_error("DELETE a :v", None, n) == (
        "Invalid UpdateExpression: Incorrect operand type for operator or function; operator: "
        "DELETE, operand type: NUMBER"
    )
    assert update_error("SET a = list_append(:v, b)", None, n) == (
        "Invalid UpdateExpression: Incorrect operand type for operator or function; operator or "
        "function: list_append, operand type: N"
    )
    assert update_error("SET a = b + :s", None, {":s": {"S": "x"}}) == (
        "Invalid UpdateExpression: Incorrect operand type for operator or function; operator or "
        "function: +, operand type: S"
    )
    assert update_error("SET a = if_not_exists(:v, :v)", None, n) == (
        "Invalid UpdateExpression: Operator or function requires a document path; operator or "
        "function: if_not_exists"
    )
    assert update_error("SET a = list_append(b)") == (
        "Invalid UpdateExpression: Incorrect number of operands for operator or function; "
        "operator or function: list_append, number of operands: 1"
    )
    check_placeholders(
        [parse_update("ADD a :v DELETE s :s")], None, {":v": {"N": "1"}, ":s": {"SS": ["x"]}}
    )


def test_deep_nesting_is_refused_not_crashing() -> None:
    for text in ["(" * 1000 + "a=b" + ")" * 1000, "NOT " * 1000 + "a=b"]:
        with pytest.raises(ValidationException, match="nested too deeply"):
            parse_condition(text)
    long_and = parse_condition(" AND ".join(f"a{i}=:v" for i in range(300)))
    values = {":v": {"N": "1"}}
    check_placeholders([long_and], None, values)
    assert not evaluate(long_and, {"a0": {"N": "1"}}, {}, values)
