"""UpdateTimeToLive and DescribeTimeToLive (the request shapes are checked by the model)."""

from __future__ import annotations

from typing import Any

from ..engine.engine import Engine


def update_time_to_live(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    return engine.ttl.update(request["TableName"], request["TimeToLiveSpecification"])


def describe_time_to_live(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    return engine.ttl.describe(request["TableName"])
