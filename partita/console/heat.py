"""A partition map as a strip: each partition's width, heat and tooltip, as the page and its script draw it.

Heat is a partition's share of the hottest partition's load over the last
minute, where load weighs reads and writes by the per-partition ceilings
(3000 reads, 1000 writes a second): one hot key stands out however small
the table's traffic. `static/strip.js` computes the same from the
introspection API's JSON when it refreshes the strip.
"""

from __future__ import annotations

from typing import Any

from ..engine.capacity.partitions import HASH_SPACE

HOT = 0.5


def load_of(part: dict[str, Any]) -> float:
    return part["read_units_per_minute"] / 3000 + part["write_units_per_minute"] / 1000


def strip(doc: dict[str, Any]) -> dict[str, Any]:
    parts = doc["partitions"]
    peak = max((load_of(p) for p in parts), default=0.0)
    cells = []
    for part in parts:
        load = load_of(part)
        heat = load / peak if peak > 0 else 0.0
        cells.append({
            **part,
            "width": 100.0 * (part["hash_end"] - part["hash_start"] + 1) / HASH_SPACE,
            "heat": heat,
            "hot": peak > 0 and heat >= HOT,
            "throttled": part["throttled_requests"] > 0,
        })
    return {**doc, "cells": cells}
