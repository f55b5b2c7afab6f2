"""Operation name -> handler. The protocol layer calls `handle` for every request."""

from __future__ import annotations

from collections.abc import Callable
from time import perf_counter
from typing import Any

from ..engine.capacity.stats import SUCCESS
from ..engine.engine import Engine
from ..errors import DynamoDBError, SerializationException, UnknownOperationException
from . import (
    backups,
    batch,
    conflicts,
    control,
    exports,
    insights,
    items,
    partiql,
    reads,
    streams,
    tables,
    tags,
    transactions,
    ttl,
)
from . import vector as vector_api
from .arns import resolve_table_arns
from .validation.shapes import DYNAMODB, STREAMS, is_model_operation, validate_request

Handler = Callable[[Engine, dict[str, Any]], dict[str, Any]]
Authorize = Callable[[str, dict[str, Any], bool], None]
"""(operation, validated request, is a Streams operation) -> None, or AccessDeniedException."""

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
    "UpdateTimeToLive": ttl.update_time_to_live,
    "DescribeTimeToLive": ttl.describe_time_to_live,
    "UpdateContributorInsights": insights.update_contributor_insights,
    "DescribeContributorInsights": insights.describe_contributor_insights,
    "ListContributorInsights": insights.list_contributor_insights,
    "SearchVectors": vector_api.search_vectors,
    "CreateBackup": backups.create_backup,
    "DescribeBackup": backups.describe_backup,
    "ListBackups": backups.list_backups,
    "DeleteBackup": backups.delete_backup,
    "RestoreTableFromBackup": backups.restore_table_from_backup,
    "RestoreTableToPointInTime": backups.restore_table_to_point_in_time,
    "ExportTableToPointInTime": exports.export_table_to_point_in_time,
    "DescribeExport": exports.describe_export,
    "ListExports": exports.list_exports,
    "ImportTable": exports.import_table,
    "DescribeImport": exports.describe_import,
    "ListImports": exports.list_imports,
}

#: Operations answered from the request's Host header rather than the store.
HOST_OPERATIONS: dict[str, Callable[[str], dict[str, Any]]] = {
    "DescribeEndpoints": control.describe_endpoints,
}


#: DynamoDB Streams' operations, served on the same endpoint (`DynamoDBStreams_20120810.*`).
STREAM_OPERATIONS: dict[str, Handler] = {
    "ListStreams": streams.list_streams,
    "DescribeStream": streams.describe_stream,
    "GetShardIterator": streams.get_shard_iterator,
    "GetRecords": streams.get_records,
}

STREAMS_SERVICE = "DynamoDBStreams_20120810"


def handle(
    engine: Engine,
    operation: str,
    request: Any,
    service: str = "DynamoDB_20120810",
    host: bytes | None = None,
    authorize: Authorize | None = None,
) -> dict[str, Any]:
    """Run one operation, counting it and its latency for /metrics (by operation and outcome)."""
    start = perf_counter()
    try:
        answer = _handle(engine, operation, request, service, host, authorize)
    except DynamoDBError as error:
        engine.stats.observe(_label(operation, service), error.code, perf_counter() - start)
        raise
    except Exception:
        engine.stats.observe(_label(operation, service), "InternalServerError", perf_counter() - start)
        raise
    engine.stats.observe(operation, SUCCESS, perf_counter() - start)
    return answer


def _label(operation: str, service: str) -> str:
    """The operation as a metric label: a made-up name must not grow the label set."""
    known = STREAM_OPERATIONS if service == STREAMS_SERVICE else OPERATIONS
    return operation if operation in known or operation in HOST_OPERATIONS else "unknown"


def _handle(
    engine: Engine,
    operation: str,
    request: Any,
    service: str,
    host: bytes | None,
    authorize: Authorize | None,
) -> dict[str, Any]:
    """Run one operation; `host` is the request's Host header, which DescribeEndpoints reports.

    `authorize` (with `--auth`) sees the request once its shape is valid and
    its table ARNs are resolved, before anything runs.
    """
    if service == STREAMS_SERVICE:
        table, model = STREAM_OPERATIONS, STREAMS
    else:
        table, model = OPERATIONS, DYNAMODB
    handler = table.get(operation)
    if handler is None:
        by_host = HOST_OPERATIONS.get(operation) if model == DYNAMODB else None
        if by_host is None:
            raise _unknown(operation, model)
        if request is None:
            raise SerializationException()
        validate_request(operation, request, model)
        if authorize is not None:
            authorize(operation, request, False)
        return by_host((host or b"").decode("latin-1"))
    if handler is None:
        raise _unknown(operation, model)
    if request is None:
        raise SerializationException()
    validate_request(operation, request, model)
    if model == DYNAMODB:
        resolve_table_arns(operation, request, engine.region)
    if authorize is not None:
        authorize(operation, request, model != DYNAMODB)
    return conflicts.run(handler, engine, request)


def _unknown(operation: str, model: str = DYNAMODB) -> UnknownOperationException:
    """An operation DynamoDB has but Partita lacks names itself; a made-up one gets no message.

    The real service answers an unknown target with no message at all, which
    SDKs show as a blank error; for an operation in the service model the
    caller deserves to learn that it is Partita's gap, not their typo.
    """
    if is_model_operation(operation, model):
        return UnknownOperationException(
            f"An unknown operation was requested: Partita does not implement {operation} yet."
        )
    return UnknownOperationException()
