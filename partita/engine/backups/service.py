"""Wires backups, point-in-time recovery, exports and imports into one engine."""

from __future__ import annotations

from pathlib import Path

from ...storage.base import Store, WriteTxn
from ..items.writes import WriteRules
from ..tables.catalog import Catalog
from ..tables.lifecycle import TableOps
from ..tables.schema import Table
from ..time.clock import Clock
from ..time.duties import Duties
from .exports import Exports
from .imports import Imports
from .jobs import Jobs
from .objects import S3, Directory, Objects
from .ondemand import OnDemandBackups, refuse_delete_while_restoring
from .pitr import Trimmer, finish_base
from .records import finish_backup
from .recovery import PointInTimeRestores
from .restore import Restores
from .snapshots import Snapshots


class BackupService:
    def __init__(
        self,
        store: Store,
        catalog: Catalog,
        clock: Clock,
        tables: TableOps,
        duties: Duties,
        region: str,
        rules: WriteRules,
        s3_dir: Path | None,
        s3: S3 | None = None,
    ) -> None:
        self.jobs = Jobs(store)
        self.snapshots = Snapshots(store, catalog)
        self.snapshots.finishers.update(backup=finish_backup, pitr=finish_base)
        self.restores = Restores(store, catalog, rules)
        self.jobs.runners.update(snapshot=self.snapshots.step, restore=self.restores.step)
        wake = duties.wake
        self.backups = OnDemandBackups(store, catalog, tables, clock, wake)
        self.point_in_time = PointInTimeRestores(store, catalog, tables, clock, wake)
        #: A folder made here for want of --s3-dir: it lives as long as the server (close removes it).
        self._own_dir: Path | None = None
        if s3_dir is None and s3 is None:
            import atexit
            import shutil
            import tempfile

            s3_dir = self._own_dir = Path(tempfile.mkdtemp(prefix="partita-s3-"))
            # An in-process engine (partita.testing.local()'s warm one) may never be closed.
            atexit.register(shutil.rmtree, s3_dir, ignore_errors=True)
        self.s3_dir = s3_dir
        #: Exports and imports go to the S3-compatible service when there is one, else to the directory.
        self.objects: Objects = s3 if s3 is not None else Directory(s3_dir)  # type: ignore[arg-type]
        self.exports = Exports(store, catalog, clock, region, self.objects, wake)
        self.imports = Imports(store, catalog, tables, clock, rules, self.objects, wake)
        self.jobs.runners.update(export=self.exports.job.step)
        self.jobs.runners["import"] = self.imports.step
        duties.add(self.jobs.run)
        #: Folds and drops the change log; other readers of the log (Kinesis) add their holds.
        self.trimmer = Trimmer(store, catalog, clock)
        duties.add(self.trimmer.run)

    def close(self) -> None:
        """Remove the temporary S3 folder this server made; one given by --s3-dir stays.

        Without this every server that ever exported left a folder in the
        temporary directory (a test run left hundreds). The next server could
        not have used it anyway: it makes a new one.
        """
        if self._own_dir is not None:
            import shutil

            shutil.rmtree(self._own_dir, ignore_errors=True)

    def before_delete(self, txn: WriteTxn, table: Table) -> None:
        """DeleteTable's check (the engine calls it for a table marked as restoring or captured)."""
        if "_Restoring" in table.description:
            raise refuse_delete_while_restoring(table.name)
        if "_Capture" in table.description:
            self.snapshots.complete_now(txn, table)
