"""On-demand backups and restores: CreateBackup, DescribeBackup, ListBackups, DeleteBackup,
RestoreTableFromBackup, RestoreTableToPointInTime."""

from __future__ import annotations

from typing import Any

from ..engine.control.throughput import check_create
from ..engine.engine import Engine
from .validation.tables import validate_create_table


def _validate_restored(request: dict[str, Any]) -> None:
    """The restored table, with its overrides, must be a table CreateTable would accept."""
    validate_create_table(request)
    check_create(request)


def create_backup(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    backups = engine.backup_service.backups
    return {"BackupDetails": backups.create(request["TableName"], request["BackupName"])}


def describe_backup(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    return {"BackupDescription": engine.backup_service.backups.describe(request["BackupArn"])}


def list_backups(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    return engine.backup_service.backups.list(request)


def delete_backup(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    return {"BackupDescription": engine.backup_service.backups.delete(request["BackupArn"])}


def restore_table_from_backup(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    return {"TableDescription": engine.backup_service.backups.restore(request, _validate_restored)}


def restore_table_to_point_in_time(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    return {"TableDescription": engine.backup_service.point_in_time.restore(request, _validate_restored)}
