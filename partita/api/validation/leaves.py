"""Scalar (leaf) checks of the request-shape validator, and the codec's kind errors.

Split from ``shapes.py`` (``compiler.py`` compiles structures, lists and
maps): a leaf check takes one JSON scalar and returns the constraint tails it
violates ("Member must ...") or None, and raises SerializationException, with
the Java codec's message, for a JSON value of the wrong kind.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from typing import Any

from partita.engine.model.serialization_errors import START_OF_MAP, json_token_name
from partita.errors import SerializationException

LeafCheck = Callable[[Any], "list[str] | None"]


# The service lists these enums in its own order, not the published model's.
# Source: real-service messages (2026 catalogue: ScalarAttributeType,
# StreamViewType, ContributorInsightsMode) and dynalite's recorded messages
# (the rest). Used only when the set of values still equals the model's.
ENUM_ORDER: dict[str, tuple[str, ...]] = {
    "ScalarAttributeType": ("B", "N", "S"),
    "StreamViewType": ("OLD_IMAGE", "KEYS_ONLY", "NEW_AND_OLD_IMAGES", "NEW_IMAGE"),
    "ContributorInsightsMode": ("THROTTLED_KEYS", "ACCESSED_AND_THROTTLED_KEYS"),
    "ReturnValue": ("ALL_NEW", "UPDATED_OLD", "ALL_OLD", "NONE", "UPDATED_NEW"),
    "ComparisonOperator": (
        "IN",
        "NULL",
        "BETWEEN",
        "LT",
        "NOT_CONTAINS",
        "EQ",
        "GT",
        "NOT_NULL",
        "NE",
        "LE",
        "BEGINS_WITH",
        "GE",
        "CONTAINS",
    ),
    "ConditionalOperator": ("OR", "AND"),
    "Select": ("SPECIFIC_ATTRIBUTES", "COUNT", "ALL_ATTRIBUTES", "ALL_PROJECTED_ATTRIBUTES"),
    "ProjectionType": ("ALL", "INCLUDE", "KEYS_ONLY"),
}


# Java regex constructs the model uses that Python's ``re`` spells differently.
_JAVA_REGEX_FIXES: tuple[tuple[str, str], ...] = (
    (r"\p{Print}", r"[\x20-\x7e]"),
    # A surrogate pair range written as UTF-16 units means "any supplementary character".
    (r"\uD800\uDC00-\uDBFF\uDFFF", r"\U00010000-\U0010FFFF"),
)


def java_regex(pattern: str) -> re.Pattern[str] | None:
    """Compile a model (Java) pattern for Python; None (unchecked) if it cannot be translated."""
    for java, python in _JAVA_REGEX_FIXES:
        pattern = pattern.replace(java, python)
    try:
        return re.compile(pattern, re.DOTALL)
    except re.error:
        return None


def serialization(message: str | None) -> SerializationException:
    return SerializationException(message)


def scalar_kind_error(value: Any, java_type: str) -> SerializationException:
    """Error for a list or object where a scalar of ``java_type`` is expected."""
    if isinstance(value, list):
        return serialization(f"Unrecognized collection type class java.lang.{java_type}")
    return serialization(START_OF_MAP)


JAVA_INT_BOUND = 2**31
JAVA_LONG_BOUND = 2**63


def as_integer(value: float, java: str) -> int:
    """What the codec makes of a JSON number with a fraction in an Integer/Long member.

    Java's narrowing (truncation toward zero), as dynalite recorded the service
    accepting floats there (it floors; the two differ only below zero, where
    every integer member of the model is out of range anyway). A value beyond
    the Java type's range cannot be converted. Neither answer is on a recent
    record of the service; see docs/decisions.md ("Robustness").
    """
    bound = JAVA_INT_BOUND if java == "Integer" else JAVA_LONG_BOUND
    if not -bound <= value < bound:  # also false for NaN
        raise serialization(f"DECIMAL_VALUE cannot be converted to {java}")
    return int(value)


#: How many accepted values a patterned string check remembers, and the longest it keeps:
#: bounded, so that a client sending endless new names costs at most a few MB.
PASSED_LIMIT = 256
PASSED_LENGTH = 255


def string_leaf(shape_name: str, shape: dict[str, Any]) -> LeafCheck:
    lo: int | None = shape.get("min")
    hi: int | None = shape.get("max")
    pattern: str | None = shape.get("pattern")
    enum: list[str] | None = shape.get("enum")
    regex = java_regex(pattern) if pattern else None
    enum_set = frozenset(enum) if enum else None
    enum_msg = ""
    if enum:
        order = ENUM_ORDER.get(shape_name)
        shown = order if order and set(order) == set(enum) else tuple(enum)
        enum_msg = "Member must satisfy enum value set: [" + ", ".join(shown) + "]"
    lo_msg = f"Member must have length greater than or equal to {lo}"
    hi_msg = f"Member must have length less than or equal to {hi}"
    pattern_msg = f"Member must satisfy regular expression pattern: {pattern}"
    unconstrained = lo is None and hi is None and regex is None and enum_set is None
    # Values that met a pattern, for the next request: a table name is checked on every
    # request, and a set lookup costs a fraction of the regular expression.
    passed: set[str] | None = set() if regex is not None else None

    def check(value: Any) -> list[str] | None:
        if value.__class__ is not str:
            if isinstance(value, list | dict):
                raise scalar_kind_error(value, "String")
            raise serialization(f"{json_token_name(value)} cannot be converted to String")
        if unconstrained:
            return None
        if passed is not None and value in passed:
            return None
        out: list[str] | None = None
        # Java counts UTF-16 code units; code points differ only past the BMP.
        n = len(value)
        if lo is not None and n < lo:
            out = [lo_msg]
        if hi is not None and n > hi:
            out = (out or []) + [hi_msg]
        if regex is not None and regex.fullmatch(value) is None:
            out = (out or []) + [pattern_msg]
        if enum_set is not None and value not in enum_set:
            out = (out or []) + [enum_msg]
        if out is None and passed is not None and len(passed) < PASSED_LIMIT and n <= PASSED_LENGTH:
            passed.add(value)
        return out

    check.remembered = passed  # type: ignore[attr-defined]  # for the test of its bound
    return check


def table_arn_leaf(shapes: dict[str, Any]) -> LeafCheck:
    """``TableName`` members take a name or an ARN (model shape ``TableArn``, 1..1024).

    Deviation from the published model, for fidelity: the real service
    still answers a bad *name* with the ``TableName`` shape's clauses
    (length >= 3, <= 255, pattern; observed for DescribeTable in 2026), so
    a value that is not an ARN is checked against ``TableName``; an ARN is
    checked against ``TableArn``. Whether the ARN is well formed is the
    operation's business.
    """
    as_name = string_leaf("TableName", shapes["TableName"])
    as_arn = string_leaf("TableArn", shapes["TableArn"])

    def check(value: Any) -> list[str] | None:
        if value.__class__ is str and value.startswith("arn:"):
            return as_arn(value)
        return as_name(value)

    return check


def data_plane_table_leaf(shapes: dict[str, Any]) -> LeafCheck:
    """``TableName`` of GetItem, PutItem, UpdateItem, DeleteItem, Query and Scan: two checks in turn.

    First the model's own ``TableArn`` constraint (1..1024): an empty name is
    the one clause "... greater than or equal to 1" (recorded in 2026). Only
    a value that passes it and is not an ARN then meets the ``TableName``
    rules (3..255 and the pattern), with their clauses: "bad!table!name" is
    the pattern clause and "xx" the length clause, before any table is
    looked up (observed on DynamoDB, issue 26 N1; ExtendDB's templates
    captured from the service agree). Which of the two a 256..1024 character
    name meets is not on record; this order answers "<= 255".
    """
    as_arn = string_leaf("TableArn", shapes["TableArn"])
    as_name = string_leaf("TableName", shapes["TableName"])

    def check(value: Any) -> list[str] | None:
        tails = as_arn(value)
        if tails or value.startswith("arn:"):
            return tails
        return as_name(value)

    return check


def integer_leaf(shape: dict[str, Any], java: str) -> LeafCheck:
    lo: int | None = shape.get("min")
    hi: int | None = shape.get("max")
    lo_msg = f"Member must have value greater than or equal to {lo}"
    hi_msg = f"Member must have value less than or equal to {hi}"
    bound = JAVA_INT_BOUND if java == "Integer" else JAVA_LONG_BOUND

    def check(value: Any) -> list[str] | None:
        cls = value.__class__
        if cls is not int:
            if cls is float:
                # Callers replace the float by this truncation (see as_integer).
                value = as_integer(value, java)
            elif cls is bool:
                raise serialization(f"{json_token_name(value)} cannot be converted to {java}")
            elif cls is str:
                raise serialization(f"STRING_VALUE cannot be converted to {java}")
            else:
                raise scalar_kind_error(value, java)
        elif not -bound <= value < bound:
            raise serialization(f"NUMBER_VALUE cannot be converted to {java}")
        out: list[str] | None = None
        if lo is not None and value < lo:
            out = [lo_msg]
        if hi is not None and value > hi:
            out = (out or []) + [hi_msg]
        return out

    return check


def double_leaf(shape: dict[str, Any]) -> LeafCheck:
    lo = shape.get("min")
    hi = shape.get("max")

    def check(value: Any) -> list[str] | None:
        cls = value.__class__
        if cls is not int and cls is not float:
            if cls is bool:
                raise serialization(f"{json_token_name(value)} cannot be converted to Double")
            if cls is str:
                raise serialization("STRING_VALUE cannot be converted to Double")
            raise scalar_kind_error(value, "Double")
        out: list[str] | None = None
        if lo is not None and value < lo:
            out = [f"Member must have value greater than or equal to {lo}"]
        if hi is not None and value > hi:
            out = (out or []) + [f"Member must have value less than or equal to {hi}"]
        return out

    return check


def boolean_leaf(value: Any) -> list[str] | None:
    if value.__class__ is bool:
        return None
    if isinstance(value, list | dict):
        raise scalar_kind_error(value, "Boolean")
    if isinstance(value, str):
        raise serialization("Unexpected token received from parser")
    raise serialization(f"{json_token_name(value)} cannot be converted to Boolean")


_B64_ALPHABET = re.compile(r"[A-Za-z0-9+/]*={0,2}")


def blob_leaf(value: Any) -> list[str] | None:
    """Blobs travel as base64 text; the codec rejects what it cannot decode exactly."""
    if value.__class__ is not str:
        if isinstance(value, list):
            raise serialization("Unrecognized collection type class java.nio.ByteBuffer")
        if isinstance(value, dict):
            raise serialization(START_OF_MAP)
        raise serialization("only base-64-encoded strings are convertible to bytes")
    n = len(value)
    if n % 4:
        raise serialization(
            f"Base64 encoded length is expected a multiple of 4 bytes but found: {n}"
        )
    if n and (_B64_ALPHABET.fullmatch(value) is None or _b64_roundtrip(value) != value):
        # The codec's own spelling, "dectected", is kept.
        raise serialization("Invalid last non-pad Base64 character dectected")
    return None


def _b64_roundtrip(value: str) -> str:
    try:
        return base64.b64encode(base64.b64decode(value, validate=True)).decode("ascii")
    except (binascii.Error, ValueError):
        return ""


#: What the service's JSON codec answers for a string in a timestamp member. Recorded from
#: the same Coral codec on SWF (aws-cli#91, aws-sdk-js#84); not confirmed on DynamoDB itself.
TIMESTAMP_STRING = "class java.lang.String can not be converted to milliseconds since epoch"


def timestamp_leaf(value: Any) -> list[str] | None:
    """Timestamps are epoch seconds, JSON numbers: what every SDK sends for the JSON protocol.

    A string is refused whatever it holds (ISO 8601, a numeric string), as the
    codec refuses it, so the operations only ever see numbers.
    """
    if value.__class__ in (int, float):
        return None
    if value.__class__ is str:
        raise serialization(TIMESTAMP_STRING)
    if isinstance(value, list | dict):
        raise scalar_kind_error(value, "Date")
    raise serialization(f"{json_token_name(value)} cannot be converted to Date")
