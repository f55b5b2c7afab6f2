"""One item: view and edit in plain JSON (DynamoDB JSON one click away), save on the version loaded, delete.

One notation at a time: the attribute table and the editor show the plain
form (readable, numbers exact); `?format=ddb` switches the editor to
DynamoDB JSON, and the one Save button saves whichever is shown.

The version is a digest of the item as loaded. Saving re-reads the item
(strongly consistent) and refuses when the digest changed, then writes with
a condition that every loaded attribute still has its loaded value, so a
change between the check and the write is refused by the write itself; a
refusal is reported with the item as it now is, never overwritten.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any
from urllib.parse import quote

import orjson

from ..engine.engine import Engine
from ..errors import DynamoDBError
from .engine_calls import call, describe, get_item
from .items_table import table_key_names
from .render import render
from .summaries import summary_of
from .values import PlainJsonError, from_dynamodb_json, from_plain, plain_json
from .web import Answer, ConsoleError, Request, html, redirect, table_url

#: Conditions longer than DynamoDB's 4 KB expression limit fall back to the version check alone.
MAX_CONDITION = 4096


def version_of(item: dict[str, Any] | None) -> str:
    if item is None:
        return "absent"
    return hashlib.sha256(orjson.dumps(item, option=orjson.OPT_SORT_KEYS)).hexdigest()[:32]


def _key_of(request: Request, name: str, source: str) -> dict[str, Any]:
    text = request.arg("key") if source == "query" else request.field("key")
    try:
        key = orjson.loads(text) if text else None
    except orjson.JSONDecodeError:
        key = None
    if not isinstance(key, dict) or not key:
        raise ConsoleError(400, "key must be the item's key in DynamoDB JSON")
    return key


def _get(engine: Engine, name: str, key: dict[str, Any]) -> dict[str, Any] | None:
    return get_item(engine, {"TableName": name, "Key": key, "ConsistentRead": True})


def item_url(name: str, key: dict[str, Any]) -> str:
    return table_url(name, "item") + "?key=" + quote(json.dumps(key, separators=(",", ":")), safe="")


def item_page(engine: Engine, request: Request, name: str) -> Answer:
    doc = describe(engine, name)
    fmt = "ddb" if request.arg("format") == "ddb" else "plain"
    if not request.arg("key"):  # a new item
        return _render(engine, doc, None, None, notice=None, error=None, status=200, draft_format=fmt)
    key = _key_of(request, name, "query")
    item = _get(engine, name, key)
    if item is None:
        return _render(engine, doc, key, None, notice=None, error="No item has this key.", status=404, draft_format=fmt)
    notice = "Saved." if request.arg("saved") else None
    return _render(engine, doc, key, item, notice=notice, error=None, status=200, draft_format=fmt)


def _render(
    engine: Engine, doc: dict[str, Any], key: dict[str, Any] | None, item: dict[str, Any] | None, *,
    notice: str | None, error: str | None, status: int, draft: str | None = None, draft_format: str = "plain",
) -> Answer:
    """The item page; the editor in `draft_format` ("plain" or "ddb"), holding `draft` when an edit was refused."""
    shown = item if item is not None else {k: {"S": ""} for k in table_key_names(doc)}
    if draft is None:
        draft = plain_json(shown) if draft_format == "plain" else orjson.dumps(shown, option=orjson.OPT_INDENT_2).decode()
    name = doc["TableName"]
    if key:
        switch = item_url(name, key) + ("&format=ddb" if draft_format == "plain" else "")
    else:
        switch = table_url(name, "item") + ("?format=ddb" if draft_format == "plain" else "")
    return html(render(
        "item.html", table=summary_of(engine, doc), key=key, item=item,
        key_json=orjson.dumps(key).decode() if key else "",
        version=version_of(item), editor_format=draft_format, editor_text=draft,
        switch_url=switch,
        notice=notice, error=error,
    ), status)


def _condition(loaded: dict[str, Any] | None, key_names: list[str]) -> dict[str, Any]:
    """A condition that holds only while the item is still as it was loaded."""
    if loaded is None:
        return {"ConditionExpression": "attribute_not_exists(#k0)", "ExpressionAttributeNames": {"#k0": key_names[0]}}
    names: dict[str, str] = {}
    values: dict[str, Any] = {}
    terms = []
    for i, (attr, value) in enumerate(loaded.items()):
        names[f"#a{i}"] = attr
        values[f":v{i}"] = value
        terms.append(f"#a{i} = :v{i}")
    expression = " AND ".join(terms)
    if len(expression) > MAX_CONDITION:
        return {"ConditionExpression": "attribute_exists(#k0)", "ExpressionAttributeNames": {"#k0": key_names[0]}}
    return {"ConditionExpression": expression, "ExpressionAttributeNames": names, "ExpressionAttributeValues": values}


def save_item(engine: Engine, request: Request, name: str) -> Answer:
    doc = describe(engine, name)
    key_names = table_key_names(doc)
    fmt = "plain" if request.field("format") == "plain" else "ddb"
    text = request.field("item")
    original = _key_of(request, name, "form") if request.field("key") else None
    try:
        item = from_plain(text) if fmt == "plain" else from_dynamodb_json(text)
    except PlainJsonError as error:
        return _render(engine, doc, original, _current(engine, name, original), notice=None,
                       error=str(error), status=400, draft=text, draft_format=fmt)
    new_key = {k: item[k] for k in key_names if k in item}
    same_key = original is not None and new_key == original
    loaded = None
    if same_key:
        assert original is not None
        current = _get(engine, name, original)
        if version_of(current) != request.field("version"):
            return _conflict(engine, doc, original, current, text, fmt)
        loaded = current
    try:
        call(engine, "PutItem", {"TableName": name, "Item": item, **_condition(loaded, key_names)})
    except DynamoDBError as error:
        if error.code == "ConditionalCheckFailedException":
            target = original if same_key else new_key
            return _conflict(engine, doc, target, _current(engine, name, target), text, fmt)
        return _render(engine, doc, original, _current(engine, name, original), notice=None,
                       error=f"{error.code}: {error.message}", status=error.status, draft=text, draft_format=fmt)
    return redirect(item_url(name, new_key) + "&saved=1" + ("&format=ddb" if fmt == "ddb" else ""))


def _current(engine: Engine, name: str, key: dict[str, Any] | None) -> dict[str, Any] | None:
    if not key:
        return None
    try:
        return _get(engine, name, key)
    except DynamoDBError:
        return None


def _conflict(
    engine: Engine, doc: dict[str, Any], key: dict[str, Any] | None, current: dict[str, Any] | None, text: str, fmt: str
) -> Answer:
    message = ("The item changed since you loaded it (or another item has this key): nothing was saved. "
               "Below is the item as it is now; your edit is kept in the editor.")
    if current is None:
        message = "The item was deleted (or created) since you loaded it: nothing was saved."
    return _render(engine, doc, key, current, notice=None, error=message, status=409, draft=text or None,
                   draft_format=fmt)


def delete_item(engine: Engine, request: Request, name: str) -> Answer:
    doc = describe(engine, name)
    key = _key_of(request, name, "form")
    current = _get(engine, name, key)
    if version_of(current) != request.field("version"):
        return _conflict(engine, doc, key, current, "", "plain")
    try:
        call(engine, "DeleteItem", {"TableName": name, "Key": key, **_condition(current, table_key_names(doc))})
    except DynamoDBError as error:
        if error.code != "ConditionalCheckFailedException":
            raise
        return _conflict(engine, doc, key, _current(engine, name, key), "", "plain")
    return redirect(table_url(name, "query") + "?run=1&op=Scan")
