"""What the service's JSON deserializer refuses in an attribute value, in its words.

DynamoDB deserializes the whole request (coral's Java JSON codec) before it
validates any of it, so a JSON value of the wrong kind anywhere (a number where
a string belongs, a list for a map, non-canonical base64) is a
SerializationException, and it beats any ValidationException anywhere. This
module holds those texts and the checks that find them: per slot, for
:mod:`values` (which raises them while normalizing, and rescans with
:func:`check_value_types` / :func:`check_item_types` on its rare
validation-error path to honour the precedence), and the JSON token names the
request-shape validator shares. Split from values.py.

The texts are those of the service's JSON deserializer (coral), as pinned by
dynalite's current test helpers and moto's tests: ``NUMBER_VALUE cannot be
converted to String`` and friends (see docs/decisions.md, "Attribute values").
"""

from __future__ import annotations

import binascii
from collections.abc import Callable
from typing import Any

from partita.errors import SerializationException

# --- SerializationException messages (the JSON deserializer's) ---------------------

START_OF_MAP = "Start of structure or map found where not expected"
_AV_CLASS = "com.amazonaws.dynamodb.v20120810.AttributeValue"
MSG_B64_BAD_LAST = "Invalid last non-pad Base64 character dectected"  # sic


def json_token_name(value: Any) -> str:
    """The service deserializer's name for a JSON scalar token (bool before int: bool is an int).

    Shared with the request-shape validator, which reports the same tokens.
    """
    if value is True:
        return "TRUE_VALUE"
    if value is False:
        return "FALSE_VALUE"
    if isinstance(value, int):
        return "NUMBER_VALUE"
    if isinstance(value, float):
        return "DECIMAL_VALUE"
    return "STRING_VALUE"


def string_slot_error(value: Any) -> str | None:
    """Message for a non-string where a String (S, N, SS/NS member) is expected."""
    if isinstance(value, str) or value is None:
        return None
    if isinstance(value, dict):
        return START_OF_MAP
    if isinstance(value, list):
        return "Unrecognized collection type class java.lang.String"
    return f"{json_token_name(value)} cannot be converted to String"


def bool_slot_error(value: Any) -> str | None:
    """Message for a non-boolean where BOOL or NULL expects one."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, dict):
        return START_OF_MAP
    if isinstance(value, list):
        return "Unrecognized collection type class java.lang.Boolean"
    if isinstance(value, str):
        return "Unexpected token received from parser"
    return f"{json_token_name(value)} cannot be converted to Boolean"


def blob_slot_error(value: Any) -> str | None:
    """Message for a bad Blob (B, BS member): wrong JSON type or non-canonical base64."""
    if value is None:
        return None
    if isinstance(value, str):
        return _base64_error(value)
    if isinstance(value, dict):
        return START_OF_MAP
    if isinstance(value, list):
        return "Unrecognized collection type class java.nio.ByteBuffer"
    return "only base-64-encoded strings are convertible to bytes"


def list_slot_error(value: Any) -> str | None:
    """Message for a non-list where SS/NS/BS/L expects a JSON array."""
    if isinstance(value, list) or value is None:
        return None
    if isinstance(value, dict):
        return START_OF_MAP
    return "Unexpected field type"


def map_slot_error(value: Any) -> str | None:
    """Message for a non-object where M (or an item / key map) expects a JSON object."""
    if isinstance(value, dict) or value is None:
        return None
    if isinstance(value, list):
        return f"Unrecognized collection type java.util.Map<java.lang.String, {_AV_CLASS}>"
    return "Unexpected field type"


def value_slot_error(value: Any) -> str | None:
    """Message for a non-object where an AttributeValue structure is expected."""
    if isinstance(value, dict) or value is None:
        return None
    if isinstance(value, list):
        return f"Unrecognized collection type class {_AV_CLASS}"
    return "Unexpected value type in payload"


_B64_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")


def _base64_error(text: str) -> str | None:
    """None if ``text`` is canonical padded base64, else the deserializer's complaint.

    The service rejects anything that does not re-encode to itself (wrong length,
    stray padding, non-zero pad bits), so accepted text is already canonical and
    needs no rewriting.
    """
    try:
        raw = binascii.a2b_base64(text, strict_mode=True)
    except (binascii.Error, ValueError):
        raw = None
    if raw is not None and binascii.b2a_base64(raw, newline=False).decode("ascii") == text:
        return None
    if len(text) % 4:
        return f"Base64 encoded length is expected a multiple of 4 bytes but found: {len(text)}"
    for ch in text:
        if ch not in _B64_ALPHABET:
            return f"Invalid Base64 character: '{ch}'"
    return MSG_B64_BAD_LAST


# --- The deserializer's view alone ---------------------------------------------------


def _value_type_error(av: Any) -> str | None:
    """First deserialization error inside one attribute value, in document order."""
    message = value_slot_error(av)
    if message is not None or av is None:
        return message
    for type_name, value in av.items():
        if value is None:
            continue
        if type_name in ("S", "N"):
            message = string_slot_error(value)
        elif type_name == "B":
            message = blob_slot_error(value)
        elif type_name in ("BOOL", "NULL"):
            message = bool_slot_error(value)
        elif type_name in ("SS", "NS", "BS", "L"):
            message = list_slot_error(value)
            if message is None:
                if type_name == "L":
                    member_check: Callable[[Any], str | None] = _value_type_error
                elif type_name == "BS":
                    member_check = blob_slot_error
                else:
                    member_check = string_slot_error
                for member in value:
                    message = member_check(member)
                    if message is not None:
                        break
        elif type_name == "M":
            message = map_slot_error(value)
            if message is None:
                for member in value.values():
                    message = _value_type_error(member)
                    if message is not None:
                        break
        if message is not None:
            return message
    return None


def check_value_types(av: Any) -> None:
    """Raise the SerializationException the service's deserializer would, if any.

    The api layer may call this on every AttributeValue-bearing part of a
    request before validating any of them, to get the service's precedence of
    serialization over validation errors across the whole request.
    """
    message = _value_type_error(av)
    if message is not None:
        raise SerializationException(message)


def check_item_types(item: Any) -> None:
    """:func:`check_value_types` for an item or key map."""
    message = map_slot_error(item)
    if message is None and item is not None:
        for av in item.values():
            message = _value_type_error(av)
            if message is not None:
                break
    if message is not None:
        raise SerializationException(message)
