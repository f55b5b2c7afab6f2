"""Findings, computed when asked: from the request shapes, the write traces and the partition statistics.

Each finding is `{"kind", "table", "index", "evidence", "lesson", "fix"}`:
`kind` one of KINDS (other tools rely on these names), `index` None for the
table itself, `evidence` the numbers that raised it (counts, units, the
share of traffic), `lesson` one or two sentences of DynamoDB's modelling
rule with those numbers in them, and `fix` `{"text", "inputs"}`: what to
change, and the concrete requests that change it (UpdateTable,
CreateTable, Query, UpdateTimeToLive inputs, each with why).

The kinds live in three modules by what they read: `read_findings`
(shapes: scan-filter, unbounded-collection, projection-after-read),
`key_findings` (the meter's hot keys: hot-key, low-cardinality-key) and
`write_findings` (traces: lsi-collection-growth, gsi-read-after-write).
"""

from __future__ import annotations

from typing import Any

from .context import Context
from .key_findings import key_findings
from .read_findings import read_findings
from .shapes import TABLE
from .write_findings import write_findings

KINDS = ("scan-filter", "hot-key", "low-cardinality-key", "lsi-collection-growth", "unbounded-collection",
         "gsi-read-after-write", "projection-after-read")


def findings(engine: Any, advisor: Any, name: str | None = None) -> list[dict[str, Any]]:
    """Every finding, or those of table `name`, in table order then KINDS order."""
    names = [name] if name is not None else sorted(engine.catalog.names(None))
    merged = advisor.shapes.merged()
    engine.meter.publish()
    out: list[dict[str, Any]] = []
    for table_name in names:
        table = engine.catalog.get(table_name)
        if table is None:
            continue
        doc = engine.tables.describe(table_name)
        shapes = [(shape, counts, meta) for shape, (counts, meta) in merged.items() if shape[TABLE] == table.table_id]
        context = Context(engine, advisor, advisor.settings, table, doc, shapes)
        for res_name, res in engine.meter.resources(table).items():
            usage = engine.meter.usage(res, None)
            context.usage[res_name] = {"read": usage["read_units_total"], "write": usage["write_units_total"]}
        found = read_findings(context) + key_findings(context) + write_findings(context)
        found.sort(key=lambda f: KINDS.index(f["kind"]))
        out += found
    return out
