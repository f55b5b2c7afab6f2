"""Continuous backups: the point-in-time recovery flag and its restore window.

The flag and its settings live in the table's catalog document, so they
survive restarts, are seen by every worker and vanish with the table.
Restores are not implemented yet; the window reported is the one a restore
would honour: from when recovery was enabled (or the recovery period ago,
whichever is later) to five minutes ago, DynamoDB's usual lag.
"""

from __future__ import annotations

import copy
from typing import Any

from ...errors import DynamoDBError
from ...storage.base import Store
from ..catalog import Catalog
from ..clock import Clock
from ..schema import Table

DEFAULT_RECOVERY_DAYS = 35
LATEST_RESTORABLE_LAG = 300.0
_DAY = 86_400.0


class TableNotFoundException(DynamoDBError):
    code = "TableNotFoundException"


def _not_found(name: str) -> TableNotFoundException:
    # The continuous-backup operations' own exception (not ResourceNotFound).
    return TableNotFoundException(f"Table not found: {name}")


def describe(description: dict[str, Any], current: float) -> dict[str, Any]:
    """ContinuousBackupsDescription for a table document (backups are always on, as on DynamoDB)."""
    pitr = description.get("_PointInTimeRecovery")
    if not pitr:
        return {"ContinuousBackupsStatus": "ENABLED",
                "PointInTimeRecoveryDescription": {"PointInTimeRecoveryStatus": "DISABLED"}}
    days = pitr["RecoveryPeriodInDays"]
    earliest = max(pitr["EnabledAt"], current - days * _DAY)
    latest = max(earliest, current - LATEST_RESTORABLE_LAG)
    return {
        "ContinuousBackupsStatus": "ENABLED",
        "PointInTimeRecoveryDescription": {
            "PointInTimeRecoveryStatus": "ENABLED",
            "RecoveryPeriodInDays": days,
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
            if spec["PointInTimeRecoveryEnabled"]:
                current = description.get("_PointInTimeRecovery") or {"EnabledAt": self._clock.now()}
                current["RecoveryPeriodInDays"] = spec.get("RecoveryPeriodInDays") or DEFAULT_RECOVERY_DAYS
                description["_PointInTimeRecovery"] = current
            else:
                description.pop("_PointInTimeRecovery", None)
            self._catalog.put(txn, Table.from_description(description, table.table_id))
        return describe(description, self._clock.now())
