"""The schema guard's page: the entity schemas loaded with `--schema`, and the latest violations.

Violations quote item values (a key, the offending value in an error), so
with `--auth` a violation is shown only to whoever may Scan its table, as
the TTL list of the streams page is.
"""

from __future__ import annotations

import orjson

from ..engine.engine import Engine
from ..engine.schema_guard.log import recent, totals
from ..engine.schema_guard.spec import as_json
from .engine_calls import may
from .items import item_url
from .render import render
from .values import describe_value
from .web import Answer, Request, html, table_url

SHOWN = 100


def schema_page(engine: Engine, request: Request, _: str) -> Answer:
    guard = engine.schema_guard
    if guard is None:
        return html(render("schema.html", spec=None, entities=[], violations=[], table="", now=engine.clock.now()))
    table = request.arg("table")
    counted = totals(engine.store)
    entities = [{
        "name": e.name, "table": e.table, "url": table_url(e.table), "match": e.globs,
        "violations": counted.get((e.table, e.name), 0),
        "schema": orjson.dumps(as_json(e.schema), option=orjson.OPT_INDENT_2).decode(),
    } for e in guard.spec.entities]
    allowed: dict[str, bool] = {}
    violations = []
    for doc in recent(engine.store, SHOWN * 4, table or None):
        name = doc["table"]
        if name not in allowed:
            allowed[name] = may("Scan", {"TableName": name})
        if not allowed[name]:
            continue
        violations.append({
            "at": doc["at"], "table": name, "table_url": table_url(name), "entity": doc["entity"],
            "write": doc["write"], "url": item_url(name, doc["key"]),
            "key": ", ".join(f"{k}={describe_value(v)}" for k, v in doc["key"].items()),
            "errors": doc["errors"],
        })
        if len(violations) >= SHOWN:
            break
    return html(render("schema.html", spec=guard.spec, entities=entities, violations=violations, table=table,
                       now=engine.clock.now()))


