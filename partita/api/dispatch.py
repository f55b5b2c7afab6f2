"""Operation name -> handler. The protocol layer calls `handle` for every request."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..engine.engine import Engine
from ..errors import SerializationException, UnknownOperationException
from . import batch, items, reads, tables, tags, transactions
from .validation.shapes import validate_request

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
    "TagResource": tags.tag_resource,
    "UntagResource": tags.untag_resource,
    "ListTagsOfResource": tags.list_tags_of_resource,
}


def handle(engine: Engine, operation: str, request: Any) -> dict[str, Any]:
    handler = OPERATIONS.get(operation)
    if handler is None:
        raise UnknownOperationException()
    if request is None:
        raise SerializationException()
    validate_request(operation, request)
    return handler(engine, request)
