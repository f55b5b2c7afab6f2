"""A full shared capacity region fails safe: a partition without a shared slot is still limited.

The region has a fixed number of slots (meter.SLOTS); past it a bucket is
kept per process instead of being left unlimited. The in-process server
(partita.testing.local) lets the test shrink the region to one slot.
"""

from __future__ import annotations

import threading
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
        admitted: list[int] = []
        throttled: list[tuple[str, list[dict[str, str]]]] = []
        began = time.monotonic()

        def writer() -> None:  # one key: one partition, whose bucket has no shared slot
            client: Any = server.client(config=Config(retries={"max_attempts": 1}))
            for _ in range(8):
                try:
                    client.put_item(TableName="crowded", Item={"pk": {"S": "hot"}, "v": {"S": ITEM}})
                    admitted.append(1)
                except ClientError as error:
                    code, _, reasons = throttle_of(error)
                    throttled.append((code, reasons))

        threads = [threading.Thread(target=writer) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.monotonic() - began
        # The bucket's second (1000 units), what refilled meanwhile, and one request per writer
        # admitted while the bucket was full; unlimited, all 32 (12,480 units) would pass.
        assert len(admitted) >= 2
        assert len(admitted) * 390 <= 1000 + 1000 * elapsed + 4 * 390, (len(admitted), elapsed)
        assert throttled and all(code == "ThrottlingException" for code, _ in throttled)
        assert throttled[0][1][0]["reason"] == "TableWriteKeyRangeThroughputExceeded"
