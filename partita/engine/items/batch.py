"""BatchWriteItem and BatchGetItem: many single-item steps under one store transaction.

A batch is not a transaction on DynamoDB (each write is atomic on its own,
and a failed request leaves the others written). Partita runs every request
of a BatchWriteItem in one store write transaction anyway: each item write
is still atomic, a request that fails validation or hits the item collection
limit leaves nothing written, and one commit instead of 25 is what makes a
batch fast (see docs/decisions.md). On PostgreSQL a batch that keeps failing
to serialize is then written item by item (api/conflicts.py). The api layer
has validated everything that can be validated before the store is touched.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from ...errors import DynamoDBError
from ...storage.base import Store
from ..capacity import Consumed, read_units
from ..capacity.charges import charge_batch, read_charge
from ..capacity.meter import Meter
from ..tables.schema import Table
from .actions import ItemAction
from .single import resolve, store, write_capacity
from .writes import WriteRules

if TYPE_CHECKING:
    from ..advisor.advisor import Advisor

Item = dict[str, dict[str, Any]]

#: A BatchGetItem answer holds at most this many bytes of items; the rest is unprocessed.
MAX_BATCH_GET_BYTES = 16 * 1024 * 1024


def sum_by_table(parts: Iterable[Consumed]) -> list[Consumed]:
    """Per-table totals of several items' capacity, tables in the order they first appear.

    Batch and transaction answers report ConsumedCapacity as one entry per
    table, table and index units summed separately.
    """
    totals: dict[str, Consumed] = {}
    for part in parts:
        total = totals.get(part.table_name)
        if total is None:
            total = totals[part.table_name] = Consumed(part.table_name)
        total.table += part.table
        for target, source in (
            (total.local_indexes, part.local_indexes),
            (total.global_indexes, part.global_indexes),
        ):
            for name, units in source.items():
                target[name] = target.get(name, 0.0) + units
        if part.vector_indexes:
            vectors = total.vector_indexes = total.vector_indexes or {}
            for name, size in part.vector_indexes.items():
                vectors[name] = vectors.get(name, 0.0) + size
    return list(totals.values())


@dataclass(slots=True)
class WriteOutcome:
    """What one written item cost, and its item collection's size (tables with a local index)."""

    action: ItemAction
    consumed: Consumed
    collection_bytes: int | None
    #: Why this request was not written (the throughput emulation refused it, or on PostgreSQL a
    #: conflict, api/conflicts.py): it goes back in UnprocessedItems.
    throttled: DynamoDBError | None = None


@dataclass(slots=True)
class KeyRead:
    """One key of a BatchGetItem: where, and whether the read is strongly consistent."""

    table: Table
    key: Item
    consistent: bool


@dataclass(slots=True)
class BatchGetResult:
    """The items of the first ``len(items)`` reads (None: no such item); the rest were not processed."""

    items: list[Item | None] = field(default_factory=list)
    consumed: list[Consumed] = field(default_factory=list)
    #: DynamoDB size of the items read, before any projection.
    size: int = 0
    #: Positions of the reads the throughput emulation refused (UnprocessedKeys), and why.
    throttled: dict[int, DynamoDBError] = field(default_factory=dict)


def read_keys(
    store: Store, reads: list[KeyRead], limit: int | None = None, meter: Meter | None = None
) -> BatchGetResult:
    """Read keys in order, in one snapshot, until the next item would pass `limit` bytes.

    One snapshot makes the answer one state of the store, which
    TransactGetItems promises and costs BatchGetItem nothing. Only the reads
    processed are charged; with a `meter`, a read it throttles is left out
    (None in `items`, its position in `throttled`).
    """
    result = BatchGetResult()
    rows = [read.table.row_key(read.key) for read in reads]
    with store.snapshot() as view:
        if len(rows) > 1:
            view.prefetch(rows)
        for read, row in zip(reads, rows, strict=True):
            stored = view.get_weighted(row)
            item = None if stored is None else orjson.loads(stored[0])
            size = 0 if stored is None else stored[1]
            if limit is not None and result.size + size > limit:
                break
            units = read_units(size, read.consistent)
            if meter is not None:
                try:
                    meter.charge([read_charge(meter, read.table, None, row, units, read.key)])
                except DynamoDBError as error:
                    result.throttled[len(result.items)] = error
                    result.items.append(None)
                    continue
            result.size += size
            result.items.append(item)
            result.consumed.append(Consumed(read.table.name, units))
    return result


class BatchOps:
    def __init__(self, store: Store, rules: WriteRules, meter: Meter | None = None,
                 advisor: Advisor | None = None) -> None:
        self._store = store
        self._rules = rules
        self._meter = meter
        self._advisor = advisor

    def write(self, actions: list[ItemAction]) -> list[WriteOutcome]:
        """Write every prepared put or delete, all in one store transaction.

        A request the throughput emulation throttles is skipped (nothing of
        it is written) and comes back with `throttled` set.
        """
        outcomes = []
        meter = self._meter
        with self._store.write() as txn:
            if len(actions) > 1:
                txn.prefetch([action.row for action in actions])
            # Every request is read before any is stored, so that the meter can charge the batch in
            # one call; the rows are distinct (api/batch.py refuses duplicates), so no read would
            # have seen another request's write.
            guard = self._rules.guard
            resolved = [resolve(txn, action, guard) for action in actions]
            refused = None
            if meter is not None:
                refused = charge_batch(meter, actions, resolved)
            for position, action in enumerate(actions):
                old, new = resolved[position]
                error = None if refused is None else refused[position]
                if error is not None:
                    outcomes.append(WriteOutcome(action, Consumed(action.table.name), None, error))
                    continue
                effects = store(txn, action, old, new, self._rules)
                outcomes.append(WriteOutcome(action, write_capacity(action, old, new, effects), effects.collection_bytes))
        return outcomes

    def get(self, reads: list[KeyRead], limit: int = MAX_BATCH_GET_BYTES) -> BatchGetResult:
        """BatchGetItem: at most `limit` bytes of items (their size before any projection)."""
        result = read_keys(self._store, reads, limit, self._meter)
        advisor = self._advisor
        if advisor is not None:  # each key read counts in its shape (table, key tags), as a GetItem would
            consumed = iter(result.consumed)  # one per read processed and not throttled
            for position, item in enumerate(result.items):
                if position in result.throttled:
                    continue
                read = reads[position]
                advisor.point_read("BatchGetItem", read.table, read.key, next(consumed).total, item is not None)
        return result
