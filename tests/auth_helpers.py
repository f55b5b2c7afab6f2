"""Principals, signed raw requests and boto3 clients for the `--auth` tests."""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import boto3
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials

REGION = "us-east-1"
ALLOW_ALL = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}


def user(name: str, *statements: dict[str, Any], token: str | None = None, account: str | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": name,
        "access_key_id": f"AKIA{name.upper()}",
        "secret_access_key": f"{name}-secret",
        "policies": [{"Version": "2012-10-17", "Statement": list(statements)}] if statements else [],
    }
    if token is not None:
        entry["session_token"] = token
    if account is not None:
        entry["account_id"] = account
    return entry


def write_auth(path: Path, *users: dict[str, Any]) -> Path:
    path.write_text(json.dumps({"users": list(users)}))
    return path


def client(url: str, name: str, secret: str | None = None, service: str = "dynamodb", **extra: Any) -> Any:
    return boto3.client(
        service,
        endpoint_url=url,
        region_name=extra.pop("region", REGION),
        aws_access_key_id=f"AKIA{name.upper()}",
        aws_secret_access_key=secret if secret is not None else f"{name}-secret",
        config=Config(retries={"max_attempts": 1}),
        **extra,
    )


def signed_headers(
    url: str, name: str, body: bytes, target: str | None, path: str = "/", method: str = "POST",
    extra: dict[str, str] | None = None,
) -> dict[str, str]:
    """Headers of a request signed by botocore's own SigV4 signer, as an SDK signs it."""
    headers = {"Content-Type": "application/x-amz-json-1.0", **(extra or {})}
    if target is not None:
        headers["X-Amz-Target"] = target
    request = AWSRequest(method=method, url=url.rstrip("/") + path, data=body, headers=headers)
    SigV4Auth(Credentials(f"AKIA{name.upper()}", f"{name}-secret"), "dynamodb", REGION).add_auth(request)
    return dict(request.headers.items())


def send(url: str, headers: dict[str, str], body: bytes, path: str = "/", method: str = "POST",
         conn: http.client.HTTPConnection | None = None) -> tuple[int, Any]:
    parsed = urlparse(url)
    own = conn is None
    conn = conn or http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        raw = response.read()
        try:
            return response.status, json.loads(raw) if raw else None
        except ValueError:
            return response.status, raw
    finally:
        if own:
            conn.close()


def create(ddb: Any, name: str, **extra: Any) -> None:
    ddb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
        **extra,
    )
