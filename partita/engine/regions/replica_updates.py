"""UpdateTable's ReplicaUpdates (global tables version 2019.11.21): starting a replica change.

DynamoDB accepts one Create, Update or Delete per call (two Creates only for
a strongly consistent group, strong.py), from any member's region, answers
at once with the table UPDATING, and carries the change out in the
background; the rules and every message are the service's as recorded by
the ack-api-quirks lab (docs/decisions.md). Here the change is checked and
written to every member's description and to a job row in one commit;
jobs.py then moves it through its phases on the server clock and copies a
new replica's items.

A one-region server has no other region to replicate to: a Create names a
region it does not serve and gets the answer for a region not enabled.
"""

from __future__ import annotations

import copy
from typing import Any

from ...errors import ResourceNotFoundException, ValidationException
from ..streams.lifecycle import sync_stream
from ..tables.lifecycle import enable_stream
from ..tables.schema import Table
from . import group as groups
from .checks import (
    NEW_AND_OLD,
    busy,
    check_one_action,
    check_region,
    dedupe,
    put_job,
    sourced_recently,
)
from .errors import (
    INVALID,
    already_exists,
    in_use,
    local_region,
    not_members,
    protected,
    recent_source,
)
from .replicator import join_cursors


def update(gt: Any, region: str, request: dict[str, Any]) -> dict[str, Any]:
    """Start the one replica change of an EVENTUAL group's UpdateTable; the answer's TableDescription."""
    name = request["TableName"]
    actions = dedupe(request["ReplicaUpdates"])
    check_one_action(actions)
    action = actions[0]
    kind = next(iter(action))
    spec = action[kind]
    target = spec["RegionName"]
    with gt.write() as txn:
        table = gt.table(region, name, txn)
        if table is None:
            raise ResourceNotFoundException(f"Requested resource not found: Table: {name} not found")
        if kind == "Create":
            check_region(gt, target, region)
        elif target == region:
            raise local_region()
        members = gt.members(txn, table) or {region: table}
        group = table.replication
        if kind != "Create" and (group is None or groups.member(group, target) is None):
            raise not_members([target])
        if busy(gt, txn, name) or table.description.get("TableStatus") != "ACTIVE":
            raise in_use()
        now = gt.clock.now()
        if kind == "Create":
            answer = _create(gt, txn, region, table, members, target, spec, now)
        elif kind == "Update":
            answer = _update(gt, txn, region, table, members, target, spec, now)
        else:
            answer = _delete(gt, txn, region, members, target, now, region)
    return answer


def _answer(table: Table, shown_members: list[dict[str, Any]], status: str) -> dict[str, Any]:
    """The UpdateTable answer: the table as stored, with the Replicas it had before this change."""
    out = {k: v for k, v in table.description.items() if not k.startswith("_")}
    out["TableStatus"] = status
    if "Replicas" in out:
        out["Replicas"] = [r for r in out["Replicas"] if r["RegionName"] in {m["region"] for m in shown_members}]
    return out


def _create(gt: Any, txn: Any, region: str, table: Table, members: dict[str, Table], target: str,
            spec: dict[str, Any], now: float) -> dict[str, Any]:
    name = table.name
    if gt.table(target, name, txn) is not None or (table.replication and groups.member(table.replication, target)):
        raise already_exists(name)
    description = table.description
    if description.get("BillingModeSummary", {}).get("BillingMode", "PROVISIONED") != "PAY_PER_REQUEST":
        # Partita has no Application Auto Scaling, so a provisioned table can never meet the condition.
        raise ValidationException("Table write capacity should either be Pay-Per-Request or AutoScaled.")
    kms = _replica_key(description, spec, target)
    group = copy.deepcopy(table.replication) or groups.new_group(region, "EVENTUAL", now)
    entry: dict[str, Any] = {"region": target, "status": "CREATING", "source": region, "added": now}
    if kms:
        entry["kms"] = kms
    if spec.get("TableClassOverride"):
        entry["class"] = {"TableClass": spec["TableClassOverride"], "LastUpdateDateTime": now}
    if spec.get("OnDemandThroughputOverride"):
        entry["on_demand"] = spec["OnDemandThroughputOverride"]
    shown = [m for m in group["members"] if m["region"] != region]
    group["members"].append(entry)
    # The source's stream: a replica needs one, so one is enabled (NEW_AND_OLD_IMAGES) when there
    # is none; an enabled stream keeps its view type (recorded on the service).
    source = copy.deepcopy(description)
    if not source.get("StreamSpecification", {}).get("StreamEnabled"):
        enable_stream(source, dict(NEW_AND_OLD), now)
        sync_stream(gt.view(region, txn), description, source, now)
    source[groups.MEMBER] = group
    source["TableStatus"] = "UPDATING"
    updated = {region: gt.put(txn, region, table, source)}
    replica = groups.replica_description(source, target, now)
    engine = gt.engines[target]
    target_view = gt.view(target, txn)
    table_id = engine.catalog.next_table_id(target_view)
    replica.pop("_Stream", None)
    sync_stream(target_view, None, replica, now)
    if entry.get("class"):
        replica["TableClassSummary"] = dict(entry["class"])
    created = gt.put(txn, target, Table(replica, table_id, table.hash_key, table.range_key), replica)
    updated[target] = created
    others = {r: t for r, t in members.items() if r != region}
    updated.update(gt.put_group(txn, others, group))
    join_cursors(gt, txn, updated, target, region)
    total = gt.view(region, txn).stats(*table.data_range())[0]
    put_job(gt, txn, region, name, {"kind": "create", "target": target, "source": region, "due": now + gt.phase,
                                      "cursor": None, "copied": 0, "total": total})
    return _answer(updated[region], shown, "UPDATING")


def _replica_key(description: dict[str, Any], spec: dict[str, Any], target: str) -> str | None:
    """The new replica's KMS key: required on a table with a customer managed key, refused otherwise."""
    key = spec.get("KMSMasterKeyId")
    sse = description.get("SSEDescription") or {}
    if sse.get("SSEType") != "KMS":
        if key:
            raise ValidationException(f"{INVALID}KMSMasterKeyId must be specified for each replica.")
        return None
    if not key:
        raise ValidationException(f"{INVALID}KMSMasterKeyId must be specified for each replica.")
    if key.startswith("arn:"):
        return str(key)
    return f"arn:aws:kms:{target}:{description['TableArn'].split(':')[4]}:key/{key}"


def _update(gt: Any, txn: Any, region: str, table: Table, members: dict[str, Table], target: str,
            spec: dict[str, Any], now: float) -> dict[str, Any]:
    if spec.get("KMSMasterKeyId"):
        raise ValidationException(f"{INVALID}KMSMasterKeyId must be specified for each replica.")
    if spec.get("ProvisionedThroughputOverride"):
        raise ValidationException(
            "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST"
        )
    group = copy.deepcopy(table.replication)
    entry = groups.member(group, target)
    assert entry is not None
    entry["status"] = "UPDATING"
    if spec.get("TableClassOverride"):
        entry["class"] = {"TableClass": spec["TableClassOverride"], "LastUpdateDateTime": now}
    if spec.get("OnDemandThroughputOverride"):
        entry["on_demand"] = spec["OnDemandThroughputOverride"]
    if spec.get("GlobalSecondaryIndexes"):
        entry["indexes"] = _index_overrides(entry.get("indexes") or [], spec["GlobalSecondaryIndexes"])
    shown = [m for m in table.replication["members"] if m["region"] != region]
    updated = gt.put_group(txn, members, group, {region: "UPDATING"})
    put_job(gt, txn, region, table.name, {"kind": "update", "target": target, "source": region,
                                            "due": now + gt.phase})
    return _answer(updated[region], shown, "UPDATING")


def _index_overrides(held: list[dict[str, Any]], sent: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per-index overrides merge by name: an index not named keeps its own (recorded)."""
    out = {doc["IndexName"]: doc for doc in held}
    for doc in sent:
        out[doc["IndexName"]] = {**out.get(doc["IndexName"], {}), **doc}
    return list(out.values())


def _delete(gt: Any, txn: Any, region: str, members: dict[str, Table], target: str, now: float,
            initiator: str) -> dict[str, Any]:
    """Start removing `target` (asked in `initiator`'s region: by ReplicaUpdates, or DeleteTable there)."""
    replica = members.get(target)
    if replica is not None and replica.description.get("DeletionProtectionEnabled"):
        raise protected(replica.name, target)
    group = next(iter(members.values())).replication
    if sourced_recently(group, target, now):
        raise recent_source()
    statuses = {r: "UPDATING" for r in members}
    if initiator == target:
        statuses[target] = "DELETING"
    shown = [m for m in group["members"] if m["region"] != initiator]
    updated = gt.put_group(txn, members, group, statuses)
    name = updated[initiator].name
    put_job(gt, txn, initiator, name, {"kind": "delete", "target": target, "source": initiator, "stage": 1,
                                         "due": now + gt.phase})
    return _answer(updated[initiator], shown, statuses[initiator])


def start_delete(gt: Any, txn: Any, region: str, table: Table, now: float) -> dict[str, Any]:
    """DeleteTable of a replica in its own region: it leaves the group as a Delete would remove it."""
    members = gt.members(txn, table)
    if busy(gt, txn, table.name) or table.description.get("TableStatus") != "ACTIVE":
        raise in_use()
    return _delete(gt, txn, region, members, region, now, region)
