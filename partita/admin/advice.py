"""`GET /partita/v1/advice[?table=NAME]`: the access-pattern advisor's findings, as JSON.

`{"findings": [{"kind", "table", "index", "evidence", "lesson", "fix"}],
"settings": {...}}`; `kind` is one of engine/advisor/findings.py's KINDS,
which other tools (the console, `partita advise`, the pytest plugin) rely on.
An unknown table is a 404, as for the partition map.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

from ..engine.engine import Engine
from .errors import AdminError

PATH = b"/partita/v1/advice"


def advice(engine: Engine, method: str, path: bytes) -> dict[str, Any]:
    if method != "GET":
        raise AdminError(405, "use GET to read the advice")
    query = parse_qs(path.partition(b"?")[2].decode("utf-8", "replace"))
    table = query.get("table", [None])[0]
    if table is not None and engine.catalog.get(table) is None:
        raise AdminError(404, f"no table named {table}")
    return {"findings": engine.advisor.findings(engine, table), "settings": engine.advisor.settings.to_dict()}


def entities(engine: Engine, table: str, index: str | None) -> dict[str, Any]:
    """`GET /partita/v1/tables/{name}/entities[?index=NAME]`: entity types by key tag, from a sample."""
    found = engine.catalog.get(table)
    if found is None:
        raise AdminError(404, f"no table named {table}")
    if index is not None and found.index(index) is None:
        raise AdminError(404, f"table {table} has no index named {index}")
    return engine.advisor.entities(engine, table, index)
