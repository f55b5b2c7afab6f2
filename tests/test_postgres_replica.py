"""`--read-replica`: eventually consistent reads from a streaming replica, everything else on the primary.

The test pauses the replica's WAL replay, so the replica is a known state
behind the primary: reads that may be eventual must show that old state,
strongly consistent reads and writes the new one.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from typing import Any

import psycopg
from conftest import Server, client_for, needs_postgres
from pg_helpers import CLUSTER, own_cluster

pytestmark = needs_postgres()


def _value(ddb: Any, consistent: bool) -> str | None:
    item = ddb.get_item(TableName="rep", Key={"pk": {"S": "a"}}, ConsistentRead=consistent).get("Item")
    return None if item is None else item["v"]["S"]


def _wait_for(ddb: Any, value: str) -> None:
    deadline = time.monotonic() + 20
    while _value(ddb, False) != value:
        assert time.monotonic() < deadline, "the replica did not catch up"
        time.sleep(0.05)


def test_eventual_reads_come_from_the_replica(start_server: Callable[..., Server]) -> None:
    with own_cluster() as (url, folder):
        replica_dir = folder.parent / "replica"
        replica = subprocess.run(["bash", str(CLUSTER), "replica", str(replica_dir), str(folder)],
                                 capture_output=True, text=True, check=True).stdout.strip()
        try:
            server = start_server("--backend", url, "--read-replica", replica)
            ddb = client_for(server.url)
            ddb.create_table(
                TableName="rep",
                AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                      {"AttributeName": "g", "AttributeType": "S"}],
                KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                GlobalSecondaryIndexes=[{"IndexName": "by-g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                         "Projection": {"ProjectionType": "ALL"}}],
                BillingMode="PAY_PER_REQUEST",
            )
            ddb.put_item(TableName="rep", Item={"pk": {"S": "a"}, "g": {"S": "x"}, "v": {"S": "old"}})
            _wait_for(ddb, "old")
            with psycopg.connect(replica, autocommit=True) as standby:
                standby.execute("SELECT pg_wal_replay_pause()")
                ddb.update_item(TableName="rep", Key={"pk": {"S": "a"}}, UpdateExpression="SET v = :v",
                                ExpressionAttributeValues={":v": {"S": "new"}})
                assert _value(ddb, True) == "new"
                assert _value(ddb, False) == "old"

                def query(consistent: bool, **index: str) -> list[str]:
                    out = ddb.query(TableName="rep", KeyConditionExpression="#k = :k",
                                    ExpressionAttributeNames={"#k": "g" if index else "pk"},
                                    ExpressionAttributeValues={":k": {"S": "x" if index else "a"}},
                                    **({"ConsistentRead": consistent} if not index else index))
                    return [item["v"]["S"] for item in out["Items"]]

                assert query(True) == ["new"]
                assert query(False) == ["old"]
                assert query(False, IndexName="by-g") == ["old"]
                assert [i["v"]["S"] for i in ddb.scan(TableName="rep", ConsistentRead=True)["Items"]] == ["new"]
                assert [i["v"]["S"] for i in ddb.scan(TableName="rep")["Items"]] == ["old"]
                # A conditional write decides on the primary's item, whatever the replica shows.
                ddb.put_item(TableName="rep", Item={"pk": {"S": "a"}, "g": {"S": "x"}, "v": {"S": "newer"}},
                             ConditionExpression="v = :v", ExpressionAttributeValues={":v": {"S": "new"}})
                standby.execute("SELECT pg_wal_replay_resume()")
            _wait_for(ddb, "newer")
        finally:
            subprocess.run(["bash", str(CLUSTER), "stop", str(replica_dir)], capture_output=True, check=False)


def test_read_replica_needs_a_postgresql_backend(tmp_path: Any) -> None:
    import sys

    out = subprocess.run([sys.executable, "-m", "partita", "serve", "--data-dir", str(tmp_path),
                          "--read-replica", "postgresql://x@127.0.0.1:1/x"], capture_output=True, text=True, timeout=60)
    assert out.returncode != 0
    assert "--read-replica needs --backend" in out.stderr
