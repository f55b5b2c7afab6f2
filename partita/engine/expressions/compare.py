"""Value ordering helpers for the expression evaluator.

The canonical `compare` and `values_equal` live in `engine/values.py` and are
re-exported here; what this module adds are the decoders the evaluator uses
to pre-compute sort keys of constants once per request.

Ordering of S by Python `str` comparison equals ordering by UTF-8 bytes,
because UTF-8 preserves code-point order; so no encoding is needed.
"""

from __future__ import annotations

import base64
import binascii
from decimal import Decimal, InvalidOperation
from typing import Any

from ..model.values import compare, values_equal

__all__ = ["ORDERED_TYPES", "binary", "compare", "number", "sort_key", "type_of", "values_equal"]

AttributeValue = dict[str, Any]

ORDERED_TYPES = frozenset(("N", "S", "B"))


def type_of(value: AttributeValue) -> str:
    """The type tag of a wire-form value ({"S": "x"} -> "S")."""
    for key in value:
        return key
    raise ValueError("empty attribute value")


def number(text: str) -> Decimal:
    try:
        return Decimal(text)
    except InvalidOperation as exc:  # pragma: no cover - inputs are validated upstream
        raise ValueError(f"not a number: {text!r}") from exc


def binary(text: str | bytes) -> bytes:
    if isinstance(text, bytes):
        return text
    try:
        return base64.b64decode(text, validate=False)
    except (binascii.Error, ValueError):  # pragma: no cover - validated upstream
        return text.encode()


def sort_key(type_tag: str, raw: Any) -> Any:
    """A Python value that orders like DynamoDB orders `raw` of `type_tag` (N, S, B)."""
    if type_tag == "N":
        return number(raw)
    if type_tag == "B":
        return binary(raw)
    return raw
