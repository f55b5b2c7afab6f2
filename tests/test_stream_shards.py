"""A stream opens one shard per partition of its table; a key's records all land in its partition's shard, in order."""

from __future__ import annotations

from typing import Any

from capacity_helpers import admin
from conftest import create_table
from streams_helpers import read_shard, streams_client


def test_one_shard_per_partition_and_each_key_in_its_partitions_shard(endpoint: str, ddb: Any,
                                                                      table_name: str) -> None:
    out = create_table(ddb, table_name, StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"})
    arn = out["TableDescription"]["LatestStreamArn"]
    for i in range(40):
        ddb.put_item(TableName=table_name, Item={"pk": {"S": f"key{i}"}, "v": {"N": "0"}})
    for version in (1, 2):
        for i in range(0, 40, 3):
            ddb.put_item(TableName=table_name, Item={"pk": {"S": f"key{i}"}, "v": {"N": str(version)}})
    ddb.delete_item(TableName=table_name, Key={"pk": {"S": "key0"}})

    layout = admin(endpoint, f"/partita/v1/tables/{table_name}/partitions")[1]
    assert layout["partition_count"] == 8  # a new on-demand table: 12,000 / 3000 + 4000 / 1000
    streams = streams_client(endpoint)
    shards = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]
    assert len(shards) == 8
    assert all("ParentShardId" not in s and "EndingSequenceNumber" not in s["SequenceNumberRange"] for s in shards)
    seen: dict[str, int] = {}
    for number, shard in enumerate(shards):
        records = read_shard(streams, arn, shard["ShardId"])
        sequence = [int(r["dynamodb"]["SequenceNumber"]) for r in records]
        assert sequence == sorted(sequence)  # a shard's records in the order they were written
        keys = set()
        for record in records:
            key = record["dynamodb"]["Keys"]["pk"]["S"]
            assert seen.setdefault(key, number) == number  # every record of a key in one shard
            keys.add(key)
        # the shard's keys are its partition's (shards are listed in partition order)
        assert len(keys - {"key0"}) == layout["partitions"][number]["item_count"]
        for key in keys:  # order per item: its versions, then its removal
            events = [(r["eventName"], r["dynamodb"].get("NewImage", {}).get("v", {}).get("N"))
                      for r in records if r["dynamodb"]["Keys"]["pk"]["S"] == key]
            index = int(key[3:])
            expected = [("INSERT", "0")] + ([("MODIFY", "1"), ("MODIFY", "2")] if index % 3 == 0 else [])
            if key == "key0":
                expected.append(("REMOVE", None))
            assert events == expected
    assert len(set(seen.values())) > 1 and len(seen) == 40
