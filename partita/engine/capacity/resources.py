"""What the meter limits: a table or one of its GSIs with its partition map and rates.

Kept apart from the meter itself (meter.py): this is read from the catalog's
table description once per table version, while the meter's code is what
every request runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..schema import Table
from .partitions import TABLE_MAP, TABLE_MAX_UNITS, is_on_demand, starts_of, throughput_of

if TYPE_CHECKING:
    from .meter import Lease


@dataclass(slots=True, eq=False)
class Resource:
    """A table or one of its GSIs, as the meter limits it."""

    table_id: int
    kind: str  # "Table" or "Index"
    name: str  # "" for the table, else the index name
    arn: str
    tag: int
    starts: list[int]
    on_demand: bool
    #: Provisioned units per second (read, write); on-demand: the warm throughput.
    rates: tuple[float, float]
    #: OnDemandThroughput maxima (read, write), None where there is none.
    maxima: tuple[float | None, float | None]
    #: The per-table quota an on-demand table or GSI scales up to (DescribeLimits).
    quota: float
    #: This process's leases, per dimension: one per partition number, and the table's (or GSI's).
    parts: tuple[list[Lease | None], list[Lease | None]] = field(init=False)
    levels: list[Lease | None] = field(init=False)
    #: Contributor Insights is on for the table: every key's units are ranked, not a sample.
    exact: bool = False
    hot_token: tuple[int, int] = field(init=False)
    #: Units (read, write) since the last request sampled for the hot-key ranking.
    hot_debt: list[float] = field(init=False)

    def __post_init__(self) -> None:
        self.parts = ([None] * len(self.starts), [None] * len(self.starts))
        self.levels = [None, None]
        self.hot_token = (self.table_id, self.tag)
        self.hot_debt = [0.0, 0.0]


def _maximum(doc: dict[str, Any], member: str) -> float | None:
    value = (doc.get("OnDemandThroughput") or {}).get(member)
    return None if value is None or value < 0 else float(value)


def resources_of(table: Table, quota: float = TABLE_MAX_UNITS) -> dict[str, Resource]:
    """The table ("") and each GSI, with their partition maps and limits."""
    description = table.description
    on_demand = is_on_demand(description)
    out = {
        TABLE_MAP: Resource(
            table.table_id, "Table", TABLE_MAP, description["TableArn"], 1, starts_of(description),
            on_demand, throughput_of(description, on_demand),
            (_maximum(description, "MaxReadRequestUnits"), _maximum(description, "MaxWriteRequestUnits")), quota,
            table.insights,
        )
    }
    for doc in description.get("GlobalSecondaryIndexes") or []:
        index = table.index(doc["IndexName"])
        if index is None:
            continue
        out[index.name] = Resource(
            table.table_id, "Index", index.name, doc.get("IndexArn", f"{description['TableArn']}/index/{index.name}"),
            index.index_id + 1, starts_of(description, index.name), on_demand, throughput_of(doc, on_demand),
            (_maximum(doc, "MaxReadRequestUnits"), _maximum(doc, "MaxWriteRequestUnits")), quota,
            table.insights,
        )
    return out
