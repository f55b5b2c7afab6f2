"""On-demand backups: CreateBackup, DescribeBackup, ListBackups, DeleteBackup, RestoreTableFromBackup.

A backup is a snapshot (see `snapshots`) in the same store as its table,
plus a JSON document under `BACKUP_ROW | arn` holding the table's definition
and its item count and size at the backup's instant (both read from the
store's range statistics in CreateBackup's own transaction, so they are
exact for that instant). It is CREATING until its snapshot job completes,
then AVAILABLE; it outlives its table (DeleteTable first completes a backup
in progress, in its own transaction).
"""

from __future__ import annotations

from typing import Any

import orjson

from ...errors import ResourceInUseException
from ...storage.base import ReadView, Store, WriteTxn
from ..tables.catalog import Catalog
from ..tables.lifecycle import TableOps
from ..time.clock import Clock
from .errors import (
    BackupInUseException,
    BackupNotFoundException,
    TableAlreadyExistsException,
    TableInUseException,
    TableNotFoundException,
    instant,
)
from .jobs import Job, new_job
from .keys import BACKUP_ROW, end_of, next_id, resource_id
from .restore import create_restored, restore_request
from .snapshots import drop_snapshot, start_snapshot

_FEATURE_INDEX = ("IndexName", "KeySchema", "Projection")


def _row(arn: str) -> bytes:
    return BACKUP_ROW + arn.encode()


def read_backup(view: ReadView, arn: str) -> dict[str, Any] | None:
    raw = view.get(_row(arn))
    return None if raw is None else orjson.loads(raw)


def write_backup(txn: WriteTxn, doc: dict[str, Any]) -> None:
    txn.put(_row(doc["arn"]), orjson.dumps(doc))


def release_backup(txn: WriteTxn, arn: str) -> None:
    """A restore from the backup finished: it may be deleted again."""
    doc = read_backup(txn, arn)
    if doc is not None:
        doc["restoring"] = max(0, doc.get("restoring", 0) - 1)
        write_backup(txn, doc)


def finish_backup(txn: WriteTxn, job: Job) -> None:
    doc = read_backup(txn, job["owner"]["arn"])
    if doc is not None:
        doc["status"] = "AVAILABLE"
        write_backup(txn, doc)


def details(doc: dict[str, Any]) -> dict[str, Any]:
    out = {
        "BackupArn": doc["arn"],
        "BackupName": doc["name"],
        "BackupSizeBytes": doc["size"],
        "BackupStatus": doc["status"],
        "BackupType": doc["type"],
        "BackupCreationDateTime": doc["created"],
    }
    return out


def summary(doc: dict[str, Any]) -> dict[str, Any]:
    table = doc["table"]
    return {
        "TableName": table["TableName"],
        "TableId": table["TableId"],
        "TableArn": table["TableArn"],
        **details(doc),
    }


def description(doc: dict[str, Any]) -> dict[str, Any]:
    table = doc["table"]
    billing = table.get("BillingModeSummary", {}).get("BillingMode", "PROVISIONED")
    throughput = table.get("ProvisionedThroughput", {})
    source: dict[str, Any] = {
        "TableName": table["TableName"],
        "TableId": table["TableId"],
        "TableArn": table["TableArn"],
        "TableSizeBytes": doc["size"],
        "KeySchema": table["KeySchema"],
        "TableCreationDateTime": table["CreationDateTime"],
        "ProvisionedThroughput": {
            "ReadCapacityUnits": throughput.get("ReadCapacityUnits", 0),
            "WriteCapacityUnits": throughput.get("WriteCapacityUnits", 0),
        },
        "ItemCount": doc["count"],
        "BillingMode": billing,
    }
    if table.get("OnDemandThroughput"):
        source["OnDemandThroughput"] = table["OnDemandThroughput"]
    features: dict[str, Any] = {}
    if table.get("LocalSecondaryIndexes"):
        features["LocalSecondaryIndexes"] = [{k: i[k] for k in _FEATURE_INDEX} for i in table["LocalSecondaryIndexes"]]
    if table.get("GlobalSecondaryIndexes"):
        features["GlobalSecondaryIndexes"] = [
            {**{k: i[k] for k in _FEATURE_INDEX},
             "ProvisionedThroughput": {k: i.get("ProvisionedThroughput", {}).get(k, 0)
                                       for k in ("ReadCapacityUnits", "WriteCapacityUnits")}}
            for i in table["GlobalSecondaryIndexes"]
        ]
    stream = table.get("StreamSpecification")
    if stream and stream.get("StreamEnabled"):
        features["StreamDescription"] = stream
    ttl = table.get("_TimeToLive")
    if ttl:
        features["TimeToLiveDescription"] = {"TimeToLiveStatus": ttl["status"], "AttributeName": ttl["attribute"]}
    if table.get("SSEDescription"):
        features["SSEDescription"] = table["SSEDescription"]
    return {"BackupDetails": details(doc), "SourceTableDetails": source, "SourceTableFeatureDetails": features}


class OnDemandBackups:
    def __init__(self, store: Store, catalog: Catalog, tables: TableOps, clock: Clock, wake: Any) -> None:
        self._store = store
        self._catalog = catalog
        self._tables = tables
        self._clock = clock
        self._wake = wake

    def create(self, name: str, backup_name: str) -> dict[str, Any]:
        now = round(self._clock.now(), 3)
        with self._store.write() as txn:
            table = self._catalog.get(name, txn)
            if table is None:
                raise TableNotFoundException(f"Table not found: {name}")
            if table.description.get("_Restoring"):
                # NOT confirmed against DynamoDB: the exception is the documented one, the text ours.
                raise TableInUseException(f"Table is being created: {name}")
            arn = f"{table.description['TableArn']}/backup/{resource_id(now)}"
            count, size = txn.stats(*table.data_range())
            snap_id = next_id(txn)
            doc = {
                "arn": arn, "name": backup_name, "status": "CREATING", "type": "USER", "created": now,
                "snap": snap_id, "count": count, "size": size, "restoring": 0,
                "table": table.description,
            }
            write_backup(txn, doc)
            start_snapshot(txn, self._catalog, table, snap_id, {"kind": "backup", "arn": arn})
        self._wake()
        return details(doc)

    def _get(self, view: ReadView, arn: str) -> dict[str, Any]:
        doc = read_backup(view, arn)
        if doc is None:
            raise BackupNotFoundException(f"Backup not found: {arn}")
        return doc

    def describe(self, arn: str) -> dict[str, Any]:
        return description(self._get(self._store, arn))

    def delete(self, arn: str) -> dict[str, Any]:
        with self._store.write() as txn:
            doc = self._get(txn, arn)
            if doc["status"] == "CREATING" or doc.get("restoring"):
                # NOT confirmed against DynamoDB: the exception is the documented one, the text ours.
                raise BackupInUseException(
                    "There is another ongoing conflicting backup control plane operation on the table. "
                    "The backup is either being created, deleted or restored to a table."
                )
            txn.delete(_row(arn))
            drop_snapshot(txn, doc["snap"])
        doc["status"] = "DELETED"
        return description(doc)

    def list(self, request: dict[str, Any]) -> dict[str, Any]:
        kind = request.get("BackupType", "USER")
        name = request.get("TableName")
        low = None if request.get("TimeRangeLowerBound") is None else instant(request["TimeRangeLowerBound"])
        high = None if request.get("TimeRangeUpperBound") is None else instant(request["TimeRangeUpperBound"])
        docs = []
        for _, raw in self._store.range(BACKUP_ROW, end_of(BACKUP_ROW)):
            doc = orjson.loads(raw)
            if kind != "ALL" and doc["type"] != kind:
                continue
            if name is not None and doc["table"]["TableName"] != name:
                continue
            # Compared in milliseconds: clients send back the times they were given, rounded to that.
            created = round(doc["created"] * 1000)
            if low is not None and created < round(low * 1000):
                continue
            if high is not None and created >= round(high * 1000):
                continue
            docs.append(doc)
        # Creation order: two backups in one millisecond share `created`; snapshot ids only grow.
        docs.sort(key=lambda d: (d["created"], d.get("snap", 0), d["arn"]))
        start = request.get("ExclusiveStartBackupArn")
        if start is not None:
            after = [i for i, d in enumerate(docs) if d["arn"] == start]
            docs = docs[after[0] + 1:] if after else docs
        limit = request.get("Limit")
        out: dict[str, Any] = {}
        if limit is not None and len(docs) > limit:
            docs = docs[:limit]
            out["LastEvaluatedBackupArn"] = docs[-1]["arn"]
        out["BackupSummaries"] = [summary(d) for d in docs]
        return out

    def restore(self, request: dict[str, Any], validate: Any) -> dict[str, Any]:
        arn = request["BackupArn"]
        target = request["TargetTableName"]
        with self._store.write() as txn:
            doc = self._get(txn, arn)
            if self._catalog.get(target, txn) is not None:
                raise TableAlreadyExistsException(f"Table already exists: {target}")
            if doc["status"] != "AVAILABLE":
                # NOT confirmed against DynamoDB: the exception is the documented one, the text ours.
                raise BackupInUseException(f"Backup is being created: {arn}")
            create = restore_request(doc["table"], target, request)
            validate(create)
            now = self._clock.now()
            summary_ = {"SourceBackupArn": arn, "SourceTableArn": doc["table"]["TableArn"], "RestoreDateTime": now}
            table = create_restored(txn, self._catalog, self._tables, create, summary_)
            new_job(txn, "restore", target=target, target_id=table.table_id, snap=doc["snap"],
                    phase="copy", cursor=None, backup=arn)
            doc["restoring"] = doc.get("restoring", 0) + 1
            write_backup(txn, doc)
        self._wake()
        return self._tables.public(table, live_counts=False)


def refuse_delete_while_restoring(name: str) -> ResourceInUseException:
    # NOT confirmed against DynamoDB (its DeleteTable text for a CREATING table).
    return ResourceInUseException(f"Attempt to change a resource which is still in use: Table is being created: {name}")
