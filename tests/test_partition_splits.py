"""Partitions split by size (`--partition-size-limit`), online, with their stream shards; and limits shared by workers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from capacity_helpers import admin, strict_client, wait_for
from conftest import create_table, launch


def _count(layout: dict[str, Any]) -> int:
    return int(layout["partition_count"])


def test_partitions_split_by_size_and_items_queries_and_streams_stay_right(tmp_path: Path) -> None:
    srv = launch("--data-dir", str(tmp_path), "--partition-size-limit", "60000")
    try:
        ddb = strict_client(srv.url)
        create_table(ddb, "split-me", range_key=("sk", "N"),
                     StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})
        for i in range(60):
            for j in range(2):
                ddb.put_item(TableName="split-me", Item={"pk": {"S": f"user{i}"}, "sk": {"N": str(j)},
                                                          "v": {"S": "p" * 4000}})
        layout = wait_for(lambda: (lambda doc: doc if _count(doc) > 8 else None)(
            admin(srv.url, "/partita/v1/tables/split-me/partitions")[1]))
        assert layout, "no partition split within 20 s"
        parts = layout["partitions"]
        assert all(p["size_bytes"] <= 60000 or p["item_count"] <= 2 for p in parts) or _count(layout) > 8
        assert sum(p["item_count"] for p in parts) == 120
        for before, after in zip(parts, parts[1:], strict=False):
            assert before["hash_end"] + 1 == after["hash_start"]  # contiguous, no gaps
        assert parts[0]["hash_start"] == 0 and parts[-1]["hash_end"] == 2**64 - 1
        # Items and queries are unchanged by the split.
        assert ddb.scan(TableName="split-me", Select="COUNT")["Count"] == 120
        answer = ddb.query(TableName="split-me", KeyConditionExpression="pk = :p",
                           ExpressionAttributeValues={":p": {"S": "user7"}})
        assert [item["sk"]["N"] for item in answer["Items"]] == ["0", "1"]
        # The stream's shard split with the partitions: a closed parent and children naming it.
        streams = ddb.describe_table(TableName="split-me")["Table"]["LatestStreamArn"]
        import boto3

        client = boto3.client("dynamodbstreams", endpoint_url=srv.url, region_name="us-east-1")
        shards = client.describe_stream(StreamArn=streams)["StreamDescription"]["Shards"]
        assert len(shards) >= 3
        parents = {s["ShardId"] for s in shards if "EndingSequenceNumber" in s["SequenceNumberRange"]}
        children = [s for s in shards if s.get("ParentShardId") in parents]
        assert parents and len(children) >= 2
        # Listed in ShardId order, where a child (created later) sorts after its parent.
        assert [s["ShardId"] for s in shards] == sorted(s["ShardId"] for s in shards)
        assert all(child["ShardId"] > child["ParentShardId"] for child in children)
        for parent in parents:
            filtered = client.describe_stream(StreamArn=streams, ShardFilter={"Type": "CHILD_SHARDS",
                                                                              "ShardId": parent})
            assert filtered["StreamDescription"]["Shards"] == [s for s in shards if s.get("ParentShardId") == parent]
        ddb.put_item(TableName="split-me", Item={"pk": {"S": "after"}, "sk": {"N": "0"}})
        total = 0
        for shard in shards:
            iterator = client.get_shard_iterator(StreamArn=streams, ShardId=shard["ShardId"],
                                                 ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
            total += len(client.get_records(ShardIterator=iterator)["Records"])
        assert total == 121
    finally:
        srv.stop()


def test_limits_are_shared_by_two_workers(tmp_path: Path) -> None:
    srv = launch("--data-dir", str(tmp_path), "--workers", "2", "--emulate-throughput")
    try:
        clients = [strict_client(srv.url) for _ in range(4)]
        clients[0].create_table(
            TableName="shared", BillingMode="PROVISIONED",
            ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 1},
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        )
        codes = []
        for i in range(8):  # 98 units each; the table keeps 300 of burst, whichever worker answers
            try:
                clients[i % 4].put_item(TableName="shared", Item={"pk": {"S": f"k{i}"}, "v": {"S": "y" * 100_000}})
                codes.append("ok")
            except Exception as error:  # noqa: BLE001 - the code is what is asserted
                codes.append(error.response["Error"]["Code"])  # type: ignore[attr-defined]
        assert codes == ["ok"] * 3 + ["ProvisionedThroughputExceededException"] * 5
    finally:
        srv.stop()
