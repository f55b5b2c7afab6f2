"""Throughput limits shared by PostgreSQL servers: two servers over one database share a partition's ceiling.

Runs in the PostgreSQL pass of `./dev test`. Items of 100 KB cost 100 write
units, so one partition's 1000 write units a second admit ten of them a
second (plus the one second its bucket holds): writers on both servers
offer far more than that, and together they must get about ten a second,
not twenty (what two servers with their own buckets would admit).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from botocore.exceptions import ClientError
from capacity_helpers import throttle_of
from conftest import Server, client_for, create_table, fresh_database, needs_postgres

pytestmark = needs_postgres()

ITEM = "x" * (100 * 1024 - 200)  # with the key and the attribute name, just under 100 KB: 100 WCU
SECONDS = 4.0


def test_two_servers_share_one_partition_ceiling(start_server: Callable[..., Server]) -> None:
    url = fresh_database()
    servers = [start_server("--backend", url, "--emulate-throughput") for _ in range(2)]
    clients = [client_for(s.url) for s in servers]
    create_table(clients[0], "hot")  # on demand: 8 partitions of 1000 WCU, the table's 4000 WCU never binding
    deadline = time.monotonic() + 5
    while "hot" not in clients[1].list_tables()["TableNames"]:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    done = {0: 0, 1: 0}
    throttled = {0: 0, 1: 0}
    lock = threading.Lock()
    end = time.monotonic() + SECONDS

    def writer(which: int) -> None:
        ddb = client_for(servers[which].url)
        while time.monotonic() < end:
            try:
                ddb.put_item(TableName="hot", Item={"pk": {"S": "the-hot-key"}, "v": {"S": ITEM}})
                with lock:
                    done[which] += 1
            except ClientError as error:
                code, _, reasons = throttle_of(error)
                assert code == "ThrottlingException"
                assert reasons[0]["reason"] == "TableWriteKeyRangeThroughputExceeded"
                with lock:
                    throttled[which] += 1

    threads = [threading.Thread(target=writer, args=(i % 2,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    total = done[0] + done[1]
    # One bucket: 10 a second plus the second's worth it starts with (10), plus what each server
    # may hold borrowed (0.1 s of the rate: one item) and rounding at the edges.
    ceiling = 10 * SECONDS + 10 + 4
    assert total <= ceiling, (done, throttled)
    assert total >= 10 * SECONDS * 0.6, (done, throttled)  # the servers did not throttle each other out
    assert done[0] and done[1] and throttled[0] and throttled[1], (done, throttled)
