"""The server clock: read and moved through the admin API and `partita clock`, shared by workers."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import Server, durable_store

from partita.cli.options import parse_duration


def admin(url: str, path: str, body: Any = None, method: str | None = None) -> tuple[int, Any]:
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    # Admin requests that change the server are JSON (a browser page cannot send that cross-site).
    request = urllib.request.Request(url + path, data=data, method=method or ("POST" if data else "GET"),
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def clock_cli(*args: str) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-m", "partita", "clock", *args], capture_output=True, text=True, check=True)
    doc: dict[str, Any] = json.loads(out.stdout)
    return doc


def test_parse_duration() -> None:
    assert parse_duration("90s") == 90
    assert parse_duration("25h") == 25 * 3600
    assert parse_duration("1h30m") == 5400
    assert parse_duration("2d") == 172800
    assert parse_duration("1.5") == 1.5


def test_clock_show_and_advance(start_server: Callable[..., Server]) -> None:
    server = start_server("--in-memory")
    status, doc = admin(server.url, "/partita/v1/clock")
    assert status == 200 and doc["offset_seconds"] == 0
    assert abs(doc["now"] - time.time()) < 5
    status, doc = admin(server.url, "/partita/v1/clock", {"advance_seconds": 90})
    assert status == 200 and doc["offset_seconds"] == 90
    assert abs(doc["now"] - time.time() - 90) < 5
    doc = clock_cli("advance", "25h", "--endpoint", server.url)
    assert doc["offset_seconds"] == 90 + 25 * 3600
    doc = clock_cli("show", "--endpoint", server.url)
    assert doc["offset_seconds"] == 90 + 25 * 3600


def test_clock_refuses_bad_requests(start_server: Callable[..., Server]) -> None:
    server = start_server("--in-memory")
    for body in ({"advance_seconds": -1}, {"advance_seconds": "10"}, {}, b"not json", {"advance_seconds": True}):
        status, doc = admin(server.url, "/partita/v1/clock", body)
        assert status == 400 and "error" in doc, body
    status, doc = admin(server.url, "/partita/v1/nothing")
    assert status == 404
    status, doc = admin(server.url, "/partita/v1/clock", method="DELETE")
    assert status == 405
    assert admin(server.url, "/partita/v1/clock")[1]["offset_seconds"] == 0


def test_clock_offset_flag_and_restart(start_server: Callable[..., Server], tmp_path: Path) -> None:
    """--clock-offset starts ahead; an on-disk store keeps its offset across a restart (and kill -9)."""
    store = durable_store(tmp_path / "data")
    server = start_server(*store, "--clock-offset", "3600")
    assert admin(server.url, "/partita/v1/clock")[1]["offset_seconds"] == 3600
    admin(server.url, "/partita/v1/clock", {"advance_seconds": 60})
    server.kill()
    server = start_server(*store)
    assert admin(server.url, "/partita/v1/clock")[1]["offset_seconds"] == 3660


def test_workers_share_the_clock(start_server: Callable[..., Server], tmp_path: Path) -> None:
    server = start_server("--data-dir", str(tmp_path / "data"), "--workers", "2")
    admin(server.url, "/partita/v1/clock", {"advance_seconds": 500})
    # New connections land on either worker; every one must see the advance at once.
    for _ in range(20):
        assert admin(server.url, "/partita/v1/clock")[1]["offset_seconds"] == 500


def test_admin_api_under_uvicorn(start_server: Callable[..., Server]) -> None:
    server = start_server("--in-memory", "--http", "uvicorn")
    assert admin(server.url, "/partita/v1/clock", {"advance_seconds": 5})[1]["offset_seconds"] == 5


