"""Streams and TTL: a table's latest stream records, and the items expiring next on the server clock.

Stream records are read with the Streams API (DescribeStream, GetShardIterator,
GetRecords) as a consumer reads them. The items expiring next come from the
engine's expiry index (the one the TTL duty reads), so the page costs a short
range read however large the table; the countdown is against the server
clock, which `partita clock advance` moves.
"""

from __future__ import annotations

from typing import Any

import orjson

from ..engine.engine import Engine
from ..engine.time.ttl_index import row_of, table_range
from .engine_calls import describe, may, stream_call, table_of, ttl_status
from .items import item_url
from .items_table import table_key_names
from .render import render
from .summaries import summary_of
from .values import describe_value
from .web import Answer, Request, html

LATEST = 25
EXPIRING = 25
_READ_ROUNDS = 200


def streams_page(engine: Engine, request: Request, name: str) -> Answer:
    table = table_of(engine, name)
    doc = describe(engine, name)
    context = {
        "table": summary_of(engine, doc),
        "records": _latest_records(engine, doc),
        "stream_arn": doc.get("LatestStreamArn") if (doc.get("StreamSpecification") or {}).get("StreamEnabled") else None,
        "ttl": ttl_status(engine, name),
        "expiring": _expiring(engine, table, doc),
        "now": engine.clock.now(),
    }
    template = "streams_live.html" if request.arg("fragment") else "streams.html"
    return html(render(template, **context))


def _latest_records(engine: Engine, doc: dict[str, Any]) -> list[dict[str, Any]]:
    if not (doc.get("StreamSpecification") or {}).get("StreamEnabled"):
        return []
    arn = doc["LatestStreamArn"]
    shards: list[dict[str, Any]] = []
    request: dict[str, Any] = {"StreamArn": arn}
    while True:
        described = stream_call(engine, "DescribeStream", request)["StreamDescription"]
        shards += described["Shards"]
        last = described.get("LastEvaluatedShardId")
        if last is None:
            break
        request = {"StreamArn": arn, "ExclusiveStartShardId": last}
    records: list[dict[str, Any]] = []
    for shard in shards:
        iterator = stream_call(engine, "GetShardIterator", {
            "StreamArn": arn, "ShardId": shard["ShardId"], "ShardIteratorType": "TRIM_HORIZON",
        }).get("ShardIterator")
        for _ in range(_READ_ROUNDS):
            if iterator is None:
                break
            got = stream_call(engine, "GetRecords", {"ShardIterator": iterator, "Limit": 1000})
            # The API hands records over pre-serialised (orjson fragments): decode them as a client would.
            records += orjson.loads(orjson.dumps(got["Records"]))
            records = records[-LATEST * 4:]
            if not got["Records"]:
                break
            iterator = got.get("NextShardIterator")
    records.sort(key=lambda r: (r["dynamodb"].get("ApproximateCreationDateTime", 0), r["dynamodb"]["SequenceNumber"]))
    out = []
    name = doc["TableName"]
    for record in reversed(records[-LATEST:]):
        change = record["dynamodb"]
        keys = change.get("Keys", {})
        # `key_text`, not `keys`: a template's `r.keys` would be the dict's method.
        out.append({
            "event": record["eventName"],
            "sequence": change["SequenceNumber"],
            "time": change.get("ApproximateCreationDateTime"),
            "key_text": ", ".join(f"{k}={describe_value(v)}" for k, v in keys.items()),
            "url": item_url(name, keys) if keys else None,
            "new": describe_value({"M": change["NewImage"]}, 400) if "NewImage" in change else None,
            "old": describe_value({"M": change["OldImage"]}, 400) if "OldImage" in change else None,
            "ddb": orjson.dumps({k: change[k] for k in ("Keys", "NewImage", "OldImage") if k in change},
                                option=orjson.OPT_INDENT_2).decode(),
            "size": change.get("SizeBytes"),
            "ttl_delete": (record.get("userIdentity") or {}).get("PrincipalId") == "dynamodb.amazonaws.com",
        })
    return out


def _expiring(engine: Engine, table: Any, doc: dict[str, Any]) -> list[dict[str, Any]]:
    ttl = table.description.get("_TimeToLive") or {}
    if ttl.get("status") != "ENABLED" or not may("Scan", {"TableName": doc["TableName"]}):
        return []  # read from the TTL index, past the API: shown to whoever may Scan the table
    now = engine.clock.now()
    attribute = ttl["attribute"]
    out = []
    key_names = table_key_names(doc)
    for index_key, _ in engine.store.range(*table_range(table.table_id), limit=EXPIRING):
        expiry, row = row_of(index_key)
        raw = engine.store.get(row)
        if raw is None:
            continue
        item = orjson.loads(raw)
        key = {k: item[k] for k in key_names if k in item}
        out.append({
            "key": ", ".join(f"{k}={describe_value(v)}" for k, v in key.items()),
            "url": item_url(doc["TableName"], key),
            "attribute": attribute,
            "expiry": expiry,
            "value": describe_value(item[attribute]) if attribute in item else "",
            "epoch": item[attribute]["N"] if "N" in item.get(attribute, {}) else None,
            "remaining": expiry - now,
        })
    return out
