"""Restoring into a new table: its definition (with overrides) and the job that fills it.

The new table is in the catalog from the request on, CREATING and marked
`_Restoring`, so its name is taken and DescribeTable shows the restore in
progress, but data-plane calls find no table (`TableOps.get`), as on
DynamoDB: a crash never leaves a half-filled table that looks usable. The
job copies a snapshot's items through `store_item` (so every index is built
as writes build it), then, for a point-in-time restore, replays the source's
change log up to the restore instant, and finally makes the table ACTIVE.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson

from ...storage.base import Store, WriteTxn
from ..items.writes import WriteRules, store_item
from ..tables.catalog import Catalog
from ..tables.lifecycle import TableOps
from ..tables.schema import Table
from .changelog import changes
from .jobs import BATCH, Job, put_job, tally
from .keys import end_of, job_key, snap_prefix

_INDEX_MEMBERS = ("IndexName", "KeySchema", "Projection")


def _index_specs(docs: list[dict[str, Any]], provisioned: bool) -> list[dict[str, Any]]:
    out = []
    for doc in docs:
        spec = {k: doc[k] for k in _INDEX_MEMBERS}
        throughput = doc.get("ProvisionedThroughput") or {}
        if provisioned:
            spec["ProvisionedThroughput"] = {
                "ReadCapacityUnits": throughput.get("ReadCapacityUnits", 0),
                "WriteCapacityUnits": throughput.get("WriteCapacityUnits", 0),
            }
        out.append(spec)
    return out


def restore_request(source: dict[str, Any], target: str, request: dict[str, Any]) -> dict[str, Any]:
    """A CreateTable request for the restored table: the source's definition with the overrides applied.

    CreateTable's validation then judges the overrides exactly as it judges
    a new table. Streams, TTL, tags, PITR and resource policies are not
    restored (DynamoDB's documented behaviour: they are set again by hand).
    """
    was = source.get("BillingModeSummary", {}).get("BillingMode", "PROVISIONED")
    billing = request.get("BillingModeOverride") or was
    provisioned = billing == "PROVISIONED"
    out: dict[str, Any] = {"TableName": target, "KeySchema": source["KeySchema"], "BillingMode": billing}
    throughput = request.get("ProvisionedThroughputOverride")
    if throughput is None and provisioned and was == "PROVISIONED":
        kept = source.get("ProvisionedThroughput") or {}
        throughput = {k: kept.get(k, 0) for k in ("ReadCapacityUnits", "WriteCapacityUnits")}
    if throughput is not None:
        out["ProvisionedThroughput"] = throughput
    for kind, override in (("GlobalSecondaryIndexes", "GlobalSecondaryIndexOverride"),
                           ("LocalSecondaryIndexes", "LocalSecondaryIndexOverride")):
        specs = request.get(override)
        if specs is None:
            keep = provisioned and was == "PROVISIONED" and kind == "GlobalSecondaryIndexes"
            specs = _index_specs(source.get(kind, []), keep)
        if specs:
            out[kind] = specs
    on_demand = request.get("OnDemandThroughputOverride") or source.get("OnDemandThroughput")
    if on_demand and not provisioned:
        out["OnDemandThroughput"] = on_demand
    sse = request.get("SSESpecificationOverride")
    if sse is None and source.get("SSEDescription", {}).get("Status") == "ENABLED":
        sse = {"Enabled": True, "SSEType": "KMS", "KMSMasterKeyId": source["SSEDescription"].get("KMSMasterKeyArn")}
    if sse:
        out["SSESpecification"] = sse
    if source.get("TableClassSummary"):
        out["TableClass"] = source["TableClassSummary"]["TableClass"]
    used = {k["AttributeName"] for k in out["KeySchema"]}
    for kind in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes"):
        for spec in out.get(kind, []):
            used |= {k["AttributeName"] for k in spec.get("KeySchema", [])}
    out["AttributeDefinitions"] = [d for d in source["AttributeDefinitions"] if d["AttributeName"] in used]
    return out


def create_restored(
    txn: WriteTxn, catalog: Catalog, tables: TableOps, request: dict[str, Any], summary: dict[str, Any]
) -> Table:
    """Put the restored table in the catalog, CREATING, with its RestoreSummary (in progress)."""
    table_id = catalog.next_table_id(txn)
    description = tables._describe_new(request, table_id)  # noqa: SLF001 - the one table-document builder
    description["TableStatus"] = "CREATING"
    description["RestoreSummary"] = {**summary, "RestoreInProgress": True}
    description["_Restoring"] = True
    for index in description.get("GlobalSecondaryIndexes", []):
        index["IndexStatus"] = "CREATING"
    table = Table.from_description(description, table_id)
    catalog.put(txn, table)
    return table


class Restores:
    """Runs restore jobs: copy a snapshot, replay the log up to an instant, go ACTIVE."""

    def __init__(self, store: Store, catalog: Catalog, rules: WriteRules) -> None:
        self._store = store
        self._catalog = catalog
        self._rules = rules

    def step(self, job: Job) -> bool:
        with self._store.write() as txn:
            if txn.get(job_key(job["id"])) is None:
                return False
            table = self._catalog.get(job["target"], txn)
            if table is None or table.table_id != job["target_id"]:
                txn.delete(job_key(job["id"]))
                return True
            if job["phase"] == "wait":  # a point-in-time base still being built
                if not self._base_ready(txn, job):
                    return False
                job["phase"] = "copy"
            if job["phase"] == "copy":
                if self._copy(txn, table, job):
                    job["phase"] = "replay" if job.get("replay") else "finish"
                put_job(txn, job)
                return True
            if job["phase"] == "replay" and not self._replay(txn, table, job):
                put_job(txn, job)
                return True
            self._finish(txn, table, job)
        return True

    def _base_ready(self, txn: WriteTxn, job: Job) -> bool:
        from .pitr import read_state

        state = read_state(txn, job["replay"]["table_id"])
        if state is None or not state["ready"]:
            return False
        job["snap"] = state["snap"]
        job["replay"]["after"] = state["seq"]
        return True

    def _copy(self, txn: WriteTxn, table: Table, job: Job) -> bool:
        prefix = snap_prefix(job["snap"])
        start = prefix if job.get("cursor") is None else prefix + bytes.fromhex(job["cursor"]) + b"\x00"
        count = size = 0
        cut = len(prefix)
        for key, value in txn.range(start, end_of(prefix), limit=BATCH):
            suffix = key[cut:]
            store_item(txn, table, table.prefix + suffix, None, orjson.loads(value), self._rules)
            job["cursor"] = suffix.hex()
            count += 1
            size += len(value)
        tally(job, count, size)
        return count < BATCH

    def _replay(self, txn: WriteTxn, table: Table, job: Job) -> bool:
        replay = job["replay"]
        count = 0
        for change in changes(txn, replay["table_id"], replay["after"], BATCH):
            if change.time > replay["until"]:
                return True  # the log is in commit order: nothing later belongs to the instant
            row = table.prefix + change.suffix
            raw = txn.get(row)
            store_item(txn, table, row, None if raw is None else orjson.loads(raw), change.new, self._rules)
            replay["after"] = change.n
            count += 1
        return count < BATCH

    def _finish(self, txn: WriteTxn, table: Table, job: Job) -> None:
        description = copy.deepcopy(table.description)
        description.pop("_Restoring", None)
        description["TableStatus"] = "ACTIVE"
        description["RestoreSummary"]["RestoreInProgress"] = False
        for index in description.get("GlobalSecondaryIndexes", []):
            index["IndexStatus"] = "ACTIVE"
        self._catalog.put(txn, Table.from_description(description, table.table_id))
        txn.delete(job_key(job["id"]))
        if job.get("backup"):
            from .ondemand import release_backup

            release_backup(txn, job["backup"])
