"""Names, list indexes, arithmetic and attribute-name limits (issue 26, facts E1, E2, M1, L1, L2).

- E1: an unquoted name or function name starts with a letter; "_" or a digit
  in first place is a syntax error ("Syntax error; token: \\"_\\", near:
  \\"SET _123\\"", observed). After "#" or ":" any letters, digits and "_" may
  follow. One lexer serves every expression parameter.
- E2: a list index beyond a Java int is "List index is not within the
  allowable range; index: [N]" (observed for ProjectionExpression; the text is
  in DynamoDB Local's message catalogue); a[-1] and a[] are syntax errors.
- M1: SET arithmetic needing more than 38 significant digits is "Number
  overflow. ..." (observed); a literal keeps "Attempting to store more than 38
  significant digits in a Number".
- L1/L2: attribute names of more than 65535 characters and empty names are
  refused in every context; key attribute names are limited to 255.

Messages that no public record pins are marked as such in docs/decisions.md.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import create_table, error_of
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

KEY = {"pk": {"S": "k"}}
NAME_CHARS = "abcXYZ019_"
_BARE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")


def _error(call: Any, **params: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        call(**params)
    return error_of(excinfo)


# -- E1: the lexer --------------------------------------------------------------------------


def _first_token(text: str) -> str:
    """The first token of `text` by the expression language's lexical rules (names start with a letter)."""
    text = text.lstrip()
    if not text:
        return "<EOF>"
    match = re.match(r"[A-Za-z][A-Za-z0-9_]*|[0-9]+|[#:][A-Za-z0-9_]+", text)
    return match.group(0) if match else text[0]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.text(NAME_CHARS, min_size=1, max_size=8))
def test_bare_names_start_with_a_letter(ddb: Any, hash_table: str, name: str) -> None:
    """A valid name is set; "_..." fails on the "_"; "9..." fails on its digits (Partita's reading)."""
    values = {":v": {"N": "1"}}
    if _BARE_NAME.match(name):
        if not any(c in name for c in "019_"):
            name += "_"  # keep clear of reserved words, which contain no digit or "_"
        ddb.update_item(TableName=hash_table, Key=KEY, UpdateExpression=f"SET {name} = :v",
                        ExpressionAttributeValues=values)
        assert ddb.get_item(TableName=hash_table, Key=KEY, ConsistentRead=True)["Item"][name] == {"N": "1"}
        return
    text = f"SET {name} = :v"
    bad = "_" if name[0] == "_" else _first_token(name)
    rest = text[4 + len(bad):]
    space = len(rest) - len(rest.lstrip())
    # DynamoDB quotes the text from the token before the bad one to the end of the one after it.
    near = text[: 4 + len(bad) + space + len(_first_token(rest))]
    assert error_of_update(ddb, hash_table, text, values) == (
        "ValidationException", f'Invalid UpdateExpression: Syntax error; token: "{bad}", near: "{near}"',
    )


def error_of_update(ddb: Any, table: str, expression: str, values: dict[str, Any] | None = None,
                    names: dict[str, str] | None = None) -> tuple[str, str]:
    params: dict[str, Any] = {"TableName": table, "Key": KEY, "UpdateExpression": expression}
    if values:
        params["ExpressionAttributeValues"] = values
    if names:
        params["ExpressionAttributeNames"] = names
    return _error(ddb.update_item, **params)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name_tail=st.text(NAME_CHARS, min_size=1, max_size=6), value_tail=st.text(NAME_CHARS, min_size=1, max_size=6))
def test_placeholders_take_any_letters_digits_and_underscores(ddb: Any, hash_table: str, name_tail: str,
                                                              value_tail: str) -> None:
    ddb.update_item(TableName=hash_table, Key=KEY, UpdateExpression=f"SET #{name_tail} = :{value_tail}",
                    ExpressionAttributeNames={f"#{name_tail}": "target"},
                    ExpressionAttributeValues={f":{value_tail}": {"S": value_tail}})
    assert ddb.get_item(TableName=hash_table, Key=KEY, ConsistentRead=True)["Item"]["target"] == {"S": value_tail}


@pytest.mark.parametrize(("expression", "message"), [
    ("SET _123 = :v", 'Syntax error; token: "_", near: "SET _123"'),
    ("SET _abc = :v", 'Syntax error; token: "_", near: "SET _abc"'),
    ("SET a = _f(b,c,d)", 'Syntax error; token: "_", near: "= _f"'),
    ("SET 123a = :v", 'Syntax error; token: "123", near: "SET 123a"'),
    ("SET 123 = :v", 'Syntax error; token: "123", near: "SET 123 ="'),
    ("SET hi-there = :v", 'Syntax error; token: "-", near: "hi-there"'),
    ("SET hi$there = :v", 'Syntax error; token: "$", near: "hi$there"'),
    ('SET "hithere" = :v', 'Syntax error; token: """, near: "SET "hithere"'),
    ("SET !hithere = :v", 'Syntax error; token: "!", near: "SET !hithere"'),
    ("SET #hi-there = :v", 'Syntax error; token: "-", near: "#hi-there"'),
    ("SET #!hi = :v", 'Syntax error; token: "#", near: "SET #!"'),
    ("SET # = :v", 'Syntax error; token: "#", near: "SET # ="'),
    ("SET a = :hi!there", 'Syntax error; token: "!", near: ":hi!there"'),
    ("SET a = :", 'Syntax error; token: ":", near: "= :"'),
    ("SET :a = :v", 'Syntax error; token: ":a", near: "SET :a ="'),
    ("SET a = f(b,c,d)", "Invalid function name; function: f"),
    ("SET a = f123_hi(b,c,d)", "Invalid function name; function: f123_hi"),
])
def test_update_expression_lexing(ddb: Any, hash_table: str, expression: str, message: str) -> None:
    values = {":v": {"N": "1"}} if ":v" in expression else None
    assert error_of_update(ddb, hash_table, expression, values) == (
        "ValidationException", f"Invalid UpdateExpression: {message}",
    )


def test_valid_names_and_placeholders(ddb: Any, hash_table: str) -> None:
    ddb.update_item(TableName=hash_table, Key=KEY,
                    UpdateExpression="SET alnum = :Alpha_Numeric_123, Alpha_Numeric_123 = :123a, A123_ = :_, "
                                     "#123 = :123, #_ = :val1",
                    ExpressionAttributeNames={"#123": "3can include any character!.#=", "#_": "x"},
                    ExpressionAttributeValues={":Alpha_Numeric_123": {"N": "1"}, ":123a": {"N": "2"},
                                               ":_": {"N": "3"}, ":123": {"N": "4"}, ":val1": {"N": "5"}})
    assert ddb.get_item(TableName=hash_table, Key=KEY, ConsistentRead=True)["Item"] == {
        **KEY, "alnum": {"N": "1"}, "Alpha_Numeric_123": {"N": "2"}, "A123_": {"N": "3"},
        "3can include any character!.#=": {"N": "4"}, "x": {"N": "5"},
    }


def test_every_expression_parameter_lexes_names_the_same_way(ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name, range_key=("sk", "N"))
    key = {"pk": {"S": "k"}, "sk": {"N": "1"}}
    syntax = 'Syntax error; token: "_"'
    assert _error(ddb.put_item, TableName=table_name, Item=key, ConditionExpression="attribute_exists(_a)") == (
        "ValidationException", f'Invalid ConditionExpression: {syntax}, near: "(_a"')
    assert _error(ddb.put_item, TableName=table_name, Item=key, ConditionExpression="_f(a)") == (
        "ValidationException", f'Invalid ConditionExpression: {syntax}, near: "_f"')
    assert _error(ddb.get_item, TableName=table_name, Key=key, ProjectionExpression="a, _b") == (
        "ValidationException", f'Invalid ProjectionExpression: {syntax}, near: ", _b"')
    assert _error(ddb.scan, TableName=table_name, FilterExpression="_a = :v",
                  ExpressionAttributeValues={":v": {"N": "1"}}) == (
        "ValidationException", f'Invalid FilterExpression: {syntax}, near: "_a"')
    assert _error(ddb.query, TableName=table_name, KeyConditionExpression="pk = :v AND _sk = :v",
                  ExpressionAttributeValues={":v": {"N": "1"}}) == (
        "ValidationException", f'Invalid KeyConditionExpression: {syntax}, near: "AND _sk"')
    assert _error(ddb.put_item, TableName=table_name, Item=key, ConditionExpression="f(a)") == (
        "ValidationException", "Invalid ConditionExpression: Invalid function name; function: f")


# -- E2: list indexes -----------------------------------------------------------------------


@pytest.mark.parametrize(("projection", "item"), [
    ("a[0]", {"a": {"L": [{"N": "7"}]}}),
    ("a[1]", {"a": {"L": [{"N": "42"}]}}),
    ("a[2]", {}),
    ("a[999]", {}),
    ("a[2147483647]", {}),
])
def test_list_indexes_within_range(ddb: Any, hash_table: str, projection: str, item: dict[str, Any]) -> None:
    ddb.put_item(TableName=hash_table, Item={**KEY, "a": {"L": [{"N": "7"}, {"N": "42"}]}})
    assert ddb.get_item(TableName=hash_table, Key=KEY, ProjectionExpression=projection)["Item"] == item


@pytest.mark.parametrize(("projection", "message"), [
    ("a[99999999999999]", "List index is not within the allowable range; index: [99999999999999]"),
    ("a[2147483648]", "List index is not within the allowable range; index: [2147483648]"),
    ("b, a[0][4294967296]", "List index is not within the allowable range; index: [4294967296]"),
    ("a[-1]", 'Syntax error; token: "-", near: "[-1"'),
    ("a[]", 'Syntax error; token: "]", near: "[]"'),
])
def test_list_indexes_out_of_range_or_malformed(ddb: Any, hash_table: str, projection: str, message: str) -> None:
    ddb.put_item(TableName=hash_table, Item={**KEY, "a": {"L": [{"N": "7"}, {"N": "42"}]}})
    assert _error(ddb.get_item, TableName=hash_table, Key=KEY, ProjectionExpression=projection) == (
        "ValidationException", f"Invalid ProjectionExpression: {message}",
    )


def test_every_document_path_has_the_index_range(ddb: Any, hash_table: str) -> None:
    tail = "List index is not within the allowable range; index: [3000000000]"
    values = {":v": {"N": "1"}}
    assert error_of_update(ddb, hash_table, "SET a[3000000000] = :v", values) == (
        "ValidationException", f"Invalid UpdateExpression: {tail}")
    assert _error(ddb.put_item, TableName=hash_table, Item=KEY, ConditionExpression="a[3000000000] = :v",
                  ExpressionAttributeValues=values) == ("ValidationException", f"Invalid ConditionExpression: {tail}")
    assert _error(ddb.scan, TableName=hash_table, FilterExpression="size(a[3000000000]) > :v",
                  ExpressionAttributeValues=values) == ("ValidationException", f"Invalid FilterExpression: {tail}")


# -- M1: arithmetic -------------------------------------------------------------------------

OVERFLOW = "Number overflow. Attempting to store a number with magnitude larger than supported range"


@pytest.mark.parametrize(("expression", "values"), [
    ("SET b = :v1 - :v2", {":v1": {"N": "1e50"}, ":v2": {"N": "1"}}),
    ("SET b = :v1 + :v2", {":v1": {"N": "1e50"}, ":v2": {"N": "1"}}),
    ("SET b = :v1 + :v2", {":v1": {"N": "9e125"}, ":v2": {"N": "9e125"}}),
    ("SET b = :v1 - :v2", {":v1": {"N": "9e125"}, ":v2": {"N": "-9e125"}}),
])
def test_arithmetic_beyond_38_digits_or_the_range_overflows(ddb: Any, hash_table: str, expression: str,
                                                            values: dict[str, Any]) -> None:
    assert error_of_update(ddb, hash_table, expression, values) == ("ValidationException", OVERFLOW)
    assert "Item" not in ddb.get_item(TableName=hash_table, Key=KEY, ConsistentRead=True)


def test_add_shares_the_arithmetic(ddb: Any, hash_table: str) -> None:
    ddb.put_item(TableName=hash_table, Item={**KEY, "n": {"N": "1e50"}})
    assert error_of_update(ddb, hash_table, "ADD n :one", {":one": {"N": "1"}}) == ("ValidationException", OVERFLOW)
    assert _error(ddb.update_item, TableName=hash_table, Key=KEY,
                  AttributeUpdates={"n": {"Action": "ADD", "Value": {"N": "-1"}}}) == ("ValidationException", OVERFLOW)
    ddb.update_item(TableName=hash_table, Key=KEY, UpdateExpression="SET m = :a + :b",
                    ExpressionAttributeValues={":a": {"N": "9e125"}, ":b": {"N": "9e124"}})
    assert ddb.get_item(TableName=hash_table, Key=KEY)["Item"]["m"] == {"N": "99" + "0" * 124}


def test_a_literal_with_too_many_digits_keeps_its_message(ddb: Any, hash_table: str) -> None:
    assert _error(ddb.put_item, TableName=hash_table,
                  Item={**KEY, "a": {"N": "123456789012345678901234567890123456789"}}) == (
        "ValidationException", "1 validation error detected: Attempting to store more than 38 significant digits in a Number")


# -- L1/L2: attribute names -----------------------------------------------------------------

LONG = "n" * 65536
LONGEST = "n" * 65535
SHOWN = 8192  # Partita echoes at most this many characters of a value, then "..."


def _map_key_clause(param: str, first_key: str) -> str:
    return (f"1 validation error detected: Value '{('{' + first_key)[:SHOWN]}...' at '{param}' failed to satisfy "
            "constraint: Map keys must satisfy constraint: [Member must have length less than or equal to 65535]")


def _member_clause(path: str, value: str) -> str:
    return (f"1 validation error detected: Value '{value[:SHOWN]}...' at '{path}' failed to satisfy constraint: "
            "Member must have length less than or equal to 65535")


def _six_contexts(ddb: Any, table: str, name: str) -> list[tuple[str, str] | None]:
    """The six requests of the observation with `name`; None where it succeeded."""
    calls: list[tuple[Any, dict[str, Any]]] = [
        (ddb.put_item, {"Item": {name: {"N": "1"}, **KEY}}),
        (ddb.get_item, {"Key": KEY, "ProjectionExpression": "#name", "ExpressionAttributeNames": {"#name": name}}),
        (ddb.get_item, {"Key": KEY, "AttributesToGet": [name]}),
        (ddb.update_item, {"Key": KEY, "AttributeUpdates": {name: {"Value": {"N": "2"}, "Action": "PUT"}}}),
        (ddb.update_item, {"Key": KEY, "UpdateExpression": "SET #name = :val",
                           "ExpressionAttributeNames": {"#name": name}, "ExpressionAttributeValues": {":val": {"N": "3"}}}),
        (ddb.update_item, {"Key": KEY, "UpdateExpression": "SET a = :val", "ConditionExpression": "#name = :val",
                           "ExpressionAttributeNames": {"#name": name}, "ExpressionAttributeValues": {":val": {"N": "3"}}}),
    ]
    out: list[tuple[str, str] | None] = []
    for call, params in calls:
        try:
            call(TableName=table, **params)
            out.append(None)
        except ClientError as error:
            out.append((error.response["Error"]["Code"], error.response["Error"]["Message"]))
    return out


def test_names_of_65535_characters_are_accepted(ddb: Any, hash_table: str) -> None:
    assert _six_contexts(ddb, hash_table, LONGEST) == [None] * 6
    assert ddb.get_item(TableName=hash_table, Key=KEY, ConsistentRead=True)["Item"] == {
        **KEY, LONGEST: {"N": "3"}, "a": {"N": "3"},
    }


def test_names_over_65535_characters_are_refused(ddb: Any, hash_table: str) -> None:
    names_clause = _member_clause("expressionAttributeNames.#name.member", LONG)
    assert _six_contexts(ddb, hash_table, LONG) == [
        ("ValidationException", _map_key_clause("item", LONG)),
        ("ValidationException", names_clause),
        ("ValidationException", _member_clause("attributesToGet.1.member", LONG)),
        ("ValidationException", _map_key_clause("attributeUpdates", LONG)),
        ("ValidationException", names_clause),
        ("ValidationException", names_clause),
    ]
    assert "Item" not in ddb.get_item(TableName=hash_table, Key=KEY, ConsistentRead=True)


def test_empty_names_are_refused(ddb: Any, hash_table: str) -> None:
    names_message = "ExpressionAttributeNames contains invalid value: Empty attribute name for key #name"
    assert _six_contexts(ddb, hash_table, "") == [
        ("ValidationException", "Empty attribute name"),
        ("ValidationException", names_message),
        ("ValidationException", "Empty attribute name"),
        ("ValidationException", "Empty attribute name"),
        ("ValidationException", names_message),
        ("ValidationException", names_message),
    ]
    assert "Item" not in ddb.get_item(TableName=hash_table, Key=KEY, ConsistentRead=True)


def test_batches_and_transactions_refuse_empty_names_too(ddb: Any, hash_table: str) -> None:
    assert _error(ddb.batch_write_item, RequestItems={hash_table: [{"PutRequest": {"Item": {**KEY, "": {"N": "1"}}}}]}) == (
        "ValidationException", "Empty attribute name")
    assert _error(ddb.transact_write_items,
                  TransactItems=[{"Put": {"TableName": hash_table, "Item": {**KEY, "": {"N": "1"}}}}]) == (
        "ValidationException", "Empty attribute name")
    assert "Item" not in ddb.get_item(TableName=hash_table, Key=KEY, ConsistentRead=True)


def test_key_attribute_names_are_limited_to_255(ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name, hash_key=("k" * 255, "S"))
    ddb.put_item(TableName=table_name, Item={"k" * 255: {"S": "v"}})
    name = "k" * 256
    assert _error(ddb.create_table, TableName=table_name + "-long", BillingMode="PAY_PER_REQUEST",
                  KeySchema=[{"AttributeName": name, "KeyType": "HASH"}],
                  AttributeDefinitions=[{"AttributeName": name, "AttributeType": "S"}]) == (
        "ValidationException",
        f"2 validation errors detected: Value '{name}' at 'keySchema.1.member.attributeName' failed to satisfy "
        "constraint: Member must have length less than or equal to 255; "
        f"Value '{name}' at 'attributeDefinitions.1.member.attributeName' failed to satisfy constraint: "
        "Member must have length less than or equal to 255",
    )


def test_a_lone_sigil_is_refused_in_the_expression_or_in_its_map(ddb: Any, hash_table: str) -> None:
    """DynamoDB finds a bad key in ExpressionAttributeNames before it parses (Alternator's AWS-checked notes)."""
    values = {":v": {"N": "1"}}
    assert error_of_update(ddb, hash_table, "SET # = :v", values, {"#a": "x"}) == (
        "ValidationException", 'Invalid UpdateExpression: Syntax error; token: "#", near: "SET # ="')
    assert error_of_update(ddb, hash_table, "SET # = :v", values, {"#": "x"}) == (
        "ValidationException", 'ExpressionAttributeNames contains invalid key: Syntax error; key: "#"')
    assert error_of_update(ddb, hash_table, "SET a = :", {":": {"N": "1"}}) == (
        "ValidationException", 'ExpressionAttributeValues contains invalid key: Syntax error; key: ":"')
