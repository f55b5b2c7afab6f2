"""Findings from the meter's hot keys: hot-key and low-cardinality-key, per table and per GSI.

The meter ranks partition keys by the units they consumed (totals since the
server started, and the sliding last minute) and by throttles, on every
server (issue 28: metering is always on). On a table without Contributor
Insights the ranking is a sample by units (one request per 8 units,
carrying 8), so a share is an estimate whose error shrinks as units grow;
the thresholds' minimum units keep a handful of test writes from raising
either finding.
"""

from __future__ import annotations

import math
import re
from typing import Any

from ..capacity.introspect import hot_keys
from ..capacity.partitions import PARTITION_READ_UNITS, PARTITION_WRITE_UNITS, TABLE_MAP
from .context import Context, finding, number, percent, share
from .fixes import create_gsi, index_name, projection, recreate_with_global_indexes, step

#: Partition keys looked at per table or index (the meter's ranking, hottest first).
TOP = 100
_DATE = re.compile(r"\d{4}-\d{2}(-\d{2})?")
_STATUS_WORDS = {"ACTIVE", "INACTIVE", "PENDING", "OPEN", "CLOSED", "DONE", "NEW", "DELETED", "ENABLED", "DISABLED"}


def _units(entry: dict[str, Any]) -> float:
    return float(entry["read_units_total"] + entry["write_units_total"])


def _value(key: Any) -> tuple[str, str, Any] | None:
    """(attribute, type, value) of a one-attribute partition key as the ranking holds it."""
    if not isinstance(key, dict) or len(key) != 1:
        return None
    name, typed = next(iter(key.items()))
    if not isinstance(typed, dict) or len(typed) != 1:
        return None
    kind, value = next(iter(typed.items()))
    return name, kind, value


def _looks_like(attribute: str, values: list[Any]) -> str | None:
    """What a few key values (or the key attribute's name) say they are: a status, a date, a boolean."""
    texts = [str(v).upper() for v in values]
    name = attribute.lower()
    if all(t in ("TRUE", "FALSE", "0", "1", "Y", "N", "YES", "NO") for t in texts) or name.startswith("is_") \
            or name in ("active", "enabled", "deleted", "flag"):
        return "boolean"
    if all(_DATE.search(t) for t in texts) or name in ("date", "day", "month", "created_date"):
        return "date"
    if all("STATUS" in t or t.rpartition("#")[2] in _STATUS_WORDS for t in texts) \
            or name in ("status", "state", "type", "kind", "category"):
        return "status"
    return None


def key_findings(context: Context) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    engine, table = context.engine, context.table
    for res_name, res in engine.meter.resources(table).items():
        index = None if res_name == TABLE_MAP else res_name
        ranking = hot_keys(engine.meter, table, res, TOP)
        keys = [k for k in ranking["partition_keys"]["by_consumed_units"] if _units(k) > 0 or
                k["throttled_requests_total"] > 0]
        throttled = {k["partition_hash"]: k for k in ranking["partition_keys"]["by_throttles"]}
        for entry in throttled.values():
            if all(k["partition_hash"] != entry["partition_hash"] for k in keys):
                keys.append(entry)
        keys.sort(key=_units, reverse=True)
        total = context.units(index, "read") + context.units(index, "write")
        out += _hot(context, index, keys, total)
        low = _low_cardinality(context, index, keys, total)
        if low is not None:
            out.append(low)
    return out


def _hot(context: Context, index: str | None, keys: list[dict[str, Any]], total: float) -> list[dict[str, Any]]:
    settings = context.settings
    out = []
    for entry in keys:
        read_rate = entry["read_units_per_minute"] / 60.0
        write_rate = entry["write_units_per_minute"] / 60.0
        near = max(read_rate / PARTITION_READ_UNITS, write_rate / PARTITION_WRITE_UNITS)
        part = share(_units(entry), total)
        throttles = int(entry["throttled_requests_total"])
        standing_out = (part >= settings.hot_key_share and len(keys) >= settings.hot_key_min_keys
                        and total >= settings.hot_key_min_units)
        if not (throttles > 0 or near >= settings.hot_key_ceiling_share or standing_out):
            continue
        value = _value(entry["key"])
        shown = entry["key"] if value is None else value[2]
        writes = write_rate / PARTITION_WRITE_UNITS >= read_rate / PARTITION_READ_UNITS
        ceiling = PARTITION_WRITE_UNITS if writes else PARTITION_READ_UNITS
        rate = write_rate if writes else read_rate
        suffixes = max(2, math.ceil(rate / (0.5 * ceiling))) if rate else 10
        evidence = {
            "key": entry["key"], "share_of_units": part, "units_total": _units(entry),
            "table_units_total": total, "partition_keys_seen": len(keys),
            "read_units_per_second": round(read_rate, 2), "write_units_per_second": round(write_rate, 2),
            "share_of_partition_ceiling": round(near, 4), "throttled_requests": throttles,
        }
        lesson = (f"One partition-key value is one partition, which serves at most {PARTITION_READ_UNITS:,} reads "
                  f"and {PARTITION_WRITE_UNITS:,} writes a second however large the table: {shown} took "
                  f"{percent(part)} of the units among {len(keys)} keys, {number(round(rate, 1))} "
                  f"{'write' if writes else 'read'} units a second over the last minute ({percent(near)} of that "
                  "ceiling)" + (f", and was throttled {throttles} times." if throttles else
                                "." if near >= settings.hot_key_ceiling_share else
                                ": as the traffic grows, this key meets the ceiling first."))
        text = (f"Shard the key: write to {suffixes} keys, {shown}#0 to {shown}#{suffixes - 1} (a random suffix, or "
                f"one computed from the item's id so that a reader can find it), so the load spreads over up to "
                f"{suffixes} partitions. Reading every item of {shown} then takes {suffixes} Queries, one per "
                "suffix, merged by the application: more requests, the same units. Cache hot reads instead when "
                "the heat is reads of one item.")
        out.append(finding("hot-key", context.doc["TableName"], index, evidence, lesson, text, []))
    return out


def _low_cardinality(context: Context, index: str | None, keys: list[dict[str, Any]],
                     total: float) -> dict[str, Any] | None:
    settings = context.settings
    if total < settings.low_cardinality_min_units or not keys:
        return None
    carried, top = 0.0, []
    for entry in keys:
        if carried >= settings.low_cardinality_share * total:
            break
        carried += _units(entry)
        top.append(entry)
    if carried < settings.low_cardinality_share * total or len(top) > settings.low_cardinality_keys:
        return None
    values = [_value(k["key"]) for k in top]
    shown = [v[2] if v is not None else k["key"] for v, k in zip(values, top, strict=True)]
    attribute = values[0][0] if values[0] is not None else "the partition key"
    looks = _looks_like(attribute, shown)
    if looks is None and not settings.low_cardinality_any_values:
        return None
    evidence = {
        "partition_key": attribute,
        "values": [{"key": k["key"], "share_of_units": share(_units(k), total)} for k in top],
        "share_of_units": share(carried, total), "units_total": total, "values_seen": len(keys),
        "looks_like": looks,
    }
    lesson = (f"A partition key with few values can use only as many partitions as it has values, whatever the "
              "table's size: "
              f"{len(top)} value{'s' if len(top) > 1 else ''} of {attribute} ({', '.join(map(str, shown))}) "
              f"carried {percent(share(carried, total))} of {number(round(total, 1))} units"
              + (f" — a {looks} is a property of an item, not an identity." if looks else "."))
    doc = context.doc
    table_keys = [k["AttributeName"] for k in doc["KeySchema"]]
    types = {d["AttributeName"]: d["AttributeType"] for d in doc["AttributeDefinitions"]}
    id_key = (table_keys[0], types.get(table_keys[0], "S"))
    if index is not None:  # a GSI keyed on a low-cardinality attribute: key it on a sharded copy
        label = attribute
        name = index_name(doc, f"{label}_shard")
        text = (f"Key the index on a sharded copy of {attribute}: write {label}_shard = <{attribute}>#<n> with n "
                f"from 0 to N-1 (say 10), so each value spreads over N partitions, and read one value with N "
                f"Queries; the item's id as the index's sort key keeps each shard's entries apart. Then drop "
                f"{index}.")
        inputs = [step("UpdateTable", create_gsi(doc, name, (f"{label}_shard", "S"), id_key, projection([], set())),
                       f"adds the index {name}"),
                  step("UpdateTable", {"TableName": doc["TableName"],
                                       "GlobalSecondaryIndexUpdates": [{"Delete": {"IndexName": index}}]},
                       f"drops {index} once readers use {name}")]
    else:  # the table's own key: a new table keyed by the entity's id, the low-cardinality value an attribute
        tag = str(shown[0]).partition("#")[0] if "#" in str(shown[0]) else attribute
        label = tag.lower() or attribute
        new = recreate_with_global_indexes(doc)
        new["AttributeDefinitions"] = [*new["AttributeDefinitions"],
                                       {"AttributeName": f"{label}_shard", "AttributeType": "S"}]
        new.setdefault("GlobalSecondaryIndexes", []).append({
            "IndexName": index_name(doc, f"{label}_shard"),
            "KeySchema": [{"AttributeName": f"{label}_shard", "KeyType": "HASH"},
                          {"AttributeName": table_keys[0], "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"}})
        if "ProvisionedThroughput" in new:
            new["GlobalSecondaryIndexes"][-1]["ProvisionedThroughput"] = new["ProvisionedThroughput"]
        text = (f"Key the table by what has many values (the entity's own id) "
                f"and keep the {label} ({', '.join(map(str, shown))}) as an attribute. To list the items of one "
                f"{label}, index a sharded copy of it ({label}_shard = {shown[0]}#<n>, n from 0 to N-1) and read "
                "one value with N Queries. A table's key cannot change: this is a new table and a copy of the "
                "items.")
        inputs = [step("CreateTable", new, f"a table keyed by id, with the sharded {label} index")]
    return finding("low-cardinality-key", doc["TableName"], index, evidence, lesson, text, inputs)
