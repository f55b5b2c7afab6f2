"""Value comparison for the expression language, kept inside this package.

The engine's `values.py` will own the canonical `compare`/`values_equal`; this
package keeps its own small copies so that it depends on nothing outside it
and stays importable while that module is being written.
TODO: switch to `partita.engine.values.compare`/`values_equal` once they land
and their semantics are confirmed identical (N by value, S by UTF-8 bytes, B by
raw bytes).

Ordering of S by Python `str` comparison equals ordering by UTF-8 bytes,
because UTF-8 preserves code-point order; so no encoding is needed.
"""

from __future__ import annotations

import base64
import binascii
from decimal import Decimal, InvalidOperation
from typing import Any

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


def compare(a: AttributeValue, b: AttributeValue) -> int:
    """-1/0/1 for two scalars of the same orderable type (N, S or B)."""
    ta = type_of(a)
    tb = type_of(b)
    if ta != tb or ta not in ORDERED_TYPES:
        raise TypeError(f"cannot order {ta} against {tb}")
    ka = sort_key(ta, a[ta])
    kb = sort_key(tb, b[tb])
    return (ka > kb) - (ka < kb)


def _set_members(type_tag: str, members: list[Any]) -> set[Any] | frozenset[Any]:
    if type_tag == "NS":
        return {number(m) for m in members}
    if type_tag == "BS":
        return {binary(m) for m in members}
    return set(members)


def values_equal(a: AttributeValue, b: AttributeValue) -> bool:
    """DynamoDB equality: same type and same value (sets unordered, N by value)."""
    ta = type_of(a)
    if ta != type_of(b):
        return False
    va = a[ta]
    vb = b[ta]
    if va == vb and ta not in ("L", "M"):
        return True
    if ta == "N":
        return number(va) == number(vb)
    if ta == "B":
        return binary(va) == binary(vb)
    if ta in ("SS", "NS", "BS"):
        if len(va) != len(vb):
            return False
        return _set_members(ta, va) == _set_members(ta, vb)
    if ta == "L":
        return len(va) == len(vb) and all(values_equal(x, y) for x, y in zip(va, vb, strict=True))
    if ta == "M":
        if va.keys() != vb.keys():
            return False
        return all(values_equal(va[k], vb[k]) for k in va)
    return False
