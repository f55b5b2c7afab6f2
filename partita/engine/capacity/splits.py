"""Partition splits by size and for heat: a background duty, one catalog commit per split.

A partition (of a table or GSI) that holds more than the size limit (10 GB,
`--partition-size-limit` for tests) is split where its bytes are halved,
at a partition-hash boundary, so one partition-key value never spans two
partitions; a partition holding a single key cannot split (on a table with
a local index DynamoDB never splits one either), and stays as it is.

A partition that stays hot splits too (DynamoDB's split for heat): one
whose streak of hot seconds on the server clock (seconds in which it
throttled a request at its own ceiling or used 80% of it, with no gap of
a minute; buckets.py) reaches `--split-heat-seconds` (default 300) splits at
the boundary of its hottest key over the last minute (from the hot-key
counters): just below that key when other keys lie below it, so the key
leads a partition, else just above it, so it ends one. A partition whose
hottest key is its only key cannot split: one key's ceiling is the
partition's, whatever the table's capacity. Each split is recorded in the
description (`_PartitionSplits`: where, which rule, when), and the partition
map of `/partita/v1/tables/...` lists them. The
split point is found in a snapshot, then one write transaction stores the
new map and, for the table's stream, closes the shard covering the split
point and opens its two children (`streams.lifecycle.split_shard`). A
crash leaves either the old map or the new one: there is nothing to resume
half-way, and the next round simply looks again.
"""

from __future__ import annotations

import logging
import time

from ...storage.base import Store
from ..streams.lifecycle import split_shard
from ..tables.catalog import Catalog
from ..tables.schema import Table
from ..time.clock import Clock
from .meter import Meter
from .partitions import (
    HASH_SPACE,
    MAP_MEMBER,
    PARTITION_SIZE_LIMIT,
    TABLE_MAP,
    PartitionRange,
    ranges,
    row_hash,
    starts_of,
)

log = logging.getLogger("partita.splits")
#: Splits for heat after this many hot seconds in a streak (DynamoDB takes minutes).
SPLIT_HEAT_SECONDS = 300
SPLITS_MEMBER = "_PartitionSplits"
#: Splits remembered per table (the newest).
SPLITS_KEPT = 50


class PartitionSplitter:
    def __init__(self, store: Store, catalog: Catalog, clock: Clock, size_limit: int = PARTITION_SIZE_LIMIT,
                 meter: Meter | None = None, heat_seconds: int = SPLIT_HEAT_SECONDS) -> None:
        self._store = store
        self._catalog = catalog
        self._clock = clock
        self._meter = meter
        self.heat_seconds = heat_seconds
        self._next_heat = 0.0
        self.size_limit = size_limit
        # Measuring every partition costs a range statistic each; with the
        # 10 GB default that is rarely worth doing often.
        self._interval = 30.0 if size_limit >= PARTITION_SIZE_LIMIT else 0.5
        self._next = 0.0

    def run(self) -> bool:
        """One round: split the first hot partition found (every second), or oversized one (every interval).

        `now` only paces how often the duty looks (real seconds of work, so a
        clock advance does not make it scan in a burst); whether a partition
        is hot is the meter's streak on the server clock.
        """
        now = time.monotonic()
        if self._meter is not None and now >= self._next_heat:
            self._next_heat = now + 1.0
            for name in list(self._catalog.names(None)):
                table = self._catalog.get(name)
                if table is not None and self.split_hot(table):
                    self._next_heat = 0.0
                    return True
        if now < self._next:
            return False
        self._next = now + self._interval
        for name in list(self._catalog.names(None)):
            table = self._catalog.get(name)
            if table is None:
                continue
            if self.split_table(table):
                self._next = 0.0  # more may be waiting
                return True
        return False

    def split_table(self, table: Table) -> bool:
        for index_name, prefix in [(TABLE_MAP, table.prefix)] + [
            (i.name, i.prefix) for i in table.indexes if i.is_global
        ]:
            low, high = prefix, _successor(prefix)
            if self._store.stats(low, high)[1] <= self.size_limit:
                continue  # nothing in it can be over the limit
            for part in ranges(starts_of(table.description, index_name)):
                bounds = part.row_bounds(prefix)
                size = self._store.stats(*bounds)[1]
                if size <= self.size_limit:
                    continue
                at = self._split_point(bounds, part, size)
                if at is not None and self._commit(table.name, table.table_id, index_name, at, "size"):
                    return True
        return False

    def split_hot(self, table: Table) -> bool:
        """Split the first partition of `table` (or of a GSI) whose hot streak reached the threshold."""
        meter = self._meter
        assert meter is not None
        now = self._clock.now()
        for res in meter.resources(table).values():
            for part, streak in zip(ranges(res.starts), meter.hot_streaks(res, now), strict=True):
                if streak < self.heat_seconds:
                    continue
                at = self._hot_point(table, res.tag, res.name, part, now)
                meter.cool(res, part.start)  # a new streak must build before it splits again
                if at is not None and self._commit(table.name, table.table_id, res.name, at, "heat"):
                    return True
        return False

    def _hot_point(self, table: Table, tag: int, index_name: str, part: PartitionRange, now: float) -> int | None:
        """The hash boundary that gives the partition's hottest key a range of its own; None if it cannot."""
        assert self._meter is not None
        mine = [e for e in self._meter.hot.entries(table.table_id, tag, now)
                if part.start <= e["partition_hash"] <= part.end]
        if not mine:
            return None
        hottest = max(mine, key=lambda e: (e["throttles_per_minute"] * 1000 + e["read_units_per_minute"]
                                           + e["write_units_per_minute"], e["partition_hash"]))["partition_hash"]
        prefix = table.prefix if index_name == TABLE_MAP else table.index(index_name).prefix  # type: ignore[union-attr]
        low, high = part.row_bounds(prefix)
        below = prefix + int(hottest).to_bytes(8, "big")
        if hottest > part.start and any(True for _ in self._store.range(low, below, limit=1)):
            return int(hottest)  # keys below it keep the lower partition; the hot key leads the upper
        if hottest + 1 >= HASH_SPACE:
            return None
        for key, _ in self._store.range(prefix + (hottest + 1).to_bytes(8, "big"), high, limit=1):
            return row_hash(key)  # the next key leads the upper partition; the hot one ends the lower
        return None  # the hot key is the partition's only key

    def _split_point(self, bounds: tuple[bytes, bytes], part: PartitionRange, size: int) -> int | None:
        """The key-group boundary nearest the partition's middle byte; None when it holds one key."""
        groups: list[list[int]] = []  # [hash, bytes] of each run of rows sharing a hash
        for key, value in self._store.range(*bounds):
            hash_value = row_hash(key)
            if groups and groups[-1][0] == hash_value:
                groups[-1][1] += len(key) + len(value)
            else:
                groups.append([hash_value, len(key) + len(value)])
        if len(groups) < 2:
            return None
        total = sum(n for _, n in groups)
        before = groups[0][1]
        best, best_gap = groups[1][0], abs(2 * before - total)
        for hash_value, n in groups[1:]:
            gap = abs(2 * before - total)
            if gap < best_gap:
                best, best_gap = hash_value, gap
            before += n
        return best

    def _commit(self, name: str, table_id: int, index_name: str, at: int, rule: str) -> bool:
        with self._store.write() as txn:
            table = self._catalog.get(name, txn)
            if table is None or table.table_id != table_id:
                return False
            description = table.description
            starts = starts_of(description, index_name)
            if at in starts:
                return False
            maps = dict(description.get(MAP_MEMBER) or {})
            maps.setdefault(TABLE_MAP, starts_of(description))
            for index in table.indexes:
                if index.is_global:
                    maps.setdefault(index.name, starts_of(description, index.name))
            maps[index_name] = sorted([*starts, at])
            description[MAP_MEMBER] = maps
            record = {"index": index_name or None, "hash": at, "rule": rule, "time": self._clock.now()}
            description[SPLITS_MEMBER] = [*(description.get(SPLITS_MEMBER) or []), record][-SPLITS_KEPT:]
            if index_name == TABLE_MAP and "_Stream" in description:
                _split_stream(txn, description, at, self._clock.now())
            self._catalog.put(txn, Table.from_description(description, table_id))
        log.info("split a partition of %s%s at hash %d (%s)", name, f" index {index_name}" if index_name else "", at, rule)
        return True


def _split_stream(txn: object, description: dict, at: int, now: float) -> None:
    """Close the open shard covering `at` and open its children, unless `at` already starts one."""
    open_shards = description["_Stream"]["open"]
    covering = None
    for low, shard_index in open_shards:
        if low <= at:
            covering = (low, shard_index)
    if covering is not None and covering[0] < at:
        split_shard(txn, description, covering[1], at, now)  # type: ignore[arg-type]


def _successor(prefix: bytes) -> bytes:
    trimmed = prefix.rstrip(b"\xff")
    return trimmed[:-1] + bytes([trimmed[-1] + 1])
