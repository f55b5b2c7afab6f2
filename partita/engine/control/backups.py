"""Continuous backups: the point-in-time recovery flag and its restore window.

The flag and its settings live in the table's catalog document, so they
survive restarts, are seen by every worker and vanish with the table.
The window reported is the one RestoreTableToPointInTime honours
(`engine.backups.pitr`): from when recovery was enabled (or the recovery
period ago, whichever is later) to five minutes ago, DynamoDB's usual lag.
Turning recovery on starts the base snapshot in the same transaction;
turning it off drops the base and (through the trimming duty) the log.
"""

from __future__ import annotations

import copy
from typing import Any

from ...errors import DynamoDBError
from ...storage.base import Store
from ..backups import pitr
from ..tables.catalog import Catalog
from ..tables.schema import Table
from ..time.clock import Clock

DEFAULT_RECOVERY_DAYS = 35


class TableNotFoundException(DynamoDBError):
    code = "TableNotFoundException"


def _not_found(name: str) -> TableNotFoundException:
    # The continuous-backup operations' own exception (not ResourceNotFound).
    return TableNotFoundException(f"Table not found: {name}")


def describe(description: dict[str, Any], current: float) -> dict[str, Any]:
    """ContinuousBackupsDescription for a table document.

    ContinuousBackupsStatus follows the point-in-time flag. DynamoDB answers
    DISABLED for a new table (observed) and may flip to ENABLED seconds later
    on its own; that flip is a background artefact no client can rely on, so
    Partita reports DISABLED until recovery is turned on (docs/decisions.md).
    """
    bounds = pitr.window(description, current)
    if bounds is None:
        return {"ContinuousBackupsStatus": "DISABLED",
                "PointInTimeRecoveryDescription": {"PointInTimeRecoveryStatus": "DISABLED"}}
    earliest, latest = bounds
    return {
        "ContinuousBackupsStatus": "ENABLED",
        "PointInTimeRecoveryDescription": {
            "PointInTimeRecoveryStatus": "ENABLED",
            "RecoveryPeriodInDays": description["_PointInTimeRecovery"]["RecoveryPeriodInDays"],
            "EarliestRestorableDateTime": earliest,
            "LatestRestorableDateTime": latest,
        },
    }


class BackupOps:
    def __init__(self, store: Store, catalog: Catalog, clock: Clock) -> None:
        self._store = store
        self._catalog = catalog
        self._clock = clock

    def describe(self, name: str) -> dict[str, Any]:
        table = self._catalog.get(name)
        if table is None:
            raise _not_found(name)
        return describe(table.description, self._clock.now())

    def update(self, name: str, spec: dict[str, Any]) -> dict[str, Any]:
        """Turn point-in-time recovery on or off; enabling again keeps the window, a new period applies."""
        with self._store.write() as txn:
            table = self._catalog.get(name, txn)
            if table is None:
                raise _not_found(name)
            description = copy.deepcopy(table.description)
            was_enabled = "_PointInTimeRecovery" in description
            if spec["PointInTimeRecoveryEnabled"]:
                current = description.get("_PointInTimeRecovery") or {"EnabledAt": self._clock.now()}
                current["RecoveryPeriodInDays"] = spec.get("RecoveryPeriodInDays") or DEFAULT_RECOVERY_DAYS
                description["_PointInTimeRecovery"] = current
            else:
                description.pop("_PointInTimeRecovery", None)
            table = Table.from_description(description, table.table_id)
            if was_enabled and "_PointInTimeRecovery" not in description:
                table = Table.from_description(pitr.disable(txn, table), table.table_id)
            self._catalog.put(txn, table)
            if not was_enabled and "_PointInTimeRecovery" in description:
                pitr.enable(txn, self._catalog, table)
        return describe(description, self._clock.now())
