"""Helpers of the throughput tests: clients that never retry, the clock, the admin API."""

from __future__ import annotations

import json
import time
import urllib.request
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError


def strict_client(url: str) -> Any:
    """A client that sends each request once, so a throttle is seen, not retried away."""
    return boto3.client(
        "dynamodb",
        endpoint_url=url,
        region_name="us-east-1",
        config=Config(retries={"total_max_attempts": 1, "mode": "standard"}),
    )


def admin(url: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url + path, data=data, method="GET" if body is None else "POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def advance(url: str, seconds: float) -> None:
    status, _ = admin(url, "/partita/v1/clock", {"advance_seconds": seconds})
    assert status == 200


def throttle_of(error: ClientError) -> tuple[str, str, list[dict[str, str]]]:
    """(code, message, reasons) of a throttling error, whichever member spells the reasons."""
    response = error.response
    reasons = response.get("ThrottlingReasons") or response.get("throttlingReasons") or []
    return response["Error"]["Code"], response["Error"]["Message"], reasons


def put_patiently(url: str, ddb: Any, **request: Any) -> None:
    """Set-up writes: a throttled one moves the clock a second on and tries again."""
    for _ in range(50):
        try:
            ddb.put_item(**request)
            return
        except ClientError as error:
            if error.response["Error"]["Code"] not in ("ProvisionedThroughputExceededException", "ThrottlingException"):
                raise
            advance(url, 1)
    raise AssertionError("still throttled after 50 seconds")


def wait_for(check: Any, timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.1)
