"""The Query and Scan page: a form, the results page by page, and what each page cost.

Each page runs through the API's own Query/Scan with ReturnConsumedCapacity,
so its read units are the real ones; beside them the page shows how many
items were read (ScannedCount) against how many came back, and the bytes read
before the filter. A Scan whose filter pins a partition key is shown beside
the Query that serves the same access pattern, run the same way.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlencode

import orjson

from ..engine.engine import Engine
from ..errors import DynamoDBError
from .codegen import boto3_code, cli_command, raw_json
from .engine_calls import describe, read_pages
from .items_table import item_rows, table_key_names
from .render import render
from .summaries import summary_of
from .web import Answer, ConsoleError, Request, html

SORT_OPERATORS = ("", "=", "<", "<=", ">", ">=", "BETWEEN", "begins_with")
MAX_PAGES = 20
_PK, _SK = "#console_pk", "#console_sk"


def key_attributes(doc: dict[str, Any], index: str) -> tuple[dict[str, str], dict[str, str] | None]:
    """({name, type}) of the partition key and the sort key (or None) of the table or one of its indexes."""
    types = {d["AttributeName"]: d["AttributeType"] for d in doc["AttributeDefinitions"]}
    schema = doc["KeySchema"]
    if index:
        for member in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes"):
            for ix in doc.get(member) or []:
                if ix["IndexName"] == index:
                    schema = ix["KeySchema"]
                    break
            else:
                continue
            break
        else:
            raise ConsoleError(400, f"table {doc['TableName']} has no index named {index}")
    hashes = [k for k in schema if k["KeyType"] == "HASH"]
    ranges = [k for k in schema if k["KeyType"] == "RANGE"]
    pk = {"name": hashes[0]["AttributeName"], "type": types.get(hashes[0]["AttributeName"], "S")}
    sk = {"name": ranges[0]["AttributeName"], "type": types.get(ranges[0]["AttributeName"], "S")} if ranges else None
    return pk, sk


def typed(kind: str, text: str) -> dict[str, str]:
    return {kind: text}


def _json_field(request: Request, name: str, label: str) -> dict[str, Any]:
    text = request.arg(name).strip()
    if not text:
        return {}
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        raise ConsoleError(400, f"{label} must be a JSON object") from None
    if not isinstance(value, dict):
        raise ConsoleError(400, f"{label} must be a JSON object")
    return value


def build_request(doc: dict[str, Any], request: Request) -> tuple[str, dict[str, Any]]:
    """The DynamoDB request the form describes: ('Query' or 'Scan', request body)."""
    operation = "Scan" if request.arg("op") == "Scan" else "Query"
    index = request.arg("index")
    out: dict[str, Any] = {"TableName": doc["TableName"]}
    if index:
        out["IndexName"] = index
    names = _json_field(request, "names", "Expression attribute names")
    values = _json_field(request, "values", "Expression attribute values")
    if operation == "Query":
        pk, sk = key_attributes(doc, index)
        names[_PK] = pk["name"]
        values[":console_pk"] = typed(pk["type"], request.arg("pk"))
        condition = f"{_PK} = :console_pk"
        operator = request.arg("sk_op")
        if operator not in SORT_OPERATORS:
            raise ConsoleError(400, "unknown sort-key operator")
        if operator:
            if sk is None:
                raise ConsoleError(400, "this table or index has no sort key")
            names[_SK] = sk["name"]
            values[":console_sk"] = typed(sk["type"], request.arg("sk"))
            if operator == "BETWEEN":
                values[":console_sk2"] = typed(sk["type"], request.arg("sk2"))
                condition += f" AND {_SK} BETWEEN :console_sk AND :console_sk2"
            elif operator == "begins_with":
                condition += f" AND begins_with({_SK}, :console_sk)"
            else:
                condition += f" AND {_SK} {operator} :console_sk"
        out["KeyConditionExpression"] = condition
        if request.arg("forward", "1") == "0":
            out["ScanIndexForward"] = False
    for field_name, member in (("filter", "FilterExpression"), ("projection", "ProjectionExpression")):
        text = request.arg(field_name).strip()
        if text:
            out[member] = text
    if names:
        out["ExpressionAttributeNames"] = names
    if values:
        out["ExpressionAttributeValues"] = values
    limit = request.arg("limit").strip()
    if limit:
        if not limit.isdigit():
            raise ConsoleError(400, "Limit is a whole number")
        out["Limit"] = int(limit)
    if request.arg("consistent"):
        out["ConsistentRead"] = True
    start = _json_field(request, "start", "The start key")
    if start:
        out["ExclusiveStartKey"] = start
    out["ReturnConsumedCapacity"] = "TOTAL"
    return operation, out


def run_pages(engine: Engine, operation: str, body: dict[str, Any], count: int) -> list[dict[str, Any]]:
    """Up to `count` pages, each with its items and its cost."""
    pages = []
    body = dict(body)
    for number in range(1, count + 1):
        answer, page = read_pages(engine, operation, dict(body))
        pages.append({
            "number": number,
            "items": answer.get("Items", []),
            "count": answer["Count"],
            "scanned": answer["ScannedCount"],
            "bytes_read": page.bytes_read,
            "units": answer["ConsumedCapacity"]["CapacityUnits"],
            "last_key": answer.get("LastEvaluatedKey"),
            "start_key": body.get("ExclusiveStartKey"),
        })
        last = answer.get("LastEvaluatedKey")
        if last is None:
            break
        body["ExclusiveStartKey"] = last
    return pages


def totals(pages: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "count": sum(p["count"] for p in pages),
        "scanned": sum(p["scanned"] for p in pages),
        "bytes_read": sum(p["bytes_read"] for p in pages),
        "units": sum(p["units"] for p in pages),
    }


_TERM = re.compile(r"\s*(#?[A-Za-z0-9_]+)\s*=\s*(:[A-Za-z0-9_]+)\s*")


def equality_terms(expression: str) -> list[tuple[str, str, str]] | None:
    """The `name = :value` terms of a filter made only of such terms joined by AND, else None."""
    if re.search(r"[()]|\bOR\b|\bNOT\b", expression, re.IGNORECASE):
        return None
    out = []
    for part in re.split(r"\bAND\b", expression, flags=re.IGNORECASE):
        match = _TERM.fullmatch(part)
        if match is None:
            return None
        out.append((match.group(1), match.group(2), part.strip()))
    return out


def suggested_query(doc: dict[str, Any], scan: dict[str, Any]) -> dict[str, Any] | None:
    """The Query serving a Scan whose filter fixes the partition key of the table or of an index."""
    expression = scan.get("FilterExpression")
    if not expression or "Segment" in scan:
        return None
    terms = equality_terms(expression)
    if not terms:
        return None
    names = scan.get("ExpressionAttributeNames") or {}
    values = scan.get("ExpressionAttributeValues") or {}
    candidates = [""] + [ix["IndexName"] for m in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes")
                         for ix in doc.get(m) or []]
    for index in candidates:
        pk, sk = key_attributes(doc, index)
        resolved = [(names.get(n, n), v, text) for n, v, text in terms]
        hits = [t for t in resolved if t[0] == pk["name"] and pk["type"] in (values.get(t[1]) or {})]
        if not hits:
            continue
        key_terms = [hits[0][2]]
        sort_hits = [t for t in resolved if sk is not None and t[0] == sk["name"] and sk["type"] in (values.get(t[1]) or {})]
        if sort_hits:
            key_terms.append(sort_hits[0][2])
        rest = [t[2] for t in resolved if t[2] not in key_terms]
        query: dict[str, Any] = {"TableName": scan["TableName"]}
        if index:
            query["IndexName"] = index
        query["KeyConditionExpression"] = " AND ".join(key_terms)
        if rest:
            query["FilterExpression"] = " AND ".join(rest)
        for member in ("ProjectionExpression", "ExpressionAttributeNames", "ExpressionAttributeValues", "ConsistentRead"):
            if member in scan:
                query[member] = scan[member]
        if index and "ConsistentRead" in query and index not in [
            ix["IndexName"] for ix in doc.get("LocalSecondaryIndexes") or []
        ]:
            del query["ConsistentRead"]
        query["ReturnConsumedCapacity"] = "TOTAL"
        return query
    return None


def query_page(engine: Engine, request: Request, name: str) -> Answer:
    doc = describe(engine, name)
    summary = summary_of(engine, doc)
    indexes = [ix["IndexName"] for m in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes") for ix in doc.get(m) or []]
    context: dict[str, Any] = {
        "table": summary, "indexes": indexes, "operators": SORT_OPERATORS, "args": request,
        "pages": None, "error": None, "code": None, "suggestion": None, "next_url": None,
    }
    status = 200
    if request.arg("run"):
        try:
            operation, body = build_request(doc, request)
            count = request.arg("pages", "1")
            count_n = int(count) if count.isdigit() and 1 <= int(count) <= MAX_PAGES else 1
            pages = run_pages(engine, operation, body, count_n)
            context["pages"] = pages
            context["listings"] = [item_rows(name, table_key_names(doc), p["items"]) for p in pages]
            last = pages[-1]["last_key"]
            if last is not None:
                args = {k: v for k, v in request.query.items() if k != "start"}
                args["start"] = [orjson.dumps(last).decode()]
                context["next_url"] = "?" + urlencode(args, doseq=True)
            context["total"] = totals(pages)
            context["operation"] = operation
            endpoint = "http://" + request.headers.get(b"host", b"localhost:8000").decode("latin-1")
            context["code"] = _code(operation, body, endpoint, engine.region)
            if operation == "Scan":
                query = suggested_query(doc, body)
                if query is not None:
                    qpages = run_pages(engine, "Query", query, count_n)
                    context["suggestion"] = {"pages": qpages, "total": totals(qpages),
                                             "code": _code("Query", query, endpoint, engine.region)}
        except ConsoleError as error:
            context["error"], status = error.message, error.status
        except DynamoDBError as error:
            context["error"], status = f"{error.code}: {error.message}", error.status
    return html(render("query.html", **context), status)


def _code(operation: str, body: dict[str, Any], endpoint: str, region: str) -> dict[str, str]:
    return {
        "boto3": boto3_code(operation, body, endpoint, region),
        "cli": cli_command(operation, body, endpoint, region),
        "json": raw_json(operation, body),
    }
