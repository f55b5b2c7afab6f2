"""The engine's front door: one object per store, grouping the operation families."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from ..storage.base import Store, WriteTxn
from .advisor.advisor import Advisor
from .advisor.settings import DEFAULT as DEFAULT_ADVICE
from .advisor.settings import AdvisorSettings
from .backups.keys import JOB_ROW, LOG_SPACE, end_of
from .capacity.insights import ContributorInsights
from .capacity.meter import Meter
from .capacity.partitions import ACCOUNT_MAX_UNITS, PARTITION_SIZE_LIMIT, TABLE_MAX_UNITS
from .capacity.remote import RemoteBuckets
from .capacity.splits import SPLIT_HEAT_SECONDS, PartitionSplitter
from .capacity.stats import ProcessStats
from .control.policies import PolicyOps
from .regions.log import ReplicaLog
from .streams.reader import StreamReader
from .streams.trim import StreamTrimmer
from .tables.catalog import Catalog
from .tables.index_phases import IndexTiming
from .tables.lifecycle import TableOps
from .tables.tags import TagOps
from .time.clock import Clock
from .time.duties import Duties
from .time.gsi_lag import GsiLag

if TYPE_CHECKING:
    from .backups.objects import S3
    from .backups.service import BackupService
    from .bulk.operations import BulkPuts
    from .control.backups import BackupOps
    from .items.batch import BatchOps
    from .items.reads import ReadOps
    from .items.single import ItemOps
    from .items.transactions import TransactionOps
    from .items.writes import WriteRules
    from .kinesis.service import KinesisService
    from .schema_guard.guard import SchemaGuard
    from .schema_guard.spec import GuardSpec
    from .tables.index_jobs import IndexJobs
    from .tables.schema import Table
    from .tables.updates import TableUpdates
    from .time.ttl import TimeToLive
    from .vector.search import VectorSearch

T = TypeVar("T")
#: DynamoDB's item collection limit (10 GB; `items/writes.py` has the same), for the advisor.
COLLECTION_LIMIT = 10 * 1024**3


class _OnFirstUse(Generic[T]):
    """An engine capability made (and its modules imported) by its first use, not at start-up.

    It then lives in the engine's own `__dict__`, which Python consults
    before this (non-data) descriptor: later uses cost a plain attribute
    read. The lock is re-entrant because a capability's maker may need
    another (`items` needs `rules`).
    """

    def __init__(self, make: Callable[[Engine], T]) -> None:
        self._make = make
        self._name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    @overload
    def __get__(self, engine: None, owner: type) -> _OnFirstUse[T]: ...

    @overload
    def __get__(self, engine: Engine, owner: type) -> T: ...

    def __get__(self, engine: Engine | None, owner: type) -> T | _OnFirstUse[T]:
        if engine is None:
            return self
        with engine._lazy_lock:
            made: T | None = engine.__dict__.get(self._name)
            if made is None:
                made = self._make(engine)
                engine.__dict__[self._name] = made
        return made


def _rules(engine: Engine) -> WriteRules:
    from .backups.changelog import ChangeLog
    from .items.writes import WriteRules
    from .streams.records import StreamWriter

    limit = engine._options["item_collection_limit"]
    return WriteRules(
        **({} if limit is None else {"collection_limit": limit}),
        gsi_lag=engine.gsi_lag,
        streams=StreamWriter(engine.clock, engine.region, engine.stats, engine.catalog),
        changes=ChangeLog(engine.clock, engine.catalog),
        guard=engine.schema_guard,
        traces=engine.advisor.traces,
        replicas=engine.replica_log,
    )


def _apply_rules(engine: Engine) -> WriteRules:
    return replace(engine.rules, replicas=None)


def _items(engine: Engine) -> ItemOps:
    from .items.single import ItemOps

    return ItemOps(engine.store, engine.tables, engine.rules, engine.meter, engine.advisor)


def _batch(engine: Engine) -> BatchOps:
    from .items.batch import BatchOps

    return BatchOps(engine.store, engine.rules, engine.meter, engine.advisor)


def _transactions(engine: Engine) -> TransactionOps:
    from .items.transactions import TransactionOps

    return TransactionOps(engine.store, engine.rules, engine.clock, meter=engine.meter)


def _reads(engine: Engine) -> ReadOps:
    from .items.reads import ReadOps

    return ReadOps(engine.store, engine.meter, engine.advisor.traces)


def _index_jobs(engine: Engine) -> IndexJobs:
    from .tables.index_jobs import IndexJobs

    return IndexJobs(engine.store, engine.catalog, engine.clock)


def _table_updates(engine: Engine) -> TableUpdates:
    from .tables.updates import TableUpdates

    allocation, backfill = engine._options["index_allocation_ms"], engine._options["index_backfill_ms"]
    return TableUpdates(engine.store, engine.catalog, engine.tables, engine.index_jobs,
                        IndexTiming(allocation / 1000, backfill / 1000))


def _backups(engine: Engine) -> BackupOps:
    from .control.backups import BackupOps

    return BackupOps(engine.store, engine.catalog, engine.clock)


def _ttl(engine: Engine) -> TimeToLive:
    from .time.ttl import TimeToLive

    return TimeToLive(engine.store, engine.catalog, engine.clock, engine.rules, engine.ttl_delay, engine.stats)


def _vectors(engine: Engine) -> VectorSearch:
    from .vector.search import VectorSearch

    return VectorSearch(engine.store, approximate=engine._options["vector_index"] == "approximate")


def _backup_service(engine: Engine) -> BackupService:
    from .backups.service import BackupService
    from .kinesis.service import KinesisService

    s3_dir, s3 = engine._options["s3_dir"], engine._options["s3"]
    service = BackupService(engine.store, engine.catalog, engine.clock, engine.tables, engine.duties, engine.region,
                            engine.rules, s3_dir, s3)
    service.jobs.runners["bulk"] = lambda *args, **kwargs: engine.bulk.step(*args, **kwargs)
    # Kinesis delivery holds the change log's trimming: made with the trimmer, before it runs.
    engine.__dict__["kinesis"] = KinesisService(
        engine.store, engine.catalog, engine.clock, engine.region, engine._options["kinesis_endpoint"],
        engine._options["kinesis_region"], engine.duties, service.trimmer)
    return service


def _bulk(engine: Engine) -> BulkPuts:
    from .bulk.operations import BulkPuts

    return BulkPuts(engine.store, engine.catalog, engine.clock, engine.rules, engine.backup_service.objects,
                    engine.duties.wake, engine.meter)


def _kinesis(engine: Engine) -> KinesisService:
    """Kinesis streaming destinations: made with the backup service (whose change log they read)."""
    engine.backup_service  # noqa: B018 - makes the destinations too
    made: KinesisService = engine.__dict__["kinesis"]
    return made


class Engine:
    """One per store: the capabilities the API layer calls, and the background duties.

    What every request or duty needs is made here; the rest (`_OnFirstUse`
    below: item operations, expressions, backups, vector search ...) by its
    first use, so a server answers its first request having imported what
    that request needed and no more. The duties of an unused capability
    stand in cheaply (`_ttl_duty`, `_backup_watch`) until the store holds work for it.
    """

    #: The one write path's rules (index, stream, change-log and TTL upkeep), shared by every writer.
    rules = _OnFirstUse(_rules)
    items = _OnFirstUse(_items)
    batch = _OnFirstUse(_batch)
    transactions = _OnFirstUse(_transactions)
    reads = _OnFirstUse(_reads)
    index_jobs = _OnFirstUse(_index_jobs)
    table_updates = _OnFirstUse(_table_updates)
    backups = _OnFirstUse(_backups)
    ttl = _OnFirstUse(_ttl)
    #: SearchVectors' matrices (numpy, usearch).
    vectors = _OnFirstUse(_vectors)
    #: Backups, point-in-time recovery, exports and imports (Ion, zstandard, S3).
    backup_service = _OnFirstUse(_backup_service)
    #: Bulk puts from S3 (StartBulkPutItems), run as the backup service's jobs.
    bulk = _OnFirstUse(_bulk)
    #: Kinesis Data Streams destinations, fed from the change log.
    kinesis = _OnFirstUse(_kinesis)
    #: The rules of a write another replica made, applied here: it is not sent on again.
    apply_rules = _OnFirstUse(_apply_rules)

    def __init__(
        self,
        store: Store,
        region: str = "us-east-1",
        *,
        item_collection_limit: int | None = None,
        gsi_lag_ms: int = 0,
        index_allocation_ms: int = 0,
        index_backfill_ms: int = 0,
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
        schema: GuardSpec | None = None,
        advice: AdvisorSettings = DEFAULT_ADVICE,
        kinesis_endpoint: str | None = None,
        kinesis_region: str | None = None,
        home: Engine | None = None,
    ) -> None:
        """`item_collection_limit` None: DynamoDB's 10 GB (`items/writes.py`).

        `home`: on a server of several regions (engine/regions), the first region's engine,
        whose clock, counters, meter and background duties this one shares; `store` is then
        this region's namespace of the home store.
        """
        self.store = store
        self.region = region
        self.ttl_delay = ttl_delay
        self._lazy_lock = threading.RLock()
        #: What the capabilities made on first use are made with.
        self._options: dict[str, Any] = {
            "item_collection_limit": item_collection_limit, "index_allocation_ms": index_allocation_ms,
            "index_backfill_ms": index_backfill_ms, "vector_index": vector_index, "s3_dir": s3_dir, "s3": s3,
            "kinesis_endpoint": kinesis_endpoint, "kinesis_region": kinesis_region,
        }
        #: Every region's engine by name (engine/regions/build.py); None on a server of one region.
        self.regions: dict[str, Engine] | None = None
        #: The global tables of a server of several regions (engine/regions/coordinator.py).
        self.global_tables: Any = None
        self.home = home
        if home is None:
            self.clock = Clock(store)
            #: Token buckets and usage counters, shared by the workers through `capacity_path`.
            #: Requests by operation and outcome, latencies, stream records and TTL deletions (/metrics).
            self.stats = ProcessStats(None if capacity_path is None else capacity_path.parent / "partita.metrics")
            remote = RemoteBuckets(capacity_url) if capacity_url and emulate_throughput else None
            self.meter = Meter(self.clock, capacity_path, emulate_throughput, float(table_max_units), remote)
        else:
            self.clock, self.stats, self.meter = home.clock, home.stats, home.meter
        self.gsi_lag = GsiLag(gsi_lag_ms, self.clock) if gsi_lag_ms > 0 else None
        #: Request shapes and write traces, and the findings computed from them (issue 28).
        # (another region's engine keeps its shapes in this process only: one file per server)
        shared = None if capacity_path is None or home is not None else capacity_path.parent / "partita.advisor"
        self.advisor = Advisor(self.clock, advice, shared, COLLECTION_LIMIT if item_collection_limit is None
                               else item_collection_limit, gsi_lag_ms)
        self.catalog = Catalog(store)
        self.tables = TableOps(store, self.catalog, region, self.clock)
        if emulate_throughput:  # the account maximum DescribeLimits reports
            self.tables.account_max_units = max(ACCOUNT_MAX_UNITS, table_max_units)
        #: The schema guard (`--schema`): None, and never imported, without one.
        self.schema_guard: SchemaGuard | None = None
        if schema is not None:
            from .schema_guard.guard import SchemaGuard

            self.schema_guard = SchemaGuard(schema, self.clock)
        #: Versions and change records of global tables' replicas (engine/regions).
        self.replica_log = ReplicaLog(self.clock, region)
        self.tags = TagOps(store, self.catalog, self.tables)
        self.policies = PolicyOps(store, self.catalog, region, self.clock)
        self.streams = StreamReader(store, self.clock)
        if home is None:
            self.duties = Duties(store)
            self.duties.add_local(self.meter.tick)
            self.duties.add_local(self.stats.tick)
        else:
            self.duties = home.duties
        self.duties.add_local(self.advisor.tick)
        self.duties.add(self._ttl_duty)
        self.duties.add(StreamTrimmer(store, self.clock).run)
        if self.schema_guard is not None and not self.schema_guard.reject:
            from .schema_guard.log import trim

            self.duties.add(lambda: trim(store))
        self.insights = ContributorInsights(store, self.catalog, self.clock)
        self.splitter = PartitionSplitter(store, self.catalog, self.clock, partition_size_limit, self.meter,
                                          split_heat_seconds)
        self.duties.add(self.splitter.run)
        self.duties.add(self._backup_watch)
        self.tables.before_delete = self._before_delete
        # Finish index backfills and drops a previous run left unfinished (a store without
        # tables has none: the index jobs' modules then wait for the first UpdateTable).
        if next(iter(self.catalog.names(None)), None) is not None:
            self.index_jobs.kick()
        if background and home is None:
            self.duties.start()

    def _ttl_duty(self) -> bool:
        """TTL expiry, once a table has it enabled (until then the duty imports nothing)."""
        if "ttl" not in self.__dict__:
            catalog = self.catalog
            for name in list(catalog.names(None)):
                table = catalog.get(name)
                ttl = None if table is None else table.description.get("_TimeToLive")
                if ttl is not None and ttl["status"] == "ENABLED":
                    break
            else:
                return False  # TimeToLive.run would find no table to look at
        return self.ttl.run()

    def _backup_watch(self) -> bool:
        """The duty standing in for the backup service's own until there is work for them.

        A job row (a backup, restore, export or import) or a change-log row
        (a table with point-in-time recovery) means the service's duties have
        work: it is made then, and adds them (they run from this round on).
        """
        if "backup_service" in self.__dict__:
            return False
        store = self.store
        for space in (JOB_ROW, LOG_SPACE):
            if next(iter(store.range(space, end_of(space), limit=1)), None) is not None:
                self.backup_service  # noqa: B018 - made for its duties
                return True
        return False

    def _before_delete(self, txn: WriteTxn, table: Table) -> None:
        """DeleteTable's check of a table a backup job holds (only such tables carry these marks)."""
        description = table.description
        if "_Restoring" in description or "_Capture" in description:
            self.backup_service.before_delete(txn, table)

    def settle_global_indexes(self) -> None:
        """Apply GSI changes whose lag has passed (a no-op without --gsi-lag-ms)."""
        if self.gsi_lag is not None:
            self.gsi_lag.apply_due(self.store)

    def stop_background(self) -> None:
        """Stop and join every thread that reads the store (duties, index jobs): the store closes next."""
        self.duties.stop()
        for engine in (self, *(other for other in (self.regions or {}).values() if other is not self)):
            index_jobs = engine.__dict__.get("index_jobs")
            if index_jobs is not None:
                index_jobs.stop()

    def close(self) -> None:
        if self.home is not None:  # the home engine owns the store, the meter and the duties
            index_jobs = self.__dict__.get("index_jobs")
            if index_jobs is not None:
                index_jobs.stop()
            self._close_backup_service()
            return
        self.stop_background()
        for other in (self.regions or {}).values():
            if other is not self:
                other.close()
        self.store.close()
        self.meter.close()
        self._close_backup_service()

    def _close_backup_service(self) -> None:
        backup_service = self.__dict__.get("backup_service")
        if backup_service is not None:
            backup_service.close()
