"""Operation name -> handler. The protocol layer calls `handle` for every request."""

from __future__ import annotations

from collections.abc import Callable
from time import perf_counter
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ..engine.capacity.stats import SUCCESS
from ..errors import DynamoDBError, SerializationException, UnknownOperationException
from . import conflicts
from .arns import resolve_table_arns
from .validation.shapes import DYNAMODB, STREAMS, is_model_operation, validate_request

if TYPE_CHECKING:
    from ..engine.engine import Engine

Handler = Callable[["Engine", dict[str, Any]], dict[str, Any]]
Authorize = Callable[[str, dict[str, Any], bool], None]
"""(operation, validated request, is a Streams operation) -> None, or AccessDeniedException."""


# Each family of operations is imported by its first request, not at start-up: a server
# answers its first request having loaded only that family (PartiQL's parser, vector
# search's numpy, backups' Ion and zstandard are never loaded by a server that does not
# use them). One function per family, so the import graph (tests/test_imports.py) sees them.
def _tables() -> ModuleType:
    from . import tables

    return tables


def _items() -> ModuleType:
    from . import items

    return items


def _reads() -> ModuleType:
    from . import reads

    return reads


def _batch() -> ModuleType:
    from . import batch

    return batch


def _transactions() -> ModuleType:
    from . import transactions

    return transactions


def _tags() -> ModuleType:
    from . import tags

    return tags


def _control() -> ModuleType:
    from . import control

    return control


def _ttl() -> ModuleType:
    from . import ttl

    return ttl


def _insights() -> ModuleType:
    from . import insights

    return insights


def _streams() -> ModuleType:
    from . import streams

    return streams


def _partiql() -> ModuleType:
    from . import partiql

    return partiql


def _vector() -> ModuleType:
    from . import vector

    return vector


def _backups() -> ModuleType:
    from . import backups

    return backups


def _exports() -> ModuleType:
    from . import exports

    return exports


class _OnFirstUse:
    """A handler until its family is imported: the first call imports it and puts the real
    function in its place in the table, so later requests cost what a plain table costs."""

    __slots__ = ("_table", "_operation", "_load", "_name")

    def __init__(self, table: dict[str, Any], operation: str, load: Callable[[], ModuleType], name: str) -> None:
        self._table, self._operation, self._load, self._name = table, operation, load, name

    def __call__(self, *args: Any) -> Any:
        handler = getattr(self._load(), self._name)
        self._table[self._operation] = handler
        return handler(*args)


def _deferred(table: dict[str, Any], load: Callable[[], ModuleType], **names: str) -> None:
    for operation, name in names.items():
        table[operation] = _OnFirstUse(table, operation, load, name)



def _global_tables() -> ModuleType:
    from . import global_tables

    return global_tables


def _bulk() -> ModuleType:
    from . import bulk

    return bulk


def _kinesis() -> ModuleType:
    from . import kinesis

    return kinesis


OPERATIONS: dict[str, Handler] = {}
_deferred(OPERATIONS, _tables, CreateTable="create_table", DescribeTable="describe_table",
          ListTables="list_tables", DeleteTable="delete_table", UpdateTable="update_table")
_deferred(OPERATIONS, _items, PutItem="put_item", GetItem="get_item_operation", DeleteItem="delete_item",
          UpdateItem="update_item")
_deferred(OPERATIONS, _reads, Query="query_operation", Scan="scan_operation")
_deferred(OPERATIONS, _batch, BatchGetItem="batch_get_item", BatchWriteItem="batch_write_item")
_deferred(OPERATIONS, _transactions, TransactWriteItems="transact_write_items",
          TransactGetItems="transact_get_items")
_deferred(OPERATIONS, _partiql, ExecuteStatement="execute_statement",
          BatchExecuteStatement="batch_execute_statement", ExecuteTransaction="execute_transaction")
_deferred(OPERATIONS, _tags, TagResource="tag_resource", UntagResource="untag_resource",
          ListTagsOfResource="list_tags_of_resource")
_deferred(OPERATIONS, _control, DescribeLimits="describe_limits",
          DescribeContinuousBackups="describe_continuous_backups",
          UpdateContinuousBackups="update_continuous_backups", PutResourcePolicy="put_resource_policy",
          GetResourcePolicy="get_resource_policy", DeleteResourcePolicy="delete_resource_policy")
_deferred(OPERATIONS, _ttl, UpdateTimeToLive="update_time_to_live", DescribeTimeToLive="describe_time_to_live")
_deferred(OPERATIONS, _insights, UpdateContributorInsights="update_contributor_insights",
          DescribeContributorInsights="describe_contributor_insights",
          ListContributorInsights="list_contributor_insights")
_deferred(OPERATIONS, _vector, SearchVectors="search_vectors")
_deferred(OPERATIONS, _backups, CreateBackup="create_backup", DescribeBackup="describe_backup",
          ListBackups="list_backups", DeleteBackup="delete_backup",
          RestoreTableFromBackup="restore_table_from_backup",
          RestoreTableToPointInTime="restore_table_to_point_in_time")
_deferred(OPERATIONS, _exports, ExportTableToPointInTime="export_table_to_point_in_time",
          DescribeExport="describe_export", ListExports="list_exports", ImportTable="import_table",
          DescribeImport="describe_import", ListImports="list_imports")
_deferred(OPERATIONS, _global_tables, CreateGlobalTable="create_global_table",
          UpdateGlobalTable="update_global_table", DescribeGlobalTable="describe_global_table",
          ListGlobalTables="list_global_tables", DescribeGlobalTableSettings="describe_global_table_settings",
          UpdateGlobalTableSettings="update_global_table_settings",
          DescribeTableReplicaAutoScaling="describe_table_replica_auto_scaling",
          UpdateTableReplicaAutoScaling="update_table_replica_auto_scaling")
_deferred(OPERATIONS, _bulk, StartBulkPutItems="start_bulk_put_items", DescribeBulkOperation="describe_bulk_operation",
          ListBulkOperations="list_bulk_operations", CancelBulkOperation="cancel_bulk_operation")
_deferred(OPERATIONS, _kinesis, EnableKinesisStreamingDestination="enable_kinesis_streaming_destination",
          DisableKinesisStreamingDestination="disable_kinesis_streaming_destination",
          DescribeKinesisStreamingDestination="describe_kinesis_streaming_destination",
          UpdateKinesisStreamingDestination="update_kinesis_streaming_destination")

#: Operations answered from the request's Host header rather than the store.
HOST_OPERATIONS: dict[str, Callable[[str], dict[str, Any]]] = {}
_deferred(HOST_OPERATIONS, _control, DescribeEndpoints="describe_endpoints")

#: DynamoDB Streams' operations, served on the same endpoint (`DynamoDBStreams_20120810.*`).
STREAM_OPERATIONS: dict[str, Handler] = {}
_deferred(STREAM_OPERATIONS, _streams, ListStreams="list_streams", DescribeStream="describe_stream",
          GetShardIterator="get_shard_iterator", GetRecords="get_records")

STREAMS_SERVICE = "DynamoDBStreams_20120810"


def handle(
    engine: Engine,
    operation: str,
    request: Any,
    service: str = "DynamoDB_20120810",
    host: bytes | None = None,
    authorize: Authorize | None = None,
) -> dict[str, Any]:
    """Run one operation, counting it and its latency for /metrics (by operation and outcome).

    The answer is for orjson: GetItem's item and Query's and Scan's items may
    be `orjson.Fragment`s of their stored JSON. In-process readers of items
    call `items.get_item`, `reads.query` or `reads.scan` (the console does).
    """
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
            if authorize is not None and request is not None and is_model_operation(operation, model):
                # With `--auth`, an operation of the model that Partita lacks is still
                # authorized first: a principal it would refuse learns that, as on DynamoDB.
                validate_request(operation, request, model)
                resolve_table_arns(operation, request, engine.region)
                authorize(operation, request, model != DYNAMODB)
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
