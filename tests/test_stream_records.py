"""Stream records as DynamoDB writes them, for hash-only and hash+range tables and all four view types.

The rules are the "Also check: stream record behaviours" list of the issue-26
observations (recorded against DynamoDB): the fields of every record, which
images each view type carries (always whole items, keys included), INSERT /
MODIFY / REMOVE for each way of writing, no record at all for a write that
changes nothing, LSI tables, GetRecords with sequence-number iterators, and
a disabled stream's closed shards.
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import create_table
from streams_helpers import read_shard, read_stream, streams_client

S = lambda v: {"S": v}  # noqa: E731
N = lambda v: {"N": str(v)}  # noqa: E731

VIEWS = ["KEYS_ONLY", "NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES"]
KEYS = ["hash", "hash+range"]
RECORD_FIELDS = {"eventID", "eventName", "eventVersion", "eventSource", "awsRegion", "dynamodb"}


@pytest.fixture(scope="module")
def streams(endpoint: str) -> Any:
    return streams_client(endpoint)


def stream_table(ddb: Any, name: str, keys: str, view: str, **extra: Any) -> str:
    """An on-demand table (8 partitions, so 8 shards) with a stream of `view`."""
    range_key = ("sk", "S") if keys == "hash+range" else None
    out = create_table(ddb, name, range_key=range_key,
                       StreamSpecification={"StreamEnabled": True, "StreamViewType": view}, **extra)
    arn: str = out["TableDescription"]["LatestStreamArn"]
    return arn


def key_of(keys: str, pk: str) -> dict[str, Any]:
    return {"pk": S(pk), "sk": S("s1")} if keys == "hash+range" else {"pk": S(pk)}


def expected_change(view: str, name: str, key: dict[str, Any], old: dict[str, Any] | None,
                    new: dict[str, Any] | None) -> tuple[str, dict[str, Any]]:
    """(eventName, the record's `dynamodb` without its sequence number, time and size) for `view`."""
    change: dict[str, Any] = {"Keys": key, "StreamViewType": view}
    if new is not None and view in ("NEW_IMAGE", "NEW_AND_OLD_IMAGES"):
        change["NewImage"] = new
    if old is not None and view in ("OLD_IMAGE", "NEW_AND_OLD_IMAGES"):
        change["OldImage"] = old
    return name, change


def changes(records: list[dict[str, Any]], region: str = "us-east-1") -> list[tuple[str, dict[str, Any]]]:
    """Check every record's fields, and give (eventName, `dynamodb` less its per-record values)."""
    out = []
    for record in records:
        assert set(record) == RECORD_FIELDS
        assert record["eventName"] in ("INSERT", "MODIFY", "REMOVE")
        assert record["eventID"] and record["eventSource"] == "aws:dynamodb"
        assert record["eventVersion"] in ("1.0", "1.1")
        assert record["awsRegion"] == region
        change = dict(record["dynamodb"])
        assert change.pop("SequenceNumber").isdecimal()
        assert "ApproximateCreationDateTime" in change
        del change["ApproximateCreationDateTime"]
        assert change.pop("SizeBytes") > 0
        out.append((record["eventName"], change))
    return out


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("keys", KEYS)
def test_fields_images_and_event_kinds_of_each_way_to_write(ddb: Any, streams: Any, table_name: str, keys: str,
                                                            view: str) -> None:
    arn = stream_table(ddb, table_name, keys, view)
    key = key_of(keys, "a")
    v1 = {**key, "a": N(1)}
    v2 = {**key, "b": S("two")}
    v3 = {**key, "b": S("two"), "c": N(3)}
    v5 = {**key, "d": N(4)}
    ddb.put_item(TableName=table_name, Item=v1)  # INSERT
    ddb.put_item(TableName=table_name, Item=v2)  # an overwrite is one MODIFY, with whole images
    ddb.update_item(TableName=table_name, Key=key, UpdateExpression="SET c = :c", ExpressionAttributeValues={":c": N(3)})
    ddb.update_item(TableName=table_name, Key=key, UpdateExpression="REMOVE b, c")  # leaves the key only
    ddb.update_item(TableName=table_name, Key=key, UpdateExpression="SET d = :d",
                    ExpressionAttributeValues={":d": N(4)})  # the old image of a key-only item is the key
    ddb.put_item(TableName=table_name, Item=key)  # overwritten by a key-only item: MODIFY
    ddb.delete_item(TableName=table_name, Key=key)  # REMOVE, with the old image
    assert changes(read_stream(streams, arn)) == [
        expected_change(view, "INSERT", key, None, v1),
        expected_change(view, "MODIFY", key, v1, v2),
        expected_change(view, "MODIFY", key, v2, v3),
        expected_change(view, "MODIFY", key, v3, key),
        expected_change(view, "MODIFY", key, key, v5),
        expected_change(view, "MODIFY", key, v5, key),
        expected_change(view, "REMOVE", key, key, None),
    ]


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("keys", KEYS)
def test_creations_and_overwrites_by_update_and_batch(ddb: Any, streams: Any, table_name: str, keys: str,
                                                     view: str) -> None:
    arn = stream_table(ddb, table_name, keys, view)
    by_update, by_batch = key_of(keys, "u"), key_of(keys, "b")
    ddb.update_item(TableName=table_name, Key=by_update, UpdateExpression="SET x = :x",
                    ExpressionAttributeValues={":x": N(1)})
    ddb.batch_write_item(RequestItems={table_name: [{"PutRequest": {"Item": {**by_batch, "y": S("one")}}}]})
    ddb.batch_write_item(RequestItems={table_name: [{"PutRequest": {"Item": {**by_batch, "z": N(2)}}}]})
    ddb.batch_write_item(RequestItems={table_name: [{"DeleteRequest": {"Key": by_batch}}]})
    records = changes(read_stream(streams, arn))
    assert records == [
        expected_change(view, "INSERT", by_update, None, {**by_update, "x": N(1)}),
        expected_change(view, "INSERT", by_batch, None, {**by_batch, "y": S("one")}),
        expected_change(view, "MODIFY", by_batch, {**by_batch, "y": S("one")}, {**by_batch, "z": N(2)}),
        expected_change(view, "REMOVE", by_batch, {**by_batch, "z": N(2)}, None),
    ]


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("keys", KEYS)
def test_no_record_for_writes_that_change_nothing(ddb: Any, streams: Any, table_name: str, keys: str,
                                                  view: str) -> None:
    arn = stream_table(ddb, table_name, keys, view)
    key, missing = key_of(keys, "a"), key_of(keys, "missing")
    item = {**key, "x": N(2), "tags": {"SS": ["p", "q"]}}
    ddb.put_item(TableName=table_name, Item=item)
    ddb.put_item(TableName=table_name, Item=item)  # identical
    ddb.batch_write_item(RequestItems={table_name: [{"PutRequest": {"Item": item}}]})  # identical
    ddb.update_item(TableName=table_name, Key=key, UpdateExpression="SET x = :two",
                    ExpressionAttributeValues={":two": N(2)})
    ddb.update_item(TableName=table_name, Key=key, UpdateExpression="ADD x :zero",
                    ExpressionAttributeValues={":zero": N(0)})
    ddb.update_item(TableName=table_name, Key=key, UpdateExpression="REMOVE nothing_here")
    ddb.update_item(TableName=table_name, Key=key, AttributeUpdates={"nothing_here": {"Action": "DELETE"}})
    ddb.update_item(TableName=table_name, Key=key, AttributeUpdates={"tags": {"Action": "DELETE",
                                                                              "Value": {"SS": ["zz"]}}})
    ddb.delete_item(TableName=table_name, Key=missing)
    ddb.batch_write_item(RequestItems={table_name: [{"DeleteRequest": {"Key": missing}}]})
    assert changes(read_stream(streams, arn)) == [expected_change(view, "INSERT", key, None, item)]
    assert ddb.get_item(TableName=table_name, Key=key, ConsistentRead=True)["Item"] == item


@pytest.mark.parametrize("update", [
    {"UpdateExpression": "REMOVE a"},
    {"UpdateExpression": "REMOVE a, b"},
    {"AttributeUpdates": {"a": {"Action": "DELETE"}}},
    {"AttributeUpdates": {"a": {"Action": "DELETE", "Value": {"NS": ["4"]}}}},
], ids=["remove", "remove-two", "delete", "delete-value"])
@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("keys", KEYS)
def test_delete_only_update_of_a_missing_item_writes_no_record(ddb: Any, streams: Any, table_name: str,
                                                               keys: str, view: str,
                                                               update: dict[str, Any]) -> None:
    """No item is created (U1, the item side) and so no record is written."""
    arn = stream_table(ddb, table_name, keys, view)
    key = key_of(keys, "gone")
    answer = ddb.update_item(TableName=table_name, Key=key, ReturnValues="ALL_NEW", **update)
    assert "Attributes" not in answer
    assert "Item" not in ddb.get_item(TableName=table_name, Key=key, ConsistentRead=True)
    assert read_stream(streams, arn) == []


@pytest.mark.parametrize("view", VIEWS)
def test_lsi_table_images_hold_the_index_key_and_nothing_else(ddb: Any, streams: Any, table_name: str,
                                                             view: str) -> None:
    arn = _lsi_table(ddb, table_name, view)
    with_k, without_k = key_of("hash+range", "with"), key_of("hash+range", "without")
    for key, setting, values in ((with_k, "SET x = :x, k = :k", {":x": N(2), ":k": S("dog")}),
                                 (without_k, "SET x = :x", {":x": N(2)})):
        ddb.update_item(TableName=table_name, Key=key, UpdateExpression=setting, ExpressionAttributeValues=values)
        ddb.update_item(TableName=table_name, Key=key, UpdateExpression="SET y = :y",
                        ExpressionAttributeValues={":y": N(3)})
    first = {**with_k, "x": N(2), "k": S("dog")}
    second = {**without_k, "x": N(2)}  # k was never set: absent, no marker in its place
    assert changes(read_stream(streams, arn)) == [
        expected_change(view, "INSERT", with_k, None, first),
        expected_change(view, "MODIFY", with_k, first, {**first, "y": N(3)}),
        expected_change(view, "INSERT", without_k, None, second),
        expected_change(view, "MODIFY", without_k, second, {**second, "y": N(3)}),
    ]


def _lsi_table(ddb: Any, name: str, view: str) -> str:
    out = ddb.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "S"},
                              {"AttributeName": "k", "AttributeType": "S"}],
        LocalSecondaryIndexes=[{"IndexName": "by-k", "Projection": {"ProjectionType": "ALL"},
                                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                              {"AttributeName": "k", "KeyType": "RANGE"}]}],
        StreamSpecification={"StreamEnabled": True, "StreamViewType": view},
    )
    arn: str = out["TableDescription"]["LatestStreamArn"]
    return arn


def all_shards(streams: Any, arn: str, limit: int = 3) -> list[dict[str, Any]]:
    """Every shard, paged (small pages, so paging is exercised too)."""
    request: dict[str, Any] = {"StreamArn": arn, "Limit": limit}
    shards: list[dict[str, Any]] = []
    while True:
        page = streams.describe_stream(**request)["StreamDescription"]
        shards += page["Shards"]
        if "LastEvaluatedShardId" not in page:
            return shards
        request["ExclusiveStartShardId"] = page["LastEvaluatedShardId"]


def _seqs(records: list[dict[str, Any]]) -> list[str]:
    return [r["dynamodb"]["SequenceNumber"] for r in records]


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("keys", KEYS)
def test_get_records_and_sequence_number_iterators(ddb: Any, streams: Any, table_name: str, keys: str,
                                                   view: str) -> None:
    arn = stream_table(ddb, table_name, keys, view)
    shards = all_shards(streams, arn)
    assert len(shards) == 8
    latest = {s["ShardId"]: streams.get_shard_iterator(StreamArn=arn, ShardId=s["ShardId"],
                                                       ShardIteratorType="LATEST")["ShardIterator"] for s in shards}
    key = key_of(keys, "k1")
    ddb.update_item(TableName=table_name, Key=key, UpdateExpression="SET x = :x", ExpressionAttributeValues={":x": N(5)})
    pages = {sid: streams.get_records(ShardIterator=iterator) for sid, iterator in latest.items()}
    holding = [sid for sid, page in pages.items() if page["Records"]]
    assert len(holding) == 1  # the key's partition's shard
    shard_id = holding[0]
    [first] = pages[shard_id]["Records"]
    assert first["dynamodb"]["Keys"] == key
    assert all("NextShardIterator" in page for page in pages.values())  # open shards always give one
    # After its only record, the shard answers no records and still a next iterator.
    empty = streams.get_records(ShardIterator=pages[shard_id]["NextShardIterator"])
    assert empty["Records"] == [] and "NextShardIterator" in empty
    # A later write to the same key lands on the same shard.
    ddb.update_item(TableName=table_name, Key=key, UpdateExpression="SET x = :x", ExpressionAttributeValues={":x": N(7)})
    [second] = streams.get_records(ShardIterator=empty["NextShardIterator"])["Records"]
    assert second["dynamodb"]["Keys"] == key
    one, two = _seqs([first, second])
    assert int(one) < int(two)  # sequence numbers grow as integers
    at = read_shard(streams, arn, shard_id, "AT_SEQUENCE_NUMBER", SequenceNumber=one)
    assert _seqs(at) == [one, two]
    exactly = streams.get_records(ShardIterator=streams.get_shard_iterator(
        StreamArn=arn, ShardId=shard_id, ShardIteratorType="AT_SEQUENCE_NUMBER", SequenceNumber=one,
    )["ShardIterator"], Limit=1)["Records"]
    assert exactly == [first]
    assert read_shard(streams, arn, shard_id, "AFTER_SEQUENCE_NUMBER", SequenceNumber=one) == [second]
    assert read_shard(streams, arn, shard_id, "AFTER_SEQUENCE_NUMBER", SequenceNumber=two) == []
    assert read_shard(streams, arn, shard_id, "TRIM_HORIZON") == [first, second]
    for other in latest:
        if other != shard_id:
            assert read_shard(streams, arn, other, "TRIM_HORIZON") == []


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("keys", KEYS)
def test_a_disabled_stream_keeps_its_records_in_closed_shards(ddb: Any, streams: Any, table_name: str, keys: str,
                                                             view: str) -> None:
    arn = stream_table(ddb, table_name, keys, view)
    key = key_of(keys, "a")
    ddb.put_item(TableName=table_name, Item={**key, "x": N(5)})
    ddb.update_table(TableName=table_name, StreamSpecification={"StreamEnabled": False})
    assert arn in [s["StreamArn"] for s in streams.list_streams(TableName=table_name)["Streams"]]
    description = streams.describe_stream(StreamArn=arn)["StreamDescription"]
    assert (description["StreamStatus"], description["StreamViewType"], description["TableName"]) == (
        "DISABLED", view, table_name)
    shards = all_shards(streams, arn)
    assert len(shards) == 8
    assert [s["ShardId"] for s in shards] == sorted(s["ShardId"] for s in shards)
    assert all(s["SequenceNumberRange"]["EndingSequenceNumber"].isdecimal() for s in shards)
    records = []
    for shard in shards:
        iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"],
                                              ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        page = streams.get_records(ShardIterator=iterator)
        records += page["Records"]
        if "NextShardIterator" in page:  # read to its end: no next iterator now, or after one empty page
            last = streams.get_records(ShardIterator=page["NextShardIterator"])
            assert last["Records"] == [] and "NextShardIterator" not in last
    assert changes(records) == [expected_change(view, "INSERT", key, None, {**key, "x": N(5)})]


def test_aws_region_is_the_region_the_client_signed_with(start_server: Any) -> None:
    server = start_server("--in-memory", "--region", "eu-west-1")
    import boto3

    ddb = boto3.client("dynamodb", endpoint_url=server.url, region_name="eu-west-1")
    streams = boto3.client("dynamodbstreams", endpoint_url=server.url, region_name="eu-west-1")
    arn = stream_table(ddb, "regional", "hash", "KEYS_ONLY")
    assert arn.startswith("arn:aws:dynamodb:eu-west-1:")
    ddb.put_item(TableName="regional", Item={"pk": S("a")})
    assert changes(read_stream(streams, arn), region="eu-west-1") == [
        expected_change("KEYS_ONLY", "INSERT", {"pk": S("a")}, None, None)]
