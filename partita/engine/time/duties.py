"""The periodic background duties: TTL expiry and stream trimming.

One thread per engine ticks a few times a second; on each tick it tries the
store's duty lock (never blocking) and, if this process holds it, runs every
duty once. So with `--workers N` exactly one process deletes expired items
and trims streams at a time, as DESIGN.md asks, and when that process dies
another takes over on its next tick. An idle tick costs a lock attempt and
a glance at the catalog.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from ...storage.base import Conflict, Store

log = logging.getLogger("partita.duties")
#: Seconds between ticks: items are deleted within about this long of falling due.
TICK_SECONDS = 0.25

Duty = Callable[[], bool]
"""Runs one round of a duty; True when it did some work (and more may be waiting)."""


class Duties:
    def __init__(self, store: Store, tick: float = TICK_SECONDS) -> None:
        self._store = store
        self._tick = tick
        self._duties: list[Duty] = []
        self._local: list[Callable[[], None]] = []
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def add(self, duty: Duty) -> None:
        self._duties.append(duty)

    def add_local(self, duty: Callable[[], None]) -> None:
        """A duty every process runs on every tick, leader or not (publishing its own counters)."""
        self._local.append(duty)

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="partita-duties", daemon=True)
            self._thread.start()

    def wake(self) -> None:
        """Run the duties now instead of at the next tick (after the clock moved)."""
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(5)

    def run_once(self) -> bool:
        """One round of every duty, if this process holds the duty lock; whether any worked."""
        worked = False
        for local in self._local:
            try:
                local()
            except Exception:
                log.exception("background duty failed")
        with self._store.duty_lock() as leader:
            if not leader:
                return False
            for duty in self._duties:
                try:
                    worked = duty() or worked
                except Conflict:  # lost a race with a request (PostgreSQL): nothing written, run again
                    worked = True
                except Exception:  # a failing duty must not stop the others; it is retried next tick
                    log.exception("background duty failed")
        return worked

    def _run(self) -> None:
        while not self._stop.is_set():
            busy = self.run_once()
            if not busy:
                self._wake.wait(self._tick)
                self._wake.clear()
