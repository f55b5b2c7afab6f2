"""DynamoDB attribute values in wire form: validation, canonical form, order (sizes: sizes.py).

Items stay in wire form everywhere in the engine (``{"S": "x"}``, ``{"N": "1.5"}``
...). Every write passes through :func:`normalize_item`, so two promises hang on
this module: what it accepts and rejects is what DynamoDB accepts and rejects,
with DynamoDB's exception and message; and what it returns is canonical, so the
rest of the engine may compare numbers and binaries as plain strings.

Where the messages come from (see docs/decisions.md, "Attribute values"):

* ValidationException texts are the ones dynalite's test suite pins against the
  real service (its ``validateAttributeValue`` checks), plus the nesting-depth
  text recorded against the real service by a conformance suite.
* SerializationException texts are those of the service's JSON deserializer
  (coral), kept with their checks in serialization_errors.py. The service
  deserializes the whole request before validating any of it, so a
  serialization error anywhere beats a validation error anywhere; the public
  functions here honour that by rescanning on the (rare) validation-error path.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any

from partita.errors import SerializationException, ValidationException, ValueFault, shown

from .serialization_errors import (
    blob_slot_error,
    bool_slot_error,
    check_item_types,
    check_value_types,
    list_slot_error,
    map_slot_error,
    string_slot_error,
    value_slot_error,
)

AttributeValue = dict[str, Any]
Item = dict[str, AttributeValue]

#: The deepest level an attribute value may sit at; the attribute itself is 1.
#: Observed on the service: a leaf at level 32 is stored, at level 33 rejected.
MAX_NESTING_DEPTH = 32

MAX_SIGNIFICANT_DIGITS = 38
#: Decimal.adjusted() bounds: 1E-130 <= |n| < 1E+126.
MAX_ADJUSTED_EXPONENT = 125
MIN_ADJUSTED_EXPONENT = -130

# --- ValidationException messages -------------------------------------------------

_INVALID = "One or more parameter values were invalid: "
MSG_EMPTY_AV = (
    "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes"
)
MSG_MULTIPLE_TYPES = (
    "Supplied AttributeValue has more than one datatypes set, "
    "must contain exactly one of the supported datatypes"
)
MSG_NULL_NOT_TRUE = _INVALID + "Null attribute value types must have the value of true"
MSG_EMPTY_SS = _INVALID + "An string set  may not be empty"
MSG_EMPTY_NS = _INVALID + "An number set  may not be empty"
MSG_EMPTY_BS = _INVALID + "Binary sets should not be empty"
MSG_NULL_IN_SS = _INVALID + "An string set may not have a null string as a member"
MSG_NULL_IN_BS = _INVALID + "Binary sets may not contain null or empty values"
MSG_NS_DUPLICATES = "Input collection contains duplicates"
MSG_NOT_NUMERIC = "The parameter cannot be converted to a numeric value"
MSG_TOO_MANY_DIGITS = "Attempting to store more than 38 significant digits in a Number"
MSG_OVERFLOW = (
    "Number overflow. Attempting to store a number with magnitude larger than supported range"
)
MSG_UNDERFLOW = (
    "Number underflow. Attempting to store a number with magnitude smaller than supported range"
)
MSG_NESTING = (
    "Nesting Levels have exceeded supported limits: "
    "Attributes in the item have nested levels beyond supported limit"
)
#: An attribute named "" (the model allows it; DynamoDB refuses it). The bare
#: reason is DynamoDB's (it answers ExpressionAttributeNames {"#a": ""} with
#: "ExpressionAttributeNames contains invalid value: Empty attribute name for
#: key #a", as applications quote it); that an Item, AttributeUpdates or
#: AttributesToGet say the bare reason is unconfirmed.
MSG_EMPTY_NAME = "Empty attribute name"


def _as_met(members: list[str], order: Callable[[str], Any]) -> list[str]:
    """The members as the current layer lists a repeat: those before the first repeat in
    `order`, then the repeat, then the rest as sent (what a sorted set built one member
    at a time holds when it meets the repeat; a 2026 conformance suite's records)."""
    seen: set[str] = set()
    for index, member in enumerate(members):
        if member in seen:
            return sorted(members[:index], key=order) + members[index:]
        seen.add(member)
    return members


def _ss_duplicates(members: list[str]) -> ValueFault:
    met = ", ".join(f'"{m}"' for m in _as_met(members, lambda m: m.encode("utf-8", "surrogatepass")))
    return ValueFault(
        f"{_INVALID}Input collection [{', '.join(members)}] contains duplicates.",
        f"{_INVALID}Input collection [{met}] contains duplicates.",
    )


def _bs_duplicates(members: list[str]) -> ValueFault:
    # The missing space before "of" is the service's, in both layers.
    met = ",".join(f'"{m}"' for m in _as_met(members, base64.b64decode))
    return ValueFault(
        f"{_INVALID}Input collection [{', '.join(members)}]of type BS contains duplicates.",
        f"{_INVALID}Input collection [{met}]of type BS contains duplicates.",
    )


# --- Numbers -----------------------------------------------------------------------

# What Java's BigDecimal(String) accepts, which is what the service parses with:
# optional sign, digits with an optional point (either side may be empty, not
# both), optional exponent. No whitespace, NaN, Infinity or underscores (which
# Python's Decimal would accept).
_NUMBER_RE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
# Already canonical: no sign but '-', no leading zeros, no trailing fractional
# zeros, no exponent. With at most 38 characters such a number also has at most
# 38 digits and lies well inside the range, so it needs no further work.
_CANONICAL_RE = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]*[1-9])?")
_canonical_match = _CANONICAL_RE.fullmatch


_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1


def _fits_long(exponent_text: str) -> bool:
    """Whether a well-formed exponent fits a signed 64-bit integer; compared by length
    first, so an exponent of a million digits costs no big-integer conversion."""
    digits = exponent_text.lstrip("+-").lstrip("0") or "0"
    if len(digits) > 19:
        return False
    value = -int(digits) if exponent_text.startswith("-") else int(digits)
    return _LONG_MIN <= value <= _LONG_MAX


def _is_canonical_number(text: str) -> bool:
    """Whether ``text`` is already canonical and certainly in range (the write hot path)."""
    if len(text) > 38:
        return False
    if text.isdigit() and text.isascii():  # the commonest case: a plain integer
        return text[0] != "0" or len(text) == 1
    return _canonical_match(text) is not None and text != "-0"


def normalize_number(text: str) -> str:
    """Validate a wire number and return DynamoDB's canonical plain-decimal form.

    Canonical form is what the service stores and returns: no exponent, no '+',
    no leading or trailing zeros, '-0' is '0'. Because it is unique per value,
    the engine can compare canonical numbers for equality as strings.

    The range check uses the exponent of the number as written before trailing
    zeros are dropped (Decimal.adjusted() of the parsed text, as BigDecimal
    does); that reproduces the service rejecting ``0e126`` but accepting
    ``0.0e126``.
    """
    if _is_canonical_number(text):
        return text
    if not text:
        raise ValueFault(MSG_NOT_NUMERIC, f"{MSG_NOT_NUMERIC}: ")  # the current layer keeps the colon
    if _NUMBER_RE.fullmatch(text) is None:
        raise ValueFault(f"{MSG_NOT_NUMERIC}: {shown(text)}")
    try:
        number = Decimal(text)
    except InvalidOperation:
        # Decimal holds exponents below 10**18 only. DynamoDB reads the exponent
        # as a 64-bit integer: one past that range is not a number at all, one
        # inside it is far outside the range, its sign saying which end.
        _, _, exponent_text = text.lower().partition("e")
        if not _fits_long(exponent_text):
            raise ValueFault(f"{MSG_NOT_NUMERIC}: {shown(text)}") from None
        raise ValueFault(MSG_UNDERFLOW if exponent_text.startswith("-") else MSG_OVERFLOW) from None
    adjusted = number.adjusted()
    if adjusted > MAX_ADJUSTED_EXPONENT:
        raise ValueFault(MSG_OVERFLOW)
    if adjusted < MIN_ADJUSTED_EXPONENT:
        raise ValueFault(MSG_UNDERFLOW)
    sign, digit_tuple, exponent = number.as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0")
    if not digits:
        return "0"
    assert isinstance(exponent, int)
    exponent += len(digit_tuple) - len(digits)
    if len(digits) > MAX_SIGNIFICANT_DIGITS:
        raise ValueFault(MSG_TOO_MANY_DIGITS)
    return _plain(sign, digits, exponent)


_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1


def _java_parts(text: str) -> tuple[int, int, int] | None:
    """(precision, exponent, scale) of a well-formed number whose exponent has ten or more
    digits; None for the rest, which are far from 32 bits' edge."""
    mantissa, _, exponent_text = text.lower().partition("e")
    if not exponent_text or len(exponent_text.lstrip("+-").lstrip("0")) < 10 or _NUMBER_RE.fullmatch(text) is None:
        return None
    exponent = int(exponent_text)
    whole, _, fraction = mantissa.lstrip("+-").partition(".")
    return max(len((whole + fraction).lstrip("0")), 1), exponent, len(fraction) - exponent


def java_unparsable(text: str) -> bool:
    """Whether Java's BigDecimal(String) refuses a well-formed number: its exponent, or its
    scale (fraction digits less the exponent), outside 32-bit integers."""
    parts = _java_parts(text)
    return parts is not None and not (_INT_MIN <= parts[1] <= _INT_MAX and _INT_MIN <= parts[2] <= _INT_MAX)


def java_number_fault(text: str) -> str | None:
    """What DynamoDB's Java number parsing says of a well-formed number whose exponent is huge,
    or None when it parses (the usual range and digit checks then apply).

    Java's BigDecimal(String) refuses an exponent outside 32-bit integers, and a scale
    (fraction digits less the exponent) outside them: "The parameter cannot be converted to a
    numeric value: <text>". One that parses but whose precision less its scale passes 2**31
    wraps around in 32-bit arithmetic, so ``1e2147483647`` is reported as an underflow.
    Recorded for PartiQL's parameters (a 2026 conformance suite's
    partiqlParameterNumbers tests); the item API keeps its range messages (unconfirmed there).
    """
    parts = _java_parts(text)
    if parts is None:
        return None
    precision, exponent, scale = parts
    if not (_INT_MIN <= exponent <= _INT_MAX and _INT_MIN <= scale <= _INT_MAX):
        return f"{MSG_NOT_NUMERIC}: {text}"
    if precision - scale > _INT_MAX:
        return MSG_UNDERFLOW
    if precision - scale < _INT_MIN:
        return MSG_OVERFLOW
    return None


def java_numbers_fault(av: Any, depth: int = 0) -> str | None:
    """`java_number_fault` of the first number in an attribute value (N, NS, inside L and M);
    past the nesting limit it looks no deeper (the nesting check refuses such a value)."""
    if type(av) is not dict or len(av) != 1 or depth > MAX_NESTING_DEPTH:
        return None
    (kind, value), = av.items()
    if kind == "N" and type(value) is str:
        return java_number_fault(value)
    if kind == "NS" and type(value) is list:
        members = (java_number_fault(n) for n in value if type(n) is str)
    elif kind == "L" and type(value) is list:
        members = (java_numbers_fault(v, depth + 1) for v in value)
    elif kind == "M" and type(value) is dict:
        members = (java_numbers_fault(v, depth + 1) for v in value.values())
    else:
        return None
    return next((fault for fault in members if fault is not None), None)


def _plain(sign: int, digits: str, exponent: int) -> str:
    """Render ``(-1)**sign * int(digits) * 10**exponent`` without an exponent."""
    if exponent >= 0:
        body = digits + "0" * exponent
    else:
        point = len(digits) + exponent
        if point > 0:
            body = digits[:point] + "." + digits[point:]
        else:
            body = "0." + "0" * -point + digits
    return "-" + body if sign else body


def number_parts(text: str) -> tuple[bool, str, int]:
    """(negative, significant digits, adjusted exponent) of a canonical non-zero number.

    ``12.5`` is ``(False, "125", 1)``: the value is ``0.125e2``'s digits with the
    first one at 10**1. Key encodings and sizes are built from these parts.
    """
    negative = text[0] == "-"
    if negative:
        text = text[1:]
    whole, _, frac = text.partition(".")
    if whole != "0":
        return negative, (whole + frac).rstrip("0"), len(whole) - 1
    stripped = frac.lstrip("0")
    return negative, stripped, -(len(frac) - len(stripped)) - 1


# --- Normalization -----------------------------------------------------------------

_Handler = Callable[[Any, int], Any]


def _norm_s(value: Any, depth: int) -> str:
    if type(value) is str:
        return value
    raise SerializationException(string_slot_error(value))


def _norm_n(value: Any, depth: int) -> str:
    if type(value) is str:
        return normalize_number(value)
    raise SerializationException(string_slot_error(value))


def _norm_b(value: Any, depth: int) -> str:
    message = blob_slot_error(value)
    if message is not None:
        raise SerializationException(message)
    return value  # accepted base64 is canonical already


def _norm_bool(value: Any, depth: int) -> bool:
    if type(value) is bool:
        return value
    raise SerializationException(bool_slot_error(value))


def _norm_null(value: Any, depth: int) -> bool:
    if type(value) is not bool:
        raise SerializationException(bool_slot_error(value))
    if not value:
        raise ValidationException(MSG_NULL_NOT_TRUE)
    return True


def _check_list(value: Any) -> list[Any]:
    if type(value) is not list:
        raise SerializationException(list_slot_error(value))
    return value


def _norm_ss(value: Any, depth: int) -> list[str]:
    members = _check_list(value)
    for member in members:
        if type(member) is not str and member is not None:
            raise SerializationException(string_slot_error(member))
    if not members:
        raise ValidationException(MSG_EMPTY_SS)
    if None in members:
        raise ValidationException(MSG_NULL_IN_SS)
    if len(set(members)) != len(members):
        raise _ss_duplicates(members)
    return list(members)


def _norm_ns(value: Any, depth: int) -> list[str]:
    members = _check_list(value)
    for member in members:
        if type(member) is not str and member is not None:
            raise SerializationException(string_slot_error(member))
    if not members:
        raise ValidationException(MSG_EMPTY_NS)
    out = [normalize_number(m) if m is not None else normalize_number("") for m in members]
    if len(set(out)) != len(out):
        raise ValueFault(MSG_NS_DUPLICATES, f"{_INVALID}{MSG_NS_DUPLICATES}.")
    return out


def _norm_bs(value: Any, depth: int) -> list[str]:
    members = _check_list(value)
    for member in members:
        message = blob_slot_error(member)
        if message is not None:
            raise SerializationException(message)
    if not members:
        raise ValidationException(MSG_EMPTY_BS)
    if None in members:
        raise ValidationException(MSG_NULL_IN_BS)
    if len(set(members)) != len(members):
        raise _bs_duplicates(members)
    return list(members)


def _norm_l(value: Any, depth: int) -> list[AttributeValue]:
    child = depth + 1
    return [_norm(element, child) for element in _check_list(value)]


def _norm_m(value: Any, depth: int) -> dict[str, AttributeValue]:
    if type(value) is not dict:
        raise SerializationException(map_slot_error(value))
    child = depth + 1
    return {name: _norm(element, child) for name, element in value.items()}


_HANDLERS: dict[str, _Handler] = {
    "S": _norm_s,
    "N": _norm_n,
    "B": _norm_b,
    "BOOL": _norm_bool,
    "NULL": _norm_null,
    "SS": _norm_ss,
    "NS": _norm_ns,
    "BS": _norm_bs,
    "L": _norm_l,
    "M": _norm_m,
}


def _norm(av: Any, depth: int) -> AttributeValue:
    """Canonical copy of one attribute value at nesting level ``depth`` (1 = attribute).

    The hot path of every write: a single-typed value, and above all an S or an
    already canonical N, is handled inline; everything else goes the general way.
    """
    if type(av) is dict and len(av) == 1 and depth <= MAX_NESTING_DEPTH:
        ((type_name, value),) = av.items()
        if type_name == "S":
            if type(value) is str:
                return {"S": value}
        elif type_name == "N":
            if type(value) is str and _is_canonical_number(value):
                return {"N": value}
        handler = _HANDLERS.get(type_name)
        if handler is not None and value is not None:
            return {type_name: handler(value, depth)}
    return _norm_general(av, depth)


def _norm_general(av: Any, depth: int) -> AttributeValue:
    """Canonical copy of one attribute value at nesting level ``depth`` (1 = attribute).

    Unknown members and JSON nulls are ignored, as the deserializer drops them;
    then every set member is validated in the order given and, only at the end,
    the count of types is checked (the service reports a bad member of a
    two-typed value before it reports the two types).
    """
    if type(av) is not dict:
        if av is None:
            raise ValidationException(MSG_EMPTY_AV)
        raise SerializationException(value_slot_error(av))
    if depth > MAX_NESTING_DEPTH:
        raise ValidationException(MSG_NESTING)
    found_type: str | None = None
    found_value: Any = None
    count = 0
    for type_name, value in av.items():
        handler = _HANDLERS.get(type_name)
        if handler is None or value is None:
            continue
        normalized = handler(value, depth)
        count += 1
        if count == 1:
            found_type, found_value = type_name, normalized
    if count == 1:
        assert found_type is not None
        return {found_type: found_value}
    raise ValidationException(MSG_EMPTY_AV if count == 0 else MSG_MULTIPLE_TYPES)


def value_depth(av: AttributeValue) -> int:
    """Levels a canonical value spans (a scalar is 1); bounded, since stored values are."""
    if "M" in av:
        return 1 + max((value_depth(v) for v in av["M"].values()), default=0)
    if "L" in av:
        return 1 + max((value_depth(v) for v in av["L"]), default=0)
    return 1


def normalize_value(av: Any) -> AttributeValue:
    """Validate one attribute value (e.g. an ExpressionAttributeValue) and canonicalize it."""
    try:
        return _norm(av, 1)
    except ValidationException:
        check_value_types(av)
        raise


def normalize_value_one_level_deeper(av: Any) -> AttributeValue:
    """`normalize_value` for a value allowed one level past the item limit (a leaf at level 33).

    TransactWriteItems does not check its ExpressionAttributeValues against the
    item limit: such a value is accepted (it may only fail the transaction when
    it is written into an item), and only a value nested deeper still is
    refused up front (recorded against DynamoDB in 2026; docs/decisions.md,
    "Batches and transactions"). Starting one level higher moves every check
    of the nesting limit by one.
    """
    try:
        return _norm(av, 0)
    except ValidationException:
        check_value_types(av)
        raise


def normalize_item(item: Any) -> Item:
    """Validate an item (or key) map and return its canonical copy.

    Runs on every write. Sets stay lists in the order given; numbers become
    canonical strings; binaries must already be canonical base64.
    """
    if type(item) is not dict:
        raise SerializationException(map_slot_error(item))
    try:
        return {name: _norm(av, 1) for name, av in item.items()}
    except ValidationException:
        check_item_types(item)
        raise


# --- Order and equality --------------------------------------------------------------


def compare(a: AttributeValue, b: AttributeValue) -> int:
    """-1/0/1 for two canonical scalars of one type, in DynamoDB's order.

    N by numeric value, S by UTF-8 bytes (the same as code-point order, which is
    how Python compares str), B by unsigned bytes.
    """
    ((type_a, va),) = a.items()
    ((type_b, vb),) = b.items()
    if type_a != type_b:
        raise ValueError(f"cannot compare {type_a} with {type_b}")
    if type_a == "N":
        if va == vb:
            return 0
        x: Any = Decimal(va)
        y: Any = Decimal(vb)
    elif type_a == "S":
        x, y = va, vb
    elif type_a == "B":
        x, y = base64.b64decode(va), base64.b64decode(vb)
    else:
        raise ValueError(f"{type_a} values have no order")
    return (x > y) - (x < y)


def values_equal(a: AttributeValue, b: AttributeValue) -> bool:
    """Whether two values are equal as DynamoDB's ``=`` sees them.

    Types must match; numbers compare by value; sets regardless of order; lists
    element-wise; maps by keys and values.
    """
    ((type_a, va),) = a.items()
    ((type_b, vb),) = b.items()
    if type_a != type_b:
        return False
    if type_a in ("S", "BOOL", "NULL"):
        return bool(va == vb)
    if type_a == "N":
        return va == vb or Decimal(va) == Decimal(vb)
    if type_a == "B":
        return va == vb or base64.b64decode(va) == base64.b64decode(vb)
    if type_a == "SS":
        return len(va) == len(vb) and set(va) == set(vb)
    if type_a == "NS":
        return len(va) == len(vb) and set(map(Decimal, va)) == set(map(Decimal, vb))
    if type_a == "BS":
        return len(va) == len(vb) and set(map(base64.b64decode, va)) == set(
            map(base64.b64decode, vb)
        )
    if type_a == "L":
        return len(va) == len(vb) and all(values_equal(x, y) for x, y in zip(va, vb, strict=True))
    if type_a == "M":
        return va.keys() == vb.keys() and all(values_equal(va[k], vb[k]) for k in va)
    return False
