"""`/partita/v1/schema` and `/partita/v1/schema/violations`: the loaded schema guard and what it found.

Violations (warn mode) are shown as findings, in the shape every Partita
finding has (`kind`, `table`, `index`, `evidence`, `lesson`, `fix`), one per
recorded write, newest first, so tools that read findings read these too.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

from ..engine.engine import Engine
from ..engine.schema_guard.log import recent, totals
from .errors import AdminError

SCHEMA = b"/partita/v1/schema"
KIND = "schema-violation"
DEFAULT_LIMIT = 100
LESSON = ("DynamoDB enforces no schema beyond the key: an item that breaks its entity's shape is stored "
          "as written, and every reader of the table meets it.")


def finding(doc: dict[str, Any]) -> dict[str, Any]:
    """One recorded violation as a finding."""
    return {
        "kind": KIND,
        "table": doc["table"],
        "index": None,
        "evidence": {"entity": doc["entity"], "write": doc["write"], "key": doc["key"],
                     "errors": doc["errors"], "at": doc["at"]},
        "lesson": LESSON,
        "fix": (f"Correct the code behind this {doc['write'].lower()} on {doc['table']}, or the {doc['entity']} "
                "schema if the item is right; the guard's reject mode makes such a write fail in tests."),
    }


def violations(engine: Engine, table: str | None, limit: int) -> dict[str, Any]:
    guard = engine.schema_guard
    assert guard is not None
    counted = totals(engine.store)
    total = sum(n for (name, _), n in counted.items() if table is None or name == table)
    return {"mode": guard.spec.mode, "total": total,
            "findings": [finding(doc) for doc in recent(engine.store, limit, table)]}


def schema_route(engine: Engine, method: str, path: bytes) -> dict[str, Any]:
    """GET /partita/v1/schema, GET /partita/v1/schema/violations[?table=NAME&limit=N]."""
    raw_path, _, raw_query = path.partition(b"?")
    resource = raw_path.rstrip(b"/")
    if resource not in (SCHEMA, SCHEMA + b"/violations"):
        raise AdminError(404, f"no admin resource at {path.decode('latin-1')}")
    if method != "GET":
        raise AdminError(405, "use GET to read the schema guard")
    guard = engine.schema_guard
    if guard is None:
        raise AdminError(404, "no schema is loaded (partita serve --schema FILE)")
    if resource == SCHEMA:
        counted = totals(engine.store)
        doc = guard.spec.describe()
        for entity in doc["entities"]:
            entity["violations"] = counted.get((entity["table"], entity["name"]), 0)
        return doc
    query = parse_qs(raw_query.decode("latin-1"))
    limit = query.get("limit", [str(DEFAULT_LIMIT)])[0]
    if not limit.isdigit() or not 1 <= int(limit) <= 1000:
        raise AdminError(400, "limit must be a whole number from 1 to 1000")
    return violations(engine, query.get("table", [None])[0], int(limit))


def collect_violations(engine: Engine) -> Any:
    """`partita_schema_violations_total{table, entity}` for /metrics (every entity, 0 until one is recorded)."""
    from prometheus_client.core import CounterMetricFamily

    guard = engine.schema_guard
    assert guard is not None
    family = CounterMetricFamily("partita_schema_violations",
                                 "Writes whose item broke its entity's schema (recorded in warn mode)",
                                 labels=["table", "entity"])
    counted = totals(engine.store)
    for entity in guard.spec.entities:
        family.add_metric([entity.table, entity.name], counted.pop((entity.table, entity.name), 0))
    for (table, name), n in sorted(counted.items()):  # entities of an earlier schema file, still in the store
        family.add_metric([table, name], n)
    return family
