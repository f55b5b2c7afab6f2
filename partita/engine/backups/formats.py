"""DynamoDB's export and import file formats: DynamoDB JSON, Amazon Ion, CSV lines.

One line per item, as DynamoDB writes them (`{"Item": {...}}` in DynamoDB
JSON; `$ion_1_0 {Item:{...}}` in Ion, where sets are lists annotated
`$dynamodb_SS`, `$dynamodb_NS`, `$dynamodb_BS`, numbers are decimals and
binary values blobs).
"""

from __future__ import annotations

import base64
import csv
import io
from decimal import Decimal
from typing import Any

import orjson
from amazon.ion import simpleion
from amazon.ion.core import IonType
from amazon.ion.simple_types import (
    IonPyBool,
    IonPyBytes,
    IonPyDecimal,
    IonPyDict,
    IonPyInt,
    IonPyList,
    IonPyNull,
)

Item = dict[str, dict[str, Any]]
_SETS = {"SS": "$dynamodb_SS", "NS": "$dynamodb_NS", "BS": "$dynamodb_BS"}
_ANNOTATION_SETS = {v: k for k, v in _SETS.items()}


def json_line(record: dict[str, Any]) -> bytes:
    return orjson.dumps(record) + b"\n"


def _to_ion(value: dict[str, Any]) -> Any:
    (kind, v), = value.items()
    if kind == "S":
        return v
    if kind == "N":
        return Decimal(v)
    if kind == "B":
        return IonPyBytes.from_value(IonType.BLOB, base64.b64decode(v))
    if kind == "BOOL":
        return v
    if kind == "NULL":
        return IonPyNull.from_value(IonType.NULL, None)
    if kind == "L":
        return [_to_ion(x) for x in v]
    if kind == "M":
        return {k: _to_ion(x) for k, x in v.items()}
    members = [_to_ion({kind[0]: x}) for x in v]
    return IonPyList.from_value(IonType.LIST, members, (_SETS[kind],))


def ion_line(record: dict[str, Any]) -> bytes:
    doc = {key: {k: _to_ion(v) for k, v in item.items()} if isinstance(item, dict) and key != "Metadata"
           else item for key, item in record.items()}
    if "Metadata" in record:
        doc["Metadata"] = {"WriteTimestampMicros": int(record["Metadata"]["WriteTimestampMicros"]["N"])}
    text: str = simpleion.dumps(doc, binary=False)
    return text.encode() + b"\n"


def _number(value: Any) -> str:
    return format(Decimal(value).normalize(), "f") if isinstance(value, Decimal) else str(value)


def _from_ion(value: Any) -> dict[str, Any]:
    annotations = [getattr(a, "text", a) for a in getattr(value, "ion_annotations", ())]
    if annotations and annotations[0] in _ANNOTATION_SETS and isinstance(value, list):
        kind = _ANNOTATION_SETS[annotations[0]]
        return {kind: [next(iter(_from_ion(x).values())) for x in value]}
    if value is None or isinstance(value, IonPyNull):
        return {"NULL": True}
    if isinstance(value, bool | IonPyBool):
        return {"BOOL": bool(value)}
    if isinstance(value, IonPyBytes | bytes):
        return {"B": base64.b64encode(bytes(value)).decode()}
    if isinstance(value, str):
        return {"S": str(value)}
    if isinstance(value, IonPyDecimal | Decimal | IonPyInt | int | float):
        return {"N": _number(value)}
    if isinstance(value, dict | IonPyDict):
        return {"M": {k: _from_ion(v) for k, v in value.items()}}
    if isinstance(value, list):
        return {"L": [_from_ion(x) for x in value]}
    raise ValueError(f"unsupported Ion value {type(value).__name__}")


def parse_json_line(line: bytes) -> Item:
    doc = orjson.loads(line)
    item = doc["Item"]
    if not isinstance(item, dict):
        raise ValueError("Item is not a map")
    return item


def parse_ion_line(line: bytes) -> Item | None:
    text = line.decode().strip()
    if text.startswith("$ion_1_0"):
        text = text[len("$ion_1_0"):].strip()
    if not text:
        return None
    doc = simpleion.loads(text)
    item = doc["Item"]
    return {k: _from_ion(v) for k, v in item.items()}


def parse_csv_line(line: bytes, header: list[str], delimiter: str, types: dict[str, str]) -> Item:
    """A CSV row: every value a string, except key attributes, typed as the table defines them; empty cells are absent."""
    row = next(csv.reader(io.StringIO(line.decode()), delimiter=delimiter))
    item: Item = {}
    for name, value in zip(header, row, strict=False):
        if value == "":
            continue
        kind = types.get(name, "S")
        item[name] = {kind: value}
    return item


def csv_header(line: bytes, delimiter: str) -> list[str]:
    return next(csv.reader(io.StringIO(line.decode()), delimiter=delimiter))
