"""A table's vector indexes and a SearchVectors form.

The list is DescribeTable's `VectorIndexes`; the search runs through the real
dispatch (`engine_calls.call`), so validation, DynamoDB's messages and the
consumed capacity are those of a real request. The form is POSTed (a query
vector of a few thousand dimensions does not belong in a URL); a refusal is
shown on the form, with DynamoDB's code and message.
"""

from __future__ import annotations

from typing import Any

import orjson

from ..engine.engine import Engine
from ..errors import DynamoDBError
from .engine_calls import call, describe
from .render import render
from .summaries import summary_of, vector_indexes
from .web import Answer, ConsoleError, Request, html


def vectors_page(engine: Engine, request: Request, name: str) -> Answer:
    doc = describe(engine, name)
    return _page(engine, doc, {}, None, None)


def run_search(engine: Engine, request: Request, name: str) -> Answer:
    doc = describe(engine, name)
    form = {key: request.field(key) for key in ("index", "vector", "top_k", "condition", "names", "values")}
    try:
        answer = call(engine, "SearchVectors", _search_request(doc["TableName"], form))
    except ConsoleError as error:
        return _page(engine, doc, form, None, error.message, error.status)
    except DynamoDBError as error:
        return _page(engine, doc, form, None, f"{error.code}: {error.message}", error.status)
    results = [{"rank": n, "score": r.get("Score"), "item": r.get("Item", {})}
               for n, r in enumerate(answer["SearchResults"], 1)]
    consumed = (answer.get("ConsumedCapacity") or {}).get("VectorSearchRequestBytes")
    return _page(engine, doc, form, {"results": results, "consumed": consumed}, None)


def _page(engine: Engine, doc: dict[str, Any], form: dict[str, str], outcome: dict[str, Any] | None,
          error: str | None, status: int = 200) -> Answer:
    return html(render("vectors.html", table=summary_of(engine, doc), vector_indexes=vector_indexes(doc),
                       form=form, outcome=outcome, error=error), status)


def _search_request(table: str, form: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {"TableName": table, "IndexName": form["index"], "ReturnConsumedCapacity": "TOTAL",
                           "SearchVector": _vector(form["vector"]), "TopK": _top_k(form["top_k"])}
    condition = form["condition"].strip()
    if condition:
        out["SearchConditionExpression"] = condition
    for key, member, label in (("names", "ExpressionAttributeNames", "Expression attribute names"),
                               ("values", "ExpressionAttributeValues", "Expression attribute values")):
        text = form[key].strip()
        if text:
            out[member] = _json_object(text, label)
    return out


def _vector(text: str) -> list[dict[str, str]]:
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        value = None
    if not isinstance(value, list) or not value or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) for x in value):
        raise ConsoleError(400, "the search vector is a JSON list of numbers, like [0.1, 0.2, 0.3]")
    return [{"N": repr(x)} for x in value]


def _top_k(text: str) -> int:
    text = text.strip() or "10"
    if not text.isdigit():
        raise ConsoleError(400, "TopK is a whole number")
    return int(text)


def _json_object(text: str, label: str) -> dict[str, Any]:
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        value = None
    if not isinstance(value, dict):
        raise ConsoleError(400, f"{label} must be a JSON object")
    return value


