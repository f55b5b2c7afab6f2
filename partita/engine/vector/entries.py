"""Vector index entries, kept by the one write path in the item's own commit.

An item is in a vector index when its vector attribute is a list of
`Dimensions` numbers that fit a 32-bit float and, if the search schema has
a HASH attribute, that attribute is present (an item without it is
silently left out: documented). A missing INLINE_FILTER attribute does not
keep an item out. A write whose vector or search-schema attribute is
malformed is refused with ValidationException (PutItem's model
documentation); such items can only exist from before the index was
created, and the backfill skips them.

An entry row is `index prefix | the item's row key after the table prefix`
-> `len(header) | entry bytes | header JSON | float32 little-endian vector`, where the
header holds the attributes the index projects (keys, search-schema
attributes, projected non-key attributes; never the vector). Its weight is
the entry's size: the projected attributes' DynamoDB size plus the vector
attribute's name and 4 bytes a dimension (how vector storage is metered).
"""

from __future__ import annotations

import math
import struct
from typing import TYPE_CHECKING, Any

import orjson

from ...errors import ValidationException
from ...storage.base import ReadView, WriteTxn
from ..model.keys import prefix_successor
from ..model.sizes import item_size
from .model import VectorIndex

if TYPE_CHECKING:
    import numpy as np

Item = dict[str, dict[str, Any]]
#: The largest finite float32 (numpy's `finfo(float32).max`), from its bits: checking a
#: write's vector must not import numpy (a server imports it for its first vector entry).
_F32_MAX: float = struct.unpack("<f", b"\xff\xff\x7f\x7f")[0]
_EMPTY_KIND = {"S": "string", "B": "binary"}


def _f32(value: dict[str, Any]) -> float | None:
    """The float32 an `N` element becomes, or None when it is not a number a float32 holds."""
    text = value.get("N") if len(value) == 1 else None
    if text is None:
        return None
    number = float(text)
    if math.isinf(number) or abs(number) > _F32_MAX:
        return None
    return number


def check_vector_item(table: Any, item: Item) -> None:
    """Refuse a write whose vector or search-schema attributes break an index's rules.

    Messages as recorded from the service by conformance suites (the
    developer guide quotes their leading words only).
    """
    for index in table.vector_indexes:
        name = index.name
        value = item.get(index.attribute)
        if value is not None:
            attr = index.attribute
            elements = value.get("L")
            if elements is None:
                raise ValidationException(
                    "One or more parameter values were invalid. Invalid type for parameter "
                    f"{attr}, Expected: 32-bit floating point number list IndexName: {name}"
                )
            for i, element in enumerate(elements):
                if _f32(element) is None:
                    raise ValidationException(
                        "One or more parameter values were invalid. Invalid type for parameter "
                        f"{attr}[{i}], Expected: 32-bit floating point number, Actual: {next(iter(element))}. "
                        f"IndexName: {name}"
                    )
            if len(elements) != index.dimensions:
                raise ValidationException(
                    "One or more parameter values were invalid. Invalid size for parameter "
                    f"{attr}, Expected: {index.dimensions}, Actual: {len(elements)} IndexName: {name}"
                )
        for attr_name, attr_type in index.schema:
            value = item.get(attr_name)
            if value is None:
                continue
            if attr_type not in value:
                raise ValidationException(
                    "One or more parameter values were invalid: Type mismatch for Index Key "
                    f"{attr_name} Expected: {attr_type} Actual: {next(iter(value))} IndexName: {name}"
                )
            if value[attr_type] == "" and attr_type in _EMPTY_KIND:
                raise ValidationException(
                    "One or more parameter values are not valid. A value specified for a secondary index key "
                    "is not supported. The AttributeValue for a key attribute cannot contain an empty "
                    f"{_EMPTY_KIND[attr_type]} value. IndexName: {name}, IndexKey: {attr_name}"
                )


def _vector(index: VectorIndex, item: Item) -> list[float] | None:
    value = item.get(index.attribute)
    elements = None if value is None else value.get("L")
    if elements is None or len(elements) != index.dimensions:
        return None
    out = []
    for element in elements:
        f = _f32(element)
        if f is None:
            return None
        out.append(f)
    return out


def entry_of(index: VectorIndex, key_names: tuple[str, ...], item: Item | None) -> tuple[bytes, int] | None:
    """(row value, weight) of `item`'s entry, or None when the item is not in the index."""
    if item is None:
        return None
    vector = _vector(index, item)
    if vector is None:
        return None
    for attr_name, attr_type in index.schema:
        value = item.get(attr_name)
        if value is None:
            if index.hash_key is not None and attr_name == index.hash_key[0]:
                return None  # documented silent de-indexing
            continue
        if attr_type not in value or value[attr_type] == "":
            return None  # only items older than the index can get here
    if index.projection == "ALL":
        header = {k: v for k, v in item.items() if k != index.attribute}
    else:
        keep = set(key_names) | {a for a, _ in index.schema}
        if index.projection == "INCLUDE":
            keep |= index.non_key
        keep.discard(index.attribute)
        header = {k: v for k, v in item.items() if k in keep}
    raw = orjson.dumps(header)
    weight = item_size(header) + len(index.attribute.encode()) + 4 * index.dimensions
    import numpy as np

    return struct.pack("<II", len(raw), weight) + raw + np.asarray(vector, dtype="<f4").tobytes(), weight


def decode(value: bytes, dimensions: int) -> tuple[bytes, np.ndarray, int]:
    """(header JSON, float32 vector, entry bytes) of an entry row."""
    import numpy as np

    length, weight = struct.unpack_from("<II", value)
    header = value[8 : 8 + length]
    vector = np.frombuffer(value, dtype="<f4", count=dimensions, offset=8 + length)
    return header, vector, weight


#: Change-log rows kept per index; a cache further behind than this rebuilds in full.
LOG_KEEP = 4096
#: Log value meaning "many rows changed" (a backfill batch): readers rebuild in full.
RESET = b""


def bump_version(txn: WriteTxn, index: VectorIndex, suffix: bytes = RESET) -> None:
    """Count a change of the index and log which entry changed, in the change's own commit.

    The log row (`log_key(version)` -> the entry's key suffix) is what lets a
    cached matrix, in this process or another worker, apply only the changed
    entries; the oldest row past LOG_KEEP is dropped in the same commit.
    """
    current = txn.get(index.version_key)
    number = (0 if current is None else int.from_bytes(current, "big")) + 1
    txn.put(index.version_key, number.to_bytes(8, "big"))
    txn.put(index.log_key(number), suffix)
    if number > LOG_KEEP:
        txn.delete(index.log_key(number - LOG_KEEP))


def version(view: ReadView, index: VectorIndex) -> int:
    current = view.get(index.version_key)
    return 0 if current is None else int.from_bytes(current, "big")


def changes(view: ReadView, index: VectorIndex, since: int, until: int) -> set[bytes] | None:
    """Entry key suffixes changed in versions (since, until], or None when a full rebuild is due."""
    log = list(view.range(index.log_key(since + 1), index.log_key(until + 1)))
    if len(log) != until - since:
        return None  # trimmed past the cache's version
    suffixes = {value for _, value in log}
    return None if RESET in suffixes else suffixes


def write_vector_entries(
    txn: WriteTxn, indexes: list[VectorIndex], key_names: tuple[str, ...], suffix: bytes,
    old: Item | None, new: Item | None,
) -> dict[str, int]:
    """Keep every vector index exact for one item change; {index: entry bytes written} for the charge."""
    written: dict[str, int] = {}
    for index in indexes:
        if index.status == "DELETING":
            continue
        before = entry_of(index, key_names, old)
        after = entry_of(index, key_names, new)
        if before == after:
            continue
        row = index.prefix + suffix
        if after is None:
            txn.delete(row)
        else:
            txn.put(row, after[0], after[1])
        bump_version(txn, index, suffix)
        written[index.name] = (after or before)[1]  # type: ignore[index]
    return written


def backfill_entry(txn: WriteTxn, index: VectorIndex, key_names: tuple[str, ...], suffix: bytes, item: Item) -> None:
    entry = entry_of(index, key_names, item)
    if entry is not None:
        txn.put(index.prefix + suffix, entry[0], entry[1])


def live_documents(view: ReadView, table: Any, docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """DescribeTable's vector index documents with live ItemCount / IndexSizeBytes."""
    out = []
    by_name = {i.name: i for i in table.vector_indexes}
    for doc in docs:
        index = by_name.get(doc["IndexName"])
        if index is None or index.status == "CREATING":  # 0 until built, as a GSI (engine/tables.py)
            out.append(doc)
            continue
        end = prefix_successor(index.prefix)
        assert end is not None
        count, size = view.stats(index.prefix, end)
        out.append({**doc, "ItemCount": count, "IndexSizeBytes": size})
    return out
