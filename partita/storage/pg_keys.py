"""How the PostgreSQL store spreads row keys over its columns and locks.

A row key is stored with its distribution columns (`tid`, `ph`: the table
and the partition hash), so a Query reads one partition through the primary
key's prefix; an item row also names the advisory lock a TransactWriteItems
claims it by (postgres.py's docstring).
"""

from __future__ import annotations

from hashlib import blake2b

from .namespace import MARK, inner_key

#: Bytes of a row key: space (1) | table id (4) | index id (2) | partition hash (8) | ...
_GROUP = 15
_ROW_SPACE = 1
_TABLE_ROW = b"\x00\x00"  # index id 0: the table's own item rows
_NAMESPACED = bytes([MARK])


def group_of(key: bytes) -> tuple[int, int]:
    """(table id, partition hash) of a row key: the distribution columns.

    A row of another region's namespace (storage/namespace.py) is grouped
    as its key inside the namespace is: table ids are unique across regions.
    """
    if len(key) >= _GROUP and key[0] == _ROW_SPACE:
        return int.from_bytes(key[1:5], "big"), int.from_bytes(key[7:15], "big", signed=True)
    if key[:1] == _NAMESPACED:
        inner = inner_key(key)
        if inner is not key:
            return group_of(inner)
    return 0, key[0] if key else 0


def item_lock(key: bytes) -> int | None:
    """The advisory-lock key of an item row (None for index, stream and system rows)."""
    inner = inner_key(key) if key[:1] == _NAMESPACED else key
    if len(inner) >= _GROUP and inner[0] == _ROW_SPACE and inner[5:7] == _TABLE_ROW:
        return int.from_bytes(blake2b(key, digest_size=8).digest(), "big", signed=True)
    return None


def one_group(start: bytes, end: bytes) -> tuple[int, int] | None:
    """The group holding every key of [start, end) when there is one (a Query, an item collection)."""
    if start[:1] == _NAMESPACED:
        inner = inner_key(start)
        cut = len(start) - len(inner)
        if inner is start or end[:cut] != start[:cut]:
            return None
        return one_group(inner, end[cut:])
    if len(start) < _GROUP or start[0] != _ROW_SPACE:
        return None
    head = start[:_GROUP]
    if end[:_GROUP] == head:
        return group_of(start)
    stripped = head.rstrip(b"\xff")
    if stripped and end == stripped[:-1] + bytes([stripped[-1] + 1]) and len(stripped) == _GROUP:
        return group_of(start)
    return None
