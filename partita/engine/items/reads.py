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
from typing import TYPE_CHECKING, Any

import orjson

from ...storage.base import ReadView, Store
from ..capacity import Consumed, read_units
from ..capacity.charges import read_charge
from ..capacity.meter import Meter
from ..model.keys import (
    encode_partition,
    encode_sort,
    encode_tuple,
    partition_hash,
    prefix_successor,
    tuple_hash,
)
from ..model.sizes import item_size
from ..tables.schema import Index, KeyAttribute, Table

if TYPE_CHECKING:
    from ..advisor.traces import Traces

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
    ``type_`` is that type when the condition is on one RANGE attribute of a
    multi-attribute key (None: the space's own sort key).
    """

    op: str
    values: tuple[str, ...]
    type_: str | None = None


@dataclass(slots=True)
class PageSpec:
    """What one page returns, besides where it reads.

    ``predicate`` is the filter (None: keep every item read); ``projector``
    shapes each kept item (None: the whole item); ``keep_items`` is False for
    Select=COUNT, which counts matches without returning them.
    ``as_stored``: the caller only serializes the items with orjson (the
    JSON API's Query and Scan), so a page that neither filters, projects,
    fetches from the table nor sizes items one by one hands them out as
    their stored JSON (``orjson.Fragment``), never decoded and re-encoded.
    The stored bytes are the item's canonical JSON (``orjson.dumps`` of the
    normalized item), exactly what encoding the decoded item would give.
    """

    limit: int | None = None
    predicate: Predicate | None = None
    projector: Projector | None = None
    keep_items: bool = True
    consistent: bool = False
    fetch_from_table: bool = False
    as_stored: bool = False


@dataclass(slots=True)
class Page:
    items: list[Item]
    count: int
    scanned_count: int
    last_evaluated_key: Item | None
    consumed: Consumed
    bytes_read: int = 0
    batches: int = field(default=0, repr=False)


@dataclass(slots=True)
class KeySpace:
    """What one Query or Scan reads: the rows of a table, or of one of its indexes.

    Both are laid out as ``prefix | hash | partition key | sort key ...``; they
    differ in where the prefix is, which attributes make a key, and how the
    sort key is written. A table's sort key ends the row key, so it is written
    bare; an index's sort key is followed by the table key (which makes index
    entries unique), so it is written prefix-free (see ``schema.Index``).
    """

    table: Table
    index: Index | None = None

    @property
    def hash_key(self) -> KeyAttribute:
        return self.table.hash_key if self.index is None else self.index.hash_key

    @property
    def range_key(self) -> KeyAttribute | None:
        return self.table.range_key if self.index is None else self.index.range_key

    @property
    def prefix(self) -> bytes:
        return self.table.prefix if self.index is None else self.index.prefix

    @property
    def key_names(self) -> tuple[str, ...]:
        """The attributes of a LastEvaluatedKey: the table's key, then the index's."""
        names = self.table.key_names
        if self.index is not None:
            names += tuple(n for n in self.index.key_names if n not in names)
        return names

    def encode_sort(self, value: str, type_: str | None = None) -> bytes:
        if type_ is None:
            rk = self.range_key
            assert rk is not None
            type_ = rk.type
        return encode_sort(type_, value) if self.index is None else encode_partition(type_, value)

    def sort_prefix(self, value: str, type_: str | None = None) -> bytes:
        """The bytes every sort key that begins with `value` starts with."""
        if type_ is None:
            rk = self.range_key
            assert rk is not None
            type_ = rk.type
        raw = _raw_sort(type_, value)
        return raw if self.index is None else raw.replace(b"\x00", b"\x00\xff")

    def after_sort(self, encoded: bytes) -> bytes:
        """The first row key past every row whose sort key encodes to `encoded`."""
        if self.index is None:
            return encoded + b"\x00"
        end = prefix_successor(encoded)
        assert end is not None
        return end

    def position(self, key: Item) -> bytes:
        """The row key an ExclusiveStartKey names."""
        if self.index is None:
            return self.table.row_key(key)
        return self.table.index_row_key(self.index, key)

    def last_key(self, item: Item) -> Item:
        return {name: item[name] for name in self.key_names}

    def rows_range(self) -> tuple[bytes, bytes]:
        end = prefix_successor(self.prefix)
        assert end is not None
        return self.prefix, end

    def consumed(self, units: float, fetched: float) -> Consumed:
        """Index reads are charged to the index, fetches from the table to the table."""
        index = self.index
        if index is None:
            return Consumed(self.table.name, units + fetched)
        if index.is_global:
            return Consumed(self.table.name, fetched, global_indexes={index.name: units})
        return Consumed(self.table.name, fetched, local_indexes={index.name: units})


def _raw_sort(type_: str, value: str) -> bytes:
    """The unencoded bytes of an S or B value, the unit of begins_with."""
    return value.encode("utf-8") if type_ == "S" else base64.b64decode(value)


def sort_range(space: KeySpace, prefix: bytes, cond: SortCondition | None) -> tuple[bytes, bytes]:
    """The [start, end) row-key range of one partition narrowed by a sort-key condition.

    The sort-key encodings compare as DynamoDB orders sort keys, so every
    operator is a contiguous range; `<=` and `>` cut just after the rows of
    one sort key value, begins_with is the range of keys extending a prefix.
    """
    end = prefix_successor(prefix)
    assert end is not None  # a row prefix starts with the row space byte, never all 0xFF
    if cond is None:
        return prefix, end
    op = cond.op
    type_ = cond.type_
    if op == "BEGINS_WITH":
        low = prefix + space.sort_prefix(cond.values[0], type_)
        high = prefix_successor(low)
        return low, end if high is None else high
    first = prefix + space.encode_sort(cond.values[0], type_)
    if op == "EQ":
        return first, space.after_sort(first)
    if op == "LT":
        return prefix, first
    if op == "LE":
        return prefix, space.after_sort(first)
    if op == "GT":
        return space.after_sort(first), end
    if op == "GE":
        return first, end
    if op == "BETWEEN":
        return first, space.after_sort(prefix + space.encode_sort(cond.values[1], type_))
    raise ValueError(f"not a sort-key operator: {op}")


def partition_prefix(space: KeySpace, hash_value: str | tuple[str, ...]) -> bytes:
    """Every row of one item collection (of a table or an index) starts with these bytes.

    ``hash_value`` is the partition-key value, or on a multi-attribute index
    the values of its HASH attributes in schema order.
    """
    if isinstance(hash_value, str):
        hk = space.hash_key
        return space.prefix + partition_hash(hk.type, hash_value) + encode_partition(hk.type, hash_value)
    assert space.index is not None
    parts = tuple((a.type, v) for a, v in zip(space.index.hash_keys, hash_value, strict=True))
    return space.prefix + tuple_hash(parts) + encode_tuple(parts)


def range_prefix(space: KeySpace, values: tuple[str, ...]) -> bytes:
    """The bytes after the partition prefix shared by every index row whose leading
    RANGE attributes equal ``values`` (each component is prefix-free)."""
    assert space.index is not None
    return encode_tuple(tuple((a.type, v) for a, v in zip(space.index.range_keys, values, strict=False)))


def segment_bounds(segment: int, total_segments: int) -> tuple[int, int]:
    """The hash values [low, high) of a parallel-scan segment.

    Segment i covers the real interval [i * 2**64 / N, (i + 1) * 2**64 / N);
    rounding both ends up gives the integers in it, so the N segments tile the
    hash space with no gap and no overlap, and their sizes differ by at most 1.
    """
    low = -(-segment * HASH_SPACE // total_segments)
    high = -(-(segment + 1) * HASH_SPACE // total_segments)
    return low, high


def row_hash(space: KeySpace, row_key: bytes) -> int:
    """The partition hash of a row key, as an integer in the hash space."""
    start = len(space.prefix)
    return int.from_bytes(row_key[start : start + 8], "big")


class ReadOps:
    """Query and Scan pages over one store."""

    def __init__(self, store: Store, meter: Meter | None = None, traces: Traces | None = None) -> None:
        self._store = store
        self._meter = meter
        #: The advisor's recent GSI entries: a Query on a GSI is checked against them.
        self._traces = traces

    def _charge(self, space: KeySpace, page: Page, row: bytes, key: Item | None) -> Page:
        """Charge a page to the partition it read (a Query's, or where a Scan page starts).

        The page's rows were read but nothing is returned when it is throttled.
        """
        meter = self._meter
        if meter is not None:
            index = space.index
            name = None if index is None else index.name
            meter.charge([read_charge(meter, space.table, name, row, page.consumed.total, key)])
        return page

    def query(
        self,
        space: KeySpace,
        hash_value: str | tuple[str, ...],
        sort: SortCondition | None,
        spec: PageSpec,
        *,
        forward: bool = True,
        start_key: Item | None = None,
        equal_ranges: tuple[str, ...] = (),
    ) -> Page:
        """One page of an item collection, in sort-key order (reversed if not forward).

        On a multi-attribute index ``hash_value`` holds every HASH attribute's
        value, ``equal_ranges`` the values of the leading RANGE attributes with
        an equality condition, and ``sort`` the condition on the next one: all
        of it narrows one contiguous byte range. ``start_key``
        (ExclusiveStartKey) must lie in this collection; the page starts just
        after it in the direction of reading.
        """
        prefix = partition_prefix(space, hash_value)
        if equal_ranges:
            prefix += range_prefix(space, equal_ranges)
        start, end = sort_range(space, prefix, sort)
        if start_key is not None:
            after = space.position(start_key)
            if forward:
                start = max(start, after + b"\x00")
            else:
                end = min(end, after)
        page = self._page(space, start, end, not forward, spec)
        index = space.index
        if index is not None and index.is_global and self._traces is not None:
            self._traces.gsi_read(space.table.table_id, index.name, len(space.prefix), start, end)
        if self._meter is None:
            return page
        key = {space.hash_key.name: {space.hash_key.type: hash_value}} if isinstance(hash_value, str) else None
        return self._charge(space, page, prefix, key)

    def scan(
        self,
        space: KeySpace,
        spec: PageSpec,
        *,
        segment: int = 0,
        total_segments: int = 1,
        start_key: Item | None = None,
    ) -> Page:
        """One page of a table or index (or of one parallel-scan segment), in row-key order."""
        start, end = self.segment_range(space, segment, total_segments)
        if start_key is not None:
            start = max(start, space.position(start_key) + b"\x00")
        page = self._page(space, start, end, False, spec)
        if self._meter is None:
            return page
        return self._charge(space, page, start if len(start) >= len(space.prefix) + 8 else space.prefix + bytes(8), None)

    @staticmethod
    def segment_range(space: KeySpace, segment: int, total_segments: int) -> tuple[bytes, bytes]:
        """The row keys [start, end) of one parallel-scan segment."""
        first, past_last = space.rows_range()
        if total_segments == 1:
            return first, past_last
        low, high = segment_bounds(segment, total_segments)
        start = space.prefix + low.to_bytes(8, "big")
        end = past_last if high >= HASH_SPACE else space.prefix + high.to_bytes(8, "big")
        return start, end

    def _page(self, space: KeySpace, start: bytes, end: bytes, reverse: bool, spec: PageSpec) -> Page:
        """Read rows of [start, end) until the range, the Limit or the 1 MB mark ends the page.

        One snapshot covers the whole page, so a page never mixes two states of
        the table even when it takes several batches. Bytes read come from the
        rows' stored weights (each row's weight is its item's DynamoDB size,
        see storage/base.py), summed by the store one batch at a time; only a
        batch that crosses the 1 MB mark is sized item by item, to find the
        item that ends the page. A local index read that needs attributes the
        index does not hold fetches each item from the table, charged per item
        as DynamoDB charges those fetches.
        """
        limit = spec.limit
        predicate = spec.predicate
        projector = spec.projector
        keep = spec.keep_items
        items: list[Item] = []
        count = scanned = size = stored = batches = 0
        fetched = 0.0
        last: Item | None = None
        loads = orjson.loads
        fragment = orjson.Fragment
        table = space.table
        as_stored = spec.as_stored and predicate is None and projector is None and not spec.fetch_from_table
        with (self._store if spec.consistent else self._store.eventual).snapshot() as view:
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
                    scanned += 1
                    stored += len(raw)
                    entry: Item | None = None
                    if as_stored and not exact:  # nothing here reads the item: see PageSpec.as_stored
                        count += 1
                        if keep:
                            items.append(fragment(raw))  # type: ignore[arg-type]
                    else:
                        entry = item = loads(raw)
                        if spec.fetch_from_table:
                            table_raw = view.get(table.row_key(entry))
                            if table_raw is not None:
                                item = loads(table_raw)
                                fetched += read_units(item_size(item), spec.consistent)
                        if predicate is None or predicate(item):
                            count += 1
                            if keep:
                                items.append(item if projector is None else projector(item))
                        if exact:
                            size += item_size(entry)
                            if size >= MAX_PAGE_BYTES:
                                last = entry
                                stopped = True
                                break
                    if limit is not None and scanned >= limit:
                        last = loads(raw) if entry is None else entry
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
            last_evaluated_key=None if last is None else space.last_key(last),
            consumed=space.consumed(read_units(size, spec.consistent), fetched),
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
