"""The Projection rules every index declaration shares (LSI, GSI, vector index).

Why one place: CreateTable's secondary indexes and vector indexes each had a
copy, and the vector copy had lost the duplicate NonKeyAttributes check.
Messages as CreateTable already gave them for LSIs and GSIs (dynalite's
record of the service); a vector index's Projection is the same shape, so
it gets the same checks in the same order.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ...errors import ValidationException, shown

INVALID = "One or more parameter values were invalid: "


def check_projection(projection: dict[str, Any]) -> None:
    """Refuse a Projection whose type and NonKeyAttributes disagree, or that names an attribute twice."""
    kind = projection.get("ProjectionType")
    if kind is None:
        raise ValidationException(INVALID + "Unknown ProjectionType: null")
    non_key = projection.get("NonKeyAttributes")
    if non_key is not None and kind != "INCLUDE":
        raise ValidationException(INVALID + f"ProjectionType is {kind}, but NonKeyAttributes is specified")
    if kind == "INCLUDE" and not non_key:
        raise ValidationException(INVALID + "ProjectionType is INCLUDE, but NonKeyAttributes is not specified")
    if non_key and len(set(non_key)) != len(non_key):
        counts = Counter(non_key)
        duplicate = next(name for name in non_key if counts[name] > 1)
        raise ValidationException(INVALID + f"Duplicate element in NonKeyAttributes: {shown(duplicate)}")
