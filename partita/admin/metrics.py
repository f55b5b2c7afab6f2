"""`GET /metrics`: Prometheus text exposition of the capacity counters.

Collected at scrape time from state every worker shares (the meter's
memory map, the catalog and the store's range statistics), so any worker
answers the same numbers and nothing is added to the request path;
prometheus-client's multiprocess mode is therefore not needed for these.
Counters are totals since the shared region was created.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from ..engine.capacity.partitions import TABLE_MAP, ranges
from ..engine.engine import Engine
from ..engine.keys import prefix_successor

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


def metrics(engine: Engine) -> bytes:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(CapacityCollector(engine))
    return generate_latest(registry)
