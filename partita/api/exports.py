"""Export to and import from S3 layouts: ExportTableToPointInTime, DescribeExport, ListExports,
ImportTable, DescribeImport, ListImports."""

from __future__ import annotations

from typing import Any

from ..engine.control.throughput import check_create
from ..engine.engine import Engine
from .validation.tables import validate_create_table


def _validate_created(request: dict[str, Any]) -> None:
    validate_create_table(request)
    check_create(request)


def export_table_to_point_in_time(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    return {"ExportDescription": engine.backup_service.exports.export(request)}


def describe_export(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    return {"ExportDescription": engine.backup_service.exports.describe(request["ExportArn"])}


def list_exports(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    return engine.backup_service.exports.list(request)


def import_table(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    return {"ImportTableDescription": engine.backup_service.imports.start(request, _validate_created)}


def describe_import(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    return {"ImportTableDescription": engine.backup_service.imports.describe(request["ImportArn"])}


def list_imports(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    return engine.backup_service.imports.list(request)
