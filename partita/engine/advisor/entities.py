"""The entity view: the entity types of a table or index, found by the tags of their key values.

Single-table designs carry an item's type in its key values (`CLIENTE#42`,
`PEDIDO#2026-09-01#101`, `META`): items whose partition-key and sort-key
tags (`shapes.tag_of`) agree are one entity type. A bounded sample is read
in hash order from evenly spaced points of the hash space (so it spans many
collections rather than the first few), and each type gets its share of
the sample, an estimate of its count (that share of the item count), its
typical attributes (those most of its sampled items carry, with their
usual type) and the access patterns that read it: the recorded shapes whose
key condition's tags match it (a Scan reads every type).
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import orjson

from ..model.keys import prefix_successor
from .read_findings import key_condition, shown
from .shapes import (
    FILTER,
    INDEX,
    OP,
    PK_TAG,
    PROJECTION,
    REQUESTS,
    RETURNED,
    SCANNED,
    SK_TAG,
    SORT_OP,
    TABLE,
    UNITS,
)

#: Evenly spaced points of the hash space the sample starts reading at.
SLICES = 16
#: An attribute is typical of a type when at least this share of its sampled items carry it.
TYPICAL = 0.5
MAX_ATTRIBUTES = 20


def _name(pk_tag: str | None, sk_tag: str | None) -> str:
    if pk_tag is None and sk_tag is None:
        return "(no type prefix)"
    return (pk_tag or "…") + ("" if sk_tag is None else " / " + sk_tag)


def _sample(store: Any, prefix: bytes, size: int) -> list[dict[str, Any]]:
    end = prefix_successor(prefix)
    assert end is not None
    per = max(1, math.ceil(size / SLICES))
    items: list[dict[str, Any]] = []
    for i in range(SLICES):
        start = prefix + (i * (1 << 64) // SLICES).to_bytes(8, "big")
        stop = end if i == SLICES - 1 else prefix + ((i + 1) * (1 << 64) // SLICES).to_bytes(8, "big")
        items += [orjson.loads(raw) for _, raw in store.range(start, stop, limit=per)]
    return items[:size]


def _matches(shape: tuple[Any, ...], pk_tag: str | None, sk_tag: str | None, sorted_space: bool) -> bool:
    """Whether a read of this shape can return items whose key tags are (pk_tag, sk_tag)."""
    if shape[OP] == "Scan":
        return True
    if shape[PK_TAG] != pk_tag:
        return False
    if shape[OP] in ("GetItem", "BatchGetItem"):
        return not sorted_space or shape[SK_TAG] == sk_tag
    return shape[SORT_OP] is None or shape[SK_TAG] is None or shape[SK_TAG] == sk_tag


def _pattern(shape: tuple[Any, ...], counts: list[float], meta: dict[str, Any]) -> dict[str, Any]:
    keys = meta.get("keys") or ["pk", "sk"]
    if shape[OP] in ("GetItem", "BatchGetItem"):
        condition = f"{keys[0]} = {shown(shape[PK_TAG])}" + (f" AND {keys[1]} = {shown(shape[SK_TAG])}" if keys[1] else "")
    else:
        condition = key_condition(shape, meta)
    return {
        "operation": shape[OP], "index": shape[INDEX], "key_condition": condition, "filter": shape[FILTER],
        "projection": shape[PROJECTION], "requests": int(counts[REQUESTS]), "items_read": int(counts[SCANNED]),
        "items_returned": int(counts[RETURNED]), "read_units": counts[UNITS],
    }


def entities(engine: Any, advisor: Any, name: str, index_name: str | None) -> dict[str, Any]:
    from .shapes import tag_of

    table = engine.catalog.get(name)
    assert table is not None
    index = None if index_name is None else table.index(index_name)
    prefix = table.prefix if index is None else index.prefix
    if index is None:
        hash_name = table.hash_key.name
        range_name = None if table.range_key is None else table.range_key.name
    else:
        hash_name = index.hash_key.name
        range_name = None if index.range_key is None else index.range_key.name
    end = prefix_successor(prefix)
    assert end is not None
    item_count = engine.store.stats(prefix, end)[0]
    sample = _sample(engine.store, prefix, advisor.settings.entity_sample)
    groups: dict[tuple[str | None, str | None], list[dict[str, Any]]] = {}
    for item in sample:
        pk = item.get(hash_name) or {}
        sk = (item.get(range_name) or {}) if range_name is not None else {}
        groups.setdefault((tag_of(pk.get("S")), tag_of(sk.get("S"))), []).append(item)
    shapes = [(s, c, m) for s, (c, m) in advisor.shapes.merged().items()
              if s[TABLE] == table.table_id and s[INDEX] == index_name]
    out = []
    for (pk_tag, sk_tag), items in sorted(groups.items(), key=lambda kv: (-len(kv[1]), str(kv[0]))):
        present: Counter[str] = Counter()
        types: dict[str, Counter[str]] = {}
        for item in items:
            for attribute, value in item.items():
                present[attribute] += 1
                types.setdefault(attribute, Counter())[next(iter(value), "?")] += 1
        typical = [
            {"name": a, "type": types[a].most_common(1)[0][0], "share": round(n / len(items), 3)}
            for a, n in sorted(present.items(), key=lambda kv: (-kv[1], kv[0])) if n >= TYPICAL * len(items)
        ][:MAX_ATTRIBUTES]
        patterns = [_pattern(s, c, m) for s, c, m in shapes if _matches(s, pk_tag, sk_tag, range_name is not None)]
        patterns.sort(key=lambda p: -p["requests"])
        part = len(items) / len(sample)
        out.append({
            "name": _name(pk_tag, sk_tag), "pk_tag": pk_tag, "sk_tag": sk_tag, "sampled": len(items),
            "share": round(part, 4), "estimated_count": round(part * item_count), "attributes": typical,
            "access_patterns": patterns,
        })
    return {
        "table": name, "index": index_name, "key": [hash_name, range_name], "item_count": item_count,
        "sampled_items": len(sample), "entities": out,
    }
