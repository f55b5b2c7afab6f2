"""Item collections: every item sharing one partition-key value, as one list in sort-key order.

Read with Query (page after page through the API, so the order is the
service's), then each item's DynamoDB size, the collection's total (against
the item collection limit when the table has a local index, as only then
does DynamoDB enforce it) and the partition the key's hash lands in.
"""

from __future__ import annotations

from typing import Any

from ..engine.capacity.partitions import partition_of, starts_of
from ..engine.engine import Engine
from ..engine.model.keys import partition_hash
from ..engine.model.sizes import item_size
from ..errors import DynamoDBError
from .engine_calls import describe, table_of
from .items_table import item_rows, table_key_names
from .queries import key_attributes, run_pages
from .render import render
from .tables import summary_of
from .web import Answer, ConsoleError, Request, html

MAX_PAGES = 100


def collection_page(engine: Engine, request: Request, name: str) -> Answer:
    table = table_of(engine, name)
    doc = describe(engine, name)
    index = request.arg("index")
    lsis = [ix["IndexName"] for ix in doc.get("LocalSecondaryIndexes") or []]
    gsis = [ix["IndexName"] for ix in doc.get("GlobalSecondaryIndexes") or []]
    context: dict[str, Any] = {
        "table": summary_of(engine, doc), "indexes": lsis + gsis, "index": index, "pk_value": request.arg("pk"),
        "error": None, "collection": None,
    }
    status = 200
    try:
        pk, sk = key_attributes(doc, index)
        context["pk"], context["sk"] = pk, sk
        if "pk" in request.query:
            context["collection"] = _collection(engine, table, doc, index, pk, sk, request.arg("pk"), bool(lsis))
    except ConsoleError as error:
        context["error"], status = error.message, error.status
    except DynamoDBError as error:
        context["error"], status = f"{error.code}: {error.message}", error.status
    return html(render("collection.html", **context), status)


def _collection(
    engine: Engine, table: Any, doc: dict[str, Any], index: str, pk: dict[str, str],
    sk: dict[str, str] | None, value: str, has_lsi: bool,
) -> dict[str, Any]:
    query: dict[str, Any] = {
        "TableName": doc["TableName"],
        "KeyConditionExpression": "#pk = :pk",
        "ExpressionAttributeNames": {"#pk": pk["name"]},
        "ExpressionAttributeValues": {":pk": {pk["type"]: value}},
        "ReturnConsumedCapacity": "TOTAL",
    }
    if index:
        query["IndexName"] = index
    pages = run_pages(engine, "Query", query, MAX_PAGES)
    items = [item for page in pages for item in page["items"]]
    sizes = [item_size(item) for item in items]
    total = sum(sizes)
    is_global = index and index not in [ix["IndexName"] for ix in doc.get("LocalSecondaryIndexes") or []]
    starts = starts_of(table.description, index if is_global else "")
    hashed = int.from_bytes(partition_hash(pk["type"], value), "big")
    limit = engine.items._rules.collection_limit
    return {
        "listing": item_rows(doc["TableName"], table_key_names(doc), items),
        "count": len(items),
        "total": total,
        "units": sum(p["units"] for p in pages),
        "pages": len(pages),
        "complete": pages[-1]["last_key"] is None,
        "partition": partition_of(starts, hashed),
        "partition_count": len(starts),
        "hash": f"{hashed:016x}",
        "limit": limit if has_lsi else None,
        "share": total / limit if has_lsi else None,
        "sort_key": sk["name"] if sk else None,
    }
