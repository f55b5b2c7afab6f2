"""kinesalite (a Kinesis-compatible server from npm) for the Kinesis streaming destination tests.

Installed by `./dev test` from tests/kinesis/package-lock.json (`npm ci`), like
the JavaScript SDK of tests/clients/js; tests that need it are skipped, with
the reason, when it is not installed. Each test gets its own kinesalite, in
memory, on a free port, and reads the delivered records back with boto3's
Kinesis client.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config

CLI = Path(__file__).parent / "kinesis" / "node_modules" / "kinesalite" / "cli.js"
#: kinesalite started through a wrapper that survives clients killed mid-request (see the file).
SERVE = Path(__file__).parent / "kinesis" / "serve.js"


def available() -> bool:
    return CLI.is_file() and shutil.which("node") is not None


needs_kinesalite = pytest.mark.skipif(
    not available(), reason="kinesalite is not installed (./dev test installs it: npm ci in tests/kinesis)")


@dataclass
class Kinesalite:
    process: subprocess.Popen[bytes]
    url: str
    client: Any

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)

    def create_stream(self, name: str, shards: int = 1) -> str:
        self.client.create_stream(StreamName=name, ShardCount=shards)
        deadline = time.monotonic() + 20
        while True:
            summary = self.client.describe_stream_summary(StreamName=name)["StreamDescriptionSummary"]
            if summary["StreamStatus"] == "ACTIVE":
                return str(summary["StreamARN"])
            if time.monotonic() > deadline:
                raise AssertionError("stream never became ACTIVE")
            time.sleep(0.05)

    def records(self, name: str) -> list[dict[str, Any]]:
        """Every record of every shard, decoded, in shard order then sequence order."""
        out: list[dict[str, Any]] = []
        shards = self.client.list_shards(StreamName=name)["Shards"]
        for shard in shards:
            iterator = self.client.get_shard_iterator(
                StreamName=name, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
            while iterator:
                page = self.client.get_records(ShardIterator=iterator, Limit=10000)
                for record in page["Records"]:
                    out.append({"partitionKey": record["PartitionKey"], "shard": shard["ShardId"],
                                **json.loads(record["Data"])})
                if not page["Records"]:
                    break
                iterator = page.get("NextShardIterator")
        return out


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start_kinesalite() -> Kinesalite:
    port = _free_port()
    process = subprocess.Popen(
        ["node", str(SERVE), "--port", str(port), "--createStreamMs", "0", "--deleteStreamMs", "0",
         "--updateStreamMs", "0", "--shardLimit", "1000"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    client = boto3.client("kinesis", endpoint_url=url, region_name="us-east-1",
                          config=Config(retries={"max_attempts": 3}))
    deadline = time.monotonic() + 20
    while True:
        try:
            client.list_streams()
            return Kinesalite(process, url, client)
        except Exception:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise
            time.sleep(0.05)
