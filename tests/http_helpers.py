"""Raw HTTP requests for wire-level tests, and a fixture running them on both servers."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlparse

import pytest
from conftest import FAKE_AUTH, RawResponse, launch


@pytest.fixture(scope="module", params=["partita", "uvicorn"])
def any_server(request: pytest.FixtureRequest, endpoint: str) -> Iterator[str]:
    """The URL of each HTTP server in turn: behaviour both must share."""
    if request.param == "partita":
        yield endpoint
        return
    server = launch("--in-memory", "--http", "uvicorn")
    yield server.url
    server.stop()


def dynamodb_headers(operation: str | None) -> list[tuple[str, str]]:
    headers = [
        ("Content-Type", "application/x-amz-json-1.0"),
        ("Authorization", FAKE_AUTH),
        ("X-Amz-Date", "20260101T000000Z"),
    ]
    if operation is not None:
        headers.append(("X-Amz-Target", f"DynamoDB_20120810.{operation}"))
    return headers


def send(
    url: str,
    operation: str | None = None,
    body: bytes | dict[str, Any] = b"",
    *,
    method: str = "POST",
    path: str = "/",
    headers: list[tuple[str, str]] | None = None,
    dynamodb: bool = True,
) -> RawResponse:
    """One request with exactly these headers (repeats allowed, nothing added but Host).

    A header in `headers` replaces DynamoDB's default of that name rather
    than repeating it (of a repeated header the server reads the first).
    http.client adds no Accept-Encoding here, so compression is only what a
    test asks for.
    """
    parsed = urlparse(url)
    payload = json.dumps(body).encode() if isinstance(body, dict) else body
    given = {name.lower() for name, _ in headers or []}
    defaults = [(name, value) for name, value in dynamodb_headers(operation) if name.lower() not in given]
    sent = (defaults if dynamodb else []) + (headers or [])
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
    try:
        names = {name.lower() for name, _ in sent}
        conn.putrequest(method, path, skip_host="host" in names, skip_accept_encoding=True)
        for name, value in sent:
            conn.putheader(name, value)
        if payload or method == "POST":
            conn.putheader("Content-Length", str(len(payload)))
        conn.endheaders(payload or None)
        response = conn.getresponse()
        return RawResponse(response.status, {k.lower(): v for k, v in response.getheaders()}, response.read())
    finally:
        conn.close()
