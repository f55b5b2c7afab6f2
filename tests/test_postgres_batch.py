"""BatchWriteItem on PostgreSQL: not atomic, as on DynamoDB, when its batch transaction cannot commit.

A batch is first written in one SERIALIZABLE transaction; when that keeps
failing (other servers writing the same pages) or meets an item a running
TransactWriteItems holds, each item is written in its own transaction and
what still cannot be written comes back in UnprocessedItems
(api/conflicts.py). These run in the PostgreSQL pass only.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import psycopg
import pytest
from botocore.exceptions import ClientError
from conftest import Server, client_for, create_table, fresh_database, needs_postgres
from streams_helpers import read_stream, streams_client
from test_indexes import attr, gsi, key

from partita.engine.engine import Engine
from partita.storage.pg_keys import item_lock
from partita.storage.postgres import PostgresStore

pytestmark = needs_postgres()


def _put(pk: str, **extra: Any) -> dict[str, Any]:
    return {"PutRequest": {"Item": {"pk": {"S": pk}, **extra}}}


def _row_lock(url: str, table: str, item: dict[str, Any]) -> int:
    """The advisory lock a TransactWriteItems takes on `item` (storage/postgres.py)."""
    engine = Engine(PostgresStore(url), background=False)
    try:
        described = engine.catalog.get(table)
        assert described is not None
        lock = item_lock(described.row_key(item))
    finally:
        engine.close()
    assert lock is not None
    return lock


def test_an_item_held_by_a_transaction_comes_back_unprocessed(start_server: Callable[..., Server]) -> None:
    url = fresh_database()
    ddb = client_for(start_server("--backend", url).url)
    create_table(ddb, "held")
    lock = _row_lock(url, "held", {"pk": {"S": "h"}})
    with psycopg.connect(url) as holder:  # a transaction of its own, open until the rollback below
        holder.execute("SELECT pg_advisory_xact_lock(%s)", (lock,))
        answer = ddb.batch_write_item(
            RequestItems={"held": [_put("a"), _put("h", n={"N": "1"}), _put("b")]},
            ReturnConsumedCapacity="TOTAL",
        )
        assert answer["UnprocessedItems"] == {"held": [_put("h", n={"N": "1"})]}
        assert answer["ConsumedCapacity"] == [{"TableName": "held", "CapacityUnits": 2.0}]
        for pk in ("a", "b"):
            assert ddb.get_item(TableName="held", Key={"pk": {"S": pk}}, ConsistentRead=True)["Item"] == {
                "pk": {"S": pk}
            }
        assert "Item" not in ddb.get_item(TableName="held", Key={"pk": {"S": "h"}}, ConsistentRead=True)
        # Nothing at all could be processed: the batch fails as a PutItem of that item does.
        with pytest.raises(ClientError) as raised:
            ddb.batch_write_item(RequestItems={"held": [_put("h")]})
        assert raised.value.response["Error"]["Code"] == "TransactionConflictException"
        assert raised.value.response["Error"]["Message"] == "Transaction is ongoing for the item"
        holder.rollback()
    again = ddb.batch_write_item(RequestItems=answer["UnprocessedItems"], ReturnConsumedCapacity="TOTAL")
    assert again["UnprocessedItems"] == {}
    assert again["ConsumedCapacity"] == [{"TableName": "held", "CapacityUnits": 1.0}]
    item = ddb.get_item(TableName="held", Key={"pk": {"S": "h"}}, ConsistentRead=True)["Item"]
    assert item == {"pk": {"S": "h"}, "n": {"N": "1"}}


THREADS = 6
ROUNDS = 10
KEYS = 30
BATCH = 10


def test_overlapping_batches_on_two_servers_all_land_exactly_once(start_server: Callable[..., Server]) -> None:
    """Every answer is 200; after resending UnprocessedItems (as an SDK does) every acknowledged write
    is there exactly once: one stream record each, the last one the item, the GSI holding the item."""
    url = fresh_database()
    urls = [start_server("--backend", url, "--workers", "2").url for _ in range(2)]
    setup = client_for(urls[0])
    setup.create_table(
        TableName="overlap",
        KeySchema=[key("pk", "HASH"), key("sk", "RANGE")],
        AttributeDefinitions=[attr("pk"), attr("sk"), attr("g")],
        GlobalSecondaryIndexes=[gsi("by_g", "g", "sk")],
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"},
        BillingMode="PAY_PER_REQUEST",
    )
    bad: list[Any] = []
    unprocessed_answers = [0]
    lock = threading.Lock()

    def writer(thread: int) -> None:
        ddb = client_for(urls[thread % 2])
        for round_ in range(ROUNDS):
            first = (thread * 7 + round_ * 3) % KEYS  # overlapping windows of the same partition's keys
            pending: dict[str, Any] = {
                "overlap": [
                    {
                        "PutRequest": {
                            "Item": {
                                "pk": {"S": "p"},
                                "sk": {"S": f"k{(first + slot) % KEYS:02d}"},
                                "g": {"S": f"g{(thread + round_) % 3}"},
                                "w": {"S": f"{thread}-{round_}"},
                            }
                        }
                    }
                    for slot in range(BATCH)
                ]
            }
            for _ in range(100):
                try:
                    answer = ddb.batch_write_item(RequestItems=pending)
                except ClientError as error:
                    bad.append(error.response["Error"])
                    return
                pending = answer["UnprocessedItems"]
                if not pending:
                    break
                with lock:
                    unprocessed_answers[0] += 1
                time.sleep(0.01)
            else:
                bad.append(("never processed", pending))

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(180)
    print("answers with UnprocessedItems:", unprocessed_answers[0])
    assert bad == []
    items = {}
    pages = setup.get_paginator("query").paginate(
        TableName="overlap",
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": "p"}},
        ConsistentRead=True,
    )
    for page in pages:
        items.update({item["sk"]["S"]: item for item in page["Items"]})
    written = {f"k{(t * 7 + r * 3 + s) % KEYS:02d}" for t in range(THREADS) for r in range(ROUNDS) for s in range(BATCH)}
    assert set(items) == written
    indexed = []
    for g in ("g0", "g1", "g2"):
        for page in setup.get_paginator("query").paginate(
            TableName="overlap",
            IndexName="by_g",
            KeyConditionExpression="g = :g",
            ExpressionAttributeValues={":g": {"S": g}},
        ):
            indexed += [(g, item["sk"]["S"], item["w"]["S"]) for item in page["Items"]]
    assert sorted(indexed) == sorted((item["g"]["S"], sk, item["w"]["S"]) for sk, item in items.items())
    arn = setup.describe_table(TableName="overlap")["Table"]["LatestStreamArn"]
    records = read_stream(streams_client(urls[0]), arn)
    assert len(records) == THREADS * ROUNDS * BATCH  # one per acknowledged write: none lost, none twice
    last: dict[str, dict[str, Any]] = {}
    seen: dict[str, list[str]] = {}
    for record in records:
        sk = record["dynamodb"]["Keys"]["sk"]["S"]
        seen.setdefault(sk, []).append(record["eventName"])
        last[sk] = record["dynamodb"]["NewImage"]
    assert all(names[0] == "INSERT" and set(names[1:]) <= {"MODIFY"} for names in seen.values())
    assert last == items
