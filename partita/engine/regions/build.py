"""Building the engines of a server of several regions (`--regions`).

A request belongs to the region of its SigV4 credential scope; each region is
its own set of tables, ARNs, streams and backups (DESIGN.md, "Regions and
global tables"). Each region gets its own `Engine` over its namespace of the
one store (storage/namespace.py); the home region's engine owns the store and
keeps the rows it always had, so a server of one region is exactly what it
was, and the others share its clock, counters, meter and background duties.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

from ...storage.namespace import Namespaced
from ..backups.keys import SEQUENCE_ROW as BACKUP_SEQUENCE
from ..engine import Engine
from ..streams.keys import SECRET_ROW, STREAM_ID_ROW
from ..tables.catalog import SEQUENCE_ROW as TABLE_SEQUENCE
from ..time.clock import CLOCK_ROW
from ..time.gsi_lag import SEQUENCE_ROW as GSI_LAG_SEQUENCE
from .coordinator import GlobalTables
from .settings import expires_here

#: `--replication-lag-ms`: how long a write takes to reach the other replicas, on the server clock.
DEFAULT_LAG_MS = 100
#: `--replica-phase-ms`: the least time a replica stays CREATING, UPDATING or DELETING (each phase).
DEFAULT_PHASE_MS = 200

#: Rows every region reads and writes as one: the server clock, and the id sequences (table,
#: stream, backup and GSI-lag ids stay unique in the whole store, so per-process caches and
#: shared counters keyed by an id never mix two regions' tables).
SHARED_ROWS = frozenset({CLOCK_ROW, TABLE_SEQUENCE, STREAM_ID_ROW, SECRET_ROW, BACKUP_SEQUENCE, GSI_LAG_SEQUENCE})


def home_region(region: str, regions: Sequence[str] | None) -> str:
    """The region that keeps the store's own rows: `--region` when `--regions` names it, else the first of them."""
    if not regions or region in regions:
        return region
    return regions[0]


def add_regions(
    home: Engine,
    names: Sequence[str],
    options: dict[str, Any],
    replication_lag_ms: int = DEFAULT_LAG_MS,
    replica_phase_ms: int = DEFAULT_PHASE_MS,
) -> dict[str, Engine]:
    """Give `home` the engines of the other regions in `names` (built with `options`); the region map.

    The map is in `names`' order and is shared by every engine of it
    (`engine.regions`), so a global table's operations reach its replicas'
    regions from whichever region they are asked in; so is the coordinator
    of global tables (`engine.global_tables`), whose two background duties
    (replica jobs, replication) run on the home engine's duty thread.
    """
    engines: dict[str, Engine] = {}
    for name in names:
        if name == home.region:
            engines[name] = home
        elif name not in engines:
            engines[name] = Engine(Namespaced(home.store, name, SHARED_ROWS), name, home=home, **options)
    coordinator = GlobalTables(engines, home, replication_lag_ms, replica_phase_ms)
    for name, engine in engines.items():
        engine.regions = engines
        engine.global_tables = coordinator
        engine.replica_log.coordinator = coordinator
        engine.ttl.expires = partial(expires_here, name)
    home.duties.add(coordinator.jobs.run)
    home.duties.add(coordinator.replicator.run)
    return engines
