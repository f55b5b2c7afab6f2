"""ReplicaUpdates on a server of one region: there is no other region to put a replica in."""

from __future__ import annotations

from typing import Any

from ...errors import ResourceNotFoundException
from .checks import REGION_NAME, check_one_action, dedupe
from .errors import local_region, not_members, region_disabled, region_unsupported
from .strong import check_create_shape, check_witness_mode


def one_region(region: str, request: dict[str, Any], exists: bool) -> None:
    """ReplicaUpdates on a server of one region: there is no other region to put a replica in.

    The same answers a server of several regions gives for a region it does
    not serve (the table must exist first, as everywhere).
    """
    name = request["TableName"]
    check_witness_mode(request)
    if not exists:
        raise ResourceNotFoundException(f"Requested resource not found: Table: {name} not found")
    if request.get("MultiRegionConsistency") == "STRONG":
        check_create_shape(request, region)
    else:
        check_one_action(dedupe(request.get("ReplicaUpdates") or []))
    for action in request.get("ReplicaUpdates") or []:
        kind = next(iter(action))
        target = action[kind]["RegionName"]
        if target == region:
            raise local_region()
        if kind != "Create":
            raise not_members([target])
        if not REGION_NAME.fullmatch(target):
            raise region_unsupported(target, [region])
        raise region_disabled(target)
