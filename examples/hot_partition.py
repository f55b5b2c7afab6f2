"""DynamoDB's hot-partition lesson in one command: `python examples/hot_partition.py`.

Starts `partita serve --in-memory --emulate-throughput`, then writes the same
load twice for two seconds: once to one shared key (a status flag,
`STATUS#ACTIVE`), once spread over write shards (`STATUS#ACTIVE#0..9`).
The shared key is routed to one partition whose 1000 write units per second
cannot keep up, whatever the table's capacity; the sharded keys spread over
the table's partitions and succeed. It prints the throttle counts and the
partition map after each run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

ITEM = "x" * 50_000  # 49 write units a put


def start() -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "partita", "serve", "--in-memory", "--port", "0", "--emulate-throughput"],
        stdout=subprocess.PIPE, text=True,
    )
    assert process.stdout is not None
    return process, process.stdout.readline().split()[-1]


def run(ddb: Any, table: str, key_of: Any, seconds: float = 2.0) -> tuple[int, int]:
    done = throttled = 0
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        try:
            ddb.put_item(TableName=table, Item={"pk": {"S": key_of(n)}, "v": {"S": ITEM}})
            done += 1
        except ClientError as error:
            if error.response["Error"]["Code"] not in ("ThrottlingException", "ProvisionedThroughputExceededException"):
                raise
            throttled += 1
        n += 1
    return done, throttled


def show_map(url: str, table: str) -> None:
    with urllib.request.urlopen(f"{url}/partita/v1/tables/{table}/partitions") as answer:
        layout = json.loads(answer.read())
    print(f"  {'partition':>9} {'items':>6} {'write units/min':>16} {'throttled':>9}  hottest key")
    for part in layout["partitions"]:
        hot = part["hot_keys"][0]["key"]["pk"]["S"] if part["hot_keys"] else ""
        print(f"  {part['number']:>9} {part['item_count']:>6} {part['write_units_per_minute']:>16.0f} "
              f"{part['throttled_requests']:>9}  {hot}")


def main() -> None:
    process, url = start()
    try:
        ddb = boto3.client("dynamodb", endpoint_url=url, region_name="us-east-1",
                           aws_access_key_id="any", aws_secret_access_key="any",
                           config=Config(retries={"total_max_attempts": 1, "mode": "standard"}))
        for table, key_of, label in (
            ("flags", lambda n: "STATUS#ACTIVE", "one shared key STATUS#ACTIVE"),
            ("sharded", lambda n: f"STATUS#ACTIVE#{n % 10}", "write sharding STATUS#ACTIVE#0..9"),
        ):
            ddb.create_table(TableName=table, BillingMode="PAY_PER_REQUEST",
                             KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                             AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}])
            done, throttled = run(ddb, table, key_of)
            print(f"{label}: {done} writes succeeded, {throttled} throttled")
            show_map(url, table)
    finally:
        process.terminate()
        process.wait(10)


if __name__ == "__main__":
    main()
