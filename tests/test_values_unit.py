"""Attribute-value validation, canonical form, size and comparison.

Plain unit tests of pure functions: the messages pinned here are DynamoDB's
(see partita/engine/values.py for where each comes from), and the HTTP-level
tests exercise the same functions through a real server.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from partita.engine.model.serialization_errors import check_item_types
from partita.engine.model.sizes import item_size, value_size
from partita.engine.model.values import (
    compare,
    normalize_item,
    normalize_number,
    normalize_value,
    values_equal,
)
from partita.errors import SerializationException, ValidationException

INVALID = "One or more parameter values were invalid: "


def validation_message(av: Any) -> str:
    with pytest.raises(ValidationException) as info:
        normalize_value(av)
    assert not isinstance(info.value, SerializationException)
    return str(info.value.message)


def serialization_message(av: Any) -> str:
    with pytest.raises(SerializationException) as info:
        normalize_value(av)
    return str(info.value.message)


# --- numbers ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given_", "canonical"),
    [
        ("+01.50", "1.5"),
        ("1E2", "100"),
        ("1e+2", "100"),
        ("1.5E+3", "1500"),
        ("-0", "0"),
        ("+0", "0"),
        ("0.000", "0"),
        (".5", "0.5"),
        ("5.", "5"),
        ("1e-3", "0.001"),
        ("-1.2300e-2", "-0.0123"),
        ("00042", "42"),
        ("1.0", "1"),
        ("123", "123"),
        ("-7", "-7"),
        ("0.0e126", "0"),
        ("1E-130", "0." + "0" * 129 + "1"),
        ("9" * 38 + "E+88", "9" * 38 + "0" * 88),
        ("1" + "0" * 60, "1" + "0" * 60),  # trailing integer zeros are not significant
    ],
)
def test_numbers_are_normalized(given_: str, canonical: str) -> None:
    assert normalize_number(given_) == canonical
    assert normalize_value({"N": given_}) == {"N": canonical}


@pytest.mark.parametrize(
    ("given_", "message"),
    [
        ("", "The parameter cannot be converted to a numeric value"),
        ("abc", "The parameter cannot be converted to a numeric value: abc"),
        (" 5", "The parameter cannot be converted to a numeric value:  5"),
        ("NaN", "The parameter cannot be converted to a numeric value: NaN"),
        ("Infinity", "The parameter cannot be converted to a numeric value: Infinity"),
        ("1_000", "The parameter cannot be converted to a numeric value: 1_000"),
        ("1.2.3", "The parameter cannot be converted to a numeric value: 1.2.3"),
        ("1e", "The parameter cannot be converted to a numeric value: 1e"),
        ("123456789012345678901234567890123456789", "Attempting to store more than 38 significant digits in a Number"),
        ("-1.23456789012345678901234567890123456789", "Attempting to store more than 38 significant digits in a Number"),
        ("1e126", "Number overflow. Attempting to store a number with magnitude larger than supported range"),
        ("-1e126", "Number overflow. Attempting to store a number with magnitude larger than supported range"),
        ("0e126", "Number overflow. Attempting to store a number with magnitude larger than supported range"),
        ("1e-131", "Number underflow. Attempting to store a number with magnitude smaller than supported range"),
        ("-1e-131", "Number underflow. Attempting to store a number with magnitude smaller than supported range"),
    ],
)  # fmt: skip
def test_invalid_numbers(given_: str, message: str) -> None:
    assert validation_message({"N": given_}) == message


@given(
    negative=st.booleans(),
    digits=st.integers(min_value=1, max_value=10**38 - 1),
    exponent=st.integers(min_value=-200, max_value=200),
)
def test_normalized_numbers_keep_their_value(negative: bool, digits: int, exponent: int) -> None:
    text = f"{'-' if negative else ''}{digits}E{exponent}"
    value = Decimal(text)
    if not -130 <= value.adjusted() <= 125:
        with pytest.raises(ValidationException):
            normalize_number(text)
        return
    canonical = normalize_number(text)
    assert Decimal(canonical) == value
    assert "E" not in canonical and "e" not in canonical
    assert normalize_number(canonical) == canonical  # idempotent


# --- shapes and sets -------------------------------------------------------------------


@pytest.mark.parametrize("av", [{}, {"a": ""}, {"S": None}, None])
def test_empty_attribute_value(av: Any) -> None:
    assert validation_message(av) == (
        "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes"
    )


@pytest.mark.parametrize("av", [{"M": {"a": {}}}, {"L": [{}]}, {"L": [{"a": {}}]}])
def test_empty_attribute_value_nested(av: Any) -> None:
    assert validation_message(av).startswith("Supplied AttributeValue is empty")


def test_more_than_one_type() -> None:
    assert validation_message({"S": "a", "N": "1"}) == (
        "Supplied AttributeValue has more than one datatypes set, "
        "must contain exactly one of the supported datatypes"
    )


def test_member_errors_come_before_the_two_types_error() -> None:
    assert validation_message({"S": "a", "N": "b"}) == (
        "The parameter cannot be converted to a numeric value: b"
    )
    assert validation_message({"S": "", "N": ""}) == (
        "The parameter cannot be converted to a numeric value"
    )


@pytest.mark.parametrize(
    ("av", "message"),
    [
        ({"NULL": False}, INVALID + "Null attribute value types must have the value of true"),
        ({"SS": []}, INVALID + "An string set  may not be empty"),
        ({"NS": []}, INVALID + "An number set  may not be empty"),
        ({"BS": []}, INVALID + "Binary sets should not be empty"),
        ({"SS": ["a", "a"]}, INVALID + "Input collection [a, a] contains duplicates."),
        ({"SS": ["a", "b", "a"]}, INVALID + "Input collection [a, b, a] contains duplicates."),
        ({"BS": ["Yg==", "Yg=="]}, INVALID + "Input collection [Yg==, Yg==]of type BS contains duplicates."),
        ({"NS": ["1", "1"]}, "Input collection contains duplicates"),
        ({"NS": ["1", "1.0"]}, "Input collection contains duplicates"),
        ({"NS": ["1000", "1e3"]}, "Input collection contains duplicates"),
        ({"NS": ["1", ""]}, "The parameter cannot be converted to a numeric value"),
        ({"NS": ["1", "b"]}, "The parameter cannot be converted to a numeric value: b"),
        ({"SS": ["a", None]}, INVALID + "An string set may not have a null string as a member"),
    ],
)  # fmt: skip
def test_invalid_values(av: dict[str, Any], message: str) -> None:
    assert validation_message(av) == message
    assert validation_message({"L": [{"M": {"x": av}}]}) == message


def test_empty_strings_and_binaries_are_allowed() -> None:
    assert normalize_value({"S": ""}) == {"S": ""}
    assert normalize_value({"B": ""}) == {"B": ""}
    assert normalize_value({"SS": ["", "a"]}) == {"SS": ["", "a"]}


def test_sets_keep_their_order_and_numbers_are_normalized() -> None:
    assert normalize_value({"SS": ["b", "a", "c"]}) == {"SS": ["b", "a", "c"]}
    assert normalize_value({"NS": ["10", "+2", "1e0"]}) == {"NS": ["10", "2", "1"]}
    assert normalize_value({"NS": ["3", "1.50", "-0"]}) == {"NS": ["3", "1.5", "0"]}


def test_normalize_item_is_a_canonical_copy() -> None:
    given_ = {
        "pk": {"S": "a"},
        "n": {"N": "+01.50"},
        "m": {"M": {"x": {"L": [{"N": "1E2"}, {"BOOL": False}, {"NULL": True}]}}},
        "b": {"B": "YQ=="},
        "unknown": {"S": "x", "Q": "ignored"},
    }
    out = normalize_item(given_)
    assert out == {
        "pk": {"S": "a"},
        "n": {"N": "1.5"},
        "m": {"M": {"x": {"L": [{"N": "100"}, {"BOOL": False}, {"NULL": True}]}}},
        "b": {"B": "YQ=="},
        "unknown": {"S": "x"},
    }
    assert out["pk"] is not given_["pk"]
    assert given_["n"] == {"N": "+01.50"}


def deep(levels: int) -> dict[str, Any]:
    """A value whose leaf sits ``levels`` maps below the attribute."""
    value: dict[str, Any] = {"S": "leaf"}
    for _ in range(levels):
        value = {"M": {"n": value}}
    return value


def test_nesting_depth() -> None:
    normalize_item({"a": deep(31)})  # leaf at level 32: stored by the service
    with pytest.raises(ValidationException) as info:
        normalize_item({"a": deep(32)})  # leaf at level 33: rejected
    assert info.value.message == (
        "Nesting Levels have exceeded supported limits: "
        "Attributes in the item have nested levels beyond supported limit"
    )
    lists: dict[str, Any] = {"N": "1"}
    for _ in range(32):
        lists = {"L": [lists]}
    with pytest.raises(ValidationException):
        normalize_value(lists)


# --- serialization errors ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("av", "message"),
    [
        ({"S": 5}, "NUMBER_VALUE cannot be converted to String"),
        ({"S": 2.5}, "DECIMAL_VALUE cannot be converted to String"),
        ({"S": True}, "TRUE_VALUE cannot be converted to String"),
        ({"N": False}, "FALSE_VALUE cannot be converted to String"),
        ({"N": 5}, "NUMBER_VALUE cannot be converted to String"),
        ({"S": ["a"]}, "Unrecognized collection type class java.lang.String"),
        ({"S": {"S": "a"}}, "Start of structure or map found where not expected"),
        ({"BOOL": "23"}, "Unexpected token received from parser"),
        ({"BOOL": 1}, "NUMBER_VALUE cannot be converted to Boolean"),
        ({"NULL": 1.5}, "DECIMAL_VALUE cannot be converted to Boolean"),
        ({"NULL": []}, "Unrecognized collection type class java.lang.Boolean"),
        ({"B": 5}, "only base-64-encoded strings are convertible to bytes"),
        ({"B": []}, "Unrecognized collection type class java.nio.ByteBuffer"),
        ({"B": "23456"}, "Base64 encoded length is expected a multiple of 4 bytes but found: 5"),
        ({"B": "=+/="}, "Invalid last non-pad Base64 character dectected"),
        ({"B": "+/+="}, "Invalid last non-pad Base64 character dectected"),
        ({"B": "YR=="}, "Invalid last non-pad Base64 character dectected"),
        ({"B": "Y-Q="}, "Invalid Base64 character: '-'"),
        ({"SS": "a"}, "Unexpected field type"),
        ({"L": 5}, "Unexpected field type"),
        ({"NS": {}}, "Start of structure or map found where not expected"),
        ({"SS": ["a", 1]}, "NUMBER_VALUE cannot be converted to String"),
        ({"BS": ["YQ==", True]}, "only base-64-encoded strings are convertible to bytes"),
        ({"L": ["a"]}, "Unexpected value type in payload"),
        ({"L": [[]]}, "Unrecognized collection type class com.amazonaws.dynamodb.v20120810.AttributeValue"),
        ({"M": []}, "Unrecognized collection type java.util.Map<java.lang.String, com.amazonaws.dynamodb.v20120810.AttributeValue>"),
        ({"M": "x"}, "Unexpected field type"),
        ({"M": {"a": 1}}, "Unexpected value type in payload"),
        ("x", "Unexpected value type in payload"),
    ],
)  # fmt: skip
def test_wrong_json_types_are_serialization_errors(av: Any, message: str) -> None:
    assert serialization_message(av) == message


def test_serialization_errors_win_over_validation_errors_anywhere() -> None:
    item = {"a": {"SS": []}, "b": {"S": 5}}
    with pytest.raises(SerializationException) as info:
        normalize_item(item)
    assert info.value.message == "NUMBER_VALUE cannot be converted to String"
    with pytest.raises(SerializationException):
        normalize_value({"NULL": False, "S": 1})


def test_item_must_be_a_map() -> None:
    for bad, message in [
        ([], "Unrecognized collection type java.util.Map<java.lang.String, "
             "com.amazonaws.dynamodb.v20120810.AttributeValue>"),
        ("x", "Unexpected field type"),
    ]:  # fmt: skip
        with pytest.raises(SerializationException) as info:
            normalize_item(bad)
        assert info.value.message == message
        with pytest.raises(SerializationException):
            check_item_types(bad)


# --- size ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("number", "size"),
    [
        ("0", 1),
        ("1", 2),
        ("15", 2),
        ("150", 3),
        ("1.5", 3),
        ("0.5", 2),
        ("-1", 3),
        ("1" + "0" * 125, 2),  # dynalite's service-checked cases: 1e125 costs 2
        ("11" + "0" * 124, 2),
        ("11111" + "0" * 121, 4),
        ("111111" + "0" * 120, 4),
        ("1111111" + "0" * 119, 5),
        ("1" * 38 + "0" * 88, 20),
    ],
)
def test_number_sizes(number: str, size: int) -> None:
    assert value_size({"N": number}) == size


def test_item_size_rule() -> None:
    item = {
        "id": {"S": "abc"},  # 2 + 3
        "é": {"S": "ü"},  # 2 + 2 (UTF-8)
        "b": {"B": "AAEC"},  # 1 + 3 raw bytes
        "t": {"BOOL": True},  # 1 + 1
        "z": {"NULL": True},  # 1 + 1
        "ss": {"SS": ["a", "bc"]},  # 2 + 3
        "ns": {"NS": ["1", "15"]},  # 2 + 2 + 2
        "bs": {"BS": ["AA==", "AAE="]},  # 2 + 1 + 2
        "l": {"L": [{"S": "ab"}, {"N": "1"}]},  # 1 + 3 + (1 + 2) + (1 + 2)
        "m": {"M": {"k": {"S": "v"}}},  # 1 + 3 + (1 + 1 + 1)
        "e": {"M": {}},  # 1 + 3
    }
    assert item_size(item) == 5 + 4 + 4 + 2 + 2 + 5 + 6 + 5 + 10 + 7 + 4


def test_item_size_limit_boundary_from_the_service() -> None:
    # dynalite's service-checked boundary: key "a" + "b" holding 409,600 - 2 - len(key)
    key = "x" * 10
    fits = {"a": {"S": key}, "b": {"S": "a" * (409600 - len(key) - 2)}}
    assert item_size(fits) == 409600


# --- comparison ------------------------------------------------------------------------------


def test_compare_scalars() -> None:
    assert compare({"N": "10"}, {"N": "9"}) == 1
    assert compare({"N": "-10"}, {"N": "-9"}) == -1
    assert compare({"N": "1.5"}, {"N": "1.5"}) == 0
    assert compare({"S": "a"}, {"S": "b"}) == -1
    assert compare({"S": "Z"}, {"S": "a"}) == -1
    # UTF-8 byte order, not UTF-16 order: U+FFFD sorts before U+1F600.
    assert compare({"S": "\ufffd"}, {"S": "\U0001f600"}) == -1
    assert compare({"B": "/w=="}, {"B": "AA=="}) == 1  # unsigned: 0xFF > 0x00
    with pytest.raises(ValueError):
        compare({"S": "a"}, {"N": "1"})


@given(st.text(), st.text())
def test_string_compare_is_utf8_byte_order(a: str, b: str) -> None:
    x, y = a.encode("utf-8"), b.encode("utf-8")
    assert compare({"S": a}, {"S": b}) == (x > y) - (x < y)


def test_values_equal() -> None:
    assert values_equal({"N": "1"}, {"N": "1.0"})
    assert not values_equal({"N": "1"}, {"S": "1"})
    assert values_equal({"SS": ["a", "b"]}, {"SS": ["b", "a"]})
    assert not values_equal({"SS": ["a", "b"]}, {"SS": ["a", "c"]})
    assert values_equal({"NS": ["1", "2"]}, {"NS": ["2.0", "1"]})
    assert values_equal({"BS": ["AA==", "AQ=="]}, {"BS": ["AQ==", "AA=="]})
    assert values_equal(
        {"M": {"a": {"L": [{"N": "1"}, {"NULL": True}]}}},
        {"M": {"a": {"L": [{"N": "1.00"}, {"NULL": True}]}}},
    )
    assert not values_equal({"L": [{"N": "1"}, {"N": "2"}]}, {"L": [{"N": "2"}, {"N": "1"}]})
    assert not values_equal({"M": {"a": {"S": "x"}}}, {"M": {"b": {"S": "x"}}})
    assert not values_equal({"BOOL": True}, {"BOOL": False})
