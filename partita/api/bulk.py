"""StartBulkPutItems, DescribeBulkOperation, ListBulkOperations, CancelBulkOperation (shapes checked by the model)."""

from __future__ import annotations

from typing import Any

from ..engine.engine import Engine


def start_bulk_put_items(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    return {"BulkOperationDescription": engine.bulk.start(request)}


def describe_bulk_operation(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    return {"BulkOperationDescription": engine.bulk.describe(request["BulkOperationArn"])}


def list_bulk_operations(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    return engine.bulk.list(request)


def cancel_bulk_operation(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    return engine.bulk.cancel(request["BulkOperationArn"])
