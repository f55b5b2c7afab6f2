"""`/partita/v1/tables/{TableName}/partitions`, `/hot-keys` and `/entities`: partitions, hot keys and
entity types (the advisor's entity view), as JSON.

`?index=NAME` asks for a global secondary index's map instead of the
table's (local indexes live in their table's partitions).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, unquote

from ..engine.capacity.introspect import hot_keys, partition_map, resource_of
from ..engine.engine import Engine
from .advice import entities
from .errors import AdminError

TABLES = b"/partita/v1/tables/"
TABLE_PAGES = ("partitions", "hot-keys", "entities")


def table_route(engine: Engine, method: str, path: bytes) -> dict[str, Any]:
    """Answer GET /partita/v1/tables/{name}/{partitions|hot-keys}[?index=NAME]."""
    raw_path, _, raw_query = path.partition(b"?")
    rest = raw_path[len(TABLES):].decode("latin-1").rstrip("/")
    name, _, resource = rest.rpartition("/")
    if not name or resource not in TABLE_PAGES:
        raise AdminError(404, f"no admin resource at {path.decode('latin-1')}")
    if method != "GET":
        raise AdminError(405, f"use GET to read {resource}")
    if resource == "entities":
        return entities(engine, unquote(name), parse_qs(raw_query.decode("latin-1")).get("index", [None])[0])
    table = engine.catalog.get(unquote(name))
    if table is None:
        raise AdminError(404, f"no table named {unquote(name)}")
    query = parse_qs(raw_query.decode("latin-1"))
    index_name = query.get("index", [None])[0]
    res = resource_of(engine.meter, table, index_name)
    if res is None:
        raise AdminError(404, f"table {table.name} has no global secondary index named {index_name}")
    if resource == "partitions":
        return partition_map(engine.meter, engine.store, table, res)
    top = query.get("top", ["10"])[0]
    if not top.isdigit() or not 1 <= int(top) <= 100:
        raise AdminError(400, "top must be a whole number from 1 to 100")
    return hot_keys(engine.meter, table, res, int(top))
