"""Findings from the read shapes: scan-filter, unbounded-collection, projection-after-read."""

from __future__ import annotations

from typing import Any

import orjson

from ..model.keys import prefix_successor
from ..model.sizes import item_size
from .context import Context, finding, number, percent, share, these
from .fixes import create_gsi, index_name, projection, query_input, step
from .shapes import (
    BYTES,
    FILTER,
    INDEX,
    LIMITED,
    LOGICAL,
    OP,
    PAGES,
    PK_TAG,
    PROJECTION,
    REQUESTS,
    RETURNED,
    SCANNED,
    SK_TAG,
    SORT_OP,
    UNITS,
    Shape,
)

#: Items sampled from a table or index to size a projection against whole items.
PROJECTION_SAMPLE = 20
_KEY_TYPES = ("S", "N", "B")
_SORT_TEXT = {"EQ": "=", "LT": "<", "LE": "<=", "GT": ">", "GE": ">=", "BETWEEN": "BETWEEN",
              "BEGINS_WITH": "begins_with"}


def shown(tag: str | None) -> str:
    """A key value as a shape knows it: its tag, with … for the rest when the tag is a prefix."""
    if tag is None:
        return "…"
    return tag + "…" if tag[-1] in "#|:" else tag


def key_condition(shape: Shape, meta: dict[str, Any]) -> str | None:
    """A Query shape's key condition as text, tags standing for values ("pk = VEHICLE#… AND sk > …")."""
    if shape[OP] != "Query":
        return None
    names = meta.get("keys") or ["pk", "sk"]
    text = f"{names[0]} = {shown(shape[PK_TAG])}"
    if shape[SORT_OP] is not None:
        sort = _SORT_TEXT.get(shape[SORT_OP], shape[SORT_OP])
        value = shown(shape[SK_TAG])
        text += f" AND begins_with({names[1]}, {value})" if sort == "begins_with" else f" AND {names[1]} {sort} {value}"
    return text


def read_findings(context: Context) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    settings = context.settings
    for shape, counts, meta in context.shapes:
        if shape[OP] not in ("Query", "Scan") or counts[REQUESTS] < settings.min_requests:
            continue
        if shape[FILTER] is not None:
            found = _scan_filter(context, shape, counts, meta)
            if found is not None:
                out.append(found)
        if shape[OP] == "Query" and shape[SORT_OP] is None and not shape[LIMITED] and meta.get("keys", [None, None])[1]:
            found = _unbounded(context, shape, counts, meta)
            if found is not None:
                out.append(found)
        if shape[PROJECTION] is not None and meta.get("projection"):
            found = _projection(context, shape, counts, meta)
            if found is not None:
                out.append(found)
    return out


def _evidence(context: Context, shape: Shape, counts: list[float], meta: dict[str, Any]) -> dict[str, Any]:
    units = counts[UNITS]
    table_units = context.units(shape[INDEX], "read")
    evidence: dict[str, Any] = {
        "operation": shape[OP],
        "requests": int(counts[REQUESTS]),
        "items_read": int(counts[SCANNED]),
        "items_returned": int(counts[RETURNED]),
        "bytes_read": int(counts[BYTES]),
        "read_units": units,
        "share_of_read_units": share(units, table_units),
    }
    condition = key_condition(shape, meta)
    if condition is not None:
        evidence["key_condition"] = condition
    return evidence


def _space_keys(context: Context, index: str | None) -> list[tuple[str, str]]:
    """(name, type) of the key attributes of the table, or of the index read."""
    doc = context.doc
    schema = doc["KeySchema"]
    for member in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes"):
        for ix in doc.get(member) or []:
            if ix["IndexName"] == index:
                schema = ix["KeySchema"]
    types = {d["AttributeName"]: d["AttributeType"] for d in doc["AttributeDefinitions"]}
    return [(k["AttributeName"], types.get(k["AttributeName"], "S")) for k in schema]


def _keyed_by(context: Context, attribute: str) -> str | None:
    """A GSI of the table whose partition key is `attribute`, if there is one."""
    for ix in context.doc.get("GlobalSecondaryIndexes") or []:
        if ix["KeySchema"][0]["AttributeName"] == attribute:
            return str(ix["IndexName"])
    return None


def _scan_filter(context: Context, shape: Shape, counts: list[float], meta: dict[str, Any]) -> dict[str, Any] | None:
    settings = context.settings
    read, returned = counts[SCANNED], counts[RETURNED]
    if read < settings.scan_filter_min_read or returned > settings.scan_filter_max_returned * read:
        return None
    evidence = _evidence(context, shape, counts, meta)
    filtered: dict[str, dict[str, Any]] = meta.get("filter") or {}
    evidence["filter"] = shape[FILTER]
    evidence["filter_attributes"] = sorted(filtered)
    evidence["returned_share"] = share(returned, read)
    operation = shape[OP]
    lesson = (f"A {operation} with a filter is not a WHERE clause: DynamoDB reads, and charges for, every item "
              f"before the filter runs. {these(counts[REQUESTS])} paid {number(counts[UNITS])} "
              f"read units for {number(read)} items to return {number(returned)} "
              f"({percent(share(returned, read))}).")
    doc = context.doc
    table = doc["TableName"]
    keyable = [(a, e) for a, e in filtered.items() if e.get("type") in _KEY_TYPES]
    equal = [(a, e) for a, e in keyable if "EQ" in e["ops"] or "IN" in e["ops"]]
    ranged = [(a, e) for a, e in keyable if "RANGE" in e["ops"] and (a, e) not in equal]
    space_keys = _space_keys(context, shape[INDEX])
    key_names = {name for name, _ in space_keys} | {k["AttributeName"] for k in doc["KeySchema"]}
    projected = projection(list(meta.get("projection") or []), key_names)
    inputs: list[dict[str, Any]] = []
    if operation == "Scan" and equal:
        attribute, entry = equal[0]
        existing = _keyed_by(context, attribute)
        range_key = (ranged[0][0], ranged[0][1]["type"]) if ranged else None
        conditions = [(attribute, "=", ":v")] + ([(range_key[0], ">=", ":from")] if range_key else [])
        if existing is not None:
            text = (f"Query the index {existing}, keyed on {attribute}, instead of scanning the table: "
                    "it reads only the items with the value asked for.")
            inputs.append(step("Query", query_input(table, existing, conditions[:1]), "reads one item collection"))
        else:
            name = index_name(doc, attribute, *([range_key[0]] if range_key else []))
            text = (f"Make {attribute} a key: a global secondary index keyed on it turns the Scan into a Query "
                    "that reads only the items it returns (an item collection per value).")
            inputs.append(step("UpdateTable", create_gsi(doc, name, (attribute, entry["type"]), range_key, projected),
                               f"adds the index {name}"))
            inputs.append(step("Query", query_input(table, name, conditions), "then reads one collection"))
    elif operation == "Query" and keyable:
        attribute, entry = (equal or ranged)[0]
        hash_name, hash_type = space_keys[0]
        name = index_name(doc, hash_name, attribute)
        text = (f"Put {attribute} in the sort key: an index keyed on {hash_name} and {attribute} lets the key "
                "condition select what the filter discards now, and a Query reads only what it returns.")
        inputs.append(step("UpdateTable", create_gsi(doc, name, (hash_name, hash_type), (attribute, entry["type"]),
                                                     projected), f"adds the index {name}"))
        op = "=" if (attribute, entry) in equal else ">="
        inputs.append(step("Query", query_input(table, name, [(hash_name, "=", ":pk"), (attribute, op, ":v")]),
                           "then reads only the matching items"))
    elif flags := [a for a, e in filtered.items() if e.get("type") in ("BOOL", "NULL") and "EQ" in e["ops"]]:
        attribute = flags[0]
        marker = f"{attribute}_key"
        name = index_name(doc, marker)
        text = (f"A boolean cannot be a key, but an index can be sparse: give only the items the filter keeps an "
                f"attribute {marker} (their id, say) and index it. The index then holds only those items, and "
                "reading it (a Scan of the index, or a Query) reads nothing else.")
        inputs.append(step("UpdateTable", create_gsi(doc, name, (marker, "S"), None, projected),
                           f"adds the sparse index {name}"))
    else:
        text = ("Model the question as a key: an item collection (partition key) or a sort-key prefix that "
                "selects what the filter keeps, so the read itself stops at the items returned.")
    return finding("scan-filter", table, shape[INDEX], evidence, lesson, text, inputs)


def _unbounded(context: Context, shape: Shape, counts: list[float], meta: dict[str, Any]) -> dict[str, Any] | None:
    settings = context.settings
    logical = counts[LOGICAL]
    if logical <= 0:
        return None
    pages, items = counts[PAGES] / logical, counts[SCANNED] / logical
    if pages < settings.unbounded_pages and items < settings.unbounded_items:
        return None
    evidence = _evidence(context, shape, counts, meta)
    evidence.update({"logical_queries": int(logical), "pages": int(counts[PAGES]),
                     "pages_per_query": round(pages, 2), "items_per_query": round(items, 1),
                     "read_units_per_query": round(counts[UNITS] / logical, 2)})
    doc = context.doc
    table = doc["TableName"]
    hash_name, sort_name = meta["keys"][0], meta["keys"][1]
    lesson = (f"A Query with no sort-key condition and no Limit reads the whole item collection, and a "
              f"collection that keeps growing (readings, events, messages) makes every such read slower and "
              f"costlier: these {number(logical)} Queries read {pages:.1f} pages and {number(round(items))} items "
              "each.")
    text = ("Read only what is needed: a sort-key condition and a Limit (the newest first with "
            "ScanIndexForward=false), expire old items with TTL, or bucket the partition key by time "
            f"({shape[PK_TAG] or ''}<id>#2026-09) so that no collection grows without end.")
    query = query_input(table, shape[INDEX], [(hash_name, "=", ":pk"), (sort_name, ">", ":since")])
    query.update({"ScanIndexForward": False, "Limit": 100})
    inputs = [step("Query", query, "reads the newest items of the collection, at most 100"),
              step("UpdateTimeToLive", {"TableName": table, "TimeToLiveSpecification": {
                  "Enabled": True, "AttributeName": "expires_at"}},
                  "deletes items once their expires_at (epoch seconds) has passed")]
    return finding("unbounded-collection", table, shape[INDEX], evidence, lesson, text, inputs)


def _projection(context: Context, shape: Shape, counts: list[float], meta: dict[str, Any]) -> dict[str, Any] | None:
    settings = context.settings
    read = counts[SCANNED]
    if read <= 0:
        return None
    average = counts[BYTES] / read
    if average < settings.projection_min_item_bytes:
        return None
    kept = list(meta.get("projection") or [])
    sampled = _sample_projection(context, shape[INDEX], kept)
    if sampled is None:
        return None
    part, sample_size = sampled
    if part > settings.projection_max_share:
        return None
    evidence = _evidence(context, shape, counts, meta)
    evidence.update({"projection": shape[PROJECTION], "projected_attributes": kept,
                     "average_item_bytes": round(average), "projected_share": round(part, 4),
                     "sampled_items": sample_size})
    doc = context.doc
    table = doc["TableName"]
    lesson = (f"A projection is applied after the read: DynamoDB charges for whole items (and reads up to 1 MB "
              f"of them a page) however few attributes come back. These reads paid for {number(round(average))} "
              f"bytes an item to return about {percent(part)} of it.")
    space_keys = _space_keys(context, shape[INDEX])
    key_names = {name for name, _ in space_keys} | {k["AttributeName"] for k in doc["KeySchema"]}
    name = index_name(doc, *(n for n, _ in space_keys), "narrow")
    range_key = space_keys[1] if len(space_keys) > 1 else None
    text = (f"Read from an index that holds only {', '.join(kept)}: a global secondary index with the same key and "
            "an INCLUDE projection costs units for the narrow entries, not for the whole items.")
    inputs = [step("UpdateTable", create_gsi(doc, name, space_keys[0], range_key, projection(kept, key_names)),
                   f"adds the index {name}")]
    return finding("projection-after-read", table, shape[INDEX], evidence, lesson, text, inputs)


def _sample_projection(context: Context, index_name_: str | None, kept: list[str]) -> tuple[float, int] | None:
    """(projected bytes / item bytes, items sampled) over the first items of the table or index."""
    table = context.table
    index = None if index_name_ is None else table.index(index_name_)
    prefix = table.prefix if index is None else index.prefix
    end = prefix_successor(prefix)
    assert end is not None
    whole = part = sampled = 0
    for _, raw in context.engine.store.range(prefix, end, limit=PROJECTION_SAMPLE):
        item = orjson.loads(raw)
        whole += item_size(item)
        part += item_size({k: v for k, v in item.items() if k in kept})
        sampled += 1
    if not sampled or not whole:
        return None
    return part / whole, sampled
