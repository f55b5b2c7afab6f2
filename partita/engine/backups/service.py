"""Wires backups, point-in-time recovery, exports and imports into one engine."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ...storage.base import WriteTxn
from ..items.writes import WriteRules
from ..tables.schema import Table
from .exports import Exports
from .imports import Imports
from .jobs import Jobs
from .objects import S3, Directory, Objects
from .ondemand import OnDemandBackups, finish_backup, refuse_delete_while_restoring
from .pitr import Trimmer, finish_base
from .recovery import PointInTimeRestores
from .restore import Restores
from .snapshots import Snapshots

if TYPE_CHECKING:
    from ..engine import Engine


class BackupService:
    def __init__(self, engine: Engine, rules: WriteRules, s3_dir: Path | None, s3: S3 | None = None) -> None:
        store, catalog, clock = engine.store, engine.catalog, engine.clock
        self.jobs = Jobs(store)
        self.snapshots = Snapshots(store, catalog)
        self.snapshots.finishers.update(backup=finish_backup, pitr=finish_base)
        self.restores = Restores(store, catalog, rules)
        self.jobs.runners.update(snapshot=self.snapshots.step, restore=self.restores.step)
        wake = engine.duties.wake
        self.backups = OnDemandBackups(store, catalog, engine.tables, clock, wake)
        self.point_in_time = PointInTimeRestores(store, catalog, engine.tables, clock, wake)
        if s3_dir is None and s3 is None:
            import tempfile

            s3_dir = Path(tempfile.mkdtemp(prefix="partita-s3-"))
        self.s3_dir = s3_dir
        #: Exports and imports go to the S3-compatible service when there is one, else to the directory.
        self.objects: Objects = s3 if s3 is not None else Directory(s3_dir)  # type: ignore[arg-type]
        self.exports = Exports(store, catalog, clock, engine.region, self.objects, wake)
        self.imports = Imports(store, catalog, engine.tables, clock, rules, self.objects, wake)
        self.jobs.runners.update(export=self.exports.job.step)
        self.jobs.runners["import"] = self.imports.step
        engine.duties.add(self.jobs.run)
        engine.duties.add(Trimmer(store, catalog, clock).run)
        engine.tables.before_delete = self._before_delete

    def _before_delete(self, txn: WriteTxn, table: Table) -> None:
        if "_Restoring" in table.description:
            raise refuse_delete_while_restoring(table.name)
        if "_Capture" in table.description:
            self.snapshots.complete_now(txn, table)
