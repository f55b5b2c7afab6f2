"""The server clock: wall time plus an offset that tests move forward.

Every time rule (TTL expiry, stream retention and iterator expiry, the
ClientRequestToken window, later burst capacity and metrics windows) reads
this one clock, so a test jumps past an expiry with `partita clock advance`
instead of sleeping. The offset is a row in the store, so every worker
process (and every server over one database) sees an advance at once, and
an on-disk store keeps it across restarts: items carry TTLs and stream
records carry times written on the moved clock, and a clock that jumped
back on restart would make them lie (see docs/decisions.md). Workers cache
the offset until the store's generation counter moves, which every advance
bumps, so reading the clock costs no store read.
"""

from __future__ import annotations

import time

from ...storage.base import Store

CLOCK_ROW = b"\x00clock"


wall_now = time.time
"""Wall time, for what must not move with the server clock: SigV4's skew check and
console sessions (advancing the clock for TTL must not expire credentials; docs/decisions.md).
The C function itself: `--auth` reads it on every request."""


cadence = time.monotonic
"""Real elapsed time, for cadences about the real world rather than the emulated one: how
often a busy process publishes its capacity usage to the others (engine/capacity/meter.py).
The C function itself, so that reading it costs the request path no Python call."""


class Clock:
    def __init__(self, store: Store) -> None:
        self._store = store
        self._generation: int | None = None
        self._offset = 0.0

    def offset(self) -> float:
        """Seconds the server clock runs ahead of wall time."""
        generation = self._store.generation()
        if generation != self._generation:
            raw = self._store.get(CLOCK_ROW)
            self._offset = 0.0 if raw is None else float(raw)
            self._generation = generation
        return self._offset

    def now(self) -> float:
        """The server's time, in epoch seconds (read on every metered request: one call, not two)."""
        if self._store.generation() == self._generation:
            return time.time() + self._offset
        return time.time() + self.offset()

    def now_cached(self) -> float:
        """The server's time from the offset last read: never touches the store.

        For code that holds a lock which the thread holding the store's write
        lock may wait for (the meter's: the server thread takes it inside an
        open write group). Reading the store there deadlocks. This time lags
        an advance only until the next `now()` anywhere in the process.
        """
        return time.time() + self._offset

    def advance(self, seconds: float) -> float:
        """Move the clock forward by `seconds` (never back); the new offset."""
        if seconds < 0:
            raise ValueError("the clock only moves forward")
        with self._store.write() as txn:
            raw = txn.get(CLOCK_ROW)
            offset = (0.0 if raw is None else float(raw)) + seconds
            txn.put(CLOCK_ROW, repr(offset).encode())
            txn.bump_generation()
        return offset

    def set_offset(self, seconds: float) -> None:
        """Start the clock `seconds` ahead of wall time (`partita serve --clock-offset`)."""
        with self._store.write() as txn:
            txn.put(CLOCK_ROW, repr(float(seconds)).encode())
            txn.bump_generation()
