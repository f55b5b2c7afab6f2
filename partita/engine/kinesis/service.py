"""Wires the Kinesis destinations into one engine, and reports their delivery for /metrics and the console."""

from __future__ import annotations

from dataclasses import dataclass

from ...storage.base import ReadView, Store
from ..backups.changelog import changes, position
from ..backups.pitr import Trimmer
from ..tables.catalog import Catalog
from ..time.clock import Clock
from ..time.duties import Duties
from .delivery import KinesisDelivery
from .destinations import KinesisDestinations
from .state import all_states, hold, live_entry


class KinesisService:
    def __init__(self, store: Store, catalog: Catalog, clock: Clock, region: str, endpoint: str | None,
                 kinesis_region: str | None, duties: Duties, trimmer: Trimmer) -> None:
        self.destinations = KinesisDestinations(store, catalog, region, duties.wake)
        self.delivery = KinesisDelivery(store, catalog, clock, endpoint, kinesis_region)
        duties.add(self.delivery.run)
        trimmer.holds.append(hold)


@dataclass(frozen=True)
class Delivery:
    table: str
    stream: str
    status: str
    sent: int  # records Kinesis acknowledged since the destination was enabled (across restarts)
    pending: int  # changes committed and not yet acknowledged
    lag: float  # seconds since the oldest pending change committed (0 when none)
    error: str  # the last failure, until a send succeeds


def deliveries(view: ReadView, clock: Clock) -> list[Delivery]:
    """Every destination that is live, read from the store (any worker answers the same)."""
    out = []
    now = clock.now()
    for state in all_states(view):
        entry = live_entry(state)
        if entry is None:
            continue
        pending = max(0, position(view, state["table_id"]) - state["delivered"])
        first = next(changes(view, state["table_id"], state["delivered"], 1), None) if pending else None
        out.append(Delivery(state["table"], entry["StreamArn"], entry["DestinationStatus"], state.get("sent", 0),
                            pending, 0.0 if first is None else max(0.0, now - first.time), state.get("error", "")))
    return out
