"""A table's facts as every page's header shows them, from its DescribeTable document.

Shared by the table page and the pages under it (items, queries, collections,
streams, vectors), which is why it is a module of its own below them all.
"""

from __future__ import annotations

from typing import Any

from ..engine.engine import Engine
from .engine_calls import partition_count, table_of, ttl_status
from .web import table_url


def summary(engine: Engine, doc: dict[str, Any], partition_total: int) -> dict[str, Any]:
    billing = (doc.get("BillingModeSummary") or {}).get("BillingMode", "PROVISIONED")
    throughput = doc.get("ProvisionedThroughput") or {}
    stream = doc.get("StreamSpecification") or {}
    ttl = ttl_status(engine, doc["TableName"])
    return {
        "name": doc["TableName"],
        "url": table_url(doc["TableName"]),
        "status": doc.get("TableStatus"),
        "key_schema": _keys(doc["KeySchema"], doc["AttributeDefinitions"]),
        "indexes": [
            {"kind": kind, "name": ix["IndexName"], "key_schema": _keys(ix["KeySchema"], doc["AttributeDefinitions"]),
             "projection": _projection(ix.get("Projection") or {}), "status": ix.get("IndexStatus")}
            for kind, member in (("GSI", "GlobalSecondaryIndexes"), ("LSI", "LocalSecondaryIndexes"))
            for ix in doc.get(member) or []
        ],
        "billing": billing,
        "read_capacity": throughput.get("ReadCapacityUnits"),
        "write_capacity": throughput.get("WriteCapacityUnits"),
        "item_count": doc.get("ItemCount", 0),
        "size": doc.get("TableSizeBytes", 0),
        "partitions": partition_total,
        "stream": stream.get("StreamViewType") if stream.get("StreamEnabled") else None,
        "ttl": ttl.get("TimeToLiveStatus"),
        "ttl_attribute": ttl.get("AttributeName"),
        #: The Vector search tab is shown only where there is something to search.
        "vector_search": bool(doc.get("VectorIndexes")),
    }


def summary_of(engine: Engine, doc: dict[str, Any]) -> dict[str, Any]:
    """A table's summary for a page header (the nav links and the facts)."""
    return summary(engine, doc, partition_count(table_of(engine, doc["TableName"])))


def _keys(schema: list[dict[str, Any]], definitions: list[dict[str, Any]]) -> list[dict[str, str]]:
    types = {d["AttributeName"]: d["AttributeType"] for d in definitions}
    return [{"name": k["AttributeName"], "role": k["KeyType"], "type": types.get(k["AttributeName"], "?")}
            for k in schema]


def _projection(projection: dict[str, Any]) -> str:
    kind = projection.get("ProjectionType", "ALL")
    extra = projection.get("NonKeyAttributes")
    return f"{kind} ({', '.join(extra)})" if extra else kind


def vector_indexes(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """DescribeTable's vector indexes, as the table page and the search page list them."""
    return [
        {
            "name": ix["IndexName"],
            "attribute": ix["VectorAttribute"]["AttributeName"],
            "dimensions": ix["Dimensions"],
            "distance": ix["DistanceFunction"],
            "schema": [(e["AttributeName"], e["SearchSchemaElementType"]) for e in ix.get("SearchSchema") or []],
            "status": ix.get("IndexStatus"),
            "backfilling": bool(ix.get("Backfilling")),
            "item_count": ix.get("ItemCount", 0),
            "size": ix.get("IndexSizeBytes", 0),
        }
        for ix in doc.get("VectorIndexes") or []
    ]
