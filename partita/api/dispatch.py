"""Operation name -> handler. The protocol layer calls `handle` for every request."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..engine.engine import Engine
from ..errors import SerializationException, UnknownOperationException
from . import batch, control, items, partiql, reads, tables, tags, transactions
from .arns import resolve_table_arns
from .validation.shapes import is_model_operation, validate_request

Handler = Callable[[Engine, dict[str, Any]], dict[str, Any]]

OPERATIONS: dict[str, Handler] = {
    "CreateTable": tables.create_table,
    "DescribeTable": tables.describe_table,
    "ListTables": tables.list_tables,
    "DeleteTable": tables.delete_table,
    "UpdateTable": tables.update_table,
    "PutItem": items.put_item,
    "GetItem": items.get_item,
    "DeleteItem": items.delete_item,
    "UpdateItem": items.update_item,
    "Query": reads.query,
    "Scan": reads.scan,
    "BatchGetItem": batch.batch_get_item,
    "BatchWriteItem": batch.batch_write_item,
    "TransactWriteItems": transactions.transact_write_items,
    "TransactGetItems": transactions.transact_get_items,
    "ExecuteStatement": partiql.execute_statement,
    "BatchExecuteStatement": partiql.batch_execute_statement,
    "ExecuteTransaction": partiql.execute_transaction,
    "TagResource": tags.tag_resource,
    "UntagResource": tags.untag_resource,
    "ListTagsOfResource": tags.list_tags_of_resource,
    "DescribeLimits": control.describe_limits,
    "DescribeContinuousBackups": control.describe_continuous_backups,
    "UpdateContinuousBackups": control.update_continuous_backups,
    "PutResourcePolicy": control.put_resource_policy,
    "GetResourcePolicy": control.get_resource_policy,
    "DeleteResourcePolicy": control.delete_resource_policy,
    # Answered from the request's Host header, see `handle`.
    "DescribeEndpoints": lambda engine, request: control.describe_endpoints(""),
}


def handle(engine: Engine, operation: str, request: Any, host: bytes | None = None) -> dict[str, Any]:
    """Run one operation; `host` is the request's Host header, which DescribeEndpoints reports."""
    handler = OPERATIONS.get(operation)
    if handler is None:
        raise _unknown(operation)
    if request is None:
        raise SerializationException()
    validate_request(operation, request)
    if operation == "DescribeEndpoints":
        return control.describe_endpoints((host or b"").decode("latin-1"))
    resolve_table_arns(operation, request, engine.region)
    return handler(engine, request)


def _unknown(operation: str) -> UnknownOperationException:
    """An operation DynamoDB has but Partita lacks names itself; a made-up one gets no message.

    The real service answers an unknown target with no message at all, which
    SDKs show as a blank error; for an operation in the service model the
    caller deserves to learn that it is Partita's gap, not their typo.
    """
    if is_model_operation(operation):
        return UnknownOperationException(
            f"An unknown operation was requested: Partita does not implement {operation} yet."
        )
    return UnknownOperationException()
