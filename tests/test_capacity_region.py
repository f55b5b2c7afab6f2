"""A full shared capacity region fails safe: a partition without a shared slot is still limited.

The region has a fixed number of slots (meter.SLOTS); past it a bucket is
kept per process instead of being left unlimited. The in-process server
(partita.testing.local) lets the test shrink the region to one slot.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from botocore.config import Config
from botocore.exceptions import ClientError
from capacity_helpers import throttle_of

from partita.engine.capacity import meter
from partita.testing import local

ITEM = "x" * (390 * 1024)  # 390 write units: a partition's 1000 a second admit two at once


def test_partitions_past_the_region_slots_are_still_limited(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(meter, "SLOTS", 1)
    with local(emulate_throughput=True, in_memory=True) as server:
        ddb: Any = server.client(config=Config(retries={"max_attempts": 1}))
        ddb.create_table(
            TableName="crowded", BillingMode="PAY_PER_REQUEST",
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        )
        ddb.put_item(TableName="crowded", Item={"pk": {"S": "first"}})  # takes the only slot
        admitted = 0
        began = time.monotonic()
        with pytest.raises(ClientError) as excinfo:
            for _ in range(20):  # one key: one partition, whose bucket has no shared slot
                ddb.put_item(TableName="crowded", Item={"pk": {"S": "hot"}, "v": {"S": ITEM}})
                admitted += 1
        code, _, reasons = throttle_of(excinfo.value)
        assert code == "ThrottlingException"
        assert reasons[0]["reason"] == "TableWriteKeyRangeThroughputExceeded"
        # The bucket's second (1000 units) and what refilled while writing, never more.
        assert admitted >= 2
        assert admitted * 390 <= 1000 + 1000 * (time.monotonic() - began) + 390
