"""Enable, Disable, Describe and UpdateKinesisStreamingDestination (shapes are checked by the model)."""

from __future__ import annotations

from typing import Any

from ..engine.engine import Engine


def enable_kinesis_streaming_destination(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    return engine.kinesis.destinations.enable(request["TableName"], request["StreamArn"],
                                              request.get("EnableKinesisStreamingConfiguration"))


def disable_kinesis_streaming_destination(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    return engine.kinesis.destinations.disable(request["TableName"], request["StreamArn"],
                                               request.get("EnableKinesisStreamingConfiguration"))


def describe_kinesis_streaming_destination(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    return engine.kinesis.destinations.describe(request["TableName"])


def update_kinesis_streaming_destination(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    return engine.kinesis.destinations.update(request["TableName"], request["StreamArn"],
                                              request.get("UpdateKinesisStreamingConfiguration"))
