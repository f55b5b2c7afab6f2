"""DescribeLimits reports the per-table quota the throughput emulation enforces on on-demand tables."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError
from capacity_helpers import advance, strict_client, throttle_of
from conftest import STORE, Server, create_table, launch

ARN = "arn:aws:dynamodb:us-east-1:000000000000:table/"
REQUEST_LIMIT = (
    "Throughput exceeds the current throughput limit for your account. "
    "Please contact AWS Support at https://aws.amazon.com/support request a limit increase"
)
#: 45 write units each
ITEM = "q" * (45 * 1024 - 100)


@pytest.fixture(scope="module")
def quota_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    store = ["--data-dir", str(tmp_path_factory.mktemp("quota"))] if STORE == "sqlite" else ["--in-memory"]
    srv = launch(*store, "--emulate-throughput", "--table-max-units", "100")
    yield srv
    srv.stop()


def test_describe_limits_reports_the_quota_the_emulation_enforces(quota_server: Server, table_name: str) -> None:
    ddb: Any = strict_client(quota_server.url)
    limits = ddb.describe_limits()
    assert {k: v for k, v in limits.items() if k != "ResponseMetadata"} == {
        "AccountMaxReadCapacityUnits": 80_000, "AccountMaxWriteCapacityUnits": 80_000,
        "TableMaxReadCapacityUnits": 100, "TableMaxWriteCapacityUnits": 100,
    }
    create_table(ddb, table_name)  # on-demand: its 4,000 warm writes a second are capped at the quota
    for i in range(2):
        answer = ddb.put_item(TableName=table_name, Item={"pk": {"S": f"k{i}"}, "v": {"S": ITEM}},
                              ReturnConsumedCapacity="TOTAL")
        assert answer["ConsumedCapacity"]["CapacityUnits"] == 45.0
    with pytest.raises(ClientError) as excinfo:  # 135 units in a second: over the 100 a table may use
        ddb.put_item(TableName=table_name, Item={"pk": {"S": "k2"}, "v": {"S": ITEM}})
    code, message, reasons = throttle_of(excinfo.value)
    assert (code, message) == ("RequestLimitExceeded", REQUEST_LIMIT)
    assert reasons == [{"reason": "TableWriteAccountLimitExceeded", "resource": ARN + table_name}]
    assert "Item" not in ddb.get_item(TableName=table_name, Key={"pk": {"S": "k2"}})
    advance(quota_server.url, 1)
    ddb.put_item(TableName=table_name, Item={"pk": {"S": "k2"}, "v": {"S": ITEM}})


def test_default_limits_without_the_flag(ddb: Any) -> None:
    limits = ddb.describe_limits()
    assert (limits["TableMaxReadCapacityUnits"], limits["AccountMaxWriteCapacityUnits"]) == (40_000, 80_000)


def _provisioned(ddb: Any, name: str, read: int, write: int, gsi_write: int = 0) -> dict[str, Any]:
    request: dict[str, Any] = {
        "TableName": name,
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "ProvisionedThroughput": {"ReadCapacityUnits": read, "WriteCapacityUnits": write},
    }
    if gsi_write:
        request["GlobalSecondaryIndexes"] = [{
            "IndexName": "gsi", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"},
            "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": gsi_write},
        }]
    return request


def test_account_maximum_of_provisioned_capacity_is_enforced(quota_server: Server, table_name: str) -> None:
    ddb: Any = strict_client(quota_server.url)
    first, second = f"{table_name}-a", f"{table_name}-b"
    ddb.create_table(**_provisioned(ddb, first, 10, 50_000, gsi_write=20_000))
    try:
        with pytest.raises(ClientError) as excinfo:  # 70,000 + 10,001 write units
            ddb.create_table(**_provisioned(ddb, second, 10, 10_001))
        assert excinfo.value.response["Error"]["Code"] == "LimitExceededException"
        assert excinfo.value.response["Error"]["Message"] == (
            "Subscriber limit exceeded: The requested write capacity units would bring the account's "
            "provisioned total to 80001, over the account limit of 80000"
        )
        assert second not in ddb.list_tables()["TableNames"]
        ddb.create_table(**_provisioned(ddb, second, 10, 10_000))  # exactly the maximum
        with pytest.raises(ClientError) as excinfo:
            ddb.update_table(TableName=second, ProvisionedThroughput={"ReadCapacityUnits": 10,
                                                                      "WriteCapacityUnits": 10_001})
        assert excinfo.value.response["Error"]["Code"] == "LimitExceededException"
        assert ddb.describe_table(TableName=second)["Table"]["ProvisionedThroughput"]["WriteCapacityUnits"] == 10_000
        ddb.update_table(TableName=first, BillingMode="PAY_PER_REQUEST")  # on demand counts nothing
        ddb.update_table(TableName=second, ProvisionedThroughput={"ReadCapacityUnits": 10,
                                                                  "WriteCapacityUnits": 70_000})
    finally:
        for name in (first, second):
            try:
                ddb.delete_table(TableName=name)
            except ClientError:
                pass
