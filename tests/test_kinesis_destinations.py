"""Kinesis streaming destinations: the API's state machine and the records delivered to kinesalite.

Messages and transitions follow what DynamoDB answered to the probes recorded
in aws-controllers-k8s/dynamodb-controller docs/api-quirks (DDB-TABLE-234,
268, 299, 300, 301, 302, 318); the record layout follows records the service
delivered (see partita/engine/kinesis/records.py).
"""

from __future__ import annotations

import re
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from backup_helpers import wait_for
from botocore.exceptions import ClientError
from bulk_helpers import server_now
from conftest import Server, client_for, create_table, error_of, launch
from kinesis_server import Kinesalite, needs_kinesalite, start_kinesalite
from streams_helpers import advance

pytestmark = needs_kinesalite

STATE = "Table is not in a valid state to enable Kinesis Streaming Destination: "
ENABLE_STATE = STATE + "EnableKinesisStreamingDestination must be DISABLED or ENABLE_FAILED to perform ENABLE operation."
DISABLE_STATE = STATE + "KinesisStreamingDestination must be ACTIVE to perform DISABLE operation."
NO_PERMISSION = "User does not have a permission to use kinesis stream"


@pytest.fixture(scope="module")
def kinesis() -> Iterator[tuple[Any, Kinesalite, Server]]:
    stream_server = start_kinesalite()
    server = launch("--in-memory", "--kinesis-endpoint", stream_server.url)
    yield client_for(server.url), stream_server, server
    server.stop()
    stream_server.stop()


def destinations(ddb: Any, table: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = ddb.describe_kinesis_streaming_destination(TableName=table)[
        "KinesisDataStreamDestinations"]
    return out


def settled(ddb: Any, table: str) -> list[dict[str, Any]]:
    """The destinations once none is ENABLING, UPDATING or DISABLING (the delivery duty's next tick)."""
    def done() -> list[dict[str, Any]] | None:
        found = destinations(ddb, table)
        busy = any(d["DestinationStatus"] in ("ENABLING", "UPDATING", "DISABLING") for d in found)
        return None if busy else found
    result: list[dict[str, Any]] = wait_for(done)
    return result


def records(stream: Kinesalite, name: str, count: int) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = wait_for(lambda: (found := stream.records(name)) and len(found) >= count and found)
    return result


def test_a_fresh_table_lists_no_destination(kinesis: tuple[Any, Kinesalite, Server], table_name: str) -> None:
    ddb, _, _ = kinesis
    create_table(ddb, table_name)
    out = ddb.describe_kinesis_streaming_destination(TableName=table_name)
    out.pop("ResponseMetadata")
    assert out == {"TableName": table_name, "KinesisDataStreamDestinations": []}
    # DescribeTable has no Kinesis member (DDB-TABLE-299).
    assert not [k for k in ddb.describe_table(TableName=table_name)["Table"] if "Kinesis" in k]


def test_a_missing_table_is_not_found(kinesis: tuple[Any, Kinesalite, Server]) -> None:
    ddb, _, _ = kinesis
    arn = "arn:aws:kinesis:us-east-1:000000000000:stream/nothing"
    message = "Requested resource not found: Table: no-such-table not found"
    calls = [
        lambda: ddb.describe_kinesis_streaming_destination(TableName="no-such-table"),
        lambda: ddb.enable_kinesis_streaming_destination(TableName="no-such-table", StreamArn=arn),
        lambda: ddb.disable_kinesis_streaming_destination(TableName="no-such-table", StreamArn=arn),
        lambda: ddb.update_kinesis_streaming_destination(
            TableName="no-such-table", StreamArn=arn,
            UpdateKinesisStreamingConfiguration={"ApproximateCreationDateTimePrecision": "MICROSECOND"}),
    ]
    for call in calls:
        with pytest.raises(ClientError) as excinfo:
            call()
        assert error_of(excinfo) == ("ResourceNotFoundException", message)


def test_changes_arrive_in_dynamodbs_record_format(kinesis: tuple[Any, Kinesalite, Server], table_name: str) -> None:
    ddb, stream, _ = kinesis
    create_table(ddb, table_name, range_key=("sk", "N"))
    arn = stream.create_stream(table_name)
    out = ddb.enable_kinesis_streaming_destination(TableName=table_name, StreamArn=arn)
    out.pop("ResponseMetadata")
    assert out == {"TableName": table_name, "StreamArn": arn, "DestinationStatus": "ENABLING",
                   "EnableKinesisStreamingConfiguration": {}}
    assert settled(ddb, table_name) == [{"StreamArn": arn, "DestinationStatus": "ACTIVE"}]
    key = {"pk": {"S": "a"}, "sk": {"N": "1"}}
    ddb.put_item(TableName=table_name, Item={**key, "v": {"S": "one"}})
    ddb.update_item(TableName=table_name, Key=key, UpdateExpression="SET v = :v",
                    ExpressionAttributeValues={":v": {"S": "two"}})
    ddb.put_item(TableName=table_name, Item={**key, "v": {"S": "two"}})  # no change: no record
    ddb.delete_item(TableName=table_name, Key=key)
    found = records(stream, table_name, 3)
    assert [r["eventName"] for r in found] == ["INSERT", "MODIFY", "REMOVE"]
    first = found[0]
    assert list(first) == ["partitionKey", "shard", "awsRegion", "eventID", "eventName", "userIdentity",
                           "recordFormat", "tableName", "dynamodb", "eventSource"]
    assert {k: first[k] for k in ("awsRegion", "userIdentity", "recordFormat", "tableName", "eventSource")} == {
        "awsRegion": "us-east-1", "userIdentity": None, "recordFormat": "application/json",
        "tableName": table_name, "eventSource": "aws:dynamodb"}
    assert len({r["partitionKey"] for r in found}) == 1 and len(first["partitionKey"]) == 32
    assert len({r["eventID"] for r in found}) == 3
    blocks = [r["dynamodb"] for r in found]
    for block in blocks:
        assert isinstance(block["ApproximateCreationDateTime"], int)
        assert 1_000_000_000_000 < block["ApproximateCreationDateTime"] < 10_000_000_000_000  # milliseconds
        block.pop("ApproximateCreationDateTime")
    one = {**key, "v": {"S": "one"}}
    two = {**key, "v": {"S": "two"}}
    # SizeBytes: the keys ("pk" + "a": 3 bytes, "sk" + the number 1: 4) and each image (the keys and "v" + 3).
    assert blocks == [
        {"Keys": key, "NewImage": one, "SizeBytes": 7 + 11},
        {"Keys": key, "NewImage": two, "OldImage": one, "SizeBytes": 7 + 11 + 11},
        {"Keys": key, "OldImage": two, "SizeBytes": 7 + 11},
    ]


def test_one_live_destination_at_a_time(kinesis: tuple[Any, Kinesalite, Server], table_name: str) -> None:
    ddb, stream, _ = kinesis
    create_table(ddb, table_name)
    arn = stream.create_stream(table_name)
    other = stream.create_stream(table_name + "-b")
    ddb.enable_kinesis_streaming_destination(TableName=table_name, StreamArn=arn)
    for target in (arn, other):
        with pytest.raises(ClientError) as excinfo:
            ddb.enable_kinesis_streaming_destination(TableName=table_name, StreamArn=target)
        assert error_of(excinfo) == ("ValidationException", ENABLE_STATE)
    settled(ddb, table_name)
    with pytest.raises(ClientError) as excinfo:
        ddb.enable_kinesis_streaming_destination(
            TableName=table_name, StreamArn=other,
            EnableKinesisStreamingConfiguration={"ApproximateCreationDateTimePrecision": "MICROSECOND"})
    assert error_of(excinfo) == ("ValidationException", ENABLE_STATE)


def test_disable_stops_delivery_and_reenabling_flips_the_entry(
        kinesis: tuple[Any, Kinesalite, Server], table_name: str) -> None:
    ddb, stream, _ = kinesis
    create_table(ddb, table_name)
    arn = stream.create_stream(table_name)
    never = stream.create_stream(table_name + "-never")
    ddb.enable_kinesis_streaming_destination(
        TableName=table_name, StreamArn=arn,
        EnableKinesisStreamingConfiguration={"ApproximateCreationDateTimePrecision": "MICROSECOND"})
    assert settled(ddb, table_name) == [
        {"StreamArn": arn, "DestinationStatus": "ACTIVE", "ApproximateCreationDateTimePrecision": "MICROSECOND"}]
    with pytest.raises(ClientError) as excinfo:
        ddb.disable_kinesis_streaming_destination(
            TableName=table_name, StreamArn=arn,
            EnableKinesisStreamingConfiguration={"ApproximateCreationDateTimePrecision": "MICROSECOND"})
    assert error_of(excinfo) == (
        "ValidationException", "Stream cannot be disabled using EnableKinesisStreamingConfiguration parameters")
    with pytest.raises(ClientError) as excinfo:
        ddb.disable_kinesis_streaming_destination(TableName=table_name, StreamArn=never)
    assert error_of(excinfo) == ("ValidationException", DISABLE_STATE)
    ddb.put_item(TableName=table_name, Item={"pk": {"S": "before"}})
    assert len(records(stream, table_name, 1)) == 1
    out = ddb.disable_kinesis_streaming_destination(TableName=table_name, StreamArn=arn)
    out.pop("ResponseMetadata")
    assert out == {"TableName": table_name, "StreamArn": arn, "DestinationStatus": "DISABLING"}
    # Disabling resets the precision (DDB-TABLE-300).
    assert settled(ddb, table_name) == [{"StreamArn": arn, "DestinationStatus": "DISABLED"}]
    ddb.put_item(TableName=table_name, Item={"pk": {"S": "after"}})
    with pytest.raises(ClientError) as excinfo:
        ddb.disable_kinesis_streaming_destination(TableName=table_name, StreamArn=arn)
    assert error_of(excinfo) == ("ValidationException", DISABLE_STATE)
    ddb.enable_kinesis_streaming_destination(TableName=table_name, StreamArn=arn)
    assert settled(ddb, table_name) == [{"StreamArn": arn, "DestinationStatus": "ACTIVE"}]
    ddb.put_item(TableName=table_name, Item={"pk": {"S": "again"}})
    found = records(stream, table_name, 2)
    # "after" was written while disabled: never sent.
    assert [r["dynamodb"]["Keys"]["pk"]["S"] for r in found] == ["before", "again"]
    assert found[0]["dynamodb"]["ApproximateCreationDateTimePrecision"] == "MICROSECOND"
    assert found[0]["dynamodb"]["ApproximateCreationDateTime"] > 10**15  # microseconds
    assert "ApproximateCreationDateTimePrecision" not in found[1]["dynamodb"]


def test_update_the_precision(kinesis: tuple[Any, Kinesalite, Server], table_name: str) -> None:
    ddb, stream, _ = kinesis
    create_table(ddb, table_name)
    arn = stream.create_stream(table_name)
    unknown = "arn:aws:kinesis:us-east-1:000000000000:stream/unknown-stream"
    ddb.enable_kinesis_streaming_destination(TableName=table_name, StreamArn=arn)
    settled(ddb, table_name)
    table_id = ddb.describe_table(TableName=table_name)["Table"]["TableId"]
    cases = [
        ({}, "Streaming destination cannot be updated with given parameters: "
             "UpdateKinesisStreamingConfiguration cannot be null or contain only null values", arn),
        ({"ApproximateCreationDateTimePrecision": "MICROSECOND"},
         STATE + f"No streaming destination with streamArn: {unknown} found for table with tableName: {table_name}",
         unknown),
        # Absent means MILLISECOND (DDB-TABLE-300, 460).
        ({"ApproximateCreationDateTimePrecision": "MILLISECOND"},
         f"Invalid Request: Precision is already set to the desired value of MILLISECOND for tableId: {table_id}, "
         f"kdsArn: {arn}", arn),
    ]
    for config, message, target in cases:
        with pytest.raises(ClientError) as excinfo:
            ddb.update_kinesis_streaming_destination(TableName=table_name, StreamArn=target,
                                                     UpdateKinesisStreamingConfiguration=config)
        assert error_of(excinfo) == ("ValidationException", message)
    with pytest.raises(ClientError) as excinfo:
        ddb.update_kinesis_streaming_destination(TableName=table_name, StreamArn=arn)
    assert error_of(excinfo) == ("ValidationException", cases[0][1])
    out = ddb.update_kinesis_streaming_destination(
        TableName=table_name, StreamArn=arn,
        UpdateKinesisStreamingConfiguration={"ApproximateCreationDateTimePrecision": "MICROSECOND"})
    out.pop("ResponseMetadata")
    assert out == {"TableName": table_name, "StreamArn": arn, "DestinationStatus": "UPDATING",
                   "UpdateKinesisStreamingConfiguration": {"ApproximateCreationDateTimePrecision": "MICROSECOND"}}
    assert settled(ddb, table_name) == [
        {"StreamArn": arn, "DestinationStatus": "ACTIVE", "ApproximateCreationDateTimePrecision": "MICROSECOND"}]
    ddb.put_item(TableName=table_name, Item={"pk": {"S": "x"}})
    assert records(stream, table_name, 1)[0]["dynamodb"]["ApproximateCreationDateTimePrecision"] == "MICROSECOND"


def test_a_missing_stream_fails_the_enable(kinesis: tuple[Any, Kinesalite, Server], table_name: str) -> None:
    ddb, stream, _ = kinesis
    create_table(ddb, table_name)
    first = "arn:aws:kinesis:us-east-1:000000000000:stream/missing-one"
    second = "arn:aws:kinesis:us-east-1:000000000000:stream/missing-two"
    elsewhere = "arn:aws:kinesis:eu-west-1:000000000000:stream/missing-two"
    ddb.enable_kinesis_streaming_destination(TableName=table_name, StreamArn=first)
    assert settled(ddb, table_name) == [
        {"StreamArn": first, "DestinationStatus": "ENABLE_FAILED", "DestinationStatusDescription": NO_PERMISSION}]
    with pytest.raises(ClientError) as excinfo:
        ddb.update_kinesis_streaming_destination(
            TableName=table_name, StreamArn=first,
            UpdateKinesisStreamingConfiguration={"ApproximateCreationDateTimePrecision": "MICROSECOND"})
    assert error_of(excinfo) == ("ValidationException", STATE + "Kinesis streaming is not in ACTIVE state. "
                                 f"Updates are only allowed in ACTIVE state. TableName: {table_name}")
    with pytest.raises(ClientError) as excinfo:
        ddb.disable_kinesis_streaming_destination(TableName=table_name, StreamArn=first)
    assert error_of(excinfo) == ("ValidationException", DISABLE_STATE)
    ddb.enable_kinesis_streaming_destination(TableName=table_name, StreamArn=second)
    settled(ddb, table_name)
    ddb.enable_kinesis_streaming_destination(TableName=table_name, StreamArn=first)  # flipped, not repeated
    settled(ddb, table_name)
    ddb.enable_kinesis_streaming_destination(TableName=table_name, StreamArn=elsewhere)
    failed = {"DestinationStatus": "ENABLE_FAILED", "DestinationStatusDescription": NO_PERMISSION}
    assert settled(ddb, table_name) == [
        {"StreamArn": elsewhere, "DestinationStatus": "ENABLE_FAILED",
         "DestinationStatusDescription": "The kinesis Arn used to enable kinesis replication belongs to a stream "
                                         "which is not in the current region"},
        {"StreamArn": first, **failed}, {"StreamArn": second, **failed}]
    # A failed destination logs nothing, and a working one can still be enabled beside the failed ones.
    arn = stream.create_stream(table_name)
    ddb.enable_kinesis_streaming_destination(TableName=table_name, StreamArn=arn)
    assert settled(ddb, table_name)[0] == {"StreamArn": arn, "DestinationStatus": "ACTIVE"}


def test_transactions_and_ttl_deletions(kinesis: tuple[Any, Kinesalite, Server], table_name: str) -> None:
    ddb, stream, server = kinesis
    create_table(ddb, table_name)
    ddb.update_time_to_live(TableName=table_name, TimeToLiveSpecification={"Enabled": True, "AttributeName": "exp"})
    arn = stream.create_stream(table_name)
    ddb.enable_kinesis_streaming_destination(TableName=table_name, StreamArn=arn)
    settled(ddb, table_name)
    ddb.transact_write_items(TransactItems=[
        {"Put": {"TableName": table_name, "Item": {"pk": {"S": "t1"}, "exp": {"N": str(int(server_now(server.url)) + 5)}}}},
        {"Put": {"TableName": table_name, "Item": {"pk": {"S": "t2"}}}},
    ])
    advance(server.url, 60)
    found = records(stream, table_name, 3)
    by_name = [(r["eventName"], r["dynamodb"]["Keys"]["pk"]["S"], r["userIdentity"]) for r in found]
    ttl = {"principalId": "dynamodb.amazonaws.com", "type": "Service"}
    assert sorted(by_name, key=str) == sorted(
        [("INSERT", "t1", None), ("INSERT", "t2", None), ("REMOVE", "t1", ttl)], key=str)
    t1 = [r["eventName"] for r in found if r["dynamodb"]["Keys"]["pk"]["S"] == "t1"]
    assert t1 == ["INSERT", "REMOVE"]


def test_changes_of_one_key_stay_in_order(kinesis: tuple[Any, Kinesalite, Server], table_name: str) -> None:
    ddb, stream, _ = kinesis
    create_table(ddb, table_name)
    arn = stream.create_stream(table_name, shards=3)
    ddb.enable_kinesis_streaming_destination(TableName=table_name, StreamArn=arn)
    settled(ddb, table_name)
    for step in range(20):
        for key in ("k1", "k2", "k3", "k4"):
            ddb.put_item(TableName=table_name, Item={"pk": {"S": key}, "n": {"N": str(step)}})
    found = records(stream, table_name, 80)
    for key in ("k1", "k2", "k3", "k4"):
        mine = [r for r in found if r["dynamodb"]["Keys"]["pk"]["S"] == key]
        assert len({r["shard"] for r in mine}) == 1
        assert [int(r["dynamodb"]["NewImage"]["n"]["N"]) for r in mine] == list(range(20))


def _metric(url: str, name: str, table: str) -> float | None:
    with urllib.request.urlopen(url + "/metrics") as answer:
        text = answer.read().decode()
    for line in text.splitlines():
        match = re.match(rf'{name}\{{(.*)\}} (\S+)$', line)
        if match and f'table="{table}"' in match.group(1):
            return float(match.group(2))
    return None


def test_a_stream_deleted_later_is_reported_in_metrics_and_console(
        kinesis: tuple[Any, Kinesalite, Server], table_name: str) -> None:
    ddb, stream, server = kinesis
    create_table(ddb, table_name)
    arn = stream.create_stream(table_name)
    ddb.enable_kinesis_streaming_destination(TableName=table_name, StreamArn=arn)
    settled(ddb, table_name)
    ddb.put_item(TableName=table_name, Item={"pk": {"S": "one"}})
    records(stream, table_name, 1)
    wait_for(lambda: _metric(server.url, "partita_kinesis_records_sent", table_name) == 1.0)
    assert _metric(server.url, "partita_kinesis_pending_changes", table_name) == 0.0
    stream.client.delete_stream(StreamName=table_name)
    wait_for(lambda: table_name not in stream.client.list_streams()["StreamNames"])
    ddb.put_item(TableName=table_name, Item={"pk": {"S": "two"}})
    wait_for(lambda: _metric(server.url, "partita_kinesis_delivery_failing", table_name) == 1.0)
    assert _metric(server.url, "partita_kinesis_pending_changes", table_name) == 1.0
    # As on DynamoDB (DDB-TABLE-319), the destination stays ACTIVE without a description.
    assert destinations(ddb, table_name) == [{"StreamArn": arn, "DestinationStatus": "ACTIVE"}]
    with urllib.request.urlopen(server.url + "/console/jobs") as answer:
        page = answer.read().decode()
    row = re.search(rf'<tr class="destination" data-status="ACTIVE"><td>{table_name}</td>(.*?)</tr>', page, re.S)
    assert row is not None and "ResourceNotFoundException" in row.group(1)
    # Recreated, the stream gets the waiting change (delivery resumes from the stored position).
    stream.create_stream(table_name)
    found = records(stream, table_name, 1)
    assert [r["dynamodb"]["Keys"]["pk"]["S"] for r in found] == ["two"]
    wait_for(lambda: _metric(server.url, "partita_kinesis_delivery_failing", table_name) == 0.0)
