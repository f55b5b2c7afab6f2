"""A table's Advice page (the access-pattern advisor's findings) and Entities page (entity types by key prefix).

Both read what `GET /partita/v1/advice` and `/partita/v1/tables/{name}/entities`
answer, computed when the page is asked for, behind the user's DescribeTable
permission (a browser cannot sign the admin API's requests under `--auth`).
The table list shows each table's number of findings as a badge
(`advice_counts`).
"""

from __future__ import annotations

from typing import Any

from ..engine.engine import Engine
from .engine_calls import describe, table_of
from .render import render
from .summaries import summary_of
from .web import Answer, ConsoleError, Request, html

KIND_TITLES = {
    "scan-filter": "A filter doing a WHERE clause's job",
    "hot-key": "A hot partition key",
    "low-cardinality-key": "A partition key with few values",
    "lsi-collection-growth": "An item collection growing toward the local index's cap",
    "unbounded-collection": "Whole item collections read page after page",
    "gsi-read-after-write": "Reading your own write through a global index",
    "projection-after-read": "A projection over large items",
}


def advice_counts(engine: Engine) -> dict[str, int]:
    """Table name -> how many findings it has (for the badges on the table list)."""
    counts: dict[str, int] = {}
    for finding in engine.advisor.findings(engine):
        counts[finding["table"]] = counts.get(finding["table"], 0) + 1
    return counts


def advice_page(engine: Engine, request: Request, name: str) -> Answer:
    doc = describe(engine, name)
    findings = engine.advisor.findings(engine, name)
    return html(render("advice.html", table=summary_of(engine, doc), findings=findings, titles=KIND_TITLES,
                       settings=engine.advisor.settings.to_dict()))


def entities_page(engine: Engine, request: Request, name: str) -> Answer:
    table = table_of(engine, name)
    doc = describe(engine, name)
    index = request.arg("index") or None
    if index is not None and table.index(index) is None:
        raise ConsoleError(404, f"table {name} has no index named {index}")
    indexes = [ix["IndexName"] for member in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes")
               for ix in doc.get(member) or []]
    view: dict[str, Any] = engine.advisor.entities(engine, name, index)
    return html(render("entities.html", table=summary_of(engine, doc), view=view, indexes=indexes, index=index))
