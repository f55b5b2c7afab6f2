"""Helpers shared by the streams and TTL tests: a Streams client, reading a whole stream, the clock."""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Callable
from typing import Any

import boto3
from botocore.config import Config


def streams_client(url: str) -> Any:
    return boto3.client(
        "dynamodbstreams", endpoint_url=url, region_name="us-east-1", config=Config(retries={"max_attempts": 1})
    )


def advance(url: str, seconds: float) -> None:
    request = urllib.request.Request(
        url + "/partita/v1/clock", data=json.dumps({"advance_seconds": seconds}).encode(), method="POST",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        response.read()


def read_shard(streams: Any, arn: str, shard_id: str, kind: str = "TRIM_HORIZON", **extra: Any) -> list[dict[str, Any]]:
    iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard_id, ShardIteratorType=kind, **extra)[
        "ShardIterator"
    ]
    out: list[dict[str, Any]] = []
    for _ in range(1000):
        page = streams.get_records(ShardIterator=iterator)
        out += page["Records"]
        iterator = page.get("NextShardIterator")
        if iterator is None or not page["Records"]:
            break
    return out


def read_stream(streams: Any, arn: str) -> list[dict[str, Any]]:
    shards = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]
    records: list[dict[str, Any]] = []
    for shard in shards:
        records += read_shard(streams, arn, shard["ShardId"])
    # a shard per partition: order is kept per item (per shard); across shards, by sequence number
    return sorted(records, key=lambda r: int(r["dynamodb"]["SequenceNumber"]))


def eventually(check: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.05)
