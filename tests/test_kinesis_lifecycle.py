"""Kinesis destinations and the table's life: no endpoint, a deleted table, a table of the same name again."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from backup_helpers import wait_for
from conftest import Server, client_for, create_table, launch
from kinesis_server import Kinesalite, needs_kinesalite, start_kinesalite

NO_PERMISSION = "User does not have a permission to use kinesis stream"


def test_without_an_endpoint_enabling_fails(ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name)
    arn = "arn:aws:kinesis:us-east-1:000000000000:stream/nowhere-to-go"
    ddb.enable_kinesis_streaming_destination(TableName=table_name, StreamArn=arn)

    def failed() -> list[dict[str, Any]] | None:
        found: list[dict[str, Any]] = ddb.describe_kinesis_streaming_destination(TableName=table_name)[
            "KinesisDataStreamDestinations"]
        return found if found[0]["DestinationStatus"] != "ENABLING" else None

    assert wait_for(failed) == [{"StreamArn": arn, "DestinationStatus": "ENABLE_FAILED",
                                 "DestinationStatusDescription": NO_PERMISSION}]


@pytest.fixture
def kinesis() -> Iterator[tuple[Any, Kinesalite, Server]]:
    stream_server = start_kinesalite()
    server = launch("--in-memory", "--kinesis-endpoint", stream_server.url)
    yield client_for(server.url), stream_server, server
    server.stop()
    stream_server.stop()


@needs_kinesalite
def test_a_deleted_table_sends_what_it_committed_and_a_new_one_starts_fresh(
        kinesis: tuple[Any, Kinesalite, Server]) -> None:
    ddb, stream, _ = kinesis
    create_table(ddb, "doomed")
    arn = stream.create_stream("doomed-stream")
    ddb.enable_kinesis_streaming_destination(TableName="doomed", StreamArn=arn)
    wait_for(lambda: ddb.describe_kinesis_streaming_destination(TableName="doomed")[
        "KinesisDataStreamDestinations"][0]["DestinationStatus"] == "ACTIVE")
    for i in range(30):
        ddb.put_item(TableName="doomed", Item={"pk": {"S": f"k{i}"}})
    ddb.delete_table(TableName="doomed")
    create_table(ddb, "doomed")
    out = ddb.describe_kinesis_streaming_destination(TableName="doomed")
    assert out["KinesisDataStreamDestinations"] == []
    found = wait_for(lambda: (got := stream.records("doomed-stream")) and len(got) >= 30 and got)
    assert sorted(r["dynamodb"]["Keys"]["pk"]["S"] for r in found) == sorted(f"k{i}" for i in range(30))
