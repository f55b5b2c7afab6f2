"""WarmThroughput and OnDemandThroughput of tables and global indexes: checked, stored, described.

They are settings here; the capacity emulation (another issue) reads them.
DynamoDB starts a new on-demand table or index at 12,000 read and 4,000
write units per second of warm throughput, and a provisioned one at its
provisioned capacity; warm throughput only rises (it follows provisioned
capacity up and never comes down). An OnDemandThroughput member of -1
removes that maximum.
"""

from __future__ import annotations

from typing import Any

from ...errors import ValidationException

INVALID = "One or more parameter values were invalid: "
ON_DEMAND_WARM_READ = 12_000
ON_DEMAND_WARM_WRITE = 4_000
_WARM_MEMBERS = (("ReadUnitsPerSecond", "ReadCapacityUnits", ON_DEMAND_WARM_READ),
                 ("WriteUnitsPerSecond", "WriteCapacityUnits", ON_DEMAND_WARM_WRITE))
_MAX_MEMBERS = ("MaxReadRequestUnits", "MaxWriteRequestUnits")

Doc = dict[str, Any]


def check_on_demand(spec: Doc | None, owner: str) -> None:
    """Each maximum is -1 (no maximum) or at least 1.

    "Requested MaxWriteRequestUnits for OnDemandThroughput for table is
    outside of valid range" is the service's answer to 0 (seen in
    terraform-provider-aws#39760); "for index" is assumed for a GSI.
    """
    if spec is None:
        return
    for member in _MAX_MEMBERS:
        value = spec.get(member)
        if value is not None and value != -1 and value < 1:
            raise ValidationException(
                f"{INVALID}Requested {member} for OnDemandThroughput for {owner} is outside of valid range"
            )


def check_warm(spec: Doc | None, current: Doc, owner: str) -> None:
    """Warm throughput can be raised, never lowered below what the table or index has now.

    Wording unconfirmed against the service.
    """
    if spec is None:
        return
    if not any(spec.get(member) is not None for member, _, _ in _WARM_MEMBERS):
        raise ValidationException(
            f"{INVALID}At least one of ReadUnitsPerSecond or WriteUnitsPerSecond must be specified "
            f"for WarmThroughput of {owner}"
        )
    for member, _, _ in _WARM_MEMBERS:
        value = spec.get(member)
        if value is not None and value < current[member]:
            raise ValidationException(
                f"{INVALID}Requested {member} for WarmThroughput for {owner} is lower than the current value "
                f"{current[member]}; warm throughput can only be increased"
            )


def default_warm(provisioned: Doc | None) -> Doc:
    """A new table's or index's warm throughput: its provisioned capacity, or the on-demand start."""
    out: Doc = {}
    for member, capacity, on_demand in _WARM_MEMBERS:
        out[member] = provisioned[capacity] if provisioned else on_demand
    out["Status"] = "ACTIVE"
    return out


def apply_warm(doc: Doc, requested: Doc | None, provisioned: Doc | None, on_demand: bool) -> None:
    """Raise `doc`'s WarmThroughput to the request and to the capacity the table now has."""
    warm = doc.get("WarmThroughput") or default_warm(provisioned if not on_demand else None)
    for member, capacity, start in _WARM_MEMBERS:
        floor = start if on_demand else (provisioned or {}).get(capacity, 0)
        wanted = (requested or {}).get(member) or 0
        warm[member] = max(warm[member], floor, wanted)
    warm["Status"] = "ACTIVE"
    doc["WarmThroughput"] = warm


def apply_on_demand(doc: Doc, requested: Doc | None) -> None:
    """Merge requested maxima into `doc`'s OnDemandThroughput; -1 removes one."""
    if requested is None:
        return
    current = dict(doc.get("OnDemandThroughput") or {})
    for member in _MAX_MEMBERS:
        value = requested.get(member)
        if value == -1:
            current.pop(member, None)
        elif value is not None:
            current[member] = value
    if current:
        doc["OnDemandThroughput"] = current
    else:
        doc.pop("OnDemandThroughput", None)


def describe_new(doc: Doc, request: Doc, on_demand: bool) -> None:
    """WarmThroughput and OnDemandThroughput of a table or index being created from `request`."""
    provisioned = None if on_demand else request.get("ProvisionedThroughput")
    doc["WarmThroughput"] = default_warm(provisioned)
    apply_warm(doc, request.get("WarmThroughput"), provisioned, on_demand)
    apply_on_demand(doc, request.get("OnDemandThroughput"))


def check_create(request: Doc) -> None:
    """CreateTable's throughput settings, for the table and each global index."""
    on_demand = request.get("BillingMode") == "PAY_PER_REQUEST"
    check_on_demand(request.get("OnDemandThroughput"), "table")
    check_warm(request.get("WarmThroughput"), default_warm(None if on_demand else request.get("ProvisionedThroughput")),
               "table")
    for index in request.get("GlobalSecondaryIndexes") or []:
        check_on_demand(index.get("OnDemandThroughput"), "index")
        check_warm(index.get("WarmThroughput"),
                   default_warm(None if on_demand else index.get("ProvisionedThroughput")), "index")
