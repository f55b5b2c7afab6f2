"""DynamoDB Streams through boto3's dynamodbstreams client: records, shards, iterators, lifecycle."""

from __future__ import annotations

import re
from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import create_table, error_of
from streams_helpers import advance, read_shard, read_stream, streams_client

S = lambda v: {"S": v}  # noqa: E731
N = lambda v: {"N": str(v)}  # noqa: E731


@pytest.fixture(scope="module")
def streams(endpoint: str) -> Any:
    return streams_client(endpoint)


#: A table of one partition, so its stream has one shard (a new on-demand table has eight).
ONE_PARTITION = {"BillingMode": "PROVISIONED", "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}}


def stream_table(ddb: Any, name: str, view: str = "NEW_AND_OLD_IMAGES", **extra: Any) -> str:
    extra = {**ONE_PARTITION, **extra}
    out = create_table(ddb, name, StreamSpecification={"StreamEnabled": True, "StreamViewType": view}, **extra)
    arn: str = out["TableDescription"]["LatestStreamArn"]
    return arn


def test_arn_label_and_description(ddb: Any, streams: Any, table_name: str) -> None:
    arn = stream_table(ddb, table_name, "KEYS_ONLY")
    table = ddb.describe_table(TableName=table_name)["Table"]
    label = table["LatestStreamLabel"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}", label)
    assert arn == f"arn:aws:dynamodb:us-east-1:000000000000:table/{table_name}/stream/{label}"
    description = streams.describe_stream(StreamArn=arn)["StreamDescription"]
    assert description["StreamStatus"] == "ENABLED"
    assert description["StreamViewType"] == "KEYS_ONLY"
    assert description["TableName"] == table_name
    assert description["KeySchema"] == [{"AttributeName": "pk", "KeyType": "HASH"}]
    [shard] = description["Shards"]
    assert re.fullmatch(r"shardId-\d{20}-[0-9a-f]{8}", shard["ShardId"])
    assert re.fullmatch(r"\d{21,}", shard["SequenceNumberRange"]["StartingSequenceNumber"])
    assert "EndingSequenceNumber" not in shard["SequenceNumberRange"]
    assert "ParentShardId" not in shard
    listed = streams.list_streams(TableName=table_name)["Streams"]
    assert listed == [{"StreamArn": arn, "TableName": table_name, "StreamLabel": label}]


def test_records_for_insert_modify_remove(ddb: Any, streams: Any, table_name: str) -> None:
    arn = stream_table(ddb, table_name)
    ddb.put_item(TableName=table_name, Item={"pk": S("a"), "v": N(1)})
    ddb.update_item(TableName=table_name, Key={"pk": S("a")}, UpdateExpression="SET v = :v",
                    ExpressionAttributeValues={":v": N(2)})
    ddb.delete_item(TableName=table_name, Key={"pk": S("a")})
    records = read_stream(streams, arn)
    assert [r["eventName"] for r in records] == ["INSERT", "MODIFY", "REMOVE"]
    insert, modify, remove = (r["dynamodb"] for r in records)
    assert insert["Keys"] == {"pk": S("a")}
    assert insert["NewImage"] == {"pk": S("a"), "v": N(1)} and "OldImage" not in insert
    assert modify["OldImage"] == {"pk": S("a"), "v": N(1)} and modify["NewImage"] == {"pk": S("a"), "v": N(2)}
    assert remove["OldImage"] == {"pk": S("a"), "v": N(2)} and "NewImage" not in remove
    sequence = [int(r["dynamodb"]["SequenceNumber"]) for r in records]
    assert sequence == sorted(sequence) and len(set(sequence)) == 3
    for record in records:
        assert record["eventSource"] == "aws:dynamodb"
        assert record["eventVersion"] == "1.1"
        assert record["awsRegion"] == "us-east-1"
        assert re.fullmatch(r"[0-9a-f]{32}", record["eventID"])
        assert record["dynamodb"]["StreamViewType"] == "NEW_AND_OLD_IMAGES"
        assert record["dynamodb"]["SizeBytes"] > 0
        assert "userIdentity" not in record
    assert insert["SizeBytes"] == 3 + (3 + 3)  # Keys (pk: "a") + NewImage (pk, v: 1), item-size rules


@pytest.mark.parametrize(
    ("view", "new", "old"),
    [("KEYS_ONLY", False, False), ("NEW_IMAGE", True, False), ("OLD_IMAGE", False, True),
     ("NEW_AND_OLD_IMAGES", True, True)],
)
def test_view_types(ddb: Any, streams: Any, table_name: str, view: str, new: bool, old: bool) -> None:
    arn = stream_table(ddb, table_name, view)
    ddb.put_item(TableName=table_name, Item={"pk": S("a"), "v": N(1)})
    ddb.put_item(TableName=table_name, Item={"pk": S("a"), "v": N(2)})
    record = read_stream(streams, arn)[1]["dynamodb"]
    assert ("NewImage" in record) is new
    assert ("OldImage" in record) is old
    assert record["Keys"] == {"pk": S("a")}


def test_no_record_for_no_change_or_failed_condition(ddb: Any, streams: Any, table_name: str) -> None:
    arn = stream_table(ddb, table_name)
    item = {"pk": S("a"), "v": N(1)}
    ddb.put_item(TableName=table_name, Item=item)
    ddb.put_item(TableName=table_name, Item=item)  # the same item: nothing changes
    ddb.update_item(TableName=table_name, Key={"pk": S("a")}, UpdateExpression="SET v = :v",
                    ExpressionAttributeValues={":v": N(1)})
    ddb.delete_item(TableName=table_name, Key={"pk": S("missing")})
    with pytest.raises(ClientError):
        ddb.put_item(TableName=table_name, Item={"pk": S("a"), "v": N(9)}, ConditionExpression="attribute_not_exists(pk)")
    with pytest.raises(ClientError):
        ddb.transact_write_items(TransactItems=[
            {"Put": {"TableName": table_name, "Item": {"pk": S("b")}}},
            {"ConditionCheck": {"TableName": table_name, "Key": {"pk": S("a")},
                                "ConditionExpression": "v = :x", "ExpressionAttributeValues": {":x": N(5)}}},
        ])
    assert [r["eventName"] for r in read_stream(streams, arn)] == ["INSERT"]


def test_batches_and_transactions_give_one_record_per_item(ddb: Any, streams: Any, table_name: str) -> None:
    arn = stream_table(ddb, table_name, "NEW_IMAGE", range_key=("sk", "N"))
    ddb.batch_write_item(RequestItems={table_name: [
        {"PutRequest": {"Item": {"pk": S("a"), "sk": N(i)}}} for i in range(5)
    ]})
    ddb.transact_write_items(TransactItems=[
        {"Put": {"TableName": table_name, "Item": {"pk": S("b"), "sk": N(1)}}},
        {"Delete": {"TableName": table_name, "Key": {"pk": S("a"), "sk": N(0)}}},
        {"ConditionCheck": {"TableName": table_name, "Key": {"pk": S("a"), "sk": N(1)},
                            "ConditionExpression": "attribute_exists(pk)"}},
    ])
    names = [(r["eventName"], r["dynamodb"]["Keys"]["pk"]["S"], r["dynamodb"]["Keys"]["sk"]["N"])
             for r in read_stream(streams, arn)]
    assert names == [("INSERT", "a", str(i)) for i in range(5)] + [("INSERT", "b", "1"), ("REMOVE", "a", "0")]


def test_gsi_changes_add_no_records(ddb: Any, streams: Any, table_name: str) -> None:
    out = ddb.create_table(
        TableName=table_name, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexes=[{"IndexName": "gix", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}],
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"},
    )
    arn = out["TableDescription"]["LatestStreamArn"]
    ddb.put_item(TableName=table_name, Item={"pk": S("a"), "g": S("x")})
    ddb.put_item(TableName=table_name, Item={"pk": S("a"), "g": S("y")})
    assert [r["eventName"] for r in read_stream(streams, arn)] == ["INSERT", "MODIFY"]


def test_iterator_types(ddb: Any, streams: Any, table_name: str) -> None:
    arn = stream_table(ddb, table_name, "KEYS_ONLY")
    for i in range(4):
        ddb.put_item(TableName=table_name, Item={"pk": S(str(i))})
    shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
    records = read_shard(streams, arn, shard)
    seqs = [r["dynamodb"]["SequenceNumber"] for r in records]
    at = read_shard(streams, arn, shard, "AT_SEQUENCE_NUMBER", SequenceNumber=seqs[1])
    assert [r["dynamodb"]["SequenceNumber"] for r in at] == seqs[1:]
    after = read_shard(streams, arn, shard, "AFTER_SEQUENCE_NUMBER", SequenceNumber=seqs[1])
    assert [r["dynamodb"]["SequenceNumber"] for r in after] == seqs[2:]
    latest = streams.get_shard_iterator(StreamArn=arn, ShardId=shard, ShardIteratorType="LATEST")["ShardIterator"]
    page = streams.get_records(ShardIterator=latest)
    assert page["Records"] == [] and "NextShardIterator" in page  # an empty shard end: no long polling
    ddb.put_item(TableName=table_name, Item={"pk": S("new")})
    page = streams.get_records(ShardIterator=page["NextShardIterator"])
    assert [r["dynamodb"]["Keys"] for r in page["Records"]] == [{"pk": S("new")}]
    limited = streams.get_records(
        ShardIterator=streams.get_shard_iterator(StreamArn=arn, ShardId=shard, ShardIteratorType="TRIM_HORIZON")[
            "ShardIterator"], Limit=2)
    assert len(limited["Records"]) == 2


def test_disable_closes_shards_and_enable_makes_a_new_stream(ddb: Any, streams: Any, table_name: str) -> None:
    arn = stream_table(ddb, table_name, "KEYS_ONLY")
    ddb.put_item(TableName=table_name, Item={"pk": S("a")})
    ddb.update_table(TableName=table_name, StreamSpecification={"StreamEnabled": False})
    ddb.put_item(TableName=table_name, Item={"pk": S("b")})  # no stream: no record
    description = streams.describe_stream(StreamArn=arn)["StreamDescription"]
    assert description["StreamStatus"] == "DISABLED"
    shard = description["Shards"][0]
    numbers = shard["SequenceNumberRange"]
    assert "EndingSequenceNumber" in numbers
    iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"],
                                          ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
    page = streams.get_records(ShardIterator=iterator)
    assert [r["dynamodb"]["Keys"] for r in page["Records"]] == [{"pk": S("a")}]
    assert "NextShardIterator" not in page  # a closed shard read to its end
    assert numbers["EndingSequenceNumber"] == page["Records"][0]["dynamodb"]["SequenceNumber"]
    out = ddb.update_table(TableName=table_name,
                           StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"})
    new_arn = out["TableDescription"]["LatestStreamArn"]
    assert new_arn != arn
    ddb.put_item(TableName=table_name, Item={"pk": S("c")})
    assert [r["dynamodb"]["Keys"] for r in read_stream(streams, new_arn)] == [{"pk": S("c")}]
    listed = [s["StreamArn"] for s in streams.list_streams(TableName=table_name)["Streams"]]
    assert listed == sorted([arn, new_arn])
    page1 = streams.list_streams(TableName=table_name, Limit=1)
    assert len(page1["Streams"]) == 1 and page1["LastEvaluatedStreamArn"] == listed[0]
    page2 = streams.list_streams(TableName=table_name, ExclusiveStartStreamArn=page1["LastEvaluatedStreamArn"])
    assert [s["StreamArn"] for s in page2["Streams"]] == listed[1:] and "LastEvaluatedStreamArn" not in page2


def test_deleted_table_stream_stays_readable(ddb: Any, streams: Any, table_name: str) -> None:
    arn = stream_table(ddb, table_name, "KEYS_ONLY")
    ddb.put_item(TableName=table_name, Item={"pk": S("a")})
    ddb.delete_table(TableName=table_name)
    assert streams.describe_stream(StreamArn=arn)["StreamDescription"]["StreamStatus"] == "DISABLED"
    assert [r["eventName"] for r in read_stream(streams, arn)] == ["INSERT"]


def test_errors(ddb: Any, streams: Any, table_name: str) -> None:
    arn = stream_table(ddb, table_name, "KEYS_ONLY")
    shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
    missing = arn[:-3] + "999"
    with pytest.raises(ClientError) as excinfo:
        streams.describe_stream(StreamArn=missing)
    assert error_of(excinfo) == ("ResourceNotFoundException", f"Requested resource not found: Stream: {missing} not found")
    iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard, ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
    forged = iterator[:-8] + ("AAAAAAA=" if not iterator.endswith("AAAAAAA=") else "BBBBBBB=")
    for bad in (forged, "nonsense", arn + "|1|" + "A" * 40):
        with pytest.raises(ClientError) as excinfo:
            streams.get_records(ShardIterator=bad)
        assert error_of(excinfo) == ("ValidationException", "Invalid ShardIterator"), bad
    with pytest.raises(ClientError) as excinfo:
        streams.get_records(ShardIterator=iterator, Limit=1001)
    assert error_of(excinfo)[0] == "ValidationException"
    with pytest.raises(ClientError) as excinfo:
        streams.get_shard_iterator(StreamArn=arn, ShardId="shardId-00000000000000000000-00000000",
                                   ShardIteratorType="LATEST")
    assert error_of(excinfo)[0] == "ResourceNotFoundException"


def test_iterator_expires_after_15_minutes_and_records_after_24_hours(start_server: Any) -> None:
    """On the server clock: advance it instead of sleeping."""
    from conftest import client_for
    from streams_helpers import eventually

    server = start_server("--in-memory")
    ddb, streams = client_for(server.url), streams_client(server.url)
    arn = stream_table(ddb, "clocked", "KEYS_ONLY")
    ddb.put_item(TableName="clocked", Item={"pk": S("old")})
    shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
    [old] = read_shard(streams, arn, shard)
    iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard, ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
    advance(server.url, 14 * 60)
    assert len(streams.get_records(ShardIterator=iterator)["Records"]) == 1
    advance(server.url, 2 * 60)
    with pytest.raises(ClientError) as excinfo:
        streams.get_records(ShardIterator=iterator)
    assert error_of(excinfo) == ("ExpiredIteratorException", "Shard iterator has expired")
    advance(server.url, 23 * 3600)
    ddb.put_item(TableName="clocked", Item={"pk": S("young")})
    advance(server.url, 3600)  # "old" is now 24h16m old, "young" one hour
    eventually(lambda: [r["dynamodb"]["Keys"]["pk"]["S"] for r in read_shard(streams, arn, shard)] == ["young"])
    with pytest.raises(ClientError) as excinfo:
        streams.get_shard_iterator(StreamArn=arn, ShardId=shard, ShardIteratorType="AT_SEQUENCE_NUMBER",
                                   SequenceNumber=old["dynamodb"]["SequenceNumber"])
    assert error_of(excinfo)[0] == "TrimmedDataAccessException"
