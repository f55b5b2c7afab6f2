"""`GET /metrics` for backups, restores, exports and imports: what is running, how far, and how many ended how.

Read from the store at scrape time (engine/backups/progress.py), so every
worker reports the same, whichever process's duty runs the jobs.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from ..engine.backups.progress import running, statuses
from ..engine.engine import Engine


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
        for (kind, status), n in sorted(statuses(store).items()):
            ended.add_metric([kind, status], n)
        yield from (items, size, ended)
