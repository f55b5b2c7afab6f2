"""UpdateTable's replica and witness members: the checks DynamoDB makes before looking at the table.

Recorded against the service by the ack-api-quirks lab (October 2026,
docs/decisions.md): ReplicaUpdates must be the only change of its request
(validated before any state check); each element names exactly one action,
and an Update names something to change; an eventually consistent group
takes one Create or Delete per call (two identical Creates count as one),
which the engine checks once it knows the group's mode (engine/regions).
"""

from __future__ import annotations

from typing import Any

from ...errors import ValidationException

INVALID = "One or more parameter values were invalid: "
#: UpdateTable members that change something besides replicas and witnesses.
_OTHER_CHANGES = (
    "ProvisionedThroughput", "BillingMode", "StreamSpecification", "SSESpecification", "DeletionProtectionEnabled",
    "OnDemandThroughput", "WarmThroughput", "TableClass", "GlobalTableSettingsReplicationMode",
    "DisassociationProtectionEnabled",
)
NO_ACTIONS = "There are no actions specified in the Replica Update Action of the request."


def is_replica_request(request: dict[str, Any]) -> bool:
    return bool(request.get("ReplicaUpdates") or request.get("GlobalTableWitnessUpdates")
                or request.get("MultiRegionConsistency") is not None)


def validate_replica_request(request: dict[str, Any]) -> None:
    strong = request.get("MultiRegionConsistency") is not None or bool(request.get("GlobalTableWitnessUpdates"))
    others = any(request.get(name) is not None for name in _OTHER_CHANGES) or any(
        request.get(name) for name in ("GlobalSecondaryIndexUpdates", "VectorIndexUpdates"))
    if others:
        if strong:
            raise ValidationException("Requests that modify replicas or witnesses must not also modify other fields")
        raise ValidationException(f"{INVALID}Replica modification must be the only operation in the request")
    for element in request.get("ReplicaUpdates") or []:
        if "Disassociate" in element:
            # A 2026 member of the model (multi-account global tables): refused by name, never dropped;
            # the text is Partita's own.
            raise ValidationException("Disassociate is not supported: Partita does not implement disassociating "
                                      "replicas (multi-account global tables) yet")
        kinds = [kind for kind in ("Create", "Update", "Delete") if kind in element]
        if not kinds:
            raise ValidationException(NO_ACTIONS)
        if len(kinds) > 1:
            raise ValidationException("Update table operation with more than one type of replica actions not allowed.")
        if kinds[0] == "Update" and set(element["Update"]) == {"RegionName"}:
            raise ValidationException(NO_ACTIONS)

