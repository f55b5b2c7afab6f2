"""One input line of a bulk put: its item and, when present, its own condition.

DynamoDB JSON lines are `{"Item": {...}}` as exports write them; Ion lines are
`$ion_1_0 {Item:{...}}`. A line may carry its own ConditionExpression with
ExpressionAttributeNames / ExpressionAttributeValues beside the Item (the
developer guide's "Per-item condition expressions"; the member names are
those of PutItem: NOT confirmed against the service's examples). Anything
that is not such a record, or an item DynamoDB would refuse (values, a
missing or mistyped key, an index key, over 400 KB), is a parse or
validation error of that line alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from ..backups.formats import _from_ion
from ..expressions import parse_condition
from ..expressions.evaluate import bind
from ..expressions.validate import check_placeholders
from ..items.single import check_item_size
from ..items.writes import check_index_keys
from ..model.item_keys import check_item_key
from ..model.values import normalize_item
from ..tables.schema import Table

Item = dict[str, dict[str, Any]]


class LineError(Exception):
    """A line that cannot be written: its ErrorCode and ErrorMessage for the report."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class Line:
    item: Item
    condition: Any | None  # a bound predicate over the existing item, or None


def _record(raw: bytes, fmt: str) -> dict[str, Any] | None:
    if fmt == "DYNAMODB_JSON":
        doc = orjson.loads(raw)
        if not isinstance(doc, dict):
            raise ValueError("not a JSON object")
        return doc
    from amazon.ion import simpleion

    text = raw.decode().strip()
    if text.startswith("$ion_1_0"):
        text = text[len("$ion_1_0"):].strip()
    if not text:
        return None
    doc = simpleion.loads(text)
    out: dict[str, Any] = {"Item": {k: _from_ion(v) for k, v in doc["Item"].items()}}
    for name in ("ConditionExpression",):
        if name in doc:
            out[name] = str(doc[name])
    if "ExpressionAttributeNames" in doc:
        out["ExpressionAttributeNames"] = {k: str(v) for k, v in doc["ExpressionAttributeNames"].items()}
    if "ExpressionAttributeValues" in doc:
        out["ExpressionAttributeValues"] = {k: _from_ion(v) for k, v in doc["ExpressionAttributeValues"].items()}
    return out


def parse_line(raw: bytes, fmt: str, table: Table) -> Line | None:
    """The line's item and condition (None: a blank line); raises LineError."""
    if not raw.strip():
        return None
    try:
        doc = _record(raw, fmt)
    except Exception as error:
        raise LineError("ParseError", f"The input record could not be parsed as {fmt}: {error}") from error
    if doc is None:
        return None
    if not isinstance(doc.get("Item"), dict):
        raise LineError("ParseError", "The input record has no Item")
    try:
        item = normalize_item(doc["Item"])
        check_item_size(item)
        check_item_key(table, item)
        check_index_keys(table, item)
        condition = None
        text = doc.get("ConditionExpression")
        if text is not None:
            names, values = doc.get("ExpressionAttributeNames"), doc.get("ExpressionAttributeValues")
            values = None if values is None else normalize_item(values)
            parsed = parse_condition(str(text))
            check_placeholders([parsed], names, values)
            condition = bind(parsed, names, values)
    except LineError:
        raise
    except Exception as error:  # DynamoDB's own ValidationException of a PutItem with this item
        raise LineError("ValidationError", str(getattr(error, "message", None) or error)) from error
    return Line(item, condition)
