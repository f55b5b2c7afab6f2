"""Key values as bytes: the on-disk format of every row key.

Three encodings, each with one job (docs/architecture.md, "Keys and rows"):

* :func:`encode_sort` - bytes that compare exactly as DynamoDB orders sort keys,
  so a Query is one contiguous, correctly ordered range read.
* :func:`encode_partition` - the same order, but prefix-free, so the sort key
  can be appended after it without two keys ever running into each other.
* :func:`partition_hash` - where a partition key lives in the hash space, which
  decides Scan order and parallel-scan segments.

These bytes are persisted. Changing any of them silently would scramble every
existing database, which is why tests pin golden values; a deliberate change
needs a format version and a migration.
"""

from __future__ import annotations

import base64
from typing import Any

from partita.engine.model.values import normalize_number, number_parts

try:
    # CPython's own MD5: for a key of a few dozen bytes it costs half of hashlib's
    # OpenSSL object (its setup dominates), and a request hashes one key or more.
    from _md5 import md5 as _md5
except ImportError:  # a Python built without its own hashes

    def _md5(data: bytes) -> Any:  # type: ignore[misc]
        import hashlib

        return hashlib.md5(data, usedforsecurity=False)

# --- Numbers, order-preserving ------------------------------------------------------
#
# A number is  tag | exponent | base-100 digits | terminator.
#   tag         0x01 negative, 0x02 zero (alone, nothing follows), 0x03 positive.
#   exponent    k + 128, where |n| = 0.d1d2... x 100**k with d1 != 00; DynamoDB's
#               range gives k in [-64, 63].
#   digits      each base-100 digit d as d + 1 (1..100), trailing 00 digits
#               dropped, so one value has one encoding; then 0x00, lower than
#               any digit byte, so 1 sorts before 1.01.
#   negatives   exponent and digit bytes inverted (255 - b) and terminated by
#               0xFF instead, so larger magnitudes sort first.
# Every encoding is prefix-free: the terminator never occurs as a digit byte.

_NEGATIVE = 0x01
_ZERO = 0x02
_POSITIVE = 0x03
_EXPONENT_BIAS = 128
_ZERO_ENCODING = bytes([_ZERO])


def _base100(digits: str, adjusted: int) -> tuple[int, list[int]]:
    """(k, base-100 digits) with value 0.d1d2... x 100**k, given decimal digits.

    ``adjusted`` is the power of ten of the first digit. Padding the digit
    string on the left to put the decimal point on a pair boundary, and on the
    right to an even length, turns it into base-100 digits.
    """
    k = (adjusted + 2) // 2  # 10**adjusted lies in 100**(k-1) .. 100**k
    lead = 2 * k - 1 - adjusted  # 0 or 1 zero digits before the first digit
    padded = "0" * lead + digits
    if len(padded) % 2:
        padded += "0"
    return k, [int(padded[i : i + 2]) for i in range(0, len(padded), 2)]


def _encode_number(value: str) -> bytes:
    text = normalize_number(value)
    if text == "0":
        return _ZERO_ENCODING
    negative, digits, adjusted = number_parts(text)
    k, pairs = _base100(digits, adjusted)
    body = bytearray([k + _EXPONENT_BIAS])
    body.extend(p + 1 for p in pairs)
    if negative:
        return bytes([_NEGATIVE]) + bytes(255 - b for b in body) + b"\xff"
    return bytes([_POSITIVE]) + bytes(body) + b"\x00"


def _raw(type_: str, value: str) -> bytes:
    if type_ == "S":
        return value.encode("utf-8")
    if type_ == "B":
        return base64.b64decode(value)
    raise ValueError(f"key attributes are S, N or B, not {type_}")


def encode_sort(type_: str, value: str) -> bytes:
    """Bytes ordered as DynamoDB orders sort keys of type ``type_`` (S, N or B).

    S is its UTF-8 bytes and B its raw bytes, unterminated: the sort key is the
    last component of a row key, and leaving it bare makes ``begins_with`` a
    plain prefix range. N uses the number encoding described above.
    """
    if type_ == "N":
        return _encode_number(value)
    return _raw(type_, value)


def encode_partition(type_: str, value: str) -> bytes:
    """Order-preserving and prefix-free bytes for a partition-key value.

    S and B escape 0x00 as 0x00 0xFF and end with 0x00 0x01: the terminator sorts
    below any continuation, so order is kept, and it cannot occur inside the
    escaped body, so no encoding is a prefix of another. N is already prefix-free.
    """
    if type_ == "N":
        return _encode_number(value)
    return _raw(type_, value).replace(b"\x00", b"\x00\xff") + b"\x00\x01"


# --- The partition hash --------------------------------------------------------------
#
# dynalite observed that the real service's Scan order follows the leading
# bytes of MD5("Outliers" + key bytes), with S as UTF-8, B raw, and N in a
# base-100 byte form (that of Oracle's NUMBER type). Adopting the same function
# gives Scan and parallel-scan segments the service's order. See
# docs/decisions.md, "Partition hash".

_HASH_SALT = b"Outliers"


def _hash_number_bytes(value: str) -> bytes:
    """The service's hashed byte form of a number.

    Zero is 0x80. Otherwise an exponent byte (0xC0 + k for positives, 0x3F - k
    for negatives, mod 256; k the base-100 exponent as in :func:`_base100`),
    then base-100 digits as d + 1 (positive) or 101 - d (negative), and for a
    negative with fewer than 20 digit bytes a closing 102.
    """
    text = normalize_number(value)
    if text == "0":
        return b"\x80"
    negative, digits, adjusted = number_parts(text)
    k, pairs = _base100(digits, adjusted)
    if negative:
        out = [(0x3F - k) & 0xFF] + [101 - p for p in pairs]
        if len(pairs) < 20:
            out.append(102)
    else:
        out = [(0xC0 + k) & 0xFF] + [p + 1 for p in pairs]
    return bytes(out)


def partition_hash(type_: str, value: str) -> bytes:
    """8 bytes placing a partition-key value in the hash space (big-endian order).

    The first 8 bytes of MD5("Outliers" + key bytes): rows sort by this prefix,
    so Scan walks partitions in the service's order and TotalSegments can split
    the space into equal byte ranges.
    """
    key = _hash_number_bytes(value) if type_ == "N" else _raw(type_, value)
    return _md5(_HASH_SALT + key).digest()[:8]


# --- Multi-attribute keys (GSIs) -----------------------------------------------------
#
# A GSI key may have up to 4 HASH and 4 RANGE attributes. Each component is
# written with :func:`encode_partition`, which is order-preserving and
# prefix-free, so the concatenation compares like the tuple of values (the first
# differing component decides, and no component can run into the next). With
# one component it is exactly the single-attribute encoding.


def encode_tuple(parts: tuple[tuple[str, str], ...]) -> bytes:
    """Bytes of a (type, value) tuple that compare like the tuple, component by component."""
    return b"".join(encode_partition(type_, value) for type_, value in parts)


def tuple_hash(parts: tuple[tuple[str, str], ...]) -> bytes:
    """The partition hash of a multi-attribute partition key (8 bytes).

    One component hashes as :func:`partition_hash` does, so a one-attribute key
    keeps its place. Several hash as MD5("Outliers" + :func:`encode_tuple`):
    every component, typed and self-delimiting, so ("ab", "c") and ("a", "bc")
    land apart. DynamoDB hashes the combination but does not publish how; see
    docs/decisions.md, "Multi-attribute keys".
    """
    if len(parts) == 1:
        return partition_hash(*parts[0])
    return _md5(_HASH_SALT + encode_tuple(parts)).digest()[:8]


def prefix_successor(prefix: bytes) -> bytes | None:
    """The smallest byte string greater than every string starting with ``prefix``.

    The exclusive end of a prefix range. None means the range runs to the end of
    the key space (the prefix is empty or all 0xFF).
    """
    stripped = prefix.rstrip(b"\xff")
    if not stripped:
        return None
    return stripped[:-1] + bytes([stripped[-1] + 1])
