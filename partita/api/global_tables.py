"""The global-table operations beside UpdateTable: the 2017.11.29 API and replica auto scaling.

Version 2017.11.29 (legacy): DynamoDB no longer creates such global tables.
As recorded against the service in October 2026 (ack-api-quirks,
DDB-GLOBALTABLE-001 to 004, docs/decisions.md), CreateGlobalTable and
UpdateGlobalTable's Create are refused with the version message (after the
request's shape is checked), the other operations find no global table for
any name (a regional table, a missing one, a 2019.11.21 group alike) and
ListGlobalTables lists none. Partita answers the same: a legacy global
table cannot exist, so its `aws:rep:*` attributes never appear either.

Describe/UpdateTableReplicaAutoScaling exist for 2019.11.21 groups only
(DDB-TABLE-187, 232, 254, 190): ResourceNotFoundException "Global table
with name: 'N' does not exist." for a regional or missing table; for a
group, one entry per member with auto scaling disabled (Partita has no
Application Auto Scaling, and every group here is PAY_PER_REQUEST).
"""

from __future__ import annotations

from typing import Any

from ..engine.engine import Engine
from ..engine.regions.errors import GlobalTableNotFoundException
from ..errors import ResourceNotFoundException, ValidationException

LEGACY = (
    "One or more parameter values were invalid: DynamoDB global tables version 2017.11.29 is not supported. "
    "We recommend using DynamoDB global tables version 2019.11.21, instead of version 2017.11.29 (Legacy)."
)
_DISABLED = {"AutoScalingDisabled": True, "ScalingPolicies": []}


def _no_global_table(name: str) -> GlobalTableNotFoundException:
    return GlobalTableNotFoundException(f"Global table with name: '{name}' does not exist.")


def create_global_table(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    raise ValidationException(LEGACY)


def update_global_table(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    updates = request["ReplicaUpdates"]
    if not updates:
        raise ValidationException("One or more parameter values were invalid")
    if any("Create" in update for update in updates):
        raise ValidationException(LEGACY)  # checked before the global table is looked up
    raise _no_global_table(request["GlobalTableName"])  # the message of this one is unconfirmed


def describe_global_table(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    name = request["GlobalTableName"]
    raise GlobalTableNotFoundException(f"Global table not found: Global table with name: '{name}' does not exist.")


def list_global_tables(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    return {"GlobalTables": []}


def describe_global_table_settings(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    raise _no_global_table(request["GlobalTableName"])


def update_global_table_settings(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    raise _no_global_table(request["GlobalTableName"])


def _group_table(engine: Engine, name: str) -> Any:
    table = engine.catalog.get(name)
    if table is None or table.replication is None:
        raise ResourceNotFoundException(f"Global table with name: '{name}' does not exist.")
    return table


def _auto_scaling(engine: Engine, table: Any) -> dict[str, Any]:
    """One entry per member, in region order, its own included (as recorded), all auto scaling disabled."""
    indexes = [
        {"IndexName": doc["IndexName"], "IndexStatus": doc.get("IndexStatus", "ACTIVE"),
         "ProvisionedReadCapacityAutoScalingSettings": dict(_DISABLED),
         "ProvisionedWriteCapacityAutoScalingSettings": dict(_DISABLED)}
        for doc in table.description.get("GlobalSecondaryIndexes") or []
    ]
    members = {m["region"]: m["status"] for m in table.replication["members"]}
    replicas = [
        {"RegionName": region, "GlobalSecondaryIndexes": indexes,
         "ReplicaProvisionedReadCapacityAutoScalingSettings": dict(_DISABLED),
         "ReplicaProvisionedWriteCapacityAutoScalingSettings": dict(_DISABLED),
         "ReplicaStatus": status}
        for region, status in sorted(members.items())
    ]
    return {"TableName": table.name, "TableStatus": table.description["TableStatus"], "Replicas": replicas}


def describe_table_replica_auto_scaling(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    table = _group_table(engine, request["TableName"])
    return {"TableAutoScalingDescription": _auto_scaling(engine, table)}


def update_table_replica_auto_scaling(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    """Only "disable" is possible on a PAY_PER_REQUEST group; anything else names what cannot be set."""
    table = _group_table(engine, request["TableName"])
    regions = ", ".join(f"'{m['region'].upper()}'" for m in sorted(table.replication["members"],
                                                                    key=lambda m: m["region"]))
    for member, parameter in (
        ("ProvisionedWriteCapacityAutoScalingUpdate", "GlobalTableProvisionedWriteCapacityAutoScalingSettingsUpdate"),
        ("ReplicaUpdates", "ReplicaProvisionedReadCapacityAutoScalingSettingsUpdate"),
        ("GlobalSecondaryIndexUpdates", "GlobalTableGlobalSecondaryIndexSettingsUpdate"),
    ):
        value = request.get(member)
        if value and not _disables(value):
            # Recorded for the first two parameters; the GSI one by analogy (unconfirmed).
            raise ValidationException(
                f"Failed to update global table with name \u2018{table.name}\u2018. Replicas {regions} BillingMode is "
                f"PayPerRequest. You must convert table's BillingMode to PROVISIONED to set parameters: "
                f"'{parameter}'."
            )
    return {"TableAutoScalingDescription": _auto_scaling(engine, table)}


def _disables(value: Any) -> bool:
    """Whether an auto scaling update only disables (what a PAY_PER_REQUEST group accepts, as recorded)."""
    if isinstance(value, list):
        return all(_disables(v) for v in value)
    if not isinstance(value, dict):
        return False
    settings = {k: v for k, v in value.items() if k not in ("RegionName", "IndexName")}
    return bool(settings) and all(k == "AutoScalingDisabled" and v is True for k, v in settings.items())
