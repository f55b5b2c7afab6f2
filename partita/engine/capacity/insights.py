"""Contributor Insights settings: per table and per GSI, kept in the table's catalog entry.

AWS delivers the rankings through CloudWatch Contributor Insights rules;
Partita computes them from the meter's hot-key counters (the same ones the
throughput emulation uses) and serves them at `/partita/v1/tables/{name}/hot-keys`.
Every request is metered (issue 28); while an insight of a table is
enabled its keys are ranked exactly rather than by a sample (the marker
`_ContributorInsights` in the description: `Resource.exact`).
"""

from __future__ import annotations

from typing import Any

from ...errors import ResourceNotFoundException
from ...storage.base import Store
from ..tables.catalog import Catalog
from ..tables.schema import Table
from ..time.clock import Clock
from .partitions import INSIGHTS

STATE = "_ContributorInsightsState"
ACCESSED = "ACCESSED_AND_THROTTLED_KEYS"
NOT_FOUND = "Requested resource not found"
#: Rule name kinds of DynamoDB's rules: partition key / sort key, consumed / throttled.
_RULE_KINDS = ("PKC", "PKT", "SKC", "SKT")


class ContributorInsights:
    def __init__(self, store: Store, catalog: Catalog, clock: Clock) -> None:
        self._store = store
        self._catalog = catalog
        self._clock = clock

    def update(self, name: str, index_name: str | None, action: str, mode: str | None) -> dict[str, Any]:
        with self._store.write() as txn:
            table = self._catalog.get(name, txn)
            if table is None:
                raise ResourceNotFoundException(NOT_FOUND)
            _check_index(table, index_name)
            description = table.description
            state = dict(description.get(STATE) or {})
            entry = dict(state.get(index_name or "") or {})
            if action == "ENABLE":
                entry.update(status="ENABLED", mode=mode or entry.get("mode") or ACCESSED,
                             updated=self._clock.now(), created=int(self._clock.now() * 1000))
            else:
                entry.update(status="DISABLED", updated=self._clock.now())
                if mode is not None:
                    entry["mode"] = mode
            state[index_name or ""] = entry
            description[STATE] = state
            if any(e["status"] == "ENABLED" for e in state.values()):
                description[INSIGHTS] = True
            else:
                description.pop(INSIGHTS, None)
            self._catalog.put(txn, Table.from_description(description, table.table_id))
        out: dict[str, Any] = {"TableName": name}
        if index_name is not None:
            out["IndexName"] = index_name
        # The change takes effect at once; the answer shows the transition, as DynamoDB's does.
        out["ContributorInsightsStatus"] = "ENABLING" if action == "ENABLE" else "DISABLING"
        out["ContributorInsightsMode"] = entry.get("mode", ACCESSED)
        return out

    def describe(self, name: str, index_name: str | None) -> dict[str, Any]:
        table = self._catalog.get(name)
        if table is None:
            raise ResourceNotFoundException(NOT_FOUND)
        _check_index(table, index_name)
        entry = (table.description.get(STATE) or {}).get(index_name or "")
        out: dict[str, Any] = {"TableName": name}
        if index_name is not None:
            out["IndexName"] = index_name
        if entry is None:
            out["ContributorInsightsStatus"] = "DISABLED"
            return out
        out["ContributorInsightsStatus"] = entry["status"]
        out["LastUpdateDateTime"] = entry["updated"]
        out["ContributorInsightsMode"] = entry.get("mode", ACCESSED)
        if entry["status"] == "ENABLED":
            target = name if index_name is None else f"{name}-{index_name}"
            kinds = _RULE_KINDS if table.range_key is not None or index_name else _RULE_KINDS[:2]
            out["ContributorInsightsRuleList"] = [
                f"DynamoDBContributorInsights-{kind}-{target}-{entry['created']}" for kind in kinds
            ]
        return out

    def summaries(self, name: str | None) -> list[dict[str, Any]]:
        """Every table and GSI (of `name`, or of all tables) with its insights status."""
        names = [name] if name is not None else list(self._catalog.names(None))
        out = []
        for table_name in names:
            table = self._catalog.get(table_name)
            if table is None:
                raise ResourceNotFoundException(NOT_FOUND)
            state = table.description.get(STATE) or {}
            targets: list[str | None] = [None, *(i.name for i in table.indexes if i.is_global)]
            for index_name in targets:
                entry = state.get(index_name or "")
                summary: dict[str, Any] = {"TableName": table_name}
                if index_name is not None:
                    summary["IndexName"] = index_name
                summary["ContributorInsightsStatus"] = "DISABLED" if entry is None else entry["status"]
                if entry is not None:
                    summary["ContributorInsightsMode"] = entry.get("mode", ACCESSED)
                out.append(summary)
        return out

    @staticmethod
    def mode_of(table: Table, index_name: str | None) -> dict[str, Any] | None:
        return (table.description.get(STATE) or {}).get(index_name or "")


def _check_index(table: Table, index_name: str | None) -> None:
    """Insights exist for the table and its global indexes; another name is not found (wording unconfirmed)."""
    if index_name is None:
        return
    index = table.index(index_name)
    if index is None or not index.is_global:
        raise ResourceNotFoundException(NOT_FOUND)
