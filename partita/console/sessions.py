"""Console sign-in sessions, kept in the store so that every worker (and server) sees them.

A session is a random 256-bit token sent only as a cookie; the store keeps
a row keyed by the token's SHA-256, never the token, so whoever reads the
store (a dump, a backup of the file) cannot sign in with what they read.
The row names the access key, the per-session CSRF token, when the session
ends (wall time: a test shifting the server clock must not sign people
out), and an HMAC of the principal's secret keyed by the token, so that a
rotated secret ends the sessions opened with the old one without the store
holding anything derived from the secret alone.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable
from dataclasses import dataclass

import orjson

from ..engine.time.clock import wall_now
from ..storage.base import Store

SESSION_SPACE = b"\x00console-session/"
"""Console sessions' rows: beside the catalog's other singleton rows (`\x00clock`,
`\x00stream-key`), outside its table rows (`\x00t...`), so no new top-level key space."""
_SPACE_END = b"\x00console-session0"  # "/" + 1
SESSION_SECONDS = 12 * 3600
_SWEEP = 256  # expired rows removed at each sign-in, so abandoned sessions do not pile up


@dataclass(frozen=True, slots=True)
class Session:
    access_key_id: str
    csrf: str
    expires: float


def _row(token: str) -> bytes:
    return SESSION_SPACE + hashlib.sha256(token.encode()).digest()


def _fingerprint(token: str, secret: str) -> str:
    return hmac.new(token.encode(), secret.encode(), hashlib.sha256).hexdigest()


class Sessions:
    def __init__(self, store: Store) -> None:
        self._store = store

    def open(self, access_key_id: str, secret: str) -> tuple[str, Session]:
        """A new session for a principal whose secret was just checked: (cookie token, session)."""
        token = secrets.token_urlsafe(32)
        now = wall_now()
        session = Session(access_key_id, secrets.token_urlsafe(32), now + SESSION_SECONDS)
        value = orjson.dumps({
            "key": access_key_id, "csrf": session.csrf, "expires": session.expires,
            "secret": _fingerprint(token, secret),
        })
        with self._store.write() as txn:
            for key, raw in list(txn.range(SESSION_SPACE, _SPACE_END, limit=_SWEEP)):
                if _expired(raw, now):
                    txn.delete(key)
            txn.put(_row(token), value)
        return token, session

    def find(self, token: str, secret_of: Callable[[str], str | None]) -> Session | None:
        """The live session of this cookie token, or None (unknown, expired, or the secret changed)."""
        if not token or len(token) > 128:
            return None
        raw = self._store.get(_row(token))
        if raw is None:
            return None
        try:
            row = orjson.loads(raw)
            key, csrf, expires, fingerprint = row["key"], row["csrf"], float(row["expires"]), row["secret"]
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            return None
        if expires <= wall_now():
            self.close(token)
            return None
        secret = secret_of(key)
        if secret is None or not hmac.compare_digest(fingerprint, _fingerprint(token, secret)):
            return None
        return Session(key, csrf, expires)

    def close(self, token: str) -> None:
        with self._store.write() as txn:
            txn.delete(_row(token))


def _expired(raw: bytes, now: float) -> bool:
    try:
        return float(orjson.loads(raw)["expires"]) <= now
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return True
