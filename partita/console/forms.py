"""Without `--auth`: the console's forms carry a per-browser token, as they carry the session's with it.

There is no sign-in to hang a session on, so the browser gets one: a random
token in a cookie (`partita_csrf`: HttpOnly, SameSite=Strict, Path=/console,
Secure over TLS, gone when the browser closes), set by the first console page
it loads. Every form carries HMAC(server key, token) in the same `csrf` field
the signed-in console uses, and a POST whose field does not match its cookie
is refused with the same page. The key is one random row in the store, so
every worker (and server) checks the same way and nothing is kept per
browser; another page on the loopback (which may set cookies for
`localhost`, ports aside) cannot forge the field for a cookie it planted.
The protocol layer has already refused cross-site requests and unknown Host
names (protocol/browsers.py): this is the second fence.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets

from ..engine.engine import Engine
from .render import render
from .web import Answer, Caller, Request, html

COOKIE = "partita_csrf"
KEY_ROW = b"\x00console-csrf-key"
"""The HMAC key's row, beside the console's sessions (`\x00console-session/...`)."""
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
REFUSED = "The form's CSRF token is missing or wrong: reload the page and try again."


def _cookie(request: Request) -> str:
    for part in request.headers.get(b"cookie", b"").decode("latin-1").split(";"):
        name, sep, value = part.strip().partition("=")
        if sep and name == COOKIE:
            return value.strip('"')
    return ""


class Forms:
    """The console's authorizer without `--auth` (installed with `web.set_authorizer(forms.check)`)."""

    def __init__(self, engine: Engine, secure: bool = False) -> None:
        self._store = engine.store
        self._key: bytes | None = None
        self._attributes = "; Path=/console; HttpOnly; SameSite=Strict" + ("; Secure" if secure else "")

    def _secret(self) -> bytes:
        if self._key is None:
            raw = self._store.get(KEY_ROW)
            if raw is None:
                with self._store.write() as txn:
                    raw = txn.get(KEY_ROW)
                    if raw is None:
                        raw = os.urandom(32)
                        txn.put(KEY_ROW, raw)
            self._key = raw
        return self._key

    def token_for(self, cookie: str) -> str:
        return hmac.new(self._secret(), cookie.encode(), hashlib.sha256).hexdigest()

    def check(self, request: Request) -> Answer | None:
        cookie = _cookie(request)
        post = request.method == "POST"  # the console's only method with a form (others: 405)
        if not (32 <= len(cookie) <= 128 and set(cookie) <= _TOKEN_CHARS):
            if post:
                return html(render("error.html", status=403, message=REFUSED), 403)
            cookie = secrets.token_urlsafe(32)
            request.cookies.append((b"set-cookie", f"{COOKIE}={cookie}{self._attributes}".encode()))
        expected = self.token_for(cookie)
        if post and not hmac.compare_digest(request.field("csrf").encode(), expected.encode()):
            return html(render("error.html", status=403, message=REFUSED), 403)
        request.caller = Caller("", expected, None)
        return None
