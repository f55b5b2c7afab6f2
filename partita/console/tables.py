"""The Tables page (list, create, delete) and a table's page (partition strips, hot keys)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import orjson

from ..engine.engine import Engine
from ..errors import DynamoDBError
from .advice import advice_counts
from .engine_calls import (
    all_table_names,
    call,
    describe,
    hottest,
    partition_count,
    partitions,
    table_of,
)
from .heat import strip
from .items_table import item_rows, table_key_names
from .queries import run_pages
from .render import render
from .summaries import summary, vector_indexes
from .web import Answer, ConsoleError, Request, html, json_answer, redirect, table_url

KEY_TYPES = ("S", "N", "B")
PROJECTIONS = ("ALL", "KEYS_ONLY", "INCLUDE")
STREAM_VIEWS = ("", "NEW_AND_OLD_IMAGES", "NEW_IMAGE", "OLD_IMAGE", "KEYS_ONLY")
#: Items a table's page shows: the first page of a Scan of this many, as the AWS console does.
FIRST_PAGE = 50


def tables_page(engine: Engine, request: Request, _: str, error: str | None = None, status: int = 200) -> Answer:
    rows = []
    for name in all_table_names(engine):
        table = engine.catalog.get(name)
        if table is None:  # deleted between the list and now
            continue
        doc = call(engine, "DescribeTable", {"TableName": name})["Table"]
        rows.append(summary(engine, doc, partition_count(table)))
    advised = advice_counts(engine) if rows else {}
    for row in rows:
        row["findings"] = advised.get(row["name"], 0)
    return html(render(
        "tables.html", tables=rows, error=error, form=request.form,
        key_types=KEY_TYPES, projections=PROJECTIONS, stream_views=STREAM_VIEWS,
    ), status)


def create_table(engine: Engine, request: Request, _: str) -> Answer:
    """CreateTable from the form; a refusal is shown on the form, with DynamoDB's message."""
    try:
        spec = _create_request(request)
        call(engine, "CreateTable", spec)
    except ConsoleError as error:
        return tables_page(engine, request, "", error.message, 400)
    except Exception as error:  # DynamoDB's refusal, shown with its exact message
        from ..errors import DynamoDBError

        if not isinstance(error, DynamoDBError):
            raise
        return tables_page(engine, request, "", f"{error.code}: {error.message}", error.status)
    return redirect(table_url(spec["TableName"]))


def _create_request(request: Request) -> dict[str, Any]:
    name = request.field("name").strip()
    if not name:
        raise ConsoleError(400, "a table needs a name")
    definitions: dict[str, str] = {}

    def key(prefix: str) -> list[dict[str, str]]:
        schema = []
        for role, suffix in (("HASH", "hash"), ("RANGE", "range")):
            attr = request.field(f"{prefix}{suffix}").strip()
            if not attr:
                continue
            kind = request.field(f"{prefix}{suffix}_type", "S")
            if kind not in KEY_TYPES:
                raise ConsoleError(400, "key attributes are of type S, N or B")
            if definitions.get(attr, kind) != kind:
                raise ConsoleError(400, f"attribute {attr} is given two types")
            definitions[attr] = kind
            schema.append({"AttributeName": attr, "KeyType": role})
        return schema

    spec: dict[str, Any] = {"TableName": name, "KeySchema": key("")}
    if not spec["KeySchema"] or spec["KeySchema"][0]["KeyType"] != "HASH":
        raise ConsoleError(400, "a table needs a partition key")
    billing = request.field("billing", "PAY_PER_REQUEST")
    spec["BillingMode"] = billing
    throughput = None
    if billing == "PROVISIONED":
        throughput = {"ReadCapacityUnits": _whole(request.field("rcu", "5")),
                      "WriteCapacityUnits": _whole(request.field("wcu", "5"))}
        spec["ProvisionedThroughput"] = throughput
    gsi_name = request.field("gsi_name").strip()
    if gsi_name:
        gsi: dict[str, Any] = {"IndexName": gsi_name, "KeySchema": key("gsi_"),
                               "Projection": _projection_spec(request, "gsi_")}
        if throughput is not None:
            gsi["ProvisionedThroughput"] = dict(throughput)
        spec["GlobalSecondaryIndexes"] = [gsi]
    lsi_name = request.field("lsi_name").strip()
    if lsi_name:
        sort = request.field("lsi_range").strip()
        kind = request.field("lsi_range_type", "S")
        if kind not in KEY_TYPES or definitions.get(sort, kind) != kind:
            raise ConsoleError(400, "the local index's sort key needs one type: S, N or B")
        definitions[sort] = kind
        spec["LocalSecondaryIndexes"] = [{
            "IndexName": lsi_name,
            "KeySchema": [spec["KeySchema"][0], {"AttributeName": sort, "KeyType": "RANGE"}],
            "Projection": _projection_spec(request, "lsi_"),
        }]
    view = request.field("stream")
    if view:
        if view not in STREAM_VIEWS:
            raise ConsoleError(400, "unknown stream view type")
        spec["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": view}
    spec["AttributeDefinitions"] = [{"AttributeName": a, "AttributeType": t} for a, t in definitions.items()]
    return spec


def _projection_spec(request: Request, prefix: str) -> dict[str, Any]:
    kind = request.field(prefix + "projection", "ALL")
    out: dict[str, Any] = {"ProjectionType": kind}
    if kind == "INCLUDE":
        out["NonKeyAttributes"] = [a.strip() for a in request.field(prefix + "include").split(",") if a.strip()]
    return out


def _whole(text: str) -> int:
    if not text.strip().isdigit():
        raise ConsoleError(400, "capacity units are whole numbers")
    return int(text)


def delete_table(engine: Engine, request: Request, name: str) -> Answer:
    table_of(engine, name)
    call(engine, "DeleteTable", {"TableName": name})
    return redirect("/console")


def table_page(engine: Engine, request: Request, name: str) -> Answer:
    table = table_of(engine, name)
    doc = describe(engine, name)
    facts = summary(engine, doc, partition_count(table))
    maps = [{"index": None, "label": "Table", "strip": strip(partitions(engine, table)),
             "hot": hottest(engine, table)}]
    for ix in doc.get("GlobalSecondaryIndexes") or []:
        found = partitions(engine, table, ix["IndexName"])
        maps.append({"index": ix["IndexName"], "label": f"GSI {ix['IndexName']}", "strip": strip(found),
                     "hot": hottest(engine, table, ix["IndexName"])})
    return html(render("table.html", table=facts, maps=maps, hash_names=_hash_names(doc),
                       vector_indexes=vector_indexes(doc), form={}, scan=_first_page(engine, doc)))


def _first_page(engine: Engine, doc: dict[str, Any]) -> dict[str, Any]:
    """The table's first items: one Scan page through the API (its read units are real, and shown).

    A user who may not Scan the table sees why instead of the items.
    """
    name = doc["TableName"]
    body = {"TableName": name, "Limit": FIRST_PAGE, "ReturnConsumedCapacity": "TOTAL"}
    try:
        (page,) = run_pages(engine, "Scan", body, 1)
    except DynamoDBError as error:
        return {"error": f"{error.code}: {error.message}"}
    more = None
    if page["last_key"] is not None:
        more = table_url(name, "query") + "?" + urlencode(
            {"run": "1", "op": "Scan", "limit": str(FIRST_PAGE), "start": orjson.dumps(page["last_key"]).decode()})
    return {"error": None, "listing": item_rows(name, table_key_names(doc), page["items"]), "count": page["count"],
            "units": page["units"], "more": more, "scan_url": table_url(name, "query") + "?op=Scan"}


def partitions_json(engine: Engine, request: Request, name: str) -> Answer:
    """The partition map the strip redraws live: `/partita/v1/tables/{name}/partitions`'s JSON, but
    behind the console's sign-in and the user's DescribeTable permission (a browser cannot sign
    the admin API's request under `--auth`)."""
    describe(engine, name)
    return json_answer(orjson.dumps(partitions(engine, table_of(engine, name), request.arg("index") or None)))


def hot_keys_json(engine: Engine, request: Request, name: str) -> Answer:
    describe(engine, name)
    return json_answer(orjson.dumps(hottest(engine, table_of(engine, name), request.arg("index") or None)))


def _hash_names(doc: dict[str, Any]) -> dict[str, str]:
    """Partition-key attribute of the table ('') and of each index, for links to collections."""
    out = {"": doc["KeySchema"][0]["AttributeName"]}
    for member in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes"):
        for ix in doc.get(member) or []:
            out[ix["IndexName"]] = ix["KeySchema"][0]["AttributeName"]
    return out
