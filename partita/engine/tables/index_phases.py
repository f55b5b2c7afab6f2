"""The phases of an online index change, timed on the server clock.

DynamoDB builds an index added by UpdateTable in two phases (developer guide,
"Adding a global secondary index to an existing table"; API reference,
GlobalSecondaryIndexDescription.Backfilling): *resource allocation* (the
table UPDATING, the index CREATING with ``Backfilling: false``), then
*backfilling* (the table ACTIVE again, the index CREATING with ``Backfilling:
true``), then ACTIVE with ``Backfilling`` absent. A deleted index is DELETING,
the table UPDATING, then gone. On the service the phases last about 30 s,
8 to 16 minutes and 5 s (recorded in 2026, docs/decisions.md).

Here each phase lasts at least a configured time on the server clock, so a
test sees every state DynamoDB reports and can jump over them with `partita
clock advance`: ``--index-allocation-ms`` (resource allocation, and the
DELETING phase: the phases in which the table is UPDATING; default 0, since
boto3's ``table_exists`` waiter sleeps 20 s when it meets UPDATING) and
``--index-backfill-ms`` (the backfilling phase, never shorter than the real
work). Both 0 is the old behaviour: ACTIVE as soon as the work is done.

The phase deadlines live in the table description (``_IndexPhases``, a
private member DescribeTable never shows), so every process and a restart
see them; the catalog's statuses stay the one truth every reader consults,
and only ``index_jobs`` moves an index from one phase to the next.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

PHASES = "_IndexPhases"
KINDS = ("GlobalSecondaryIndexes", "VectorIndexes")


@dataclass(frozen=True, slots=True)
class IndexTiming:
    """Minimum phase lengths in seconds (`--index-allocation-ms`, `--index-backfill-ms`)."""

    allocation: float = 0.0
    backfill: float = 0.0


def _phase(description: dict[str, Any], name: str) -> dict[str, Any]:
    return description.get(PHASES, {}).get(name, {})


def begin_create(description: dict[str, Any], name: str, now: float, timing: IndexTiming) -> bool:
    """Time a new index's phases; True when it starts out backfilling (no allocation phase)."""
    allocated = now + timing.allocation
    description.setdefault(PHASES, {})[name] = {"allocated": allocated, "due": allocated + timing.backfill}
    if timing.allocation > 0:
        description["TableStatus"] = "UPDATING"
        return False
    return True


def begin_delete(description: dict[str, Any], name: str, now: float, timing: IndexTiming) -> None:
    """Time a deleted index's DELETING phase (the table is UPDATING meanwhile, as on DynamoDB)."""
    description.setdefault(PHASES, {})[name] = {"due": now + timing.allocation}
    if timing.allocation > 0:
        description["TableStatus"] = "UPDATING"


def allocating(doc: dict[str, Any]) -> bool:
    """Whether a CREATING index is still in resource allocation (Backfilling false)."""
    return doc.get("IndexStatus") == "CREATING" and doc.get("Backfilling") is False


def waiting_until(description: dict[str, Any], doc: dict[str, Any], now: float) -> float | None:
    """The server time an index's next step waits for, or None when it can be taken now."""
    phase = _phase(description, doc["IndexName"])
    if not phase:
        return None
    if doc.get("IndexStatus") == "DELETING":
        due = phase["due"]
    elif allocating(doc):
        due = phase["allocated"]
    elif phase.get("filled"):
        due = phase["due"]
    else:
        return None
    return due if now < due else None


def filled(description: dict[str, Any], name: str) -> bool:
    """Whether the backfill of a CREATING index is done (it waits only for its minimum time)."""
    return bool(_phase(description, name).get("filled"))


def _doc(description: dict[str, Any], name: str) -> dict[str, Any] | None:
    for kind in KINDS:
        for doc in description.get(kind, []):
            if doc["IndexName"] == name:
                return doc
    return None


def end_allocation(description: dict[str, Any], name: str) -> None:
    """Resource allocation is over: the index backfills and the table is ACTIVE again."""
    doc = _doc(description, name)
    if doc is not None:
        doc["Backfilling"] = True
    description["TableStatus"] = "ACTIVE"


def finish_backfill(description: dict[str, Any], name: str, now: float) -> None:
    """The backfill has read every row: ACTIVE now if the phase's time is up, else when it is."""
    phase = _phase(description, name)
    if phase and now < phase["due"]:
        phase["filled"] = True
        return
    activate(description, name)


def activate(description: dict[str, Any], name: str) -> None:
    doc = _doc(description, name)
    if doc is not None:
        doc["IndexStatus"] = "ACTIVE"
        doc.pop("Backfilling", None)
    forget(description, name)


def forget(description: dict[str, Any], name: str) -> None:
    """Drop an index's deadlines (it is ACTIVE or gone); the table is ACTIVE again."""
    phases = description.get(PHASES)
    if phases is not None:
        phases.pop(name, None)
        if not phases:
            del description[PHASES]
    if description.get("TableStatus") == "UPDATING":
        description["TableStatus"] = "ACTIVE"
