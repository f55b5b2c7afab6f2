"""Checks that an item or a Key carries the table's key, as DynamoDB words them.

Put-style requests (a whole item) and Key-style requests (GetItem,
DeleteItem, UpdateItem ...) get different messages on the real service, so
there are two entry points over one shared per-attribute check.
"""

from __future__ import annotations

import base64
from typing import Any

from ...errors import ValidationException
from ..tables.schema import KeyAttribute, Table

MAX_HASH_KEY_BYTES = 2048
MAX_RANGE_KEY_BYTES = 1024
_EMPTY_KIND = {"S": "string", "B": "binary"}


def _key_bytes(attr: KeyAttribute, value: str) -> int:
    if attr.type == "S":
        return len(value.encode())
    if attr.type == "B":
        return len(base64.b64decode(value))
    return 0  # numbers are bounded by their 38 digits, DynamoDB never rejects them here


def key_value_bytes(kind: str, value: str, limit: int) -> int:
    """The size of an S or B key value, or 0 when it is surely within `limit` (no encoding then).

    A character is at most 4 UTF-8 bytes and 4 base64 characters carry 3
    bytes, so short values are within any key limit without measuring: the
    common case costs a len(). Numbers are never too large.
    """
    if kind == "S":
        return 0 if len(value) * 4 <= limit else len(value.encode())
    if kind == "B":
        return 0 if len(value) <= limit else len(value) * 3 // 4 - value[-2:].count("=")
    return 0


def _check_value(attr: KeyAttribute, value: str, is_hash: bool, empty_prefix: str) -> None:
    if value == "" and attr.type in _EMPTY_KIND:
        raise ValidationException(
            f"{empty_prefix} The AttributeValue for a key attribute cannot contain an empty "
            f"{_EMPTY_KIND[attr.type]} value. Key: {attr.name}"
        )
    size = _key_bytes(attr, value)
    if is_hash and size > MAX_HASH_KEY_BYTES:
        raise ValidationException(
            "One or more parameter values were invalid: Size of hashkey has exceeded the "
            f"maximum size limit of{MAX_HASH_KEY_BYTES} bytes"
        )
    if not is_hash and size > MAX_RANGE_KEY_BYTES:
        raise ValidationException(
            "One or more parameter values were invalid: Aggregated size of all range keys has "
            f"exceeded the size limit of {MAX_RANGE_KEY_BYTES} bytes"
        )


def _attributes(table: Table) -> list[tuple[KeyAttribute, bool]]:
    out = [(table.hash_key, True)]
    if table.range_key is not None:
        out.append((table.range_key, False))
    return out


def check_item_key(table: Table, item: dict[str, dict[str, Any]]) -> None:
    """A PutItem-style item must hold every key attribute with its declared type."""
    for attr, is_hash in _attributes(table):
        av = item.get(attr.name)
        if av is None:
            raise ValidationException(
                f"One or more parameter values were invalid: Missing the key {attr.name} in the item"
            )
        value = av.get(attr.type)
        if value is None or len(av) != 1:
            actual = next(iter(av))
            raise ValidationException(
                "One or more parameter values were invalid: Type mismatch for key "
                f"{attr.name} expected: {attr.type} actual: {actual}"
            )
        _check_value(attr, value, is_hash, "One or more parameter values are not valid.")


def check_key_values(
    table: Table, item: dict[str, dict[str, Any]], empty_prefix: str = "One or more parameter values are not valid."
) -> None:
    """Empty or oversized values of the key attributes `item` holds with their declared type.

    The half of the key checks a transaction answers with a plain
    ValidationException (moto's AWS-verified test for an empty key value);
    a key attribute missing or of another type is a cancellation reason
    there (engine/transactions.py), checked by check_item_key/check_key.
    """
    for attr, is_hash in _attributes(table):
        av = item.get(attr.name)
        if av is not None:
            value = av.get(attr.type)
            if value is not None:
                _check_value(attr, value, is_hash, empty_prefix)


def check_key(
    table: Table, key: dict[str, dict[str, Any]], empty_prefix: str = "One or more parameter values are not valid."
) -> None:
    """A Key must be exactly the table's key attributes, with their types.

    An empty value's sentence starts "are not valid." for every Key parameter
    (GetItem, UpdateItem, DeleteItem, BatchGetItem) as for an item and for
    BatchWriteItem's DeleteRequest: the 2026 conformance records agree on all of
    them, and only dynalite's older record says "were invalid:"."""
    attributes = _attributes(table)
    if len(key) != len(attributes):
        raise ValidationException("The provided key element does not match the schema")
    for attr, _ in attributes:
        av = key.get(attr.name)
        if av is None or attr.type not in av:
            raise ValidationException("The provided key element does not match the schema")
    for attr, is_hash in attributes:
        _check_value(attr, key[attr.name][attr.type], is_hash, empty_prefix)


def key_of(table: Table, item: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The key attributes of an item (LastEvaluatedKey, CancellationReasons ...)."""
    return {name: item[name] for name in table.key_names}
