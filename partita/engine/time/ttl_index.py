"""The expiry index of a TTL-enabled table: rows ordered by expiry time.

Kept by the one write path (`store_item`) in the same commit as the item,
so the expiry duty finds due items with one short range read instead of
scanning the table, however large it is. Only items whose TTL attribute is
a Number can expire; any other type, or no attribute, leaves the item out.
"""

from __future__ import annotations

import struct
from decimal import ROUND_CEILING, Decimal, InvalidOperation
from typing import Any

from ...storage.base import WriteTxn

TTL_SPACE = b"\x05"
_MAX = 2**64 - 1

Item = dict[str, dict[str, Any]]


def expiry_of(item: Item | None, attribute: str) -> int | None:
    """The whole second at or after which the item is due, or None if it never expires.

    Rounded up, so a due key (`expiry <= now`) always means a value at or
    before now. Negative values are more than five years old whenever they
    are read, and DynamoDB ignores those.
    """
    if item is None:
        return None
    value = item.get(attribute)
    if value is None or "N" not in value:
        return None
    try:
        number = Decimal(value["N"])
    except InvalidOperation:
        return None
    if number < 0:
        return None
    return min(int(number.to_integral_value(ROUND_CEILING)), _MAX)


def expiry_key(table_id: int, expiry: int, row: bytes) -> bytes:
    return TTL_SPACE + struct.pack(">IQ", table_id, expiry) + row


def table_range(table_id: int, before: int | None = None) -> tuple[bytes, bytes]:
    """Expiry rows of one table; with `before`, only those due before that second."""
    start = TTL_SPACE + struct.pack(">I", table_id)
    if before is None:
        return start, TTL_SPACE + struct.pack(">I", table_id + 1)
    return start, start + struct.pack(">Q", max(0, min(before, _MAX)))


def row_of(key: bytes) -> tuple[int, bytes]:
    """(expiry, item row key) of an expiry row."""
    (expiry,) = struct.unpack_from(">Q", key, 5)
    return expiry, key[13:]


def index_expiry(txn: WriteTxn, table_id: int, attribute: str, row: bytes, old: Item | None, new: Item | None) -> None:
    before = expiry_of(old, attribute)
    after = expiry_of(new, attribute)
    if before == after:
        return
    if before is not None:
        txn.delete(expiry_key(table_id, before, row))
    if after is not None:
        txn.put(expiry_key(table_id, after, row), b"")
