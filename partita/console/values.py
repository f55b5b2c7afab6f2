"""Attribute values for people: DynamoDB JSON, plain JSON with exact numbers, and back.

Plain JSON has no sets and no binary, and floats would round numbers of 38
digits, so the plain form is JSON written by hand: a number is its exact
digits, a set is `{"$set": [...]}` and a binary is `{"$binary": "<base64>"}`
(docs/decisions.md, Console). Reading the plain form back parses numbers as
text, so nothing is lost either way.
"""

from __future__ import annotations

import base64
import json
from decimal import Decimal, InvalidOperation
from typing import Any

import orjson

Item = dict[str, dict[str, Any]]

_TYPE_NAMES = {
    "S": "String", "N": "Number", "B": "Binary", "BOOL": "Boolean", "NULL": "Null",
    "L": "List", "M": "Map", "SS": "String set", "NS": "Number set", "BS": "Binary set",
}


class PlainJsonError(ValueError):
    pass


def dynamodb_json(value: Any, indent: bool = True) -> str:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2 if indent else 0).decode()


def type_label(av: dict[str, Any]) -> str:
    (kind, raw), = av.items()
    name = _TYPE_NAMES.get(kind, kind)
    if kind in ("SS", "NS", "BS", "L"):
        return f"{name} ({len(raw)})"
    if kind == "M":
        return f"{name} ({len(raw)} keys)"
    if kind == "B":
        return f"{name} ({len(_b64(raw))} bytes)"
    return name


def describe_value(av: dict[str, Any], limit: int = 120) -> str:
    """A one-line rendering of a value for tables of items (plain form, cut at `limit`)."""
    text = _plain(av, 0, None)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def plain_json(item: Item) -> str:
    """An item as plain JSON text, two-space indented, numbers exact."""
    return _plain({"M": item}, 0, 2)


def _b64(text: str) -> bytes:
    try:
        return base64.b64decode(text)
    except (ValueError, TypeError):
        return b""


def _plain(av: dict[str, Any], depth: int, indent: int | None) -> str:
    (kind, raw), = av.items()
    if kind == "S":
        return json.dumps(raw, ensure_ascii=False)
    if kind == "N":
        return raw
    if kind == "BOOL":
        return "true" if raw else "false"
    if kind == "NULL":
        return "null"
    if kind == "B":
        return '{"$binary": ' + json.dumps(raw) + "}"
    if kind in ("SS", "NS", "BS"):
        members = [
            json.dumps(m, ensure_ascii=False) if kind == "SS" else m if kind == "NS" else '{"$binary": ' + json.dumps(m) + "}"
            for m in raw
        ]
        return '{"$set": ' + _join("[", members, "]", depth + 1, indent) + "}"
    if kind == "L":
        return _join("[", [_plain(v, depth + 1, indent) for v in raw], "]", depth, indent)
    if kind == "M":
        entries = [json.dumps(k, ensure_ascii=False) + ": " + _plain(v, depth + 1, indent) for k, v in raw.items()]
        return _join("{", entries, "}", depth, indent)
    return json.dumps(raw)


def _join(open_: str, parts: list[str], close: str, depth: int, indent: int | None) -> str:
    if not parts:
        return open_ + close
    if indent is None:
        return open_ + ", ".join(parts) + close
    pad = " " * (indent * (depth + 1))
    return open_ + "\n" + ",\n".join(pad + p for p in parts) + "\n" + " " * (indent * depth) + close


def from_plain(text: str) -> Item:
    """Parse plain JSON (as `plain_json` writes it) into a DynamoDB item."""
    try:
        document = json.loads(text, parse_float=_Number, parse_int=_Number, parse_constant=_reject)
    except ValueError as error:
        raise PlainJsonError(f"not JSON: {error}") from None
    if not isinstance(document, dict):
        raise PlainJsonError("an item is a JSON object")
    return {str(k): _typed(v) for k, v in document.items()}


class _Number(str):
    """A JSON number kept as its text."""


def _reject(name: str) -> Any:
    raise PlainJsonError(f"{name} is not a number DynamoDB can store")


def _typed(value: Any) -> dict[str, Any]:
    if isinstance(value, _Number):
        try:
            Decimal(value)
        except InvalidOperation:
            raise PlainJsonError(f"{value} is not a number") from None
        return {"N": str(value)}
    if isinstance(value, bool):
        return {"BOOL": value}
    if value is None:
        return {"NULL": True}
    if isinstance(value, str):
        return {"S": value}
    if isinstance(value, list):
        return {"L": [_typed(v) for v in value]}
    if isinstance(value, dict):
        if set(value) == {"$binary"} and isinstance(value["$binary"], str):
            return {"B": value["$binary"]}
        if set(value) == {"$set"} and isinstance(value["$set"], list):
            return _set(value["$set"])
        return {"M": {str(k): _typed(v) for k, v in value.items()}}
    raise PlainJsonError(f"cannot store {value!r}")


def _set(members: list[Any]) -> dict[str, Any]:
    if not members:
        raise PlainJsonError("a set cannot be empty")
    if all(isinstance(m, _Number) for m in members):
        return {"NS": [str(m) for m in members]}
    if all(isinstance(m, str) and not isinstance(m, _Number) for m in members):
        return {"SS": list(members)}
    if all(isinstance(m, dict) and set(m) == {"$binary"} for m in members):
        return {"BS": [m["$binary"] for m in members]}
    raise PlainJsonError('a set holds only strings, only numbers or only {"$binary": ...} values')


def from_dynamodb_json(text: str) -> Item:
    try:
        document = orjson.loads(text)
    except orjson.JSONDecodeError as error:
        raise PlainJsonError(f"not JSON: {error}") from None
    if not isinstance(document, dict):
        raise PlainJsonError("an item is a JSON object of attribute values")
    return document
