"""What the console, `/metrics` and the admin API show of global tables: backlog and jobs."""

from __future__ import annotations

from typing import Any

import orjson

from .keys import JOB, JOB_END, OUTBOX, OUTBOX_END, cursor_key, outbox_entry, read_int

#: Change records counted per region at most (the backlog of a very busy test is shown as at least this).
COUNT_LIMIT = 100_000


def backlog(gt: Any) -> list[dict[str, Any]]:
    """Changes written and not yet applied, per table and (from, to) region pair."""
    out: list[dict[str, Any]] = []
    for region, engine in gt.engines.items():
        counts: dict[int, list[int]] = {}
        for key, _ in engine.store.range(OUTBOX, OUTBOX_END, limit=COUNT_LIMIT):
            table_id, n = outbox_entry(key)
            counts.setdefault(table_id, []).append(n)
        for name in list(engine.catalog.names(None)):
            table = engine.catalog.get(name)
            if table is None or table.replication is None:
                continue
            ns = counts.get(table.table_id, [])
            for member in table.replication["members"]:
                target = member["region"]
                if target == region:
                    continue
                done = read_int(engine.store.get(cursor_key(table.table_id, target)))
                out.append({"table": name, "from": region, "to": target,
                            "changes": sum(1 for n in ns if n > done)})
    return out


def jobs(gt: Any) -> list[dict[str, Any]]:
    return [orjson.loads(raw) for _, raw in gt.home.store.range(JOB, JOB_END)]


def members(gt: Any) -> list[dict[str, Any]]:
    """Every global table's replicas, as the first region holding one describes them."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for engine in gt.engines.values():
        for name in list(engine.catalog.names(None)):
            table = engine.catalog.get(name)
            if name in seen or table is None or table.replication is None:
                continue
            seen.add(name)
            group = table.replication
            for member in group["members"]:
                out.append({"table": name, "region": member["region"], "status": member["status"],
                            "mode": group["mode"], "progress": member.get("progress")})
            witness = group.get("witness")
            if witness is not None:
                out.append({"table": name, "region": witness["region"], "status": witness["status"],
                            "mode": group["mode"], "progress": None, "witness": True})
    return out
