"""The partition map and the hottest keys as documents: what `/partita/v1/tables/...` answers.

Everything comes from the catalog (hash ranges), the store (item count and
bytes of each range, one statistic each) and the shared meter (units,
throttles, hot keys), so any worker answers the same.
"""

from __future__ import annotations

from typing import Any

from ..tables.schema import Table
from .insights import STATE
from .meter import Meter, Resource
from .partitions import TABLE_MAP, partition_of, ranges

TOP = 10


def resource_of(meter: Meter, table: Table, index_name: str | None) -> Resource | None:
    """The table's resource, or its GSI's; None for an unknown (or local) index."""
    return meter.resources(table).get(index_name or TABLE_MAP)


def partition_map(meter: Meter, store: Any, table: Table, res: Resource) -> dict[str, Any]:
    now = meter.clock.now()
    meter.publish()
    index = None if res.name == TABLE_MAP else table.index(res.name)
    prefix = table.prefix if index is None else index.prefix
    keys = _hot_entries(meter, table, res, now)
    parts = []
    for part in ranges(res.starts):
        count, size = store.stats(*part.row_bounds(prefix))
        usage = meter.usage(res, part.start)
        mine = [k for k in keys if partition_of(res.starts, k["partition_hash"]) == part.number]
        parts.append({
            "number": part.number,
            "hash_start": part.start,
            "hash_end": part.end,
            "item_count": count,
            "size_bytes": size,
            "read_units_per_second": usage["read_units_per_second"],
            "write_units_per_second": usage["write_units_per_second"],
            "read_units_per_minute": usage["read_units_per_minute"],
            "write_units_per_minute": usage["write_units_per_minute"],
            "read_units_total": usage["read_units_total"],
            "write_units_total": usage["write_units_total"],
            "throttled_requests": int(usage["throttled_requests"]),
            "throttled_reads": int(usage["read_throttled"]),
            "throttled_writes": int(usage["write_throttled"]),
            "hot_keys": [_public(k) for k in _ranked(mine, _units)[:5]],
        })
    whole = meter.usage(res, None)
    return {
        "table": table.name,
        "index": None if res.name == TABLE_MAP else res.name,
        "billing_mode": "PAY_PER_REQUEST" if res.on_demand else "PROVISIONED",
        "emulate_throughput": meter.enforcing,
        "partition_count": len(parts),
        "partition_read_ceiling": 3000,
        "partition_write_ceiling": 1000,
        "read_units_per_second": whole["read_units_per_second"],
        "write_units_per_second": whole["write_units_per_second"],
        "throttled_requests": int(whole["throttled_requests"]),
        "partitions": parts,
        # the splits of this table or index, newest last: where (hash), which rule (size, heat), when
        "splits": [
            {"hash": s["hash"], "rule": s["rule"], "time": s["time"]}
            for s in table.description.get("_PartitionSplits") or []
            if (s["index"] or TABLE_MAP) == res.name
        ],
    }


def hot_keys(meter: Meter, table: Table, res: Resource, top: int = TOP) -> dict[str, Any]:
    """Top keys (partition+sort, and partition alone) by consumed units and by throttles, last minute."""
    now = meter.clock.now()
    meter.publish()
    keys = _hot_entries(meter, table, res, now)
    by_partition: dict[int, dict[str, Any]] = {}
    hash_names = _partition_key_names(table, res)
    for entry in keys:
        group = by_partition.get(entry["partition_hash"])
        if group is None:
            key = entry["key"]
            pk = {n: key[n] for n in hash_names if isinstance(key, dict) and n in key}
            group = by_partition[entry["partition_hash"]] = {
                "key": pk, "partition_hash": entry["partition_hash"],
                **{name: 0.0 for name in _COUNTS},
            }
        for name in _COUNTS:
            group[name] += entry[name]
    groups = list(by_partition.values())
    insights = (table.description.get(STATE) or {}).get(res.name)
    throttled_only = insights is not None and insights.get("status") == "ENABLED" and \
        insights.get("mode") == "THROTTLED_KEYS"
    out = {
        "table": table.name,
        "index": None if res.name == TABLE_MAP else res.name,
        "window": "last minute (sliding), totals since the server started",
        "keys": {
            "by_consumed_units": [_public(k) for k in _ranked(keys, _units)[:top]],
            "by_throttles": [_public(k) for k in _ranked(keys, _throttles)[:top] if _throttles(k) > 0],
        },
        "partition_keys": {
            "by_consumed_units": [_public(k) for k in _ranked(groups, _units)[:top]],
            "by_throttles": [_public(k) for k in _ranked(groups, _throttles)[:top] if _throttles(k) > 0],
        },
        "contributor_insights": None if insights is None else {
            "status": insights["status"], "mode": insights.get("mode", "ACCESSED_AND_THROTTLED_KEYS"),
        },
    }
    if throttled_only:  # THROTTLED_KEYS mode ranks throttled keys only, as the CloudWatch rules would
        out["keys"]["by_consumed_units"] = []  # type: ignore[index]
        out["partition_keys"]["by_consumed_units"] = []  # type: ignore[index]
    return out


_COUNTS = (
    "read_units_per_minute", "write_units_per_minute", "throttles_per_minute",
    "read_units_total", "write_units_total", "throttled_requests_total",
)


def _hot_entries(meter: Meter, table: Table, res: Resource, now: float) -> list[dict[str, Any]]:
    return meter.hot.entries(table.table_id, res.tag, now)


def _partition_key_names(table: Table, res: Resource) -> tuple[str, ...]:
    if res.name == TABLE_MAP:
        return (table.hash_key.name,)
    index = table.index(res.name)
    return tuple(a.name for a in index.hash_keys) if index is not None else ()


def _units(entry: dict[str, Any]) -> tuple[float, float]:
    recent = entry["read_units_per_minute"] + entry["write_units_per_minute"]
    return recent, entry["read_units_total"] + entry["write_units_total"]


def _throttles(entry: dict[str, Any]) -> float:
    return entry["throttles_per_minute"] or entry["throttled_requests_total"]


def _ranked(entries: list[dict[str, Any]], score: Any) -> list[dict[str, Any]]:
    return sorted(entries, key=score, reverse=True)


def _public(entry: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in entry.items() if k != "partition_hash"}
    out["partition_hash"] = entry["partition_hash"]
    out["throttled_requests_total"] = int(entry["throttled_requests_total"])
    return out
