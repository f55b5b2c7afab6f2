"""The engine's front door: one object per store, grouping the operation families."""

from __future__ import annotations

from ..storage.base import Store
from .batch import BatchOps
from .catalog import Catalog
from .control.backups import BackupOps
from .control.policies import PolicyOps
from .gsi_lag import GsiLag
from .index_jobs import IndexJobs
from .items import ItemOps
from .reads import ReadOps
from .table_updates import TableUpdates
from .tables import TableOps
from .tags import TagOps
from .transactions import TransactionOps
from .writes import ITEM_COLLECTION_LIMIT, WriteRules


class Engine:
    def __init__(
        self,
        store: Store,
        region: str = "us-east-1",
        *,
        item_collection_limit: int = ITEM_COLLECTION_LIMIT,
        gsi_lag_ms: int = 0,
    ) -> None:
        self.store = store
        self.region = region
        self.gsi_lag = GsiLag(gsi_lag_ms) if gsi_lag_ms > 0 else None
        self.catalog = Catalog(store)
        self.tables = TableOps(store, self.catalog, region)
        rules = WriteRules(item_collection_limit, self.gsi_lag)
        self.items = ItemOps(store, self.tables, rules)
        self.batch = BatchOps(store, rules)
        self.transactions = TransactionOps(store, rules)
        self.reads = ReadOps(store)
        self.index_jobs = IndexJobs(store, self.catalog)
        self.table_updates = TableUpdates(store, self.catalog, self.tables, self.index_jobs)
        self.tags = TagOps(store, self.catalog, self.tables)
        self.backups = BackupOps(store, self.catalog)
        self.policies = PolicyOps(store, self.catalog, region)
        # Finish index backfills and drops a previous run left unfinished.
        self.index_jobs.kick()

    def settle_global_indexes(self) -> None:
        """Apply GSI changes whose lag has passed (a no-op without --gsi-lag-ms)."""
        if self.gsi_lag is not None:
            self.gsi_lag.apply_due(self.store)

    def close(self) -> None:
        self.store.close()
