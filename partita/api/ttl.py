"""UpdateTimeToLive and DescribeTimeToLive (the request shapes are checked by the model)."""

from __future__ import annotations

from typing import Any

from ..engine.engine import Engine


def update_time_to_live(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    if engine.global_tables is not None:
        from ..engine.regions.strong import refuse_ttl  # only on a server of several regions
        refuse_ttl(engine.catalog.get(request["TableName"]), request["TimeToLiveSpecification"])
    answer = engine.ttl.update(request["TableName"], request["TimeToLiveSpecification"])
    if engine.global_tables is not None:  # TTL is a setting of the whole global table
        engine.global_tables.share_ttl(engine.region, request["TableName"], request["TimeToLiveSpecification"])
    return answer


def describe_time_to_live(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    return engine.ttl.describe(request["TableName"])
