"""`/partita/v1/replication`: global tables' replication, seen and steered by tests.

GET: the regions, the lag, whether replication is held, the changes waiting
per table and region pair, the applied counts and last latency per region
pair, the conflicts resolved and the replica changes under way. POST
`{"hold": true}` stops applying changes (they accumulate, in order, as
during a network partition), `{"hold": false}` resumes; `{"settle": true}`
applies every due change now instead of at the next background tick.
"""

from __future__ import annotations

from typing import Any

from ..engine.engine import Engine
from .errors import AdminError


def replication(engine: Engine, method: str, body: Any) -> dict[str, Any]:
    gt = engine.global_tables
    if gt is None:
        raise AdminError(400, "this server serves one region: start it with --regions R1,R2,... for global tables")
    if method == "POST":
        if not isinstance(body, dict) or not (set(body) <= {"hold", "settle"}) or not body or not all(
                isinstance(value, bool) for value in body.values()):
            raise AdminError(400, 'expected {"hold": true|false} and/or {"settle": true}')
        if "hold" in body:
            gt.hold(body["hold"])
        if body.get("settle"):
            gt.settle()
    elif method != "GET":
        raise AdminError(405, "use GET to read replication, POST to hold, release or settle it")
    return status(gt)


def status(gt: Any) -> dict[str, Any]:
    """Everything the console and tests read about replication, as one JSON document."""
    from ..engine.regions.observe import backlog, jobs, members

    stats = gt.stats
    return {
        "regions": gt.regions(),
        "lag_ms": int(gt.lag * 1000),
        "held": gt.held(),
        "pending": backlog(gt),
        "applied": [{"from": a, "to": b, "writes": n} for (a, b), n in sorted(stats.applied.items())],
        "latency_seconds": [{"from": a, "to": b, "seconds": s} for (a, b), s in sorted(stats.latency.items())],
        "conflicts": [{"table": t, "count": n} for t, n in sorted(stats.conflicts.items())],
        "recent_conflicts": list(stats.recent),
        "jobs": jobs(gt),
        "replicas": members(gt),
    }
