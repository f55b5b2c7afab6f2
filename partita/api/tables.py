"""Table operations: CreateTable, DescribeTable, ListTables, DeleteTable."""

from __future__ import annotations

from typing import Any

from ..engine.control.throughput import check_create
from ..engine.engine import Engine
from ..engine.tables.tags import check_tags
from .validation.tables import validate_create_table, validate_update_table


def create_table(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    validate_create_table(request)
    check_create(request)
    if request.get("Tags"):
        check_tags(request["Tags"])
    return {"TableDescription": engine.tables.create(request)}


def describe_table(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    engine.settle_global_indexes()
    return {"Table": engine.tables.describe(request["TableName"])}


def list_tables(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    return engine.tables.list(request.get("ExclusiveStartTableName"), request.get("Limit"))


def delete_table(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    table = engine.catalog.get(request["TableName"])
    out = {"TableDescription": engine.tables.delete(request["TableName"])}
    if table is not None:
        engine.meter.forget_if_used(table)  # free its shared throughput slots
    return out


def update_table(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    validate_update_table(request)
    return {"TableDescription": engine.table_updates.update(request)}
