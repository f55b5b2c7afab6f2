"""What every kind of finding reads (one `Context` per table), and how a finding and its numbers are written."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..capacity.partitions import TABLE_MAP
from ..tables.schema import Table
from .settings import AdvisorSettings
from .shapes import Shape


@dataclass
class Context:
    """What every kind of finding reads, gathered once per call."""

    engine: Any
    advisor: Any
    settings: AdvisorSettings
    table: Table
    doc: dict[str, Any]
    shapes: list[tuple[Shape, list[float], dict[str, Any]]]
    #: resource name ("" for the table, else the GSI) -> {"read": units, "write": units} since start
    usage: dict[str, dict[str, float]] = field(default_factory=dict)

    def units(self, index: str | None, dim: str) -> float:
        """Units since start of the table or GSI (a local index's are its table's, as DynamoDB charges them)."""
        found = self.usage.get(index or TABLE_MAP)
        if found is None:
            found = self.usage.get(TABLE_MAP, {})
        return found.get(dim, 0.0)


def finding(kind: str, table: str, index: str | None, evidence: dict[str, Any], lesson: str,
            text: str, inputs: list[dict[str, Any]]) -> dict[str, Any]:
    return {"kind": kind, "table": table, "index": index, "evidence": evidence, "lesson": lesson,
            "fix": {"text": text, "inputs": inputs}}


def share(part: float, whole: float) -> float:
    """part / whole rounded to 4 places (0 for an empty whole)."""
    return round(part / whole, 4) if whole else 0.0


def percent(value: float) -> str:
    return f"{100 * value:.1f}%" if value < 0.995 else f"{100 * value:.0f}%"


def these(requests: float) -> str:
    """The subject of a sentence about a shape's requests."""
    return "This request" if requests == 1 else f"These {number(requests)} requests"


def number(value: float) -> str:
    """Units and counts for a sentence: whole numbers without a point, others to one place."""
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"
