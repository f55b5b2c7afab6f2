"""Servers of several regions and boto3 clients signed for each (the global-table tests)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config
from conftest import STORE, Server, fresh_database, launch

REGIONS = ("us-east-1", "eu-west-1", "ap-south-1")


def store_args(folder: Path, tag: str = "regions") -> list[str]:
    """The store under test (PARTITA_TEST_STORE) for a server of the region tests."""
    if STORE == "postgres":
        return ["--backend", fresh_database(tag)]
    if STORE == "sqlite":
        return ["--data-dir", str(folder)]
    return ["--in-memory"]


def launch_regions(folder: Path, *args: str, regions: tuple[str, ...] = REGIONS) -> Server:
    return launch(*store_args(folder), "--regions", ",".join(regions), *args)


def client(url: str, region: str, service: str = "dynamodb") -> Any:
    return boto3.client(
        service,
        endpoint_url=url,
        region_name=region,
        aws_access_key_id="partita",
        aws_secret_access_key="partita",
        config=Config(retries={"max_attempts": 1}),
    )


def clients(url: str, regions: tuple[str, ...] = REGIONS) -> dict[str, Any]:
    return {region: client(url, region) for region in regions}


def key_table(ddb: Any, name: str, **extra: Any) -> dict[str, Any]:
    """A pay-per-request table keyed by `pk` (S)."""
    extra.setdefault("BillingMode", "PAY_PER_REQUEST")
    return ddb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        **extra,
    )["TableDescription"]


def admin(url: str, resource: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    """`/partita/v1/<resource>`: GET without a body, POST with one."""
    import json
    import urllib.request

    request = urllib.request.Request(
        f"{url}/partita/v1/{resource}", data=None if body is None else json.dumps(body).encode(),
        method="GET" if body is None else "POST", headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        doc: dict[str, Any] = json.loads(response.read())
        return doc


def settle(url: str, advance: float = 0.0) -> dict[str, Any]:
    """Move the server clock `advance` seconds, then run replica jobs and replication to rest."""
    if advance:
        admin(url, "clock", {"advance_seconds": advance})
    return admin(url, "replication", {"settle": True})


def hold(url: str, on: bool = True) -> dict[str, Any]:
    return admin(url, "replication", {"hold": on})


def replicas(ddb: Any, name: str) -> list[tuple[str, str]]:
    """(RegionName, ReplicaStatus) of DescribeTable's Replicas, in its order."""
    return [(r["RegionName"], r["ReplicaStatus"]) for r in ddb.describe_table(TableName=name)["Table"].get("Replicas", [])]
