"""Query and Scan: reading one page of rows in row-key order.

A row key is ``table prefix | 8-byte partition hash | partition key | sort key``
(see ``schema.Table.row_key``), and both operations fall out of that layout:

* a Query names one partition key, so every row it can return shares one
  prefix and a sort-key condition narrows that prefix to one contiguous byte
  range (the sort-key encodings compare exactly as DynamoDB orders sort keys);
* a Scan walks the table's rows in key order, which is partition-hash order,
  and a parallel-scan segment is an equal slice of the 64-bit hash space.

Either way the engine reads a page the way DynamoDB does: items are counted
as they are *read* (``Limit`` and ``ScannedCount`` count items before the
filter), the page stops once the items read reach 1 MB (the item that crosses
the mark is still part of the page), and the capacity charged is for the bytes
read, not the bytes returned. Rows come from the store in bounded batches, so
a page never holds more than about a megabyte of items plus one batch, however
large the table.

The api layer has validated the request against the table's schema before it
calls in here; this module only plans byte ranges and reads.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..storage.base import ReadView, Store
from .capacity import Consumed, read_units
from .item_keys import key_of
from .keys import encode_partition, encode_sort, partition_hash, prefix_successor
from .schema import Table
from .values import item_size

Item = dict[str, dict[str, Any]]
Predicate = Callable[[Item], bool]
Projector = Callable[[Item], Item]

#: DynamoDB stops a Query or Scan page once the items read reach this many bytes.
MAX_PAGE_BYTES = 1024 * 1024
#: Parallel scan splits this many hash values into TotalSegments equal slices.
HASH_SPACE = 1 << 64

# Batches start small (most Query pages are a few dozen rows and finish in one
# store call) and then grow towards what the rest of the 1 MB page needs,
# estimated from the rows read so far; the cap bounds memory per batch.
_FIRST_BATCH = 64
_MIN_BATCH = 16
_MAX_BATCH = 1024

# Sort-key operators, as the api layer names them (the legacy API's names).
SORT_OPERATORS = frozenset(("EQ", "LT", "LE", "GT", "GE", "BETWEEN", "BEGINS_WITH"))


@dataclass(frozen=True, slots=True)
class SortCondition:
    """One validated condition on the sort key: an operator and its raw values.

    ``values`` are the values of the sort key's own type in wire form (the
    string inside ``{"N": ...}`` etc.): one value, or two for BETWEEN.
    """

    op: str
    values: tuple[str, ...]


@dataclass(slots=True)
class PageSpec:
    """What one page returns, besides where it reads.

    ``predicate`` is the filter (None: keep every item read); ``projector``
    shapes each kept item (None: the whole item); ``keep_items`` is False for
    Select=COUNT, which counts matches without returning them.
    """

    limit: int | None = None
    predicate: Predicate | None = None
    projector: Projector | None = None
    keep_items: bool = True
    consistent: bool = False


@dataclass(slots=True)
class Page:
    items: list[Item]
    count: int
    scanned_count: int
    last_evaluated_key: Item | None
    consumed: Consumed
    bytes_read: int = 0
    batches: int = field(default=0, repr=False)


def _raw_sort(type_: str, value: str) -> bytes:
    """The unencoded bytes of an S or B value, the unit of begins_with."""
    return value.encode("utf-8") if type_ == "S" else base64.b64decode(value)


def sort_range(table: Table, prefix: bytes, cond: SortCondition | None) -> tuple[bytes, bytes]:
    """The [start, end) row-key range of one partition narrowed by a sort-key condition.

    Sort keys are the last part of a row key. Their S and B encodings are the
    bare bytes and the N encoding is prefix-free, so ``k + b"\\x00"`` is the
    smallest key after ``k`` that does not extend it: `<=` and `>` cut there.
    begins_with is the range of keys that extend the prefix bytes.
    """
    end = prefix_successor(prefix)
    assert end is not None  # a row prefix starts with the row space byte, never all 0xFF
    if cond is None:
        return prefix, end
    rk = table.range_key
    assert rk is not None
    op = cond.op
    if op == "BEGINS_WITH":
        low = prefix + _raw_sort(rk.type, cond.values[0])
        high = prefix_successor(low)
        return low, end if high is None else high
    first = prefix + encode_sort(rk.type, cond.values[0])
    if op == "EQ":
        return first, first + b"\x00"
    if op == "LT":
        return prefix, first
    if op == "LE":
        return prefix, first + b"\x00"
    if op == "GT":
        return first + b"\x00", end
    if op == "GE":
        return first, end
    if op == "BETWEEN":
        return first, prefix + encode_sort(rk.type, cond.values[1]) + b"\x00"
    raise ValueError(f"not a sort-key operator: {op}")


def partition_prefix(table: Table, hash_value: str) -> bytes:
    """Every row of one item collection starts with these bytes."""
    hk = table.hash_key
    return table.prefix + partition_hash(hk.type, hash_value) + encode_partition(hk.type, hash_value)


def segment_bounds(segment: int, total_segments: int) -> tuple[int, int]:
    """The hash values [low, high) of a parallel-scan segment.

    Segment i covers the real interval [i * 2**64 / N, (i + 1) * 2**64 / N);
    rounding both ends up gives the integers in it, so the N segments tile the
    hash space with no gap and no overlap, and their sizes differ by at most 1.
    """
    low = -(-segment * HASH_SPACE // total_segments)
    high = -(-(segment + 1) * HASH_SPACE // total_segments)
    return low, high


def row_hash(table: Table, row_key: bytes) -> int:
    """The partition hash of a row key, as an integer in the hash space."""
    start = len(table.prefix)
    return int.from_bytes(row_key[start : start + 8], "big")


class ReadOps:
    """Query and Scan pages over one store."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def query(
        self,
        table: Table,
        hash_value: str,
        sort: SortCondition | None,
        spec: PageSpec,
        *,
        forward: bool = True,
        start_key: Item | None = None,
    ) -> Page:
        """One page of an item collection, in sort-key order (reversed if not forward).

        ``start_key`` (ExclusiveStartKey) must lie in this collection; the page
        starts just after it in the direction of reading.
        """
        start, end = sort_range(table, partition_prefix(table, hash_value), sort)
        if start_key is not None:
            after = table.row_key(start_key)
            if forward:
                start = max(start, after + b"\x00")
            else:
                end = min(end, after)
        return self._page(table, start, end, not forward, spec)

    def scan(
        self,
        table: Table,
        spec: PageSpec,
        *,
        segment: int = 0,
        total_segments: int = 1,
        start_key: Item | None = None,
    ) -> Page:
        """One page of a table (or of one parallel-scan segment), in row-key order."""
        start, end = self.segment_range(table, segment, total_segments)
        if start_key is not None:
            start = max(start, table.row_key(start_key) + b"\x00")
        return self._page(table, start, end, False, spec)

    @staticmethod
    def segment_range(table: Table, segment: int, total_segments: int) -> tuple[bytes, bytes]:
        """The row keys [start, end) of one parallel-scan segment of a table."""
        first, past_last = table.data_range()
        if total_segments == 1:
            return first, past_last
        low, high = segment_bounds(segment, total_segments)
        start = table.prefix + low.to_bytes(8, "big")
        end = past_last if high >= HASH_SPACE else table.prefix + high.to_bytes(8, "big")
        return start, end

    def _page(self, table: Table, start: bytes, end: bytes, reverse: bool, spec: PageSpec) -> Page:
        """Read rows of [start, end) until the range, the Limit or the 1 MB mark ends the page.

        One snapshot covers the whole page, so a page never mixes two states of
        the table even when it takes several batches. Bytes read come from the
        rows' stored weights (each row's weight is its item's DynamoDB size,
        see storage/base.py), summed by the store one batch at a time; only a
        batch that crosses the 1 MB mark is sized item by item, to find the
        item that ends the page.
        """
        limit = spec.limit
        predicate = spec.predicate
        projector = spec.projector
        keep = spec.keep_items
        items: list[Item] = []
        count = scanned = size = stored = batches = 0
        last: Item | None = None
        loads = orjson.loads
        with self._store.snapshot() as view:
            want = _FIRST_BATCH if limit is None else min(limit, _FIRST_BATCH)
            while start < end:
                rows = _fetch(view, start, end, reverse, want)
                if not rows:
                    break
                batches += 1
                first_key, last_key = rows[0][0], rows[-1][0]
                low, high = (last_key, first_key) if reverse else (first_key, last_key)
                weight = view.stats(low, high + b"\x00")[1]
                exact = size + weight >= MAX_PAGE_BYTES
                stopped = False
                for _, raw in rows:
                    item = loads(raw)
                    scanned += 1
                    stored += len(raw)
                    if predicate is None or predicate(item):
                        count += 1
                        if keep:
                            items.append(item if projector is None else projector(item))
                    if exact:
                        size += item_size(item)
                        if size >= MAX_PAGE_BYTES:
                            last = item
                            stopped = True
                            break
                    if limit is not None and scanned >= limit:
                        last = item
                        stopped = True
                        break
                if not exact:
                    size += weight
                if stopped or len(rows) < want:
                    break
                if reverse:
                    end = last_key
                else:
                    start = last_key + b"\x00"
                want = _next_batch(MAX_PAGE_BYTES - size, stored // scanned)
                if limit is not None:
                    want = min(want, limit - scanned)
        return Page(
            items=items,
            count=count,
            scanned_count=scanned,
            last_evaluated_key=None if last is None else key_of(table, last),
            consumed=Consumed(table.name, read_units(size, spec.consistent)),
            bytes_read=size,
            batches=batches,
        )


def _fetch(view: ReadView, start: bytes, end: bytes, reverse: bool, want: int) -> list[tuple[bytes, bytes]]:
    rows = view.range(start, end, reverse=reverse, limit=want)
    return rows if isinstance(rows, list) else list(rows)


def _next_batch(bytes_left: int, avg_row: int) -> int:
    """Rows to ask for next: about what the rest of the page needs, within bounds."""
    estimate = bytes_left // max(avg_row, 1) + 1
    return max(_MIN_BATCH, min(_MAX_BATCH, estimate))
