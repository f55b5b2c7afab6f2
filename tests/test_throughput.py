"""`partita serve --emulate-throughput`: DynamoDB's throughput limits, through boto3.

Buckets run on the server clock: a test exhausts one with a few large
items (wall time refills it far slower than they drain it), asserts the
throttle, moves the clock on, and succeeds again.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError
from capacity_helpers import admin, advance, put_patiently, strict_client, throttle_of
from conftest import STORE, Server, create_table, launch

from partita.engine.model.keys import partition_hash

ARN = "arn:aws:dynamodb:us-east-1:000000000000:table/"
PROVISIONED_MESSAGE = (
    "The level of configured provisioned throughput for the table was exceeded. "
    "Consider increasing your provisioning level with the UpdateTable API."
)
INDEX_MESSAGE = (
    "The level of configured provisioned throughput for one or more global secondary indexes of the table "
    "was exceeded. Consider increasing your provisioning level for the under-provisioned global secondary "
    "indexes with the UpdateTable API."
)
ON_DEMAND_MESSAGE = (
    "Throughput exceeds the current capacity of your table or index. DynamoDB is automatically scaling your "
    "table or index so please try again shortly. If exceptions persist, check if you have a hot key: "
    "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html"
)
#: 100,005 bytes: 98 write units, 25 strongly consistent read units.
BIG = "y" * 100_000


@pytest.fixture(scope="module")
def throttled_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    store = ["--data-dir", str(tmp_path_factory.mktemp("cap"))] if STORE == "sqlite" else ["--in-memory"]
    srv = launch(*store, "--emulate-throughput")
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def url(throttled_server: Server) -> str:
    return throttled_server.url


@pytest.fixture(scope="module")
def ddb(url: str) -> Any:
    return strict_client(url)


def provisioned(read: int, write: int) -> dict[str, Any]:
    return {"BillingMode": "PROVISIONED", "ProvisionedThroughput": {"ReadCapacityUnits": read, "WriteCapacityUnits": write}}


def test_provisioned_burst_exhausts_then_refills_on_the_clock(url: str, ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name, **provisioned(5, 1))
    for i in range(3):  # 3 x 98 units of the 300 seconds of burst a 1 WCU table keeps
        answer = ddb.put_item(TableName=table_name, Item={"pk": {"S": f"k{i}"}, "v": {"S": BIG}},
                              ReturnConsumedCapacity="TOTAL")
        assert answer["ConsumedCapacity"]["CapacityUnits"] == 98.0
    with pytest.raises(ClientError) as excinfo:
        ddb.put_item(TableName=table_name, Item={"pk": {"S": "k3"}, "v": {"S": BIG}})
    code, message, reasons = throttle_of(excinfo.value)
    assert (code, message) == ("ProvisionedThroughputExceededException", PROVISIONED_MESSAGE)
    assert reasons == [{"reason": "TableWriteProvisionedThroughputExceeded", "resource": ARN + table_name}]
    assert "Item" not in ddb.get_item(TableName=table_name, Key={"pk": {"S": "k3"}})  # nothing written
    advance(url, 300)
    ddb.put_item(TableName=table_name, Item={"pk": {"S": "k3"}, "v": {"S": BIG}})
    assert "Item" in ddb.get_item(TableName=table_name, Key={"pk": {"S": "k3"}})


def test_one_hot_key_throttles_on_demand_while_many_keys_do_not(url: str, ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name)
    for i in range(100):  # 100 keys, 2 units each: far below every ceiling
        ddb.put_item(TableName=table_name, Item={"pk": {"S": f"USER#{i}"}, "v": {"S": "z" * 1500}})
    written = 0
    with pytest.raises(ClientError) as excinfo:
        for _ in range(12):  # 293 units each: the partition's 1000 per second cannot keep up
            ddb.put_item(TableName=table_name, Item={"pk": {"S": "STATUS#ACTIVE"}, "v": {"S": "x" * 300_000}})
            written += 1
    assert written >= 3
    code, message, reasons = throttle_of(excinfo.value)
    assert (code, message) == ("ThrottlingException", ON_DEMAND_MESSAGE)
    assert reasons == [{"reason": "TableWriteKeyRangeThroughputExceeded", "resource": ARN + table_name}]
    status, hot = admin(url, f"/partita/v1/tables/{table_name}/hot-keys")
    assert status == 200
    top = hot["partition_keys"]["by_consumed_units"][0]
    assert top["key"] == {"pk": {"S": "STATUS#ACTIVE"}}
    assert hot["partition_keys"]["by_throttles"][0]["key"] == {"pk": {"S": "STATUS#ACTIVE"}}
    status, layout = admin(url, f"/partita/v1/tables/{table_name}/partitions")
    assert status == 200 and layout["partition_count"] == 8  # 12,000 / 3000 + 4000 / 1000 warm
    assert sum(p["throttled_requests"] for p in layout["partitions"]) == 1
    assert sum(p["item_count"] for p in layout["partitions"]) == 101
    hot_partition = [p for p in layout["partitions"] if p["throttled_requests"]][0]
    assert hot_partition["hot_keys"][0]["key"] == {"pk": {"S": "STATUS#ACTIVE"}}
    assert hot_partition["write_units_per_minute"] >= 293 * 3


def test_adaptive_capacity_lets_a_hot_partition_use_unused_table_capacity(url: str, ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name, **provisioned(6000, 1))  # 3 partitions: 2000 read units each
    ddb.put_item(TableName=table_name, Item={"pk": {"S": "hot"}, "v": {"S": "x" * 400_000}})
    for _ in range(21):  # 98 units each: past the partition's share, within its ceiling
        answer = ddb.get_item(TableName=table_name, Key={"pk": {"S": "hot"}}, ConsistentRead=True,
                              ReturnConsumedCapacity="TOTAL")
        assert answer["ConsumedCapacity"]["CapacityUnits"] == 98.0
    with pytest.raises(ClientError) as excinfo:
        for _ in range(500):
            ddb.get_item(TableName=table_name, Key={"pk": {"S": "hot"}}, ConsistentRead=True)
    code, message, reasons = throttle_of(excinfo.value)
    assert (code, message) == ("ProvisionedThroughputExceededException", PROVISIONED_MESSAGE)
    assert reasons == [{"reason": "TableReadKeyRangeThroughputExceeded", "resource": ARN + table_name}]
    _, layout = admin(url, f"/partita/v1/tables/{table_name}/partitions")
    assert layout["partition_count"] == 3


def test_a_throttled_index_throttles_the_table_write(url: str, ddb: Any, table_name: str) -> None:
    ddb.create_table(
        TableName=table_name, **provisioned(100, 1000),
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexes=[{
            "IndexName": "byG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"},
            "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
        }],
    )
    for i in range(3):
        ddb.put_item(TableName=table_name, Item={"pk": {"S": f"k{i}"}, "g": {"S": f"g{i}"}, "v": {"S": BIG}})
    with pytest.raises(ClientError) as excinfo:
        ddb.put_item(TableName=table_name, Item={"pk": {"S": "k3"}, "g": {"S": "g3"}, "v": {"S": BIG}})
    code, message, reasons = throttle_of(excinfo.value)
    assert (code, message) == ("ProvisionedThroughputExceededException", INDEX_MESSAGE)
    assert reasons == [{"reason": "IndexWriteProvisionedThroughputExceeded", "resource": ARN + table_name + "/index/byG"}]
    assert "Item" not in ddb.get_item(TableName=table_name, Key={"pk": {"S": "k3"}})
    # A write the index does not see costs the index nothing and goes through.
    ddb.put_item(TableName=table_name, Item={"pk": {"S": "k4"}, "v": {"S": BIG}})
    _, layout = admin(url, f"/partita/v1/tables/{table_name}/partitions?index=byG")
    assert layout["index"] == "byG" and layout["throttled_requests"] == 1
    assert admin(url, f"/partita/v1/tables/{table_name}/partitions?index=nope")[0] == 404


def test_batch_write_returns_throttled_requests_as_unprocessed(url: str, ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name, **provisioned(5, 1))
    requests = [{"PutRequest": {"Item": {"pk": {"S": f"k{i}"}, "v": {"S": BIG}}}} for i in range(5)]
    answer = ddb.batch_write_item(RequestItems={table_name: requests}, ReturnConsumedCapacity="TOTAL")
    assert answer["UnprocessedItems"] == {table_name: requests[3:]}
    assert answer["ConsumedCapacity"] == [{"TableName": table_name, "CapacityUnits": 294.0}]
    with pytest.raises(ClientError) as excinfo:  # nothing at all can be processed: the call fails
        ddb.batch_write_item(RequestItems=answer["UnprocessedItems"])
    assert throttle_of(excinfo.value)[0] == "ProvisionedThroughputExceededException"
    advance(url, 300)
    assert ddb.batch_write_item(RequestItems=answer["UnprocessedItems"])["UnprocessedItems"] == {}
    assert ddb.scan(TableName=table_name, Select="COUNT")["Count"] == 5


def test_batch_get_returns_throttled_keys_as_unprocessed(url: str, ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name, **provisioned(1, 1000))
    for i in range(14):
        put_patiently(url, ddb, TableName=table_name, Item={"pk": {"S": f"k{i}"}, "v": {"S": BIG}})
    keys = [{"pk": {"S": f"k{i}"}} for i in range(14)]
    answer = ddb.batch_get_item(RequestItems={table_name: {"Keys": keys, "ConsistentRead": True}})
    unprocessed = answer["UnprocessedKeys"][table_name]["Keys"]
    assert len(answer["Responses"][table_name]) == 12 and len(unprocessed) == 2  # 12 x 25 = 300 units of burst
    assert unprocessed == keys[12:]
    advance(url, 300)
    again = ddb.batch_get_item(RequestItems={table_name: {"Keys": unprocessed, "ConsistentRead": True}})
    assert len(again["Responses"][table_name]) == 2 and again["UnprocessedKeys"] == {}


def test_on_demand_maximum_throttles_with_its_reason(url: str, ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name, OnDemandThroughput={"MaxReadRequestUnits": 5, "MaxWriteRequestUnits": 50})
    ddb.put_item(TableName=table_name, Item={"pk": {"S": "a"}, "v": {"S": BIG}})  # a full bucket admits one
    with pytest.raises(ClientError) as excinfo:
        ddb.put_item(TableName=table_name, Item={"pk": {"S": "b"}, "v": {"S": BIG}})
    code, _, reasons = throttle_of(excinfo.value)
    assert code == "ThrottlingException"
    assert reasons == [{"reason": "TableWriteMaxOnDemandThroughputExceeded", "resource": ARN + table_name}]
    advance(url, 10)
    ddb.put_item(TableName=table_name, Item={"pk": {"S": "b"}, "v": {"S": BIG}})


def test_transactions_are_cancelled_when_throttled(url: str, ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name, **provisioned(5, 1))
    ddb.put_item(TableName=table_name, Item={"pk": {"S": "a"}, "v": {"S": BIG}})  # 98 of 300
    items = [{"Put": {"TableName": table_name, "Item": {"pk": {"S": f"t{i}"}, "v": {"S": BIG}}}} for i in range(2)]
    with pytest.raises(ClientError) as excinfo:  # 2 x 98 x 2 = 392 units: more than the 202 left
        ddb.transact_write_items(TransactItems=items)
    error = excinfo.value.response
    assert error["Error"]["Code"] == "TransactionCanceledException"
    codes = [r["Code"] for r in error["CancellationReasons"]]
    assert "ProvisionedThroughputExceeded" in codes
    assert ddb.scan(TableName=table_name, Select="COUNT")["Count"] == 1


def test_units_without_emulation_are_not_limited(ddb: Any, table_name: str) -> None:
    """The shared server of the suite runs without the flag: nothing is throttled there."""
    from conftest import client_for

    del ddb, table_name  # this test uses its own server
    srv = launch("--in-memory")
    try:
        client = client_for(srv.url)
        create_table(client, "tbl", **provisioned(1, 1))
        for i in range(6):
            client.put_item(TableName="tbl", Item={"pk": {"S": f"k{i}"}, "v": {"S": BIG}})
    finally:
        srv.stop()


def test_batch_paid_from_leases_throttles_at_the_partition_second(url: str, ddb: Any, table_name: str) -> None:
    """A batch's requests are charged in one meter call while leases pay, then one by one: the same cut.

    Keys of one partition of an on-demand table (8 partitions, 4000 write
    units a second): its leases pay five 10-unit requests (50 ms of its 1000
    units), the table's twenty, so batches alternate between requests paid
    from leases and requests that settle, until the partition's second runs dry.
    """
    create_table(ddb, table_name)
    _, layout = admin(url, f"/partita/v1/tables/{table_name}/partitions")
    end = layout["partitions"][0]["hash_end"]
    keys = [k for k in (f"k{i}" for i in range(2000))
            if int.from_bytes(partition_hash("S", k), "big") <= end][:125]
    value = "z" * 10_000  # 10 write units
    requests = [{"PutRequest": {"Item": {"pk": {"S": k}, "v": {"S": value}}}} for k in keys]
    began = time.monotonic()
    answers, unprocessed = [], []
    for at in range(0, 125, 25):
        batch = requests[at : at + 25]
        try:
            answer = ddb.batch_write_item(RequestItems={table_name: batch}, ReturnConsumedCapacity="TOTAL")
        except ClientError as error:
            # A batch none of whose requests the partition can pay is refused whole (as DynamoDB does),
            # which happens when the batches before it took less than 10 ms (no 10-unit refill).
            assert error.response["Error"]["Code"] == "ThrottlingException"
            unprocessed += batch
            continue
        answers.append(answer)
        unprocessed += answer["UnprocessedItems"].get(table_name, [])
    elapsed = time.monotonic() - began
    written = 125 - len(unprocessed)
    # The partition ran dry after its second's 1000 units (100 requests): nothing before is
    # refused, and after it only what wall time refilled meanwhile (10 ms a request) is written.
    first_refused = requests.index(unprocessed[0])
    assert first_refused >= 100, first_refused
    assert unprocessed == [r for r in requests[first_refused:] if r in unprocessed]  # in request order
    assert sum(a["ConsumedCapacity"][0]["CapacityUnits"] for a in answers) == 10.0 * written
    assert 100 <= written <= 100 + 1 + int(1000 * elapsed / 10), (written, elapsed)
    pages = ddb.get_paginator("scan").paginate(TableName=table_name, Select="COUNT")
    assert sum(page["Count"] for page in pages) == written
    advance(url, 1)
    assert ddb.batch_write_item(RequestItems={table_name: unprocessed[:25]})["UnprocessedItems"] == {}
