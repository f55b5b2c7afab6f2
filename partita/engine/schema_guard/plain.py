"""An item as the plain JSON its entity's schema describes, and a key value's string form.

S and B are strings (B as its base64 text), N a number, BOOL a boolean,
NULL null, L an array, M an object, and the three sets arrays of their
members. A number stays exact: an integer is a Python int and any other
number a decimal (`JsonNumber`), so `maximum` and `multipleOf` compare
38-digit numbers exactly (a float would make 19.99 fail `multipleOf: 0.01`).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any


class JsonNumber(Decimal):
    """A non-integral number, exact; shown as its digits (jsonschema's messages print `repr`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return str(self)


def _number(text: str) -> int | JsonNumber:
    """Stored numbers are canonical (engine/model/values.py: digits, no exponent); an integral
    value is an int whatever its spelling, so that `"type": "integer"` holds for it."""
    try:
        return int(text)
    except ValueError:
        value = JsonNumber(text)
        return int(value) if value == value.to_integral_value() else value


def plain_value(av: dict[str, Any]) -> Any:
    (kind, raw), = av.items()
    if kind == "S" or kind == "B" or kind == "BOOL":
        return raw
    if kind == "N":
        return _number(raw)
    if kind == "NULL":
        return None
    if kind == "M":
        return {name: plain_value(value) for name, value in raw.items()}
    if kind == "L":
        return [plain_value(value) for value in raw]
    if kind == "NS":
        return [_number(member) for member in raw]
    return list(raw)  # SS, BS


def plain_item(item: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {name: plain_value(value) for name, value in item.items()}


def string_form(av: dict[str, Any] | None) -> str | None:
    """What a `match` glob is tried on: an S value, an N value's digits, a B value's base64 text.

    None for an absent attribute or one of another type: it matches no glob.
    """
    if av is None:
        return None
    (kind, raw), = av.items()
    return raw if kind in ("S", "N", "B") else None
