"""Property: replaying the Kinesis records of any sequence of writes rebuilds the table.

Hypothesis draws puts, updates, deletes and two-item transactions on a few
keys; once delivered, the last record of each key (in the order its shard
holds them) must be the item's final state: NewImage for INSERT and MODIFY,
absent after REMOVE. Every change is there, and in order per key.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pytest
from backup_helpers import wait_for
from conftest import Server, client_for, create_table, launch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kinesis_server import Kinesalite, needs_kinesalite, start_kinesalite

pytestmark = needs_kinesalite

KEYS = ["a", "b", "c"]
WRITE = st.one_of(
    st.tuples(st.just("put"), st.sampled_from(KEYS), st.integers(0, 9)),
    st.tuples(st.just("update"), st.sampled_from(KEYS), st.integers(0, 9)),
    st.tuples(st.just("delete"), st.sampled_from(KEYS), st.just(0)),
    st.tuples(st.just("transact"), st.sampled_from(KEYS), st.integers(0, 9)),
)


@pytest.fixture(scope="module")
def kinesis() -> Iterator[tuple[Any, Kinesalite]]:
    stream_server = start_kinesalite()
    server: Server = launch("--in-memory", "--kinesis-endpoint", stream_server.url)
    yield client_for(server.url), stream_server
    server.stop()
    stream_server.stop()


_runs = itertools.count()


def apply(ddb: Any, table: str, kind: str, key: str, n: int) -> None:
    item = {"pk": {"S": key}, "n": {"N": str(n)}}
    if kind == "put":
        ddb.put_item(TableName=table, Item=item)
    elif kind == "update":
        ddb.update_item(TableName=table, Key={"pk": {"S": key}}, UpdateExpression="SET n = :n, u = :n",
                        ExpressionAttributeValues={":n": {"N": str(n)}})
    elif kind == "delete":
        ddb.delete_item(TableName=table, Key={"pk": {"S": key}})
    else:
        other = KEYS[(KEYS.index(key) + 1) % len(KEYS)]
        ddb.transact_write_items(TransactItems=[
            {"Put": {"TableName": table, "Item": item}},
            {"Put": {"TableName": table, "Item": {"pk": {"S": other}, "t": {"N": str(n)}}}}])


def test_records_replay_to_the_table(kinesis: tuple[Any, Kinesalite]) -> None:
    ddb, stream = kinesis

    @settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(writes=st.lists(WRITE, min_size=1, max_size=12))
    def check(writes: list[tuple[str, str, int]]) -> None:
        table = f"replay-{next(_runs)}"
        create_table(ddb, table)
        arn = stream.create_stream(table, shards=2)
        ddb.enable_kinesis_streaming_destination(TableName=table, StreamArn=arn)
        wait_for(lambda: ddb.describe_kinesis_streaming_destination(TableName=table)[
            "KinesisDataStreamDestinations"][0]["DestinationStatus"] == "ACTIVE")
        for kind, key, n in writes:
            apply(ddb, table, kind, key, n)
        final = {it["pk"]["S"]: it for it in ddb.scan(TableName=table, ConsistentRead=True)["Items"]}
        changed = 0
        state: dict[str, Any] = {}

        def replayed() -> bool:
            state.clear()
            found = stream.records(table)
            for record in found:  # one key's records share a shard and keep its order
                key = record["dynamodb"]["Keys"]["pk"]["S"]
                state[key] = record["dynamodb"].get("NewImage")
            nonlocal changed
            changed = len(found)
            return {k: v for k, v in state.items() if v is not None} == final

        wait_for(replayed)
        assert changed >= 1 or not final

    check()
