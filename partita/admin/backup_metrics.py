"""`GET /metrics` for backups, restores, exports, imports and bulk puts (what is running, how far, how many
ended how) and for Kinesis streaming destinations (delivery lag, pending changes, records sent).

Read from the store at scrape time (engine/backups/progress.py), so every
worker reports the same, whichever process's duty runs the jobs.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from ..engine.backups.progress import running, statuses
from ..engine.engine import Engine
from ..engine.kinesis.service import deliveries


class BackupCollector(Collector):
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def collect(self) -> Iterator[GaugeMetricFamily]:
        store = self._engine.store
        labels = ["kind", "table", "resource", "phase"]
        items = GaugeMetricFamily("partita_backup_job_items", "Items a running backup, restore, export or import "
                                  "job has processed so far", labels=labels)
        size = GaugeMetricFamily("partita_backup_job_bytes", "Bytes a running backup, restore, export or import "
                                 "job has processed so far", labels=labels)
        for job in running(store):
            values = [job.kind, job.table, job.resource, job.phase]
            items.add_metric(values, job.items)
            size.add_metric(values, job.bytes)
        ended = GaugeMetricFamily("partita_backup_jobs", "Exports, imports and on-demand backups by status",
                                  labels=["kind", "status"])
        counts = statuses(store)
        for doc in self._engine.bulk.documents():
            counts["bulk-put", doc["BulkOperationStatus"]] += 1
        for (kind, status), n in sorted(counts.items()):
            ended.add_metric([kind, status], n)
        yield from (items, size, ended)
        yield from kinesis_metrics(self._engine)


def kinesis_metrics(engine: Engine) -> Iterator[GaugeMetricFamily]:
    """Each live Kinesis streaming destination: delivery lag, changes waiting, records sent, failing or not."""
    labels = ["table", "stream", "status"]
    lag = GaugeMetricFamily("partita_kinesis_delivery_lag_seconds", "Seconds since the oldest change not yet "
                            "acknowledged by the Kinesis stream committed (0: caught up)", labels=labels)
    pending = GaugeMetricFamily("partita_kinesis_pending_changes", "Changes committed and not yet acknowledged "
                                "by the Kinesis stream", labels=labels)
    sent = GaugeMetricFamily("partita_kinesis_records_sent", "Records the Kinesis stream acknowledged since the "
                             "destination was enabled", labels=labels)
    failing = GaugeMetricFamily("partita_kinesis_delivery_failing", "1 while the last delivery attempt failed "
                                "(the stream is missing or the endpoint unreachable)", labels=labels)
    for delivery in deliveries(engine.store, engine.clock):
        values = [delivery.table, delivery.stream, delivery.status]
        lag.add_metric(values, delivery.lag)
        pending.add_metric(values, delivery.pending)
        sent.add_metric(values, delivery.sent)
        failing.add_metric(values, 1 if delivery.error else 0)
    yield from (lag, pending, sent, failing)
