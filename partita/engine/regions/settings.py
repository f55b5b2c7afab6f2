"""The table settings a global table shares, and the ones each replica keeps for itself.

As recorded on the service (ack-api-quirks, October 2026): TTL, the global
secondary indexes, billing mode and throughput, the table class and the
encryption type are the group's: a change in any member's region reaches
every replica. Tags, resource policies, point-in-time recovery,
Contributor Insights and deletion protection stay regional. The stream of
a replica cannot be disabled while the table has replicas. Another
UpdateTable waits (ResourceInUseException) while a replica change runs.

Here a group-wide change is made in the region asked, then in every other
member's region (each a plain change of that region's table). DynamoDB
applies the others asynchronously, with an UPDATING phase.
"""

from __future__ import annotations

import logging
from typing import Any

from ...errors import DynamoDBError, ValidationException
from .checks import busy
from .errors import INVALID, in_use

log = logging.getLogger("partita.replication")
#: UpdateTable members a change of which every replica makes.
SHARED = ("GlobalSecondaryIndexUpdates", "BillingMode", "ProvisionedThroughput", "OnDemandThroughput", "TableClass",
          "SSESpecification")


def before_update(gt: Any, region: str, request: dict[str, Any]) -> None:
    table = gt.table(region, request["TableName"])
    if table is None or table.replication is None:
        return
    stream = request.get("StreamSpecification")
    if stream is not None and not stream.get("StreamEnabled"):
        raise ValidationException(f"{INVALID}Disabling Stream is not allowed for a Global Table replica.")
    with gt.write() as txn:
        if busy(gt, txn, table.name):
            raise in_use()


def after_update(gt: Any, region: str, request: dict[str, Any]) -> None:
    shared = {name: request[name] for name in SHARED if request.get(name) is not None}
    if not shared:
        return
    if "GlobalSecondaryIndexUpdates" in shared and request.get("AttributeDefinitions"):
        shared["AttributeDefinitions"] = request["AttributeDefinitions"]
    table = gt.table(region, request["TableName"])
    if table is None or table.replication is None:
        return
    for other in _others(gt, region, table):
        try:
            gt.engines[other].table_updates.update({"TableName": table.name, **shared})
        except DynamoDBError as error:  # a replica that cannot take it keeps its own (logged)
            log.warning("replica %s of %s did not take %s: %s", other, table.name, sorted(shared), error.message)


def share_ttl(gt: Any, region: str, name: str, spec: dict[str, Any]) -> None:
    table = gt.table(region, name)
    if table is None or table.replication is None:
        return
    for other in _others(gt, region, table):
        try:
            gt.engines[other].ttl.update(name, spec)
        except DynamoDBError as error:
            log.warning("replica %s of %s did not take the TTL change: %s", other, name, error.message)


def _others(gt: Any, region: str, table: Any) -> list[str]:
    return [m["region"] for m in table.replication["members"] if m["region"] != region and m["region"] in gt.engines]


def expires_here(region: str, table: Any) -> bool:
    """Whether `region`'s TTL duty deletes the expired items of `table`.

    One replica expires items for the whole group (its first ACTIVE
    member); its deletes replicate like any write, so the service's
    identity marks the delete in that region's stream only, and the others
    show a replicated delete (DESIGN.md).
    """
    group = table.replication
    if group is None:
        return True
    first = next((m["region"] for m in group["members"] if m["status"] == "ACTIVE"), None)
    return first is None or first == region
