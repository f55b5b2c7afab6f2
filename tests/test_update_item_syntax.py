"""UpdateExpression syntax against a real server, with DynamoDB's exact messages.

Clauses (each once, in any order), overlapping and conflicting paths, syntax
errors, reserved words and functions, and the ExpressionAttributeNames/Values
rules.

Expected outcomes come from DynamoDB's documentation and from behaviour
recorded against the real service (dynalite's updateItem suite, ExtendDB's
and Alternator's conformance notes).
"""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import error_of
from update_helpers import KEY, L, N, S, failure, get, update

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
        # Enveloped, naming no null expressions (a 2026 conformance suite; docs/decisions.md).
        (dict(ExpressionAttributeValues={":a": N(1)}),
         "1 validation error detected: ExpressionAttributeValues can only be specified when using expressions"),
        (dict(UpdateExpression="SET #a = :a", ExpressionAttributeValues={":a": N(1)}),
         "Invalid UpdateExpression: An expression attribute name used in the document path is not defined; "
         "attribute name: #a"),
        (dict(UpdateExpression=""),
         "1 validation error detected: Invalid UpdateExpression: The expression can not be empty;"),
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
