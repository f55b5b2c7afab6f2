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
