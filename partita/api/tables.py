"""Table operations: CreateTable, DescribeTable, ListTables, DeleteTable."""

from __future__ import annotations

from typing import Any

from ..engine.control.throughput import check_create
from ..engine.engine import Engine
from ..engine.tables.tags import check_tags
from .validation.replicas import is_replica_request
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
    if engine.global_tables is not None:  # a replica leaves its global table first
        answer = engine.global_tables.delete_table(engine.region, request["TableName"])
        if answer is not None:
            return {"TableDescription": answer}
    table = engine.catalog.get(request["TableName"])
    out = {"TableDescription": engine.tables.delete(request["TableName"])}
    if table is not None:
        engine.meter.forget(table.table_id)  # free its shared metering slots
        engine.advisor.forget(table.table_id)
    return out


def update_table(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    validate_update_table(request)
    gt = engine.global_tables
    if is_replica_request(request):
        if gt is None:
            from ..engine.regions.one_region import (
                one_region,  # ReplicaUpdates on a one-region server
            )
            one_region(engine.region, request, engine.catalog.get(request["TableName"]) is not None)
            raise AssertionError("a one-region server refuses every replica change")
        return {"TableDescription": gt.update_replicas(engine.region, request)}
    if gt is None:
        return {"TableDescription": engine.table_updates.update(request)}
    gt.before_update(engine.region, request)
    answer = engine.table_updates.update(request)
    gt.after_update(engine.region, request)
    return {"TableDescription": answer}
