"""The conflict backoff's bounds: its pauses block the event loop, so each is short and all are few."""

from __future__ import annotations

import pytest
from conftest import STORE

from partita.api import conflicts

pytestmark = pytest.mark.skipif(STORE != "memory", reason="store-independent: runs once")


def test_pauses_are_bounded_each_and_in_total(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    monkeypatch.setattr(conflicts.time, "sleep", slept.append)
    monkeypatch.setattr(conflicts.random, "uniform", lambda low, high: high)  # the longest pause each time
    backoff = conflicts.Backoff()
    answers = [backoff.pause() for _ in range(40)]
    assert max(slept) <= conflicts._MAX_BACKOFF  # noqa: SLF001
    assert sum(slept) == pytest.approx(conflicts._BUDGET)  # noqa: SLF001
    assert slept[:4] == pytest.approx([0.001, 0.002, 0.004, 0.008])
    spent = answers.index(False)
    assert answers[spent:] == [False] * (40 - spent) and len(slept) == spent
