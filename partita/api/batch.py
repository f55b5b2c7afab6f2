"""BatchGetItem and BatchWriteItem: validate the whole request, then one engine call.

Everything DynamoDB can reject is checked before the store is touched, so a
bad request writes nothing. The order of checks is the service's as dynalite
recorded it: the request's values and expressions for every table first,
then each table's existence and its keys, then duplicate keys. A
deserialization error anywhere in the request beats any validation error
(the service deserializes the whole body before validating it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import orjson

from ..engine.engine import Engine
from ..engine.expressions import project
from ..engine.expressions.legacy import translate_attributes_to_get
from ..engine.items.actions import ItemAction
from ..engine.items.batch import KeyRead, sum_by_table
from ..engine.items.single import check_item_size, check_listed_key, prepare_delete, prepare_put
from ..engine.model.item_keys import check_key
from ..engine.model.serialization_errors import check_item_types
from ..engine.model.values import normalize_item
from ..errors import DynamoDBError, SerializationException, ValidationException
from . import conflicts
from .expression_params import check_usage, read_expressions
from .items import item_collection_metrics

Item = dict[str, dict[str, Any]]

MAX_BATCH_GET_KEYS = 100
MAX_BATCH_WRITE_REQUESTS = 25
DUPLICATE_KEYS = "Provided list of item keys contains duplicates"
# What the service answers for a WriteRequest with neither or both of
# PutRequest and DeleteRequest (dynalite's recording; dynamodb-local agrees).
NOT_ONE_REQUEST = (
    "Supplied AttributeValue has more than one datatypes set, must contain exactly one of the "
    "supported datatypes"
)


@contextmanager
def deserialized_first(maps: Callable[[], Iterable[Any]]) -> Iterator[None]:
    """Let a deserialization error anywhere in `maps` win over the validation error raised inside.

    Checking every map only when validation failed keeps the happy path free
    of a second pass over the request.
    """
    try:
        yield
    except SerializationException:
        raise
    except DynamoDBError:
        for mapping in maps():
            if mapping is not None:
                try:
                    check_item_types(mapping)
                except SerializationException as error:
                    raise error from None
        raise


def consumed_documents(parts: Iterable[Any], mode: str | None) -> list[dict[str, Any]] | None:
    """ConsumedCapacity of a multi-table answer: one document per table, or None when not asked."""
    if mode not in ("TOTAL", "INDEXES"):
        return None
    return [doc for total in sum_by_table(parts) if (doc := total.document(mode)) is not None]


# -- BatchWriteItem -------------------------------------------------------------------------


def _write_maps(request_items: dict[str, list[dict[str, Any]]]) -> Iterator[Any]:
    for requests in request_items.values():
        for request in requests:
            put, delete = request.get("PutRequest"), request.get("DeleteRequest")
            if put is not None:
                yield put.get("Item")
            if delete is not None:
                yield delete.get("Key")


def _normalized_requests(
    request_items: dict[str, list[dict[str, Any]]],
) -> list[tuple[str, list[tuple[bool, Item, int | None]]]]:
    """(table, [(is_put, item or key, item size)]) with every value validated, before any table is looked up."""
    total = sum(len(requests) for requests in request_items.values())
    if total > MAX_BATCH_WRITE_REQUESTS:
        raise ValidationException("Too many items requested for the BatchWriteItem call")
    out = []
    for table_name, requests in request_items.items():
        for request in requests:
            if (request.get("PutRequest") is None) == (request.get("DeleteRequest") is None):
                raise ValidationException(NOT_ONE_REQUEST)
        normalized = []
        for request in requests:
            put = request.get("PutRequest")
            if put is not None:
                item = normalize_item(put["Item"])
                normalized.append((True, item, check_item_size(item)))
            else:
                normalized.append((False, normalize_item(request["DeleteRequest"]["Key"]), None))
        out.append((table_name, normalized))
    return out


def _write_actions(engine: Engine, request_items: dict[str, list[dict[str, Any]]]) -> list[ItemAction]:
    actions = []
    for table_name, requests in _normalized_requests(request_items):
        table = engine.tables.get(table_name)
        rows = set()
        for is_put, item, size in requests:
            if is_put:
                check_listed_key(table, item)
                action = prepare_put(table, item, size=size)
            else:
                check_key(table, item)
                action = prepare_delete(table, item)
            if action.row in rows:
                raise ValidationException(DUPLICATE_KEYS)
            rows.add(action.row)
            actions.append(action)
    return actions


def batch_write_item(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    request_items = request["RequestItems"]
    with deserialized_first(lambda: _write_maps(request_items)):
        actions = _write_actions(engine, request_items)
    outcomes = conflicts.write_batch(engine.batch, actions)
    out: dict[str, Any] = {"UnprocessedItems": _unprocessed_writes(request_items, outcomes)}
    written = [o for o in outcomes if o.throttled is None]
    consumed = consumed_documents((o.consumed for o in written), request.get("ReturnConsumedCapacity"))
    if consumed is not None:
        out["ConsumedCapacity"] = consumed
    if request.get("ReturnItemCollectionMetrics") == "SIZE":
        metrics = collection_metrics((o.action, o.collection_bytes) for o in written)
        if metrics:
            out["ItemCollectionMetrics"] = metrics
    return out


def _unprocessed_writes(request_items: dict[str, list[dict[str, Any]]], outcomes: list[Any]) -> dict[str, Any]:
    """The requests not written, as sent (actions follow the request order).

    Throttled by the throughput emulation, or on PostgreSQL held by a running
    transaction or still conflicting after their retries (api/conflicts.py).
    As on DynamoDB, a batch none of whose requests could be processed fails
    with the first one's exception instead, unless one of them failed for an
    internal reason (`conflicts.StillConflicting`), which DynamoDB returns
    unprocessed whatever became of the others.
    """
    throttled = [o.throttled for o in outcomes if o.throttled is not None]
    if not throttled:
        return {}
    if len(throttled) == len(outcomes) and not any(isinstance(why, conflicts.StillConflicting) for why in throttled):
        raise throttled[0]
    out: dict[str, list[dict[str, Any]]] = {}
    position = 0
    for table_name, requests in request_items.items():
        for sent in requests:
            if outcomes[position].throttled is not None:
                out.setdefault(table_name, []).append(sent)
            position += 1
    return out


def collection_metrics(written: Iterable[tuple[ItemAction, int | None]]) -> dict[str, list[dict[str, Any]]]:
    """ItemCollectionMetrics per table: one entry per item collection written, at its final size."""
    per_table: dict[str, dict[bytes, dict[str, Any]]] = {}
    for action, size in written:
        if size is None:
            continue
        hash_name = action.table.hash_key.name
        collection = orjson.dumps(action.key[hash_name])
        per_table.setdefault(action.table.name, {})[collection] = item_collection_metrics(
            action.table, action.key, size
        )
    return {name: list(entries.values()) for name, entries in per_table.items()}


# -- BatchGetItem ---------------------------------------------------------------------------


class _TableGet:
    """One table's part of a BatchGetItem: its keys and how to shape the items found."""

    __slots__ = ("name", "request", "keys", "projector")

    def __init__(self, name: str, request: dict[str, Any]) -> None:
        self.name = name
        self.request = request
        expressions = read_expressions(request, ("ProjectionExpression",), ("AttributesToGet",))
        legacy = translate_attributes_to_get(request.get("AttributesToGet"))
        projection = expressions.get("ProjectionExpression")
        self.projector: Callable[[Item], Item] | None = None
        if projection is not None:
            self.projector = lambda item: project(item, projection, expressions.names)
        elif legacy is not None:
            self.projector = lambda item: project(item, legacy.projection, legacy.names)
        self.keys: list[Item] = []


def _table_gets(request_items: dict[str, dict[str, Any]]) -> list[_TableGet]:
    """Expressions and key values of every table, duplicates and the 100-key limit.

    Duplicates are found on the keys as sent: the service treats `1000` and
    `1e3` as two keys here (while BatchWriteItem does not).
    """
    gets = []
    count = 0
    for name, table_request in request_items.items():
        get = _TableGet(name, table_request)
        seen = set()
        for raw_key in table_request["Keys"]:
            get.keys.append(normalize_item(raw_key))
            sent = orjson.dumps(raw_key, option=orjson.OPT_SORT_KEYS)
            if sent in seen:
                raise ValidationException(DUPLICATE_KEYS)
            seen.add(sent)
            count += 1
            if count > MAX_BATCH_GET_KEYS:
                raise ValidationException("Too many items requested for the BatchGetItem call")
        gets.append(get)
    _one_projection_style(request_items)
    return gets


def _one_projection_style(request_items: dict[str, dict[str, Any]]) -> None:
    """ProjectionExpression in one table's block and AttributesToGet in another's: one request mixing both.

    AWS refuses it with a ValidationException (a 2026 conformance suite);
    its words are not on record, so a block's own mixing message is used.
    """
    projected = any("ProjectionExpression" in part for part in request_items.values())
    if projected and any("AttributesToGet" in part for part in request_items.values()):
        check_usage({"ProjectionExpression": None, "AttributesToGet": None}, ("ProjectionExpression",),
                    ("AttributesToGet",))


def _key_reads(engine: Engine, gets: list[_TableGet]) -> list[KeyRead]:
    reads = []
    for get in gets:
        table = engine.tables.get(get.name)
        consistent = bool(get.request.get("ConsistentRead"))
        for key in get.keys:
            check_key(table, key)
            reads.append(KeyRead(table, key, consistent))
    return reads


def batch_get_item(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    request_items = request["RequestItems"]
    with deserialized_first(lambda: (key for part in request_items.values() for key in part["Keys"])):
        gets = _table_gets(request_items)
        reads = _key_reads(engine, gets)
    result = engine.batch.get(reads)
    if result.throttled and len(result.throttled) == len(result.items) == len(reads):
        raise next(iter(result.throttled.values()))  # nothing could be read: DynamoDB fails the call
    responses: dict[str, list[Item]] = {get.name: [] for get in gets}
    unprocessed: dict[str, dict[str, Any]] = {}
    index = 0
    for get in gets:
        for raw_key in get.request["Keys"]:
            if index >= len(result.items) or index in result.throttled:
                rest = unprocessed.setdefault(get.name, {**get.request, "Keys": []})
                rest["Keys"].append(raw_key)
            else:
                item = result.items[index]
                if item is not None:
                    responses[get.name].append(item if get.projector is None else get.projector(item))
            index += 1
    out: dict[str, Any] = {"Responses": responses, "UnprocessedKeys": unprocessed}
    consumed = consumed_documents(result.consumed, request.get("ReturnConsumedCapacity"))
    if consumed is not None:
        out["ConsumedCapacity"] = consumed
    return out
