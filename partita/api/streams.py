"""The DynamoDB Streams API (`DynamoDBStreams_20120810.*`), served on the same endpoint.

Shapes are checked against botocore's streams service model before these run.
"""

from __future__ import annotations

from typing import Any

from ..engine.engine import Engine
from ..engine.streams.reader import MAX_RECORDS
from ..errors import ShapeValidationException


def _at_most(value: int | None, limit: int, member: str) -> int | None:
    """The documented upper limits (the model only says min 1); wording unconfirmed."""
    if value is not None and value > limit:
        raise ShapeValidationException(
            f"1 validation error detected: Value '{value}' at '{member}' failed to satisfy constraint: "
            f"Member must have value less than or equal to {limit}"
        )
    return value


def list_streams(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    limit = _at_most(request.get("Limit"), 100, "limit")
    return engine.streams.list_streams(request.get("TableName"), limit, request.get("ExclusiveStartStreamArn"))


def describe_stream(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    limit = _at_most(request.get("Limit"), 100, "limit")
    return engine.streams.describe_stream(
        request["StreamArn"], limit, request.get("ExclusiveStartShardId"), request.get("ShardFilter")
    )


def get_shard_iterator(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    return engine.streams.get_shard_iterator(
        request["StreamArn"],
        request["ShardId"],
        request["ShardIteratorType"],
        request.get("SequenceNumber"),
        request.get("Timestamp"),
    )


def get_records(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    limit = _at_most(request.get("Limit"), MAX_RECORDS, "limit")
    return engine.streams.get_records(request["ShardIterator"], limit)
