"""`GET /metrics`: Prometheus text exposition of requests, capacity, storage and background work.

The capacity numbers are collected at scrape time from state every worker
shares (the meter's memory map, the catalog and the store's range
statistics); requests, latencies, stream records and TTL deletions are each
process's own counts, merged across workers (capacity/stats.py). So any
worker answers the same totals, up to about a second. Counters are totals
since the shared region (the data directory) was created.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector

from ..engine.capacity.partitions import HASH_SPACE, TABLE_MAP, ranges, row_hash
from ..engine.capacity.stats import BUCKETS
from ..engine.engine import Engine
from ..engine.model.keys import prefix_successor
from .backup_metrics import BackupCollector

CONTENT_TYPE = b"text/plain; version=0.0.4; charset=utf-8"


class CapacityCollector(Collector):
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def collect(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily]:
        engine = self._engine
        labels = ["table", "index"]
        read = CounterMetricFamily("partita_consumed_read_units", "Read units consumed", labels=labels)
        write = CounterMetricFamily("partita_consumed_write_units", "Write units consumed", labels=labels)
        throttles = CounterMetricFamily("partita_throttled_requests", "Requests throttled", labels=labels + ["operation"])
        items = GaugeMetricFamily("partita_item_count", "Items (index entries) stored", labels=labels)
        size = GaugeMetricFamily("partita_size_bytes", "Bytes stored, by DynamoDB's item size", labels=labels)
        partitions = GaugeMetricFamily("partita_partitions", "Partitions in the partition map", labels=labels)
        engine.meter.publish()
        for name in list(engine.catalog.names(None)):
            table = engine.catalog.get(name)
            if table is None:
                continue
            for res in engine.meter.resources(table).values():
                index = "" if res.name == TABLE_MAP else res.name
                usage = engine.meter.usage(res, None)
                values = [name, index]
                read.add_metric(values, usage["read_units_total"])
                write.add_metric(values, usage["write_units_total"])
                throttles.add_metric(values + ["read"], usage["read_throttled"])
                throttles.add_metric(values + ["write"], usage["write_throttled"])
                partitions.add_metric(values, len(ranges(res.starts)))
                found = table.index(res.name) if index else None
                prefix = table.prefix if found is None else found.prefix
                end = prefix_successor(prefix)
                assert end is not None
                count, weight = engine.store.stats(prefix, end)
                items.add_metric(values, count)
                size.add_metric(values, weight)
        yield from (read, write, throttles, items, size, partitions)
        yield _backfill(engine)


def _backfill(engine: Engine) -> GaugeMetricFamily:
    """How far each global index's backfill has come, 0 to 1 (1 once ACTIVE).

    A backfill walks the table in row order, which is partition-hash order,
    so the hash of the last row it indexed over the hash space is the share
    of the table done (as even as the hash spreads keys).
    """
    family = GaugeMetricFamily("partita_gsi_backfill_progress", "Share of the table a global index backfill has read",
                               labels=["table", "index"])
    for name in list(engine.catalog.names(None)):
        table = engine.catalog.get(name)
        if table is None:
            continue
        cursors = table.description.get("_Backfill") or {}
        for doc in table.description.get("GlobalSecondaryIndexes") or []:
            index = doc["IndexName"]
            if doc.get("IndexStatus", "ACTIVE") != "CREATING":
                done = 1.0
            elif index in cursors:
                done = row_hash(bytes.fromhex(cursors[index])) / HASH_SPACE
            else:
                done = 0.0
            family.add_metric([name, index], done)
    return family


class RequestCollector(Collector):
    """Requests by operation and outcome, latency histograms, stream records, TTL deletions."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def collect(self) -> Iterator[CounterMetricFamily | HistogramMetricFamily]:
        totals = self._engine.stats.merged()
        requests = CounterMetricFamily("partita_requests", "Requests answered, by operation and outcome "
                                       "(success or the error code)", labels=["operation", "outcome"])
        for operation, outcomes in sorted(totals["requests"].items()):
            for outcome, n in sorted(outcomes.items()):
                requests.add_metric([operation, outcome], n)
        latency = HistogramMetricFamily("partita_request_duration_seconds",
                                        "Time from a parsed request to its answer, by operation", labels=["operation"])
        for operation, histogram in sorted(totals["latency"].items()):
            cumulative, buckets = 0.0, []
            for bound, n in zip((*BUCKETS, float("inf")), histogram[:-1], strict=True):
                cumulative += n
                buckets.append((repr(bound) if bound != float("inf") else "+Inf", cumulative))
            latency.add_metric([operation], buckets, histogram[-1])
        records = CounterMetricFamily("partita_stream_records_written", "Stream records written", labels=["table"])
        deletions = CounterMetricFamily("partita_ttl_deletions", "Items deleted by TTL", labels=["table"])
        for name, table, n in sorted(totals["events"]):
            if name == "stream_records":
                records.add_metric([table], n)
            elif name == "ttl_deletions":
                deletions.add_metric([table], n)
        yield from (requests, latency, records, deletions)


def metrics(engine: Engine) -> bytes:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(CapacityCollector(engine))
    registry.register(RequestCollector(engine))
    registry.register(BackupCollector(engine))
    if engine.schema_guard is not None:
        registry.register(SchemaGuardCollector(engine))
    if engine.global_tables is not None:
        from .replication_metrics import ReplicationCollector

        registry.register(ReplicationCollector(engine.global_tables))
    return generate_latest(registry)


class SchemaGuardCollector(Collector):
    """The schema guard's violations (`--schema` in warn mode), counted from the store."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def collect(self) -> Iterator[CounterMetricFamily]:
        from .schema_guard import collect_violations

        yield collect_violations(self._engine)
