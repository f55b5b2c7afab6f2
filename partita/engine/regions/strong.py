"""Multi-Region strong consistency (MRSC): a group born complete, written in one commit.

DynamoDB's rules, as recorded against the service by the ack-api-quirks lab
(October 2026, docs/decisions.md), each answer word for word:

- A STRONG group is made by one UpdateTable on a regional table with
  MultiRegionConsistency STRONG and three regions in all: two replica
  Creates, or one Create and one witness (GlobalTableWitnessUpdates). A
  witness needs STRONG, cannot share a region with a replica, and is not a
  table (its region shows nothing).
- After that the group is frozen: no replica is added or removed alone,
  the mode never changes, and DeleteTable in any member's region is
  refused. It is dissolved by one UpdateTable deleting every other replica
  and the witness; the table asked stays, a regional table again.
- The table must be empty when it becomes STRONG (the developer guide's
  MRSC example; the refusal's wording is not on record: unconfirmed).

Writes: the item is written to every replica in the writer's own commit
(`write_through`), so a strongly consistent read in any region sees it. A
write to an item another region wrote less than `--replication-lag-ms` ago
(or while replication is held) fails with ReplicatedWriteConflictException,
as a write racing another region's write does on the service; the message
is the service model's description of the exception (unconfirmed wording).
"""

from __future__ import annotations

import copy
from typing import Any

from ...errors import ResourceNotFoundException, ValidationException
from ..streams.lifecycle import sync_stream
from ..tables.lifecycle import enable_stream
from ..tables.schema import Table
from . import group as groups
from .checks import NEW_AND_OLD, busy, check_region, dedupe, put_job
from .errors import INVALID, ReplicatedWriteConflictException, already_exists, in_use, not_members
from .keys import unpack_version

#: Regions where DynamoDB offers no MRSC (recorded: us-west-1).
NOT_MRSC = ("us-west-1",)
COUNT = "Unsupported replica count for global tables with MultiRegionConsistency set to STRONG."
UNSUPPORTED_ON_EXISTING = "MultiRegionConsistency parameter is unsupported on existing global table"
ONLY_ONE = "Deletion of only one table replica is not supported for global tables with MultiRegionConsistency set to STRONG."
CONFLICT = "One or more items in this request are being modified in another Region."
# The features the developer guide says MRSC tables do not support. DynamoDB's refusals of them are
# not on record: these three texts are Partita's, in the service's "... set to STRONG" style (unconfirmed).
NO_TRANSACTIONS = (f"{INVALID}Transactions are not supported for global tables with MultiRegionConsistency set to "
                   "STRONG.")
NO_TTL = f"{INVALID}Time to Live is not supported for global tables with MultiRegionConsistency set to STRONG."
NO_LSI = (f"{INVALID}Local secondary indexes are not supported for global tables with MultiRegionConsistency set "
          "to STRONG.")


def is_strong_request(gt: Any, region: str, request: dict[str, Any]) -> bool:
    if request.get("MultiRegionConsistency") is not None or request.get("GlobalTableWitnessUpdates"):
        return True
    table = gt.table(region, request["TableName"])
    return table is not None and table.replication is not None and table.replication["mode"] == "STRONG"


def check_witness_mode(request: dict[str, Any]) -> None:
    """A new witness needs STRONG (deleting one, with the replicas, names no mode)."""
    creates = [w for w in request.get("GlobalTableWitnessUpdates") or [] if "Create" in w]
    if creates and request.get("MultiRegionConsistency") != "STRONG":
        raise ValidationException("MultiRegionConsistency must be set as STRONG when GlobalTableWitnessUpdates "
                                  "parameter is present.")


def check_create_shape(request: dict[str, Any], region: str) -> tuple[list[str], list[str]]:
    """The checks of a STRONG group's creation that need no table: (replica regions, witness regions)."""
    actions = dedupe(request.get("ReplicaUpdates") or [])
    witnesses = request.get("GlobalTableWitnessUpdates") or []
    if any("Create" not in action for action in actions):
        raise ValidationException("Only Replica Create actions are supported when MultiRegionConsistency "
                                  "parameter is provided.")
    targets = [action["Create"]["RegionName"] for action in actions]
    witness = [w["Create"]["RegionName"] for w in witnesses if "Create" in w]
    if len(targets) + len(witness) != 2 or not targets:
        raise ValidationException(COUNT)
    bad = [r for r in [*targets, *witness] if r in NOT_MRSC]
    if bad:
        raise ValidationException("Unsupported Region(s) specified for global tables with MultiRegionConsistency "
                                  f"set to STRONG: [{', '.join(bad)}].")
    if witness and witness[0] == region:
        raise ValidationException("Cannot add a witness in the same region as an existing replica when creating a "
                                  "global table with MultiRegionConsistency set to STRONG.")
    if witness and witness[0] in targets:
        raise ValidationException("Cannot target multiple regions with the same action")
    return targets, witness


def update_strong(gt: Any, region: str, request: dict[str, Any]) -> dict[str, Any]:
    name = request["TableName"]
    mode = request.get("MultiRegionConsistency")
    witnesses = request.get("GlobalTableWitnessUpdates") or []
    actions = dedupe(request.get("ReplicaUpdates") or [])
    check_witness_mode(request)
    with gt.write() as txn:
        table = gt.table(region, name, txn)
        if table is None:
            raise ResourceNotFoundException(f"Requested resource not found: Table: {name} not found")
        group = table.replication
        if group is not None and group["mode"] == "STRONG":
            return _frozen(gt, txn, region, table, mode, actions, witnesses)
        if mode == "STRONG" or any("Create" in w for w in witnesses):
            return _create(gt, txn, region, table, request)
        if witnesses:
            raise ValidationException(  # deleting a witness of a table that has none (unconfirmed wording)
                "Update global table operation failed because one or more witnesses were not part of the global "
                f"table. Please retry the request without these witnesses: "
                f"[{', '.join(w['Delete']['RegionName'] for w in witnesses if 'Delete' in w)}].")
        if group is not None:
            # EVENTUAL named on an existing (EVENTUAL) group: the wording recorded for a STRONG
            # group's mode change (unconfirmed for this case).
            raise ValidationException(UNSUPPORTED_ON_EXISTING)
    from .replica_updates import (
        update,  # EVENTUAL named on a regional table: an ordinary replica change
    )

    return update(gt, region, request)


def _create(gt: Any, txn: Any, region: str, table: Table, request: dict[str, Any]) -> dict[str, Any]:
    targets, witness = check_create_shape(request, region)
    for target in targets:
        check_region(gt, target, region)
    for target in witness:
        check_region(gt, target, region)
    if table.replication is not None:
        raise ValidationException(UNSUPPORTED_ON_EXISTING)  # an EVENTUAL group cannot become STRONG
    name = table.name
    for target in targets:
        if gt.table(target, name, txn) is not None:
            raise already_exists(name)
    description = table.description
    if description.get("BillingModeSummary", {}).get("BillingMode", "PROVISIONED") != "PAY_PER_REQUEST":
        raise ValidationException("Table write capacity should either be Pay-Per-Request or AutoScaled.")
    if busy(gt, txn, name) or description.get("TableStatus") != "ACTIVE":
        raise in_use()
    if description.get("LocalSecondaryIndexes"):
        raise ValidationException(NO_LSI)
    if (description.get("_TimeToLive") or {}).get("status") == "ENABLED":
        raise ValidationException(NO_TTL)
    if gt.view(region, txn).stats(*table.data_range())[0]:
        # The table must be empty (developer guide); this wording is Partita's (unconfirmed).
        raise ValidationException("One or more parameter values were invalid: A table must be empty to become a "
                                  "global table with MultiRegionConsistency set to STRONG.")
    now = gt.clock.now()
    group = groups.new_group(region, "STRONG", now)
    for target in targets:
        group["members"].append({"region": target, "status": "CREATING", "source": region, "added": now})
    if witness:
        group["witness"] = {"region": witness[0], "status": "CREATING"}
    source = copy.deepcopy(description)
    if not source.get("StreamSpecification", {}).get("StreamEnabled"):
        enable_stream(source, dict(NEW_AND_OLD), now)
        sync_stream(gt.view(region, txn), description, source, now)
    source[groups.MEMBER] = group
    source["TableStatus"] = "UPDATING"
    updated = gt.put(txn, region, table, source)
    for target in targets:
        replica = groups.replica_description(source, target, now)
        view = gt.view(target, txn)
        table_id = gt.engines[target].catalog.next_table_id(view)
        replica.pop("_Stream", None)
        sync_stream(view, None, replica, now)
        gt.put(txn, target, Table(replica, table_id, table.hash_key, table.range_key), replica)
    put_job(gt, txn, region, name, {"kind": "strong", "source": region, "targets": targets,
                                      "due": now + gt.phase})
    out = {k: v for k, v in updated.description.items() if not k.startswith("_")}
    out.pop("Replicas", None)
    out.pop("GlobalTableWitnesses", None)
    out["TableStatus"] = "UPDATING"
    return out


def _frozen(gt: Any, txn: Any, region: str, table: Table, mode: str | None, actions: list[dict[str, Any]],
            witnesses: list[dict[str, Any]]) -> dict[str, Any]:
    """A request to an existing STRONG group: only its dissolution is allowed."""
    group = table.replication
    assert group is not None
    if mode == "STRONG":
        if any("Create" not in action for action in actions):
            raise ValidationException("Only Replica Create actions are supported when MultiRegionConsistency "
                                      "parameter is provided.")
        creates = sum(1 for a in actions) + sum(1 for w in witnesses if "Create" in w)
        if creates != 2:
            raise ValidationException(COUNT)
        raise ValidationException(UNSUPPORTED_ON_EXISTING)
    if mode is not None:
        raise ValidationException(UNSUPPORTED_ON_EXISTING)
    if any("Create" in action for action in actions):
        raise ValidationException("Cannot add replicas to a global table with strong MultiRegionConsistency")
    deleting = [action["Delete"]["RegionName"] for action in actions if "Delete" in action]
    members = [m["region"] for m in group["members"]]
    strangers = [r for r in deleting if r not in members or r == region]
    if strangers:
        raise not_members(strangers)
    witness = group.get("witness")
    gone_witnesses = [w["Delete"]["RegionName"] for w in witnesses if "Delete" in w]
    foreign = [w for w in gone_witnesses if witness is None or w != witness["region"]]
    if foreign:
        raise ValidationException("Update global table operation failed because one or more witnesses were not part "
                                  f"of the global table. Please retry the request without these witnesses: "
                                  f"[{', '.join(foreign)}].")
    if witness is not None and not gone_witnesses:
        raise ValidationException("Update table delete operation does not include all witnesses.")
    if sorted(deleting) != sorted(r for r in members if r != region):
        raise ValidationException(ONLY_ONE)
    if busy(gt, txn, table.name) or table.description.get("TableStatus") != "ACTIVE":
        raise in_use()
    tables = gt.members(txn, table)
    updated = gt.put_group(txn, tables, group, {r: "UPDATING" for r in tables})
    now = gt.clock.now()
    put_job(gt, txn, region, table.name, {"kind": "dissolve", "source": region, "targets": deleting, "stage": 1,
                                            "due": now + gt.phase})
    out = {k: v for k, v in updated[region].description.items() if not k.startswith("_")}
    out["TableStatus"] = "UPDATING"
    return out


def strong(table: Table) -> bool:
    return table.replication is not None and table.replication["mode"] == "STRONG"


def refuse_transaction(tables: Any) -> None:
    """TransactWriteItems and TransactGetItems on an MRSC table are refused (developer guide)."""
    if any(strong(table) for table in tables):
        raise ValidationException(NO_TRANSACTIONS)


def refuse_ttl(table: Table | None, spec: dict[str, Any]) -> None:
    if table is not None and strong(table) and spec.get("Enabled"):
        raise ValidationException(NO_TTL)


def refuse_delete(table: Table) -> None:
    """DeleteTable of a STRONG group's member: the group is dissolved as a whole only."""
    group = table.replication
    if group is not None and group["mode"] == "STRONG":
        raise ValidationException(ONLY_ONE)


def write_through(gt: Any, txn: Any, region: str, table: Table, suffix: bytes, new: Any,
                  version: tuple[int, str]) -> None:
    """Write one item change to every other replica of a STRONG group, in the writer's commit."""
    for entry in table.replication["members"]:
        other_region = entry["region"]
        if other_region == region or other_region not in gt.engines or entry["status"] == "DELETING":
            continue
        other = gt.table(other_region, table.name, txn)
        if other is None or other.replication is None:
            continue
        gt.apply(txn, other_region, other, suffix, new, version)


def check_conflict(gt: Any, region: str, held: bytes, now: float) -> None:
    """Refuse a write to an item another region wrote and whose write is still being replicated.

    `held` is the item's version before this write. While replication is
    held every other region's write stays in flight (tests make the
    conflict with it).
    """
    micros, origin = unpack_version(held)
    if origin != region and (gt.held() or now * 1_000_000 - micros < gt.lag * 1_000_000):
        raise ReplicatedWriteConflictException(CONFLICT)
