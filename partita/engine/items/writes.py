"""The one place an item is stored: its table row and every index entry, in one commit.

Every write path (PutItem, UpdateItem, DeleteItem, batches, transactions,
TTL) ends here, so indexes, the TTL expiry index and the stream can never
drift from their table. It also
reports the index write units DynamoDB charges: an item entering or leaving
an index costs one write of its index entry, a changed index key costs two
(the old entry deleted, the new one put), a changed projection costs one,
and an index the write does not touch costs nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from ...errors import ItemCollectionSizeLimitExceededException, ValidationException
from ...storage.base import ReadView, WriteTxn
from ..capacity import write_units
from ..model.item_keys import MAX_HASH_KEY_BYTES, MAX_RANGE_KEY_BYTES, key_value_bytes
from ..model.keys import encode_partition, partition_hash, prefix_successor
from ..model.sizes import item_size
from ..tables.schema import Index, KeyAttribute, Table
from ..time.gsi_lag import GsiLag
from ..time.ttl_index import index_expiry
from ..vector.entries import check_vector_item, write_vector_entries

if TYPE_CHECKING:
    from ..advisor.traces import Traces
    from ..backups.changelog import ChangeLog
    from ..regions.log import ReplicaLog
    from ..schema_guard.guard import SchemaGuard
    from ..streams.records import StreamWriter

Item = dict[str, dict[str, Any]]
#: DynamoDB caps an item collection of a table with a local index at 10 GB.
ITEM_COLLECTION_LIMIT = 10 * 1024**3
_EMPTY_KIND = {"S": "string", "B": "binary"}


@dataclass(slots=True)
class WriteEffects:
    """What one item write did besides the table row: index units, item collection size."""

    local: dict[str, float] = field(default_factory=dict)
    global_: dict[str, float] = field(default_factory=dict)
    #: Bytes written to each vector index (VectorWriteRequestBytes before its 1 KB floor).
    vector: dict[str, int] = field(default_factory=dict)
    #: Bytes of the item's collection (table rows + local index entries) after
    #: the write; only tables with a local index have item collections to measure.
    collection_bytes: int | None = None

    def add(self, index: Index, units: float) -> None:
        target = self.global_ if index.is_global else self.local
        target[index.name] = target.get(index.name, 0.0) + units


def _key_limit(index: Index, attr: KeyAttribute) -> int:
    """DynamoDB's key size limits hold for index keys too: 2048 bytes for a partition key, 1024 for a sort key.

    For a multi-attribute key each attribute is held to its role's limit
    (no record says how the service counts several attributes: unconfirmed).
    """
    return MAX_HASH_KEY_BYTES if attr in index.hash_keys else MAX_RANGE_KEY_BYTES


def _empty_index_key(index_name: str, attr: KeyAttribute) -> ValidationException:
    return ValidationException(
        "One or more parameter values are not valid. A value specified for a secondary index key "
        "is not supported. The AttributeValue for a key attribute cannot contain an empty "
        f"{_EMPTY_KIND[attr.type]} value. IndexName: {index_name}, IndexKey: {attr.name}"
    )


def check_index_keys(table: Table, item: Item) -> None:
    """Index key attributes, where present, must have the declared type, not be empty, and fit a key."""
    if table.vector_indexes:
        check_vector_item(table, item)
    for index in table.checked_indexes:
        for attr in index.key_attributes:
            if attr.name not in item:
                continue
            value = item[attr.name]
            if attr.type not in value:
                actual = next(iter(value))
                raise ValidationException(
                    "One or more parameter values were invalid: Type mismatch for Index Key "
                    f"{attr.name} Expected: {attr.type} Actual: {actual} IndexName: {index.name}"
                )
            if value[attr.type] == "" and attr.type in _EMPTY_KIND:
                raise _empty_index_key(index.name, attr)
            limit = _key_limit(index, attr)
            size = key_value_bytes(attr.type, value[attr.type], limit)
            if size > limit:
                # Recorded answers of the service (dynalite#35, users' reports in 2018 and 2026) for a
                # partition key; the sort key's "Max Size: 1024 bytes" follows them (unconfirmed).
                raise ValidationException(
                    f"One or more parameter values were invalid: Size limit exceeded for Index Key {attr.name} "
                    f"Actual Size: {size} bytes Max Size: {limit} bytes IndexName: {index.name}"
                )


def _fits(index: Index, item: Item) -> bool:
    """Whether an item's index key values are small enough to be a key (a backfill skips the others)."""
    for attr in index.key_attributes:
        limit = _key_limit(index, attr)
        if key_value_bytes(attr.type, item[attr.name][attr.type], limit) > limit:
            return False
    return True


def check_index_key_values(table: Table, item: Item) -> None:
    """The part of check_index_keys a transaction answers with a plain ValidationException.

    Empty index key values (of the declared type) and vector values; a value
    of another type is that action's cancellation reason instead (checked
    later by check_index_keys, engine/transactions.py).
    """
    if table.vector_indexes:
        check_vector_item(table, item)
    for index in table.checked_indexes:
        for attr in index.key_attributes:
            value = item.get(attr.name)
            if value is not None and value.get(attr.type) == "" and attr.type in _EMPTY_KIND:
                raise _empty_index_key(index.name, attr)


def _entry(table: Table, index: Index, item: Item | None) -> tuple[bytes, Item] | None:
    if item is None or not index.covers(item):
        return None
    return table.index_row_key(index, item), index.project(item, table.key_names)


@dataclass(frozen=True, slots=True)
class WriteRules:
    """Server settings every item write obeys."""

    collection_limit: int = ITEM_COLLECTION_LIMIT
    gsi_lag: GsiLag | None = None
    #: Writes the stream records of tables with an enabled stream (None: no streams).
    streams: StreamWriter | None = None
    #: Writes the change log of tables under point-in-time recovery or being backed up.
    changes: ChangeLog | None = None
    #: Checks every item a client writes against its entity's schema (`--schema`; None: no check).
    guard: SchemaGuard | None = None
    #: The advisor's log of GSI entries and item-collection sizes (engine/advisor/traces.py).
    traces: Traces | None = None
    #: Versions and change records of global tables' replicas (None: a replicated write being applied).
    replicas: ReplicaLog | None = None


def _put_row(txn: WriteTxn, lag: GsiLag | None, key: bytes, value: bytes, weight: int) -> None:
    if lag is None:
        txn.put(key, value, weight)
    else:
        lag.defer(txn, key, value, weight)


def _delete_row(txn: WriteTxn, lag: GsiLag | None, key: bytes) -> None:
    if lag is None:
        txn.delete(key)
    else:
        lag.defer(txn, key, None, 0)


def _write_index(
    txn: WriteTxn, table: Table, index: Index, old: Item | None, new: Item | None, lag: GsiLag | None,
    traces: Traces | None = None,
) -> float:
    """Write one index's entry change; its units. `traces` (GSIs only) learns the entry put."""
    before = _entry(table, index, old)
    after = _entry(table, index, new)
    units = 0.0
    if before is not None and (after is None or before[0] != after[0]):
        _delete_row(txn, lag, before[0])
        units += write_units(item_size(before[1]))
        before = None
    if after is not None:
        if before is not None and before[1] == after[1]:
            return units
        size = item_size(after[1])
        _put_row(txn, lag, after[0], orjson.dumps(after[1]), size)
        if traces is not None:
            traces.gsi_write(after[0], len(index.prefix))
        charged = size if before is None else max(size, item_size(before[1]))
        units += write_units(charged)
    return units


def collection_bytes(view: ReadView, table: Table, key: Item) -> int:
    """The size of an item collection: the table's rows and local index entries of one partition key."""
    hk = table.hash_key
    value = key[hk.name][hk.type]
    partition = partition_hash(hk.type, value) + encode_partition(hk.type, value)
    total = 0
    for prefix in [table.prefix, *(i.prefix for i in table.indexes if not i.is_global)]:
        start = prefix + partition
        end = prefix_successor(start)
        assert end is not None
        total += view.stats(start, end)[1]
    return total


def store_item(
    txn: WriteTxn,
    table: Table,
    row: bytes,
    old: Item | None,
    new: Item | None,
    rules: WriteRules = WriteRules(),
    new_size: int | None = None,
    identity: dict[str, str] | None = None,
) -> WriteEffects:
    """Replace `old` by `new` (None = absent) at `row`, keeping every index exact.

    On a table with a local index, a write that leaves its item collection
    over the limit raises, and the caller's transaction rolls back: nothing
    of it is written. A change (not a write that leaves the item as it was)
    on a table with a stream adds its stream record to the same commit;
    `identity` is the record's userIdentity (TTL deletions).
    """
    if new is None:
        if old is not None:
            txn.delete(row)
    else:
        txn.put(row, orjson.dumps(new), item_size(new) if new_size is None else new_size)
    effects = WriteEffects()
    for index in table.indexes:
        if index.is_global:
            units = _write_index(txn, table, index, old, new, rules.gsi_lag, rules.traces)
        else:
            units = _write_index(txn, table, index, old, new, None)
        if units:
            effects.add(index, units)
    if table.vector_indexes:
        effects.vector = write_vector_entries(
            txn, table.vector_indexes, table.key_names, row[len(table.prefix):], old, new)
    subject = new if new is not None else old
    if subject is not None and table.indexes and any(not index.is_global for index in table.indexes):
        effects.collection_bytes = collection_bytes(txn, table, subject)
        if rules.traces is not None:
            rules.traces.collection(table.table_id, subject[table.hash_key.name], effects.collection_bytes)
        if new is not None and effects.collection_bytes > rules.collection_limit:
            raise ItemCollectionSizeLimitExceededException("Collection size exceeded.")
    description = table.description
    ttl = description.get("_TimeToLive")
    if ttl is not None and ttl["status"] == "ENABLED":
        index_expiry(txn, table.table_id, ttl["attribute"], row, old, new)
    if rules.streams is None and rules.changes is None:
        return effects
    changed = old != new  # compared once: a write that changes nothing gets no record of either kind
    if changed and rules.streams is not None:
        stream = rules.streams.stream_of(txn, table)  # judged inside txn: the table may be stale
        if stream is not None:
            rules.streams.record(txn, table, stream, old, new, new_size, identity)
    if changed and rules.changes is not None and rules.changes.wanted(txn, table):
        rules.changes.record(txn, table, row, old, new, identity)
    if changed and table.replication is not None and rules.replicas is not None:
        rules.replicas.record(txn, table, row, new)
    return effects


def store_index_entry(txn: WriteTxn, table: Table, index: Index, item: Item) -> None:
    """Write one item's entry into one index (backfill); a no-op for items the index skips.

    Items written before the index existed may hold a key value too large
    for an index key: DynamoDB's backfill skips them and still completes,
    leaving them in the table (developer guide, "Detecting and correcting
    index key violations"; recorded by ScyllaDB's Alternator tests,
    test_gsi_backfill_oversized_key and test_gsi_backfill_key_limits).
    """
    entry = _entry(table, index, item)
    if entry is not None and _fits(index, item):
        txn.put(entry[0], orjson.dumps(entry[1]), item_size(entry[1]))
