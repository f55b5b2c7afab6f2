"""The DynamoDB Streams API (`DynamoDBStreams_20120810.*`), served on the same endpoint.

Shapes are checked against botocore's streams service model before these run
(with the departures in `validation/model_patches.py`). What the model cannot
say is checked here, before any stream is looked up: a StreamArn must have a
stream ARN's form, and GetShardIterator's SequenceNumber must fit its
iterator type. A well-formed ARN that names no stream is the engine's
ResourceNotFoundException.
"""

from __future__ import annotations

from typing import Any

from ..engine.control.arns import is_stream_arn
from ..engine.engine import Engine
from ..engine.streams.reader import MAX_RECORDS
from ..errors import ShapeValidationException, ValidationException

#: DynamoDB's text for a StreamArn that is not a stream ARN: recorded for DescribeStream by
#: the AWS SDK for JavaScript's integration tests ('fake-stream') and in a Java SDK report
#: ("Invalid StreamArn (Service: AmazonDynamoDBStreams; ... Error Code: ValidationException").
#: The same text for GetShardIterator and ListStreams' ExclusiveStartStreamArn is unconfirmed.
INVALID_STREAM_ARN = "Invalid StreamArn"

#: Iterator types that take a SequenceNumber, and those that refuse one.
_AT_SEQUENCE = ("AT_SEQUENCE_NUMBER", "AFTER_SEQUENCE_NUMBER")
_NO_SEQUENCE = ("TRIM_HORIZON", "LATEST")


def _at_most(value: int | None, limit: int, member: str) -> int | None:
    """The documented upper limits (the model only says min 1); wording unconfirmed."""
    if value is not None and value > limit:
        raise ShapeValidationException(
            f"1 validation error detected: Value '{value}' at '{member}' failed to satisfy constraint: "
            f"Member must have value less than or equal to {limit}"
        )
    return value


def _stream_arn(value: str | None) -> str | None:
    if value is not None and not is_stream_arn(value):
        raise ValidationException(INVALID_STREAM_ARN)
    return value


def _check_iterator_request(kind: str, sequence: str | None, timestamp: float | None) -> None:
    """Whether SequenceNumber / Timestamp fit the iterator type (observed rules; texts unconfirmed).

    DynamoDB refuses TRIM_HORIZON and LATEST with a SequenceNumber (even a
    valid one) and AT/AFTER_SEQUENCE_NUMBER without one, whatever the shard.
    """
    if kind in _NO_SEQUENCE and sequence is not None:
        raise ValidationException(f"Must not specify a SequenceNumber for {kind} shard iterator type")
    if kind in _AT_SEQUENCE and sequence is None:
        raise ValidationException(f"Must specify a SequenceNumber for {kind} shard iterator type")
    if kind == "AT_TIMESTAMP" and timestamp is None:
        raise ValidationException("Must specify a Timestamp for AT_TIMESTAMP shard iterator type")


def list_streams(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    limit = _at_most(request.get("Limit"), 100, "limit")
    start = _stream_arn(request.get("ExclusiveStartStreamArn"))
    return engine.streams.list_streams(request.get("TableName"), limit, start)


def describe_stream(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    limit = _at_most(request.get("Limit"), 100, "limit")
    arn = _stream_arn(request["StreamArn"])
    assert arn is not None
    return engine.streams.describe_stream(arn, limit, request.get("ExclusiveStartShardId"), request.get("ShardFilter"))


def get_shard_iterator(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    arn = _stream_arn(request["StreamArn"])
    assert arn is not None
    kind, sequence, timestamp = request["ShardIteratorType"], request.get("SequenceNumber"), request.get("Timestamp")
    _check_iterator_request(kind, sequence, timestamp)
    return engine.streams.get_shard_iterator(arn, request["ShardId"], kind, sequence, timestamp)


def get_records(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    limit = _at_most(request.get("Limit"), MAX_RECORDS, "limit")
    return engine.streams.get_records(request["ShardIterator"], limit)
