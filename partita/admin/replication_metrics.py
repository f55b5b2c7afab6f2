"""`GET /metrics` for global tables (a server of several regions only): lag, backlog, conflicts.

`partita_replication_latency_seconds` is the last write's replication
latency per region pair (DynamoDB's CloudWatch ReplicationLatency is per
pair too), `partita_replication_pending` the changes written and not yet
applied, per table and pair (read from the store: every worker reports the
same). Applied writes and conflicts are this process's counts (the process
that holds the duty lock applies them).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from ..engine.regions.observe import backlog, members


class ReplicationCollector(Collector):
    def __init__(self, global_tables: Any) -> None:
        self._gt = global_tables

    def collect(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily]:
        gt = self._gt
        pair = ["source_region", "destination_region"]
        latency = GaugeMetricFamily("partita_replication_latency_seconds",
                                    "Server-clock time from a write to its application in another replica (the last one)",
                                    labels=pair)
        applied = CounterMetricFamily("partita_replicated_writes", "Writes applied to another replica", labels=pair)
        for (source, target), seconds in sorted(gt.stats.latency.items()):
            latency.add_metric([source, target], seconds)
        for (source, target), n in sorted(gt.stats.applied.items()):
            applied.add_metric([source, target], n)
        pending = GaugeMetricFamily("partita_replication_pending", "Changes written and not yet applied to a replica",
                                    labels=["table", *pair])
        for row in backlog(gt):
            pending.add_metric([row["table"], row["from"], row["to"]], row["changes"])
        conflicts = CounterMetricFamily("partita_replication_conflicts",
                                        "Writes discarded by last-writer-wins (a later write held the item)",
                                        labels=["table"])
        for table, n in sorted(gt.stats.conflicts.items()):
            conflicts.add_metric([table], n)
        held = GaugeMetricFamily("partita_replication_held", "1 while replication is held (tests)")
        held.add_metric([], 1 if gt.held() else 0)
        replicas = GaugeMetricFamily("partita_global_table_replicas", "Replicas of global tables, by status",
                                     labels=["table", "region", "status"])
        for row in members(gt):
            replicas.add_metric([row["table"], row["region"], row["status"]], 1)
        yield from (latency, applied, pending, conflicts, held, replicas)
