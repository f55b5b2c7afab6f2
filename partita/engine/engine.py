"""The engine's front door: one object per store, grouping the operation families."""

from __future__ import annotations

from pathlib import Path

from ..storage.base import Store
from .backups.changelog import ChangeLog
from .backups.objects import S3
from .backups.service import BackupService
from .capacity.insights import ContributorInsights
from .capacity.meter import Meter
from .capacity.partitions import ACCOUNT_MAX_UNITS, PARTITION_SIZE_LIMIT, TABLE_MAX_UNITS
from .capacity.remote import RemoteBuckets
from .capacity.splits import SPLIT_HEAT_SECONDS, PartitionSplitter
from .capacity.stats import ProcessStats
from .control.backups import BackupOps
from .control.policies import PolicyOps
from .items.batch import BatchOps
from .items.reads import ReadOps
from .items.single import ItemOps
from .items.transactions import TransactionOps
from .items.writes import ITEM_COLLECTION_LIMIT, WriteRules
from .streams.reader import StreamReader
from .streams.records import StreamWriter
from .streams.trim import StreamTrimmer
from .tables.catalog import Catalog
from .tables.index_jobs import IndexJobs
from .tables.lifecycle import TableOps
from .tables.tags import TagOps
from .tables.updates import TableUpdates
from .time.clock import Clock
from .time.duties import Duties
from .time.gsi_lag import GsiLag
from .time.ttl import TimeToLive
from .vector.search import VectorSearch


class Engine:
    def __init__(
        self,
        store: Store,
        region: str = "us-east-1",
        *,
        item_collection_limit: int = ITEM_COLLECTION_LIMIT,
        gsi_lag_ms: int = 0,
        ttl_delay: float = 0.0,
        background: bool = True,
        emulate_throughput: bool = False,
        capacity_path: Path | None = None,
        capacity_url: str | None = None,
        partition_size_limit: int = PARTITION_SIZE_LIMIT,
        vector_index: str = "exact",
        s3_dir: Path | None = None,
        s3: S3 | None = None,
        table_max_units: int = TABLE_MAX_UNITS,
        split_heat_seconds: int = SPLIT_HEAT_SECONDS,
    ) -> None:
        self.store = store
        self.region = region
        self.ttl_delay = ttl_delay
        self.clock = Clock(store)
        #: Token buckets and usage counters, shared by the workers through `capacity_path`.
        #: Requests by operation and outcome, latencies, stream records and TTL deletions (/metrics).
        self.stats = ProcessStats(None if capacity_path is None else capacity_path.parent / "partita.metrics")
        remote = RemoteBuckets(capacity_url) if capacity_url and emulate_throughput else None
        self.meter = Meter(self.clock, capacity_path, emulate_throughput, float(table_max_units), remote)
        self.gsi_lag = GsiLag(gsi_lag_ms, self.clock) if gsi_lag_ms > 0 else None
        self.catalog = Catalog(store)
        self.tables = TableOps(store, self.catalog, region, self.clock)
        if emulate_throughput:  # the account maximum DescribeLimits reports
            self.tables.account_max_units = max(ACCOUNT_MAX_UNITS, table_max_units)
        rules = WriteRules(
            item_collection_limit,
            self.gsi_lag,
            StreamWriter(self.clock, region, self.stats, self.catalog),
            ChangeLog(self.clock, self.catalog),
        )
        self.items = ItemOps(store, self.tables, rules, self.meter)
        self.batch = BatchOps(store, rules, self.meter)
        self.transactions = TransactionOps(store, rules, self.clock, meter=self.meter)
        self.reads = ReadOps(store, self.meter)
        self.vectors = VectorSearch(store, approximate=vector_index == "approximate")
        self.index_jobs = IndexJobs(store, self.catalog)
        self.table_updates = TableUpdates(store, self.catalog, self.tables, self.index_jobs)
        self.tags = TagOps(store, self.catalog, self.tables)
        self.backups = BackupOps(store, self.catalog, self.clock)
        self.policies = PolicyOps(store, self.catalog, region, self.clock)
        self.streams = StreamReader(store, self.clock)
        self.ttl = TimeToLive(store, self.catalog, self.clock, rules, ttl_delay, self.stats)
        self.duties = Duties(store)
        self.duties.add_local(self.meter.tick)
        self.duties.add_local(self.stats.tick)
        self.duties.add(self.ttl.run)
        self.duties.add(StreamTrimmer(store, self.clock).run)
        self.insights = ContributorInsights(store, self.catalog, self.clock)
        self.splitter = PartitionSplitter(store, self.catalog, self.clock, partition_size_limit, self.meter,
                                          split_heat_seconds)
        self.duties.add(self.splitter.run)
        self.backup_service = BackupService(self, rules, s3_dir, s3)
        # Finish index backfills and drops a previous run left unfinished.
        self.index_jobs.kick()
        if background:
            self.duties.start()

    def settle_global_indexes(self) -> None:
        """Apply GSI changes whose lag has passed (a no-op without --gsi-lag-ms)."""
        if self.gsi_lag is not None:
            self.gsi_lag.apply_due(self.store)

    def stop_background(self) -> None:
        """Stop and join every thread that reads the store (duties, index jobs): the store closes next."""
        self.duties.stop()
        self.index_jobs.stop()

    def close(self) -> None:
        self.stop_background()
        self.store.close()
        self.meter.close()
