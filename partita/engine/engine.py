"""The engine's front door: one object per store, grouping the operation families."""

from __future__ import annotations

from ..storage.base import Store
from .catalog import Catalog
from .index_jobs import IndexJobs
from .items import ItemOps
from .reads import ReadOps
from .table_updates import TableUpdates
from .tables import TableOps


class Engine:
    def __init__(self, store: Store, region: str = "us-east-1") -> None:
        self.store = store
        self.region = region
        self.catalog = Catalog(store)
        self.tables = TableOps(store, self.catalog, region)
        self.items = ItemOps(store, self.tables)
        self.reads = ReadOps(store)
        self.index_jobs = IndexJobs(store, self.catalog)
        self.table_updates = TableUpdates(store, self.catalog, self.tables, self.index_jobs)
        # Finish index backfills and drops a previous run left unfinished.
        self.index_jobs.kick()

    def close(self) -> None:
        self.store.close()
