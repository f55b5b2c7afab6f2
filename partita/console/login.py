"""With `--auth`: the console's sign-in (access key id + secret), its session cookie and CSRF checks.

A browser cannot SigV4-sign a page request, so the console checks a session
instead: `POST /console/login` verifies the key and secret against the
`--auth` principals and sets a cookie (HttpOnly, SameSite=Strict, Path=/console,
Secure over TLS) holding a random token; sessions live in the store
(`sessions.py`), so every worker serves them. Each POST form carries the
session's CSRF token; the login form, before any session exists, carries a
double-submit token (a cookie and a field that must match), so another site
cannot sign a browser in to an account of its choosing.

What the signed-in user may do is what their policies allow through the API:
the `Caller` set here carries their IAM check, which every engine call of the
console passes to `api.dispatch.handle`.
"""

from __future__ import annotations

import hmac
import logging
import secrets
from collections.abc import Callable
from functools import partial
from typing import Any, Protocol
from urllib.parse import quote, urlencode

from ..engine.engine import Engine
from .render import render
from .sessions import SESSION_SECONDS, Sessions
from .throttle import Throttle
from .web import PEER, Answer, Caller, Request, html, redirect

log = logging.getLogger("partita")

COOKIE = "partita_session"
LOGIN_COOKIE = "partita_login"
LOGIN = "/console/login"


def _cookies(request: Request) -> dict[str, str]:
    jar: dict[str, str] = {}
    for part in request.headers.get(b"cookie", b"").decode("latin-1").split(";"):
        name, sep, value = part.strip().partition("=")
        if sep:
            jar.setdefault(name, value.strip('"'))  # the first of a name sent twice is the most specific
    return jar


def _forbidden(message: str) -> Answer:
    return html(render("error.html", status=403, message=message), 403)


def _same(given: str, expected: str) -> bool:
    return bool(given) and hmac.compare_digest(given.encode(), expected.encode())


class Account(Protocol):
    """An `--auth` principal as the sign-in sees it (protocol/auth/principals.py's Principal)."""

    name: str
    access_key_id: str
    secret: str


class Guard:
    """The console's authorizer with `--auth` (installed with `web.set_authorizer(guard.check)`).

    The protocol layer hands it the two things it needs of `--auth`: the
    principal of an access key id (read at each call, so a reload counts)
    and the API's authorization check, which a signed-in page request passes
    through exactly as a signed API request would.
    """

    def __init__(
        self,
        engine: Engine,
        account_of: Callable[[str], Account | None],
        authorize: Callable[..., Any],
        secure: bool,
    ) -> None:
        self.engine = engine
        self._account_of = account_of
        self._authorize = authorize
        self.sessions = Sessions(engine.store)
        self.throttle = Throttle(engine.store)
        self._attributes = "; Path=/console; HttpOnly; SameSite=Strict" + ("; Secure" if secure else "")

    def _cookie(self, name: str, value: str, max_age: int) -> tuple[bytes, bytes]:
        return b"set-cookie", f"{name}={value}; Max-Age={max_age}{self._attributes}".encode()

    def _secret_of(self, access_key_id: str) -> str | None:
        principal = self._account_of(access_key_id)
        return None if principal is None else principal.secret

    def check(self, request: Request) -> Answer | None:
        page = request.path.strip("/")
        method = "GET" if request.method == "HEAD" else request.method
        if page == "login":
            return self._login_form(request) if method == "GET" else self._login(request)
        if page.startswith("static/") and method == "GET":
            return None  # the stylesheet and scripts are public, the login page needs them
        token = _cookies(request).get(COOKIE, "")
        session = self.sessions.find(token, self._secret_of) if token else None
        principal = None if session is None else self._account_of(session.access_key_id)
        if session is None or principal is None:
            if method == "GET":
                target = "/console" + request.path
                if request.query:
                    target += "?" + urlencode(request.query, doseq=True)
                return redirect(LOGIN + "?next=" + quote(target, safe="/"))
            return _forbidden("Sign in to the console first (no session, or it has expired).")
        if method == "POST" and not _same(request.field("csrf"), session.csrf):
            return _forbidden("The form's CSRF token is missing or wrong: reload the page and try again.")
        if page == "logout":
            if method != "POST":
                return _forbidden("Sign out with the form's button (POST).")
            self.sessions.close(token)
            return _with_cookies(redirect(LOGIN), self._cookie(COOKIE, "", 0))
        request.caller = Caller(principal.name, session.csrf, partial(self._authorize, principal, self.engine))
        return None

    def _login_form(self, request: Request, error: str | None = None, status: int = 200) -> Answer:
        nonce = secrets.token_urlsafe(32)
        answer = html(render(
            "login.html", error=error, nonce=nonce, next=_next(request),
            access_key_id=request.field("access_key_id"),
        ), status)
        return _with_cookies(answer, self._cookie(LOGIN_COOKIE, nonce, 3600))

    def _login(self, request: Request) -> Answer:
        if request.method != "POST":
            return _forbidden("Sign in with the form (POST).")
        if not _same(request.field("nonce"), _cookies(request).get(LOGIN_COOKIE, "")):
            return _forbidden("The sign-in form's CSRF token is missing or wrong: reload the page and try again.")
        key = request.field("access_key_id")
        address = request.headers.get(PEER, b"").decode("latin-1")
        # Throttled before the secret is looked at: a right secret then tells nothing either.
        wait = self.throttle.wait(address, key)
        if wait is not None:
            log.warning("partita: console sign-in throttled for access key %r from %s", key[:128], address)
            status, payload, kind, headers = self._login_form(
                request, f"Too many failed sign-ins: try again in {wait} seconds.", 429)
            return status, payload, kind, [*(headers or []), (b"retry-after", b"%d" % wait)]
        principal = self._account_of(key)
        # The same comparison whether or not the key exists, so the time taken tells nothing.
        expected = principal.secret if principal is not None else secrets.token_urlsafe(30)
        if not _same(request.field("secret_access_key"), expected) or principal is None:
            log.warning("partita: console sign-in refused for access key %r from %s", key[:128], address)
            self.throttle.failed(address, key)
            return self._login_form(request, "The access key id or the secret access key is wrong.", 403)
        self.throttle.succeeded(key)
        token, _ = self.sessions.open(principal.access_key_id, principal.secret)
        return _with_cookies(redirect(_next(request)), self._cookie(COOKIE, token, SESSION_SECONDS),
                             self._cookie(LOGIN_COOKIE, "", 0))


def _with_cookies(answer: Answer, *cookies: tuple[bytes, bytes]) -> Answer:
    status, payload, kind, headers = answer
    return status, payload, kind, [*(headers or []), *cookies]


def _next(request: Request) -> str:
    """Where to go after signing in: a console page, never another site (`//host`, `/\\host`)
    and never a header of our own (a CR or LF in Location); the redirect sends it %-quoted."""
    target = request.field("next") or request.arg("next")
    if (target.startswith("/console") and not target.startswith(LOGIN) and "//" not in target
            and all("!" <= char <= "~" and char != "\\" for char in target)):
        return target
    return "/console"
