"""The Streams API's shard listing and request checks, as DynamoDB answers them (issue 26, class 1).

- DescribeStream lists shards in ascending ShardId order (byte-wise) and pages
  in that order: every page at most Limit shards, LastEvaluatedShardId the
  page's last ShardId, no shard twice, nothing after the last one.
- A StreamArn that is not a stream ARN is ValidationException "Invalid
  StreamArn" (DescribeStream, GetShardIterator, ListStreams'
  ExclusiveStartStreamArn); a well-formed ARN of a missing stream stays
  ResourceNotFoundException.
- GetShardIterator checks SequenceNumber against the iterator type before it
  looks for the stream; DescribeStream's ShardFilter needs both members.
"""

from __future__ import annotations

import string
import uuid
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError
from conftest import create_table, error_of
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from streams_helpers import streams_client

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
INVALID_ARN = ("ValidationException", "Invalid StreamArn")
LETTERS = string.ascii_letters


@pytest.fixture(scope="module")
def streams(endpoint: str) -> Any:
    return streams_client(endpoint)


@pytest.fixture(scope="module")
def unchecked(endpoint: str) -> Any:
    """A Streams client that sends what it is given (botocore would refuse a StreamArn under 37 characters)."""
    return boto3.client("dynamodbstreams", endpoint_url=endpoint, region_name="us-east-1",
                        config=Config(retries={"max_attempts": 1}, parameter_validation=False))


@pytest.fixture(scope="module")
def wide_stream(ddb: Any) -> tuple[str, list[str]]:
    """A stream of 25 shards (1/3000 + 24999/1000 partitions, rounded up) and its ShardIds, listed unpaged."""
    name = f"streams-wide-{uuid.uuid4().hex[:8]}"
    out = create_table(ddb, name, BillingMode="PROVISIONED",
                       ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 24999},
                       StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})
    arn = out["TableDescription"]["LatestStreamArn"]
    client = boto3.client("dynamodbstreams", endpoint_url=ddb.meta.endpoint_url, region_name="us-east-1")
    ids = [s["ShardId"] for s in client.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]]
    return arn, ids


NAME = f"streams-requests-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def stream(ddb: Any) -> tuple[str, dict[str, Any]]:
    """An on-demand table's stream (8 shards) and its first shard."""
    out = create_table(ddb, NAME,
                       StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})
    arn = out["TableDescription"]["LatestStreamArn"]
    client = boto3.client("dynamodbstreams", endpoint_url=ddb.meta.endpoint_url, region_name="us-east-1")
    return arn, client.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]


def _pages(streams: Any, arn: str, limit: int, start: str | None = None) -> list[dict[str, Any]]:
    request: dict[str, Any] = {"StreamArn": arn, "Limit": limit}
    if start is not None:
        request["ExclusiveStartShardId"] = start
    pages = []
    while True:
        page = streams.describe_stream(**request)["StreamDescription"]
        pages.append(page)
        if "LastEvaluatedShardId" not in page:
            return pages
        request["ExclusiveStartShardId"] = page["LastEvaluatedShardId"]


# -- S1: shard order and paging ---------------------------------------------------------------


def test_shards_are_listed_in_shard_id_order(streams: Any, wide_stream: tuple[str, list[str]]) -> None:
    arn, ids = wide_stream
    assert len(ids) == 25
    assert ids == sorted(ids, key=lambda i: i.encode()) and len(set(ids)) == 25
    pages = _pages(streams, arn, 10)
    assert [len(p["Shards"]) for p in pages] == [10, 10, 5]
    assert [p.get("LastEvaluatedShardId") for p in pages] == [pages[0]["Shards"][-1]["ShardId"],
                                                             pages[1]["Shards"][-1]["ShardId"], None]
    assert [s["ShardId"] for p in pages for s in p["Shards"]] == ids
    after_last = streams.describe_stream(StreamArn=arn, ExclusiveStartShardId=ids[-1])["StreamDescription"]
    assert after_last["Shards"] == [] and "LastEvaluatedShardId" not in after_last
    # A ShardId past every shard (recorded on DynamoDB with 'zzzz...'): no shards, no error.
    past = streams.describe_stream(StreamArn=arn, ExclusiveStartShardId="z" * 56)["StreamDescription"]
    assert past["Shards"] == [] and "LastEvaluatedShardId" not in past


@SETTINGS
@given(limit=st.integers(1, 30), start=st.one_of(st.none(), st.integers(0, 24)))
@example(limit=25, start=None)
@example(limit=1, start=23)
def test_paging_keeps_shard_id_order(streams: Any, wide_stream: tuple[str, list[str]], limit: int,
                                     start: int | None) -> None:
    arn, ids = wide_stream
    pages = _pages(streams, arn, limit, None if start is None else ids[start])
    expected = ids if start is None else ids[start + 1:]
    seen: list[str] = []
    for page in pages:
        shard_ids = [s["ShardId"] for s in page["Shards"]]
        assert len(shard_ids) <= limit
        if "LastEvaluatedShardId" in page:
            assert page["LastEvaluatedShardId"] == shard_ids[-1]
        seen += shard_ids
    assert seen == expected
    assert len(pages) == max(1, -(-len(expected) // limit))


def test_unpaged_listing_of_a_new_table_is_sorted(streams: Any, stream: tuple[str, dict[str, Any]]) -> None:
    arn, _ = stream
    ids = [s["ShardId"] for s in streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]]
    assert len(ids) == 8 and ids == sorted(ids)


# -- S2, S3: StreamArn that is not a stream ARN -----------------------------------------------


@SETTINGS
@given(value=st.text(LETTERS, min_size=37, max_size=80))
@example(value="sdfadfsdfnlfkajakfgjalksfgklasjklasdjfklasdfasdfgasf")
def test_a_stream_arn_that_is_not_an_arn_is_a_validation_error(
    streams: Any, stream: tuple[str, dict[str, Any]], value: str
) -> None:
    _, shard = stream
    with pytest.raises(ClientError) as excinfo:
        streams.describe_stream(StreamArn=value)
    assert error_of(excinfo) == INVALID_ARN
    with pytest.raises(ClientError) as excinfo:
        streams.get_shard_iterator(StreamArn=value, ShardId=shard["ShardId"], ShardIteratorType="LATEST")
    assert error_of(excinfo) == INVALID_ARN


@pytest.mark.parametrize("value", [
    "fake-stream",  # recorded on DynamoDB: "Invalid StreamArn", not the model's length clause
    "",
    "arn:aws:dynamodb:us-east-1:000000000000:table/{name}",  # a table's ARN, not a stream's
    "arn:aws:dynamodb:us-east-1:000000000000:table/{name}/index/gsi",
    "arn:aws:kinesis:us-east-1:000000000000:stream/{name}",
    "arn:aws:dynamodb:us-east-1:0000:table/{name}/stream/2026-01-01T00:00:00.000",
])
def test_other_malformed_stream_arns(unchecked: Any, stream: tuple[str, dict[str, Any]], value: str) -> None:
    _, shard = stream
    value = value.format(name=NAME)
    with pytest.raises(ClientError) as excinfo:
        unchecked.describe_stream(StreamArn=value)
    assert error_of(excinfo) == INVALID_ARN
    with pytest.raises(ClientError) as excinfo:
        unchecked.get_shard_iterator(StreamArn=value, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON")
    assert error_of(excinfo) == INVALID_ARN


@pytest.mark.parametrize("arn", [
    "arn:aws:dynamodb:us-east-1:000000000000:table/no-such-table/stream/2026-01-01T00:00:00.000",
    "arn:aws:dynamodb:eu-west-1:123456789012:table/{name}/stream/2026-01-01T00:00:00.000",
])
def test_a_well_formed_arn_of_a_missing_stream_is_not_found(streams: Any, stream: tuple[str, dict[str, Any]],
                                                            arn: str) -> None:
    _, shard = stream
    arn = arn.format(name=NAME)
    not_found = ("ResourceNotFoundException", f"Requested resource not found: Stream: {arn} not found")
    with pytest.raises(ClientError) as excinfo:
        streams.describe_stream(StreamArn=arn)
    assert error_of(excinfo) == not_found
    with pytest.raises(ClientError) as excinfo:
        streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType="LATEST")
    assert error_of(excinfo) == not_found


def test_list_streams_with_a_malformed_exclusive_start_stream_arn(streams: Any,
                                                                   stream: tuple[str, dict[str, Any]]) -> None:
    with pytest.raises(ClientError) as excinfo:
        streams.list_streams(TableName=NAME,
                             ExclusiveStartStreamArn="kossaapaaasdafsdaasdasdasdasasdasfadfadfasdasdas")
    assert error_of(excinfo) == INVALID_ARN
    arn, _ = stream
    # A well-formed ARN is a position in ARN order, whether or not it names a stream.
    assert streams.list_streams(TableName=NAME, ExclusiveStartStreamArn=arn)["Streams"] == []
    before = arn.replace("/stream/", "/stream/0")
    assert [s["StreamArn"] for s in streams.list_streams(TableName=NAME,
                                                           ExclusiveStartStreamArn=before)["Streams"]] == [arn]


# -- S4: GetShardIterator ---------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["TRIM_HORIZON", "LATEST"])
def test_trim_horizon_and_latest_refuse_a_sequence_number(streams: Any, stream: tuple[str, dict[str, Any]],
                                                          kind: str) -> None:
    arn, shard = stream
    start = shard["SequenceNumberRange"]["StartingSequenceNumber"]  # even the shard's own, valid one
    refused = ("ValidationException", f"Must not specify a SequenceNumber for {kind} shard iterator type")
    with pytest.raises(ClientError) as excinfo:
        streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType=kind,
                                   SequenceNumber=start)
    assert error_of(excinfo) == refused
    # A non-numeric one is refused the same way (one over 40 characters by the model's length first).
    with pytest.raises(ClientError) as excinfo:
        streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType=kind,
                                   SequenceNumber="sdfsafglldfngjdafnasdflgnal")
    assert error_of(excinfo) == refused
    long_text = "sdfsafglldfngjdafnasdflgnaldklkafdsgklnasdlv"
    with pytest.raises(ClientError) as excinfo:
        streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType=kind,
                                   SequenceNumber=long_text)
    assert error_of(excinfo) == ("ValidationException", f"1 validation error detected: Value '{long_text}' at "
                                 "'sequenceNumber' failed to satisfy constraint: Member must have length less "
                                 "than or equal to 40")
    # Checked before the shard is looked for.
    with pytest.raises(ClientError) as excinfo:
        streams.get_shard_iterator(StreamArn=arn, ShardId="shardId-00000000000000000000-00000000",
                                   ShardIteratorType=kind, SequenceNumber=start)
    assert error_of(excinfo) == refused


@pytest.mark.parametrize("kind", ["AT_SEQUENCE_NUMBER", "AFTER_SEQUENCE_NUMBER"])
def test_sequence_iterators_need_a_sequence_number(streams: Any, stream: tuple[str, dict[str, Any]],
                                                   kind: str) -> None:
    arn, shard = stream
    with pytest.raises(ClientError) as excinfo:
        streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType=kind)
    assert error_of(excinfo) == ("ValidationException", f"Must specify a SequenceNumber for {kind} shard iterator type")
    start = shard["SequenceNumberRange"]["StartingSequenceNumber"]
    assert streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType=kind,
                                      SequenceNumber=start)["ShardIterator"].startswith(arn + "|1|")


def test_unknown_shard_and_unknown_iterator_type(streams: Any, stream: tuple[str, dict[str, Any]]) -> None:
    arn, shard = stream
    unknown = "semprinidfaasdasfsdvacsdcfsdsvsdvsdvsdvsdvsdv"
    with pytest.raises(ClientError) as excinfo:
        streams.get_shard_iterator(StreamArn=arn, ShardId=unknown, ShardIteratorType="LATEST")
    assert error_of(excinfo) == ("ResourceNotFoundException",
                                 f"Requested resource not found: Shard does not exist: {unknown}")
    with pytest.raises(ClientError) as excinfo:
        streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType="bulle",
                                   SequenceNumber=shard["SequenceNumberRange"]["StartingSequenceNumber"])
    assert error_of(excinfo) == ("ValidationException", "1 validation error detected: Value 'bulle' at "
                                 "'shardIteratorType' failed to satisfy constraint: Member must satisfy enum value "
                                 "set: [TRIM_HORIZON, LATEST, AT_SEQUENCE_NUMBER, AFTER_SEQUENCE_NUMBER, "
                                 "AT_TIMESTAMP]")
    assert len(shard["ShardId"]) <= 65


# -- S5: ShardFilter ---------------------------------------------------------------------------


def _null(member: str) -> str:
    return f"Value null at 'shardFilter.{member}' failed to satisfy constraint: Member must not be null"


def test_shard_filter_needs_type_and_shard_id(streams: Any, unchecked: Any, stream: tuple[str, dict[str, Any]]) -> None:
    arn, shard = stream
    for shard_filter, clauses in (
        ({"ShardId": shard["ShardId"]}, [_null("type")]),
        ({"Type": "CHILD_SHARDS"}, [_null("shardId")]),
        ({}, [_null("shardId"), _null("type")]),
    ):
        with pytest.raises(ClientError) as excinfo:
            streams.describe_stream(StreamArn=arn, ShardFilter=shard_filter)
        count = f"{len(clauses)} validation error{'s' if len(clauses) > 1 else ''} detected: "
        assert error_of(excinfo) == ("ValidationException", count + "; ".join(clauses)), shard_filter
    with pytest.raises(ClientError) as excinfo:
        streams.describe_stream(StreamArn=arn, ShardFilter={"Type": "PARENT_SHARDS", "ShardId": shard["ShardId"]})
    assert error_of(excinfo) == ("ValidationException", "1 validation error detected: Value 'PARENT_SHARDS' at "
                                 "'shardFilter.type' failed to satisfy constraint: Member must satisfy enum value "
                                 "set: [CHILD_SHARDS]")
    with pytest.raises(ClientError) as excinfo:
        unchecked.describe_stream(StreamArn=arn, ShardFilter={"Type": "CHILD_SHARDS", "ShardId": "short"})
    assert error_of(excinfo) == ("ValidationException", "1 validation error detected: Value 'short' at "
                                 "'shardFilter.shardId' failed to satisfy constraint: Member must have length "
                                 "greater than or equal to 28")
    # Both members: the shard's children (an unsplit shard has none).
    both = streams.describe_stream(StreamArn=arn, ShardFilter={"Type": "CHILD_SHARDS", "ShardId": shard["ShardId"]})
    assert both["StreamDescription"]["Shards"] == []
