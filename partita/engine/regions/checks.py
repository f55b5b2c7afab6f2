"""Checks and helpers every kind of replica change shares (replica_updates.py, strong.py)."""

from __future__ import annotations

import re
from typing import Any

import orjson

from ...errors import ValidationException
from . import group as groups
from .errors import local_region, region_disabled, region_unsupported
from .keys import job_key

#: A region name as AWS spells them (lower case); anything else is "not supported".
REGION_NAME = re.compile(r"[a-z]{2}(-[a-z]+)+-\d+")
#: How long a replica that sourced another one stays undeletable (the service's rule).
SOURCE_SECONDS = 24 * 3600
NEW_AND_OLD = {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}


def check_region(gt: Any, region: str, here: str) -> None:
    """A region a replica can be in: served by this server and not the table's own."""
    served = gt.regions()
    if region == here:
        raise local_region()
    if not REGION_NAME.fullmatch(region):
        raise region_unsupported(region, sorted(served))
    if region not in served:
        raise region_disabled(region)


def busy(gt: Any, txn: Any, name: str) -> bool:
    """Whether a replica change of this table's group is under way (in any region)."""
    return any(txn.get(job_key(region, name)) is not None for region in gt.regions())


def dedupe(actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Identical actions count once (two Creates of one region are accepted as one, as recorded)."""
    out: list[dict[str, Any]] = []
    for action in actions:
        if action not in out:
            out.append(action)
    return out


def sourced_recently(group: groups.Group, region: str, now: float) -> bool:
    """Whether `region` was the source of a replica still in the group, in the last 24 hours."""
    return any(m.get("source") == region and now - m["added"] < SOURCE_SECONDS and m["region"] != region
               for m in group["members"])


def put_job(gt: Any, txn: Any, region: str, name: str, job: dict[str, Any]) -> None:
    """Leave a replica change for jobs.py (one per table name: the group's, whichever region asked)."""
    del gt
    job["name"] = name
    txn.put(job_key(region, name), orjson.dumps(job))


def check_one_action(actions: list[dict[str, Any]]) -> None:
    """An eventually consistent group takes one replica action per call (the engine knows the mode).

    Two Creates (or Deletes) of different regions, as recorded; a Create and
    a Delete in two elements get the same answer here, and an Update beside
    another action the "more than one type" one (both unconfirmed).
    """
    changes = [element for element in actions if "Update" not in element]
    if len(changes) > 1:
        raise ValidationException("Update table operation with more than one create or delete replica actions not allowed")
    if len(actions) > 1:
        raise ValidationException("Update table operation with more than one type of replica actions not allowed.")
