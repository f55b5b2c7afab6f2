"""Findings from the write traces: lsi-collection-growth and gsi-read-after-write."""

from __future__ import annotations

import time
from typing import Any

import orjson

from .context import Context, finding, number, percent, share
from .fixes import recreate_with_global_indexes, step
from .shapes import INDEX, OP, REQUESTS

DAY = 86400.0
#: Growth is measured over at least this long (server clock) between a collection's first and last write.
MIN_GROWTH_SECONDS = 1.0


def write_findings(context: Context) -> list[dict[str, Any]]:
    return _collections(context) + _read_after_write(context)


def _date(seconds: float) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(seconds))


def _collections(context: Context) -> list[dict[str, Any]]:
    doc = context.doc
    local = [ix["IndexName"] for ix in doc.get("LocalSecondaryIndexes") or []]
    tracked = dict(context.advisor.traces.collections.get(context.table.table_id) or {})
    if not local or not tracked:
        return []
    settings = context.settings
    limit = float(context.advisor.collection_limit)
    now = context.engine.clock.now()
    out = []
    for key, (first_at, first_size, last_at, last_size) in sorted(tracked.items(), key=lambda kv: -kv[1][3]):
        elapsed = last_at - first_at
        rate = (last_size - first_size) / elapsed if elapsed >= MIN_GROWTH_SECONDS else 0.0
        days_left = (limit - last_size) / rate / DAY if rate > 0 else None
        near = last_size >= settings.lsi_collection_share * limit
        soon = days_left is not None and days_left <= settings.lsi_horizon_days
        if not (near or soon):
            continue
        evidence: dict[str, Any] = {
            "collection": orjson.loads(key), "size_bytes": int(last_size), "limit_bytes": int(limit),
            "share_of_limit": share(last_size, limit), "growth_bytes_per_day": round(rate * DAY),
            "observed_days": round(elapsed / DAY, 3), "local_indexes": local,
            "days_left": None if days_left is None else round(days_left, 1),
            "projected_refusal": None if days_left is None else _date(now + max(0.0, days_left) * DAY),
        }
        shown = next(iter(evidence["collection"].values()), key) if isinstance(evidence["collection"], dict) else key
        lesson = (f"A table with a local index caps every item collection (one partition-key value's items and "
                  f"their local index entries) at {number(limit)} bytes: past it, writes to that key fail with "
                  f"ItemCollectionSizeLimitExceededException. {doc['KeySchema'][0]['AttributeName']} = {shown} "
                  f"holds {number(last_size)} bytes ({percent(share(last_size, limit))} of the cap)"
                  + (f" and grows {number(round(rate * DAY))} bytes a day: refused around "
                     f"{evidence['projected_refusal']}." if days_left is not None else "."))
        text = ("Use a global secondary index instead of the local one (no size cap; eventually consistent "
                "reads only): local indexes exist only from CreateTable, so that is a new table and a copy of "
                "the items. Or keep collections bounded: bucket the partition key by time (VEHICLE#17#2026-09) "
                "or expire old items with TTL.")
        inputs = [step("CreateTable", recreate_with_global_indexes(doc),
                       "the same table with its local indexes as global ones")]
        out.append(finding("lsi-collection-growth", doc["TableName"], local[0] if len(local) == 1 else None,
                           evidence, lesson, text, inputs))
    return out


def _read_after_write(context: Context) -> list[dict[str, Any]]:
    advisor, doc = context.advisor, context.doc
    out = []
    for (table_id, index), (count, delay) in sorted(dict(advisor.traces.read_after_write).items()):
        if table_id != context.table.table_id or count < context.settings.min_requests:
            continue
        queries = sum(c[REQUESTS] for s, c, _ in context.shapes if s[OP] == "Query" and s[INDEX] == index)
        lag = advisor.gsi_lag_ms
        evidence = {
            "queries_after_write": int(count), "queries_on_index": int(queries),
            "share_of_queries": share(count, queries), "smallest_delay_ms": round(delay * 1000.0, 1),
            "window_ms": context.settings.gsi_read_window_ms, "gsi_lag_ms": lag,
            "could_miss_with_lag": lag > 0 and delay * 1000.0 < lag,
        }
        lesson = ("A global secondary index is updated asynchronously: a Query on it right after a write may not "
                  "see the write (DynamoDB usually propagates within a second, with no bound). "
                  f"{number(count)} Queries on {index} read a range written {number(round(delay * 1000.0, 1))} ms "
                  "before.")
        table = doc["TableName"]
        key = {k["AttributeName"]: {"S": "<the key just written>"} for k in doc["KeySchema"]}
        text = ("Read your own write from the table (GetItem, or Query with ConsistentRead on the table's key), or "
                "use the write's own answer (ReturnValues=ALL_NEW on UpdateItem); keep the index for reads that "
                "tolerate lag. To see the bug in tests, serve with --gsi-lag-ms (reads within the lag miss the "
                "write).")
        inputs = [step("GetItem", {"TableName": table, "Key": key, "ConsistentRead": True},
                       "reads the item just written, strongly consistent")]
        out.append(finding("gsi-read-after-write", table, index, evidence, lesson, text, inputs))
    return out
