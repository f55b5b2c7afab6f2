"""Brute-force throttling of the console's sign-in, per client address and per access key.

After LIMIT failed sign-ins within WINDOW seconds of the first, from one
address or for one access key id, `POST /console/login` answers 429 with a
Retry-After until that window has passed, whatever the form holds (so a
right secret sent while throttled tells nothing either). Known and unknown
key ids are counted alike, so the throttle never tells whether a key exists.

Counters live in the store, beside the sessions (`sessions.py`): every
worker, and every server on the same database, counts the same failures.
Rows are keyed by a SHA-256 of what they count (an address or key id as
sent is never stored). Time is wall time, as for sessions and SigV4's skew
check: a test moving the server clock must not lift or extend a throttle.
"""

from __future__ import annotations

import hashlib
import math

import orjson

from ..storage.base import Store
from .sessions import wall_now

THROTTLE_SPACE = b"\x00console-throttle/"
"""Beside the sessions' rows (`\x00console-session/`), outside the catalog's table rows."""
_SPACE_END = b"\x00console-throttle0"  # "/" + 1
LIMIT = 5
WINDOW = 300.0
_SWEEP = 64  # expired rows removed at each failure, so counters of the past do not pile up


def _row(kind: bytes, value: str) -> bytes:
    return THROTTLE_SPACE + kind + hashlib.sha256(value.encode("utf-8", "surrogatepass")).digest()


def _read(raw: bytes | None, now: float) -> tuple[float, int] | None:
    """(window start, failures) of a row still in its window, else None."""
    if raw is None:
        return None
    try:
        row = orjson.loads(raw)
        start, failures = float(row["start"]), int(row["failures"])
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return None
    return (start, failures) if now < start + WINDOW else None


class Throttle:
    def __init__(self, store: Store) -> None:
        self._store = store

    def wait(self, address: str, access_key_id: str) -> int | None:
        """Seconds until a sign-in from `address` for `access_key_id` may be tried again; None: now."""
        now = wall_now()
        ends = []
        for row in (_row(b"a", address), _row(b"k", access_key_id)):
            counted = _read(self._store.get(row), now)
            if counted is not None and counted[1] >= LIMIT:
                ends.append(counted[0] + WINDOW)
        return max(1, math.ceil(max(ends) - now)) if ends else None

    def failed(self, address: str, access_key_id: str) -> None:
        """Count one failed sign-in against the address and the key id."""
        now = wall_now()
        with self._store.write() as txn:
            for key, raw in list(txn.range(THROTTLE_SPACE, _SPACE_END, limit=_SWEEP)):
                if _read(raw, now) is None:
                    txn.delete(key)
            for row in (_row(b"a", address), _row(b"k", access_key_id)):
                counted = _read(txn.get(row), now)
                start, failures = counted if counted is not None else (now, 0)
                txn.put(row, orjson.dumps({"start": start, "failures": failures + 1}))

    def succeeded(self, access_key_id: str) -> None:
        """A right secret: the key's count starts again (the address's stays, so one valid
        account cannot reset the count of an address spraying other keys)."""
        with self._store.write() as txn:
            txn.delete(_row(b"k", access_key_id))
