"""A global table's membership, as every replica's table description keeps it.

Each replica (one table per region, each in its region's catalog) carries
the same private `_Replication` member: the consistency mode, the members
in the order they joined (with each one's status, the region it was created
from and when, and its per-replica settings) and the MRSC witness. Every
change of the group is written to every member's description in one commit
(the regions' catalogs are namespaces of one store), so all regions always
agree on it. What DescribeTable shows is rendered from it into the
description itself, as DynamoDB shows it (recorded against the service by
the ack-api-quirks lab in October 2026, docs/decisions.md):

- `GlobalTableVersion` 2019.11.21 and `GlobalTableSettingsReplicationMode`
  ENABLED_WITH_OVERRIDES while the table has replicas, absent otherwise;
- `Replicas`: the other regions, never the table's own, in joining order,
  each with RegionName, ReplicaStatus, the table's WarmThroughput and the
  settings mode, plus only the settings that differ (KMSMasterKeyId,
  ProvisionedThroughputOverride, ReplicaTableClassSummary) and, while a
  non-empty replica is being filled, ReplicaStatusPercentProgress;
- `MultiRegionConsistency` only when STRONG, `GlobalTableWitnesses` only
  with a witness.
"""

from __future__ import annotations

import copy
import uuid
from typing import Any

from ..capacity.partitions import store_initial_map
from ..control.arns import ACCOUNT_ID
from ..tables.lifecycle import stream_label

MEMBER = "_Replication"
VERSION = "2019.11.21"
SETTINGS_MODE = "ENABLED_WITH_OVERRIDES"
#: Public members rendered from `_Replication` (removed when the table stands alone again).
RENDERED = ("GlobalTableVersion", "Replicas", "GlobalTableSettingsReplicationMode", "MultiRegionConsistency",
            "GlobalTableWitnesses")
#: Private members a new replica does not inherit: they are regional (tags, policies, PITR,
#: Contributor Insights) or describe this region's own state (streams, partitions, jobs).
_REGIONAL = ("_Tags", "_Policies", "_PointInTimeRecovery", "_Capture", "_ContributorInsights",
             "_ContributorInsightsState", "_Stream", "_Partitions", "_PartitionSplits", "_Backfill",
             "_VectorBackfill", "_IndexPhases", "_Restoring")

Group = dict[str, Any]


def group_of(description: dict[str, Any]) -> Group | None:
    return description.get(MEMBER)


def member(group: Group, region: str) -> dict[str, Any] | None:
    for entry in group["members"]:
        if entry["region"] == region:
            return entry
    return None


def regions(group: Group) -> list[str]:
    return [entry["region"] for entry in group["members"]]


def new_group(region: str, mode: str, now: float) -> Group:
    return {"mode": mode, "members": [{"region": region, "status": "ACTIVE", "source": None, "added": now}]}


def render(description: dict[str, Any], region: str) -> None:
    """Write the public global-table members of `region`'s description from its `_Replication`."""
    for name in RENDERED:
        description.pop(name, None)
    group = group_of(description)
    if group is None:
        return
    others = [entry for entry in group["members"] if entry["region"] != region]
    if not others and "witness" not in group:
        description.pop(MEMBER, None)
        return
    description["GlobalTableVersion"] = VERSION
    description["Replicas"] = [_replica(entry, description) for entry in others]
    description["GlobalTableSettingsReplicationMode"] = SETTINGS_MODE
    if group["mode"] == "STRONG":
        description["MultiRegionConsistency"] = "STRONG"
    witness = group.get("witness")
    if witness is not None:
        description["GlobalTableWitnesses"] = [{"RegionName": witness["region"], "WitnessStatus": witness["status"]}]


def _replica(entry: dict[str, Any], description: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"RegionName": entry["region"], "ReplicaStatus": entry["status"]}
    if entry["status"] == "CREATING" and entry.get("progress") is not None:
        out["ReplicaStatusPercentProgress"] = str(entry["progress"])
    if entry.get("kms"):
        out["KMSMasterKeyId"] = entry["kms"]
    if entry.get("throughput"):
        out["ProvisionedThroughputOverride"] = entry["throughput"]
    if entry.get("on_demand"):
        out["OnDemandThroughputOverride"] = entry["on_demand"]
    if entry.get("indexes"):
        out["GlobalSecondaryIndexes"] = entry["indexes"]
    if "WarmThroughput" in description:
        out["WarmThroughput"] = description["WarmThroughput"]
    if entry.get("class"):
        out["ReplicaTableClassSummary"] = entry["class"]
    out["GlobalTableSettingsReplicationMode"] = SETTINGS_MODE
    return out


def replica_description(source: dict[str, Any], region: str, now: float) -> dict[str, Any]:
    """A new replica's description in `region`: the source's schema and group-wide settings.

    Its own TableId, ARN, creation time and stream (the source's view type,
    its own label); TTL and the indexes are the group's; tags, policies,
    point-in-time recovery, Contributor Insights and deletion protection
    are regional and start unset (as recorded on the service).
    """
    description = copy.deepcopy(source)
    for name in _REGIONAL:
        description.pop(name, None)
    name = description["TableName"]
    old_arn = description["TableArn"]
    arn = f"arn:aws:dynamodb:{region}:{ACCOUNT_ID}:table/{name}"
    description.update(TableArn=arn, TableId=str(uuid.uuid4()), CreationDateTime=now, TableStatus="CREATING",
                       DeletionProtectionEnabled=False, ItemCount=0, TableSizeBytes=0)
    for kind in ("LocalSecondaryIndexes", "GlobalSecondaryIndexes"):
        for doc in description.get(kind) or []:
            if "IndexArn" in doc:
                doc["IndexArn"] = arn + doc["IndexArn"][len(old_arn):]
    if "SSEDescription" in description and description["SSEDescription"].get("KMSMasterKeyArn"):
        key = description["SSEDescription"]["KMSMasterKeyArn"].split(":key/")[-1]
        description["SSEDescription"]["KMSMasterKeyArn"] = f"arn:aws:kms:{region}:{ACCOUNT_ID}:key/{key}"
    description.pop("LatestStreamArn", None)
    description.pop("LatestStreamLabel", None)
    stream = description.get("StreamSpecification")
    if stream and stream.get("StreamEnabled"):
        label = stream_label(now)
        description["LatestStreamLabel"] = label
        description["LatestStreamArn"] = f"{arn}/stream/{label}"
    store_initial_map(description)
    return description
