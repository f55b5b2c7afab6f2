"""UpdateTable: billing, throughput, protection, streams, and online global index changes.

Every check runs against the table as it stands before anything changes,
so a refused request changes nothing. Index creation and deletion only mark
the index CREATING / DELETING here; `index_jobs` does the work.
"""

from __future__ import annotations

import copy
from typing import Any

from ...errors import LimitExceededException, ResourceNotFoundException, ValidationException, shown
from ...storage.base import Store
from ..capacity.account import check_account
from ..control import throughput as warm
from ..streams.lifecycle import sync_stream
from ..vector import declare as vector_declare
from .catalog import Catalog
from .index_jobs import IndexJobs
from .lifecycle import TableOps, describe_sse, enable_stream, index_document
from .projections import check_projection
from .schema import Table

INVALID = "One or more parameter values were invalid: "
MAX_GLOBAL_INDEXES = 20
ONE_ONLINE_INDEX = "Subscriber limit exceeded: Only 1 online index can be created or deleted simultaneously per table"


def _gsi_docs(description: dict[str, Any]) -> list[dict[str, Any]]:
    return description.get("GlobalSecondaryIndexes", [])


def _check_online_limit(table: Table, updates: list[dict[str, Any]]) -> None:
    online = [u for u in updates if "Create" in u or "Delete" in u]
    busy = vector_declare.busy(table.description)
    if len(online) > 1 or (online and busy):
        raise LimitExceededException(ONE_ONLINE_INDEX)


def _check_create(table: Table, create: dict[str, Any], request: dict[str, Any], billing: str) -> None:
    name = create["IndexName"]
    if table.index(name) is not None:
        raise ValidationException("Attempting to create an index which already exists")
    definitions = request.get("AttributeDefinitions")
    if definitions is None:
        raise ValidationException(f"{INVALID}AttributeDefinitions is not specified for index: {name}")
    defined = [d["AttributeName"] for d in definitions]
    keys = [k["AttributeName"] for k in create["KeySchema"]]
    if any(k not in defined for k in keys):
        raise ValidationException(
            f"{INVALID}Some index key attributes are not defined in AttributeDefinitions. "
            f"Keys: [{shown(', '.join(keys))}], AttributeDefinitions: [{shown(', '.join(defined))}]"
        )
    check_projection(create["Projection"])
    has_throughput = create.get("ProvisionedThroughput") is not None
    if billing == "PAY_PER_REQUEST" and has_throughput:
        raise ValidationException(
            f"{INVALID}ProvisionedThroughput should not be specified for index: {name} when BillingMode is PAY_PER_REQUEST"
        )
    if billing == "PROVISIONED" and not has_throughput:
        raise ValidationException(f"{INVALID}ProvisionedThroughput must be specified for index: {name}")
    if len(_gsi_docs(table.description)) >= MAX_GLOBAL_INDEXES:
        raise LimitExceededException(f"{INVALID}GlobalSecondaryIndex count exceeds the per-table limit of {MAX_GLOBAL_INDEXES}")


def _check_existing(table: Table, action: dict[str, Any], verb: str) -> None:
    name = action["IndexName"]
    index = table.index(name)
    if index is None:
        raise ResourceNotFoundException(f"Requested resource not found: Index: {name} not found")
    if not index.is_global:
        raise ValidationException(f"Cannot {verb} an index that is not a GlobalSecondaryIndex: {name}")
    if verb == "update":
        doc = next(d for d in _gsi_docs(table.description) if d["IndexName"] == name)
        warm.check_on_demand(action.get("OnDemandThroughput"), "index")
        warm.check_warm(action.get("WarmThroughput"), _current_warm(doc), "index")


def _current_warm(doc: dict[str, Any]) -> dict[str, Any]:
    """A table's or index's warm throughput now (tables stored before it was recorded get the default)."""
    stored = doc.get("WarmThroughput")
    if stored:
        return stored
    on_demand = doc.get("BillingModeSummary", {}).get("BillingMode") == "PAY_PER_REQUEST" or not doc.get(
        "ProvisionedThroughput", {}).get("ReadCapacityUnits")
    return warm.default_warm(None if on_demand else doc["ProvisionedThroughput"])


def _check_throughput_settings(table: Table, request: dict[str, Any]) -> None:
    warm.check_on_demand(request.get("OnDemandThroughput"), "table")
    warm.check_warm(request.get("WarmThroughput"), _current_warm(table.description), "table")


def _check_billing(table: Table, request: dict[str, Any]) -> str:
    current = table.description["BillingModeSummary"]["BillingMode"]
    billing = request.get("BillingMode", current)
    throughput = request.get("ProvisionedThroughput")
    if billing == "PAY_PER_REQUEST" and throughput is not None:
        if "BillingMode" in request:
            raise ValidationException(
                f"{INVALID}Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST"
            )
        raise ValidationException(f"{INVALID}ProvisionedThroughput cannot be specified when BillingMode is PAY_PER_REQUEST")
    if billing == "PROVISIONED" and current == "PAY_PER_REQUEST" and throughput is None:
        raise ValidationException(f"{INVALID}ProvisionedThroughput must be specified when BillingMode is PROVISIONED")
    if billing == "PROVISIONED" and throughput is not None and current == "PROVISIONED":
        now = table.description["ProvisionedThroughput"]
        r, w = now["ReadCapacityUnits"], now["WriteCapacityUnits"]
        if throughput["ReadCapacityUnits"] == r and throughput["WriteCapacityUnits"] == w:
            raise ValidationException(
                "The provisioned throughput for the table will not change. The requested value equals the current "
                f"value. Current ReadCapacityUnits provisioned for the table: {r}. Requested ReadCapacityUnits: {r}. "
                f"Current WriteCapacityUnits provisioned for the table: {w}. Requested WriteCapacityUnits: {w}. "
                "Refer to the Amazon DynamoDB Developer Guide for current limits and how to request higher limits."
            )
    return billing


def _apply_table_settings(
    description: dict[str, Any], request: dict[str, Any], billing: str, region: str, now: float
) -> None:
    summary = description["BillingModeSummary"]
    if billing != summary["BillingMode"]:
        summary["BillingMode"] = billing
        if billing == "PAY_PER_REQUEST":
            summary["LastUpdateToPayPerRequestDateTime"] = now
            description["ProvisionedThroughput"].update(ReadCapacityUnits=0, WriteCapacityUnits=0)
    throughput = request.get("ProvisionedThroughput")
    if throughput is not None:
        current = description["ProvisionedThroughput"]
        decreased = (throughput["ReadCapacityUnits"] < current["ReadCapacityUnits"]
                     or throughput["WriteCapacityUnits"] < current["WriteCapacityUnits"])
        current.update(ReadCapacityUnits=throughput["ReadCapacityUnits"],
                       WriteCapacityUnits=throughput["WriteCapacityUnits"])
        current["LastIncreaseDateTime" if not decreased else "LastDecreaseDateTime"] = now
        if decreased:
            current["NumberOfDecreasesToday"] += 1
    on_demand = summary["BillingMode"] == "PAY_PER_REQUEST"
    description["WarmThroughput"] = _current_warm(description)
    warm.apply_warm(description, request.get("WarmThroughput"), description["ProvisionedThroughput"], on_demand)
    warm.apply_on_demand(description, request.get("OnDemandThroughput"))
    if "DeletionProtectionEnabled" in request:
        description["DeletionProtectionEnabled"] = bool(request["DeletionProtectionEnabled"])
    if "TableClass" in request:
        description["TableClassSummary"] = {"TableClass": request["TableClass"], "LastUpdateDateTime": now}
    if "SSESpecification" in request:
        describe_sse(description, request["SSESpecification"], region)
    stream = request.get("StreamSpecification")
    if stream is not None:
        if stream.get("StreamEnabled"):
            enable_stream(description, stream, now)
        else:
            description.pop("StreamSpecification", None)


def _check_stream(table: Table, request: dict[str, Any]) -> None:
    stream = request.get("StreamSpecification")
    if stream is None:
        return
    name = table.name
    enabled = bool(table.description.get("StreamSpecification", {}).get("StreamEnabled"))
    if stream.get("StreamEnabled"):
        if not stream.get("StreamViewType"):
            raise ValidationException(f"{INVALID}If stream is being enabled then UpdateViewType is required")
        if enabled:
            raise ValidationException(f"Table already has an enabled stream: TableName: {name}")
    else:
        if stream.get("StreamViewType"):
            raise ValidationException(f"{INVALID}If stream is being disabled, then UpdateViewType must not be specified")
        if not enabled:
            raise ValidationException(f"Table has no stream to disable: TableName: {name}")


def _merge_definitions(description: dict[str, Any], request: dict[str, Any]) -> None:
    known = {d["AttributeName"] for d in description["AttributeDefinitions"]}
    for definition in request.get("AttributeDefinitions") or []:
        if definition["AttributeName"] not in known:
            description["AttributeDefinitions"].append(definition)
            known.add(definition["AttributeName"])


def _apply_index_updates(description: dict[str, Any], updates: list[dict[str, Any]]) -> None:
    for update in updates:
        if "Create" in update:
            spec = update["Create"]
            doc = index_document(spec, description["TableArn"], "CREATING")
            doc["Backfilling"] = True
            description.setdefault("GlobalSecondaryIndexes", []).append(doc)
            next_id = description.get("_NextIndexId", 1)
            description.setdefault("_IndexIds", {})[spec["IndexName"]] = next_id
            description["_NextIndexId"] = next_id + 1
            continue
        action = update.get("Delete") or update["Update"]
        for doc in description["GlobalSecondaryIndexes"]:
            if doc["IndexName"] != action["IndexName"]:
                continue
            if "Delete" in update:
                doc["IndexStatus"] = "DELETING"
                continue
            provisioned = action.get("ProvisionedThroughput")
            if provisioned is not None:
                doc["ProvisionedThroughput"].update(
                    ReadCapacityUnits=provisioned["ReadCapacityUnits"],
                    WriteCapacityUnits=provisioned["WriteCapacityUnits"],
                )
            doc["WarmThroughput"] = _current_warm(doc)
            warm.apply_warm(doc, action.get("WarmThroughput"), doc["ProvisionedThroughput"],
                            on_demand=not doc["ProvisionedThroughput"]["ReadCapacityUnits"])
            warm.apply_on_demand(doc, action.get("OnDemandThroughput"))


class TableUpdates:
    def __init__(self, store: Store, catalog: Catalog, tables: TableOps, jobs: IndexJobs) -> None:
        self._store = store
        self._catalog = catalog
        self._tables = tables
        self._jobs = jobs

    def update(self, request: dict[str, Any]) -> dict[str, Any]:
        name = request["TableName"]
        updates = request.get("GlobalSecondaryIndexUpdates") or []
        with self._store.write() as txn:
            table = self._catalog.get(name, txn)
            if table is None:
                raise ResourceNotFoundException(f"Requested resource not found: Table: {name} not found")
            billing = _check_billing(table, request)
            _check_stream(table, request)
            _check_throughput_settings(table, request)
            _check_online_limit(table, updates)
            for update in updates:
                if "Create" in update:
                    _check_create(table, update["Create"], request, billing)
                else:
                    _check_existing(table, update.get("Delete") or update["Update"],
                                    "delete" if "Delete" in update else "update")
            online = sum(1 for u in updates if "Create" in u or "Delete" in u)
            vector_declare.check_update(table.description, request, billing, online)
            description = copy.deepcopy(table.description)
            now = self._tables.clock.now()
            _apply_table_settings(description, request, billing, self._tables.region, now)
            sync_stream(txn, table.description, description, now)
            _merge_definitions(description, request)
            _apply_index_updates(description, updates)
            vector_declare.apply_update(description, request)
            if self._tables.account_max_units:
                check_account(description, self._tables.others(txn, name), self._tables.account_max_units)
            updated = Table.from_description(description, table.table_id)
            self._catalog.put(txn, updated)
        if updates or request.get("VectorIndexUpdates"):
            self._jobs.kick()
        out = {**self._tables.public(updated), "TableStatus": "UPDATING"}
        if "WarmThroughput" in request:
            out["WarmThroughput"] = {**out["WarmThroughput"], "Status": "UPDATING"}
        return out
