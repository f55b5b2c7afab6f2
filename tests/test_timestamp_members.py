"""Timestamp members are JSON numbers (epoch seconds); anything else is refused by the shape validator.

Every SDK serialises a timestamp as epoch seconds for DynamoDB's JSON protocol,
so only a hand-rolled client sends a string; the codec refuses it before the
operation runs, whichever operation and whatever the string holds.
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import raw_request

from partita.api.validation.leaves import TIMESTAMP_STRING

ARN = "arn:aws:dynamodb:us-east-1:000000000000:table/src"
#: Every timestamp member of an input shape Partita serves (the botocore model's `timestamp` shapes).
CASES: list[tuple[str, dict[str, Any], str]] = [
    ("ExportTableToPointInTime", {"TableArn": ARN, "S3Bucket": "b"}, "ExportTime"),
    ("ListBackups", {}, "TimeRangeLowerBound"),
    ("ListBackups", {}, "TimeRangeUpperBound"),
    ("RestoreTableToPointInTime", {"SourceTableName": "src", "TargetTableName": "dst"}, "RestoreDateTime"),
]


def _incremental(value: Any, member: str) -> dict[str, Any]:
    spec = {"ExportFromTime": 1_700_000_000, "ExportToTime": 1_700_000_600, member: value}
    return {"TableArn": ARN, "S3Bucket": "b", "ExportType": "INCREMENTAL_EXPORT", "IncrementalExportSpecification": spec}


@pytest.mark.parametrize("value", ["2026-01-01T00:00:00Z", "1700000000", "yesterday", ""])
@pytest.mark.parametrize(("operation", "body", "member"), CASES)
def test_a_string_timestamp_is_a_serialization_error(
    endpoint: str, operation: str, body: dict[str, Any], member: str, value: str
) -> None:
    response = raw_request(endpoint, operation, {**body, member: value})
    assert response.status == 400
    assert response.json() == {"__type": "com.amazon.coral.service#SerializationException", "Message": TIMESTAMP_STRING}


@pytest.mark.parametrize("member", ["ExportFromTime", "ExportToTime"])
def test_a_nested_string_timestamp_is_refused_too(endpoint: str, member: str) -> None:
    response = raw_request(endpoint, "ExportTableToPointInTime", _incremental("2026-01-01T00:00:00Z", member))
    assert response.status == 400
    assert response.json() == {"__type": "com.amazon.coral.service#SerializationException", "Message": TIMESTAMP_STRING}


@pytest.mark.parametrize("value", [1_700_000_000, 1_700_000_000.5])
def test_numbers_pass_the_shape_check(endpoint: str, value: float) -> None:
    response = raw_request(endpoint, "ListBackups", {"TimeRangeLowerBound": value, "TimeRangeUpperBound": value + 1})
    assert response.status == 200 and "BackupSummaries" in response.json()
