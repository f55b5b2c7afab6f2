"""How the console reads and writes: through the API handlers and the introspection functions.

Nothing here touches the store directly for table data: DynamoDB operations
run through `handle` (validation, capacity, errors and streams are those of
a real request) and partitions and hot keys come from the functions that
answer `/partita/v1/tables/...`.
"""

from __future__ import annotations

from typing import Any

from ..api import items as api_items
from ..api import reads as api_reads
from ..api.dispatch import STREAMS_SERVICE, handle
from ..api.validation.shapes import validate_request
from ..engine.capacity.introspect import hot_keys, partition_map, resource_of
from ..engine.capacity.partitions import starts_of
from ..engine.engine import Engine
from ..engine.items.reads import Page
from ..engine.tables.schema import Table
from ..errors import AccessDeniedException
from .web import CALLER, Authorize, ConsoleError


def _authorize() -> Authorize | None:
    """The signed-in principal's IAM check (with `--auth`): the console may do what its user may, no more."""
    caller = CALLER.get()
    return None if caller is None else caller.authorize


def may(operation: str, request: dict[str, Any]) -> bool:
    """Whether the signed-in user may run this operation, for what the console reads past the API."""
    authorize = _authorize()
    if authorize is None:
        return True
    try:
        authorize(operation, request, False)
    except AccessDeniedException:
        return False
    return True


def call(engine: Engine, operation: str, request: dict[str, Any]) -> dict[str, Any]:
    return handle(engine, operation, request, authorize=_authorize())


def stream_call(engine: Engine, operation: str, request: dict[str, Any]) -> dict[str, Any]:
    return handle(engine, operation, request, STREAMS_SERVICE, authorize=_authorize())


def table_of(engine: Engine, name: str) -> Table:
    table = engine.catalog.get(name)
    if table is None:
        raise ConsoleError(404, f"no table named {name}")
    return table


def describe(engine: Engine, name: str) -> dict[str, Any]:
    table_of(engine, name)  # a 404 page rather than a ResourceNotFound for a name that never existed
    return call(engine, "DescribeTable", {"TableName": name})["Table"]


def all_table_names(engine: Engine) -> list[str]:
    names: list[str] = []
    request: dict[str, Any] = {}
    while True:
        page = call(engine, "ListTables", request)
        names += page["TableNames"]
        last = page.get("LastEvaluatedTableName")
        if last is None:
            return names
        request = {"ExclusiveStartTableName": last}


def partition_count(table: Table, index: str = "") -> int:
    return len(starts_of(table.description, index))


def partitions(engine: Engine, table: Table, index: str | None = None) -> dict[str, Any]:
    res = resource_of(engine.meter, table, index)
    if res is None:
        raise ConsoleError(404, f"table {table.name} has no global secondary index named {index}")
    return partition_map(engine.meter, engine.store, table, res)


def hottest(engine: Engine, table: Table, index: str | None = None, top: int = 10) -> dict[str, Any]:
    res = resource_of(engine.meter, table, index)
    if res is None:
        raise ConsoleError(404, f"table {table.name} has no global secondary index named {index}")
    return hot_keys(engine.meter, table, res, top)


def ttl_status(engine: Engine, name: str) -> dict[str, Any]:
    return call(engine, "DescribeTimeToLive", {"TableName": name})["TimeToLiveDescription"]


def get_item(engine: Engine, request: dict[str, Any]) -> dict[str, Any] | None:
    """GetItem as `handle` runs it, with the item decoded (the JSON API's handler sends it as stored)."""
    validate_request("GetItem", request)
    authorize = _authorize()
    if authorize is not None:  # as `handle` does (the console names tables by name, never by ARN)
        authorize("GetItem", request, False)
    return api_items.get_item(engine, request).get("Item")


def read_pages(engine: Engine, operation: str, request: dict[str, Any]) -> tuple[dict[str, Any], Page]:
    """Query or Scan as `handle` runs it, also returning the engine's page (bytes read before the filter)."""
    validate_request(operation, request)
    authorize = _authorize()
    if authorize is not None:  # as `handle` does (the console names tables by name, never by ARN)
        authorize(operation, request, False)
    sink: list[Page] = []
    handler = api_reads.query if operation == "Query" else api_reads.scan
    answer = handler(engine, request, pages=sink)
    return answer, sink[0]
