"""Brute-force throttling of `POST /console/login`: per address and per key, on wall time, shared."""

from __future__ import annotations

from pathlib import Path

import pytest
from auth_helpers import ALLOW_ALL, user, write_auth
from conftest import launch
from test_console_login import Answer, Browser

from partita.console import throttle
from partita.console.throttle import LIMIT, WINDOW, Throttle
from partita.storage.memory import MemoryStore

WRONG = "The access key id or the secret access key is wrong."


def _users(tmp: Path) -> Path:
    return write_auth(tmp / "users.json", *(user(name, *ALLOW_ALL["Statement"])
                                            for name in ("admin", "other", "third")))


def _throttled(answer: Answer) -> int:
    assert answer.status == 429, answer.text
    assert "Too many failed sign-ins: try again in " in answer.text
    assert "partita_session" not in "".join(answer.cookies)
    wait = int(answer.headers["retry-after"])
    assert 1 <= wait <= WINDOW
    return wait


@pytest.mark.parametrize("key", ["AKIAADMIN", "AKIANOBODY"])
def test_failures_for_one_key_throttle_it_even_with_the_right_secret(tmp_path: Path, key: str) -> None:
    """A known and an unknown key are throttled alike: the answer tells nothing about existence."""
    srv = launch("--in-memory", "--auth", str(_users(tmp_path)))
    try:
        agent = Browser(srv.url)
        for _ in range(LIMIT):
            answer = agent.sign_in(key, "guess")
            assert answer.status == 403 and WRONG in answer.text
        _throttled(agent.sign_in(key, "guess"))
        _throttled(agent.sign_in(key, "admin-secret"))  # the right secret changes nothing
        assert agent.send("/console").status == 303  # still signed out
    finally:
        srv.stop()


def test_failures_from_one_address_throttle_every_key_from_it(tmp_path: Path) -> None:
    srv = launch("--in-memory", "--auth", str(_users(tmp_path)))
    try:
        agent = Browser(srv.url)
        for i in range(LIMIT):
            assert agent.sign_in(f"AKIASPRAY{i}", "guess").status == 403
        _throttled(agent.sign_in("AKIAOTHER", "other-secret"))
    finally:
        srv.stop()


def test_the_count_is_shared_by_workers(tmp_path: Path) -> None:
    srv = launch("--data-dir", str(tmp_path / "data"), "--workers", "2", "--auth", str(_users(tmp_path)))
    try:
        # Each sign-in is new connections, which the kernel spreads over the workers.
        for _ in range(LIMIT):
            assert Browser(srv.url).sign_in("AKIAADMIN", "guess").status == 403
        for _ in range(4):
            _throttled(Browser(srv.url).sign_in("AKIAADMIN", "admin-secret"))
    finally:
        srv.stop()


def test_the_window_passes_on_wall_time_and_a_success_restarts_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1_000_000.0]
    monkeypatch.setattr(throttle, "wall_now", lambda: now[0])
    guard = Throttle(MemoryStore())
    for _ in range(LIMIT):
        assert guard.wait("10.0.0.1", "AKIAADMIN") is None
        guard.failed("10.0.0.1", "AKIAADMIN")
    assert guard.wait("10.0.0.1", "AKIAADMIN") == WINDOW
    assert guard.wait("10.0.0.2", "AKIAADMIN") == WINDOW  # by key, from anywhere
    assert guard.wait("10.0.0.1", "AKIAOTHER") == WINDOW  # by address, for any key
    assert guard.wait("10.0.0.2", "AKIAOTHER") is None
    now[0] += WINDOW - 10.5
    assert guard.wait("10.0.0.1", "AKIAADMIN") == 11  # rounded up
    now[0] += 10.5
    assert guard.wait("10.0.0.1", "AKIAADMIN") is None  # the window has passed
    for _ in range(LIMIT - 1):
        guard.failed("10.0.0.3", "AKIATHIRD")
    guard.succeeded("AKIATHIRD")
    guard.failed("10.0.0.4", "AKIATHIRD")
    assert guard.wait("10.0.0.4", "AKIATHIRD") is None  # the key's count started again
    assert guard.wait("10.0.0.3", "AKIANEW") is None  # 4 failures from .3: not yet
    guard.failed("10.0.0.3", "AKIANEW")
    assert guard.wait("10.0.0.3", "AKIAANY") == WINDOW  # the address's count was not reset
