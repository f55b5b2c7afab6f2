"""Time to Live: UpdateTimeToLive, DescribeTimeToLive and the expiry duty.

The setting lives in the table's catalog entry (`_TimeToLive`), so every
worker sees it. While it is enabled, the one write path keeps an expiry
index (`ttl_index`); enabling it on a table that has items backfills that
index in batches, as a GSI is backfilled. The duty (run by the holder of
the duty lock) deletes items whose TTL Number of epoch seconds is at or
before now minus `--ttl-delay`, and not older than five years, through
`store_item`: index entries go, the stream gets a REMOVE record with the
service's identity, and no capacity is charged (there is no caller).

DynamoDB deletes lazily (usually within days, expired items stay readable
until then); Partita deletes within about a second by default, because
tests should not wait. `--ttl-delay 172800` reproduces the 48-hour worst case.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import orjson

from ...errors import ResourceNotFoundException, ValidationException
from ...storage.base import Store, WriteTxn
from ..items.writes import WriteRules, store_item
from ..streams.records import TTL_IDENTITY
from ..tables.catalog import Catalog
from ..tables.schema import Table
from .clock import Clock
from .ttl_index import expiry_key, expiry_of, row_of, table_range

if TYPE_CHECKING:
    from ..capacity.stats import ProcessStats

#: One TTL change per table per hour, as documented (observed in 2026: ~31 minutes).
COOLDOWN_SECONDS = 3600
#: Items whose TTL is more than five years in the past are never deleted.
FIVE_YEARS = 5 * 365 * 24 * 3600
BACKFILL_ROWS = 500
EXPIRE_BATCH = 100

ALREADY_ENABLED = "TimeToLive is already enabled"
ALREADY_DISABLED = "TimeToLive is already disabled"
TOO_SOON = "Time to live has been modified multiple times within a fixed interval"


def _not_found(name: str) -> ResourceNotFoundException:
    # DescribeTable's words; not confirmed for the TTL operations.
    return ResourceNotFoundException(f"Requested resource not found: Table: {name} not found")


class TimeToLive:
    def __init__(self, store: Store, catalog: Catalog, clock: Clock, rules: WriteRules, delay: float = 0.0,
                 stats: ProcessStats | None = None) -> None:
        self._stats = stats  # counts deletions, for /metrics
        self._store = store
        self._catalog = catalog
        self._clock = clock
        self._rules = rules
        self.delay = delay
        #: On a server of several regions: whether this region expires a replica table's items
        #: (one replica of a global table does, engine/regions/settings.py); None: every table.
        self.expires: Callable[[Table], bool] | None = None

    # -- the API -------------------------------------------------------------------------------

    def describe(self, name: str) -> dict[str, Any]:
        table = self._catalog.get(name)
        if table is None:
            raise _not_found(name)
        ttl = table.description.get("_TimeToLive") or {}
        out: dict[str, Any] = {"TimeToLiveStatus": ttl.get("status", "DISABLED")}
        if ttl.get("status") == "ENABLED":
            out["AttributeName"] = ttl["attribute"]
        return {"TimeToLiveDescription": out}

    def update(self, name: str, spec: dict[str, Any]) -> dict[str, Any]:
        enabled = bool(spec["Enabled"])
        attribute = spec["AttributeName"]
        now = self._clock.now()
        with self._store.write() as txn:
            table = self._catalog.get(name, txn)
            if table is None:
                raise _not_found(name)
            ttl = table.description.get("_TimeToLive") or {}
            active = ttl.get("status") == "ENABLED"
            # Content errors come before the cooldown, as observed on the service.
            if active and ttl["attribute"] != attribute:
                raise ValidationException(
                    f"TimeToLive is active on a different AttributeName: current AttributeName is {ttl['attribute']}"
                )
            if enabled and active:
                raise ValidationException(ALREADY_ENABLED)
            if not enabled and not active:
                raise ValidationException(ALREADY_DISABLED)
            changed = ttl.get("changed")
            if changed is not None and now - changed < COOLDOWN_SECONDS:
                raise ValidationException(TOO_SOON)
            if enabled:
                setting = {"status": "ENABLED", "attribute": attribute, "changed": now, "cursor": ""}
            else:
                setting = {"status": "DISABLED", "changed": now}
                txn.delete_range(*table_range(table.table_id))
            self._put(txn, table, setting)
        return {"TimeToLiveSpecification": {"Enabled": enabled, "AttributeName": attribute}}

    def _put(self, txn: WriteTxn, table: Table, setting: dict[str, Any]) -> None:
        description = copy.deepcopy(table.description)
        description["_TimeToLive"] = setting
        self._catalog.put(txn, Table.from_description(description, table.table_id))

    # -- the duty ---------------------------------------------------------------------------------

    def run(self) -> bool:
        """One round over every TTL-enabled table; True when something was done."""
        worked = False
        now = self._clock.now()
        due = int(now - self.delay)
        for name in list(self._catalog.names(None)):
            table = self._catalog.get(name)
            ttl = None if table is None else table.description.get("_TimeToLive")
            if table is None or ttl is None or ttl["status"] != "ENABLED":
                continue
            if ttl.get("cursor") is not None:
                self._backfill(name)
                worked = True
                continue
            if table.replication is not None and self.expires is not None and not self.expires(table):
                continue  # another replica of its global table expires the items (engine/regions)
            keys = [key for key, _ in self._store.range(*table_range(table.table_id, due + 1), limit=EXPIRE_BATCH)]
            if keys:
                self._expire(name, keys, now)
                worked = True
        return worked

    def _backfill(self, name: str) -> None:
        with self._store.write() as txn:
            table = self._catalog.get(name, txn)
            ttl = None if table is None else table.description.get("_TimeToLive")
            if table is None or ttl is None or ttl.get("cursor") is None:
                return
            start, end = table.data_range()
            if ttl["cursor"]:
                start = bytes.fromhex(ttl["cursor"]) + b"\x00"
            rows = list(txn.range(start, end, limit=BACKFILL_ROWS))
            for row, raw in rows:
                expiry = expiry_of(orjson.loads(raw), ttl["attribute"])
                if expiry is not None:
                    txn.put(expiry_key(table.table_id, expiry, row), b"")
            setting = dict(ttl)
            setting["cursor"] = rows[-1][0].hex() if len(rows) == BACKFILL_ROWS else None
            self._put(txn, table, setting)

    def _expire(self, name: str, keys: list[bytes], now: float) -> None:
        cutoff = Decimal(repr(now - FIVE_YEARS))
        deleted = 0
        with self._store.write() as txn:
            table = self._catalog.get(name, txn)
            ttl = None if table is None else table.description.get("_TimeToLive")
            if table is None or ttl is None or ttl["status"] != "ENABLED":
                return
            attribute = ttl["attribute"]
            for key in keys:
                expiry, row = row_of(key)
                stored = txn.get(row)
                item = None if stored is None else orjson.loads(stored)
                if item is None or expiry_of(item, attribute) != expiry:
                    txn.delete(key)  # stale: the item changed in a way the index missed
                    continue
                if Decimal(item[attribute]["N"]) < cutoff:
                    txn.delete(key)  # more than five years old: DynamoDB ignores it for good
                    continue
                store_item(txn, table, row, item, None, self._rules, identity=TTL_IDENTITY)
                deleted += 1
        if deleted and self._stats is not None:  # committed
            self._stats.add("ttl_deletions", name, deleted)
