"""Stream records are durable and shared: kill -9 mid-stream, and two workers serving one stream."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import Server, client_for, create_table, durable_store
from streams_helpers import read_stream, streams_client

S = lambda v: {"S": v}  # noqa: E731


def test_acknowledged_writes_keep_their_records_after_kill_9(
    start_server: Callable[..., Server], tmp_path: Path
) -> None:
    store = durable_store(tmp_path / "data")
    server = start_server(*store)
    ddb = client_for(server.url)
    arn = create_table(ddb, "crash", StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})[
        "TableDescription"]["LatestStreamArn"]
    acknowledged: list[str] = []
    stop = threading.Event()

    def writer() -> None:
        i = 0
        while not stop.is_set():
            try:
                ddb.put_item(TableName="crash", Item={"pk": S(f"k{i}")})
            except Exception:
                return
            acknowledged.append(f"k{i}")
            i += 1

    thread = threading.Thread(target=writer)
    thread.start()
    while len(acknowledged) < 200:
        pass
    server.kill()  # mid-stream
    stop.set()
    thread.join()
    server = start_server(*store)
    ddb, streams = client_for(server.url), streams_client(server.url)
    items = {i["pk"]["S"] for i in ddb.scan(TableName="crash")["Items"]}
    records = read_stream(streams, arn)
    recorded = [r["dynamodb"]["Keys"]["pk"]["S"] for r in records]
    assert set(acknowledged) <= items
    # Exactly one record per committed item: none lost, none for an uncommitted write.
    assert sorted(recorded) == sorted(items)
    sequence = [int(r["dynamodb"]["SequenceNumber"]) for r in records]
    assert sequence == sorted(sequence)


def test_two_workers_serve_one_stream(start_server: Callable[..., Server], tmp_path: Path) -> None:
    server = start_server("--data-dir", str(tmp_path / "data"), "--workers", "2")
    ddb = client_for(server.url)
    arn = create_table(ddb, "shared", StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"})[
        "TableDescription"]["LatestStreamArn"]

    def write(prefix: str) -> None:
        client = client_for(server.url)  # its own connections, spread over both workers
        for i in range(100):
            client.put_item(TableName="shared", Item={"pk": S(f"{prefix}{i}")})

    threads = [threading.Thread(target=write, args=(p,)) for p in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # Iterators handed out by one worker are accepted by the other: read with fresh clients.
    records: list[Any] = []
    for _ in range(3):
        records = read_stream(streams_client(server.url), arn)
    keys = [r["dynamodb"]["Keys"]["pk"]["S"] for r in records]
    assert sorted(keys) == sorted(f"{p}{i}" for p in "ab" for i in range(100))
    sequence = [int(r["dynamodb"]["SequenceNumber"]) for r in records]
    assert sequence == sorted(sequence) and len(set(sequence)) == 200


def test_streams_tail_prints_and_execs(endpoint: str, ddb: Any, table_name: str, tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    create_table(ddb, table_name, StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"})
    for i in range(3):
        ddb.put_item(TableName=table_name, Item={"pk": S(f"k{i}")})
    base = [sys.executable, "-m", "partita", "streams", "tail", table_name, "--endpoint", endpoint,
            "--from", "trim-horizon", "--exit-when-idle", "1", "--poll", "0.1"]
    out = subprocess.run(base, capture_output=True, text=True, timeout=60, check=True)
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    assert [r["dynamodb"]["Keys"]["pk"]["S"] for r in lines] == ["k0", "k1", "k2"]
    assert all(r["eventName"] == "INSERT" for r in lines)
    events = tmp_path / "events"
    handler = f"{sys.executable} -c \"import sys; open({str(events)!r}, 'a').write(sys.stdin.read() + chr(10))\""
    subprocess.run(base + ["--exec", handler], capture_output=True, text=True, timeout=60, check=True)
    [event] = [json.loads(line) for line in events.read_text().splitlines()]
    assert [r["dynamodb"]["NewImage"]["pk"]["S"] for r in event["Records"]] == ["k0", "k1", "k2"]
    assert all(r["eventSourceARN"].startswith(f"arn:aws:dynamodb:us-east-1:000000000000:table/{table_name}/stream/")
               for r in event["Records"])


def test_streams_tail_follows_shards_past_the_first_describe_page(endpoint: str, ddb: Any, table_name: str) -> None:
    """A stream of 105 shards: DescribeStream lists 100 at a time, and the tail pages to see them all."""
    import json
    import subprocess
    import sys

    create_table(ddb, table_name, BillingMode="PROVISIONED",
                 ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 104999},
                 StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})
    keys = [f"k{i}" for i in range(150)]
    for key in keys:
        ddb.put_item(TableName=table_name, Item={"pk": S(key)})
    base = [sys.executable, "-m", "partita", "streams", "tail", table_name, "--endpoint", endpoint,
            "--from", "trim-horizon", "--exit-when-idle", "1", "--poll", "0.1"]
    out = subprocess.run(base, capture_output=True, text=True, timeout=120, check=True)
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    assert sorted(r["dynamodb"]["Keys"]["pk"]["S"] for r in lines) == sorted(keys)
