"""The console's request and answer shapes, and the one seam where a console request is authorised."""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, quote

Headers = list[tuple[bytes, bytes]]
Answer = tuple[int, bytes, bytes | None, Headers | None]

HTML = b"text/html; charset=utf-8"
JSON = b"application/json"
FORM = b"application/x-www-form-urlencoded"
PEER = b"\x00peer"
"""The client's address, which the HTTP layer adds to the headers of `/console` requests of
a server with `--auth` (the sign-in throttle counts failures per address). No header name can
begin with NUL, so a client cannot send it."""
#: Pages are built from the store's contents: never cached, never framed by another site.
_PAGE_HEADERS: Headers = [
    (b"cache-control", b"no-store"),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"content-security-policy", b"default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'"),
]


class ConsoleError(Exception):
    """A request the console cannot serve: an HTTP status and a message shown on an error page."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


Authorize = Callable[[str, dict[str, Any], bool], None]
"""As `partita.api.dispatch.Authorize`: the signed-in principal's IAM check for one operation."""


@dataclass(frozen=True, slots=True)
class Caller:
    """Who is signed in to the console (with `--auth`): shown on every page, checked on every action."""

    name: str  # "" without `--auth`: nobody is signed in, the forms still carry a token
    csrf: str
    authorize: Authorize | None


GUARDED: ContextVar[bool] = ContextVar("partita_console_guarded", default=False)
"""Whether the server runs with a schema guard, set by `routes.answer` (the nav links its page)."""
CALLER: ContextVar[Caller | None] = ContextVar("partita_console_caller", default=None)
"""The caller of the request being answered, set by `routes.answer` around the view, so that
every engine call (`engine_calls`) and every form (`render`) sees it without each view passing it."""


@dataclass
class Request:
    """One console request: the path below /console, the query string and the form, decoded."""

    method: str
    path: str
    query: dict[str, list[str]]
    form: dict[str, list[str]]
    headers: dict[bytes, bytes] = field(default_factory=dict)
    #: Set by the authorizer: the signed-in principal with `--auth`, the browser's form token without.
    caller: Caller | None = None
    #: Set-Cookie headers the authorizer adds to the answer (the form token's cookie without `--auth`).
    cookies: list[tuple[bytes, bytes]] = field(default_factory=list)

    def arg(self, name: str, default: str = "") -> str:
        """A query-string value (the last one sent), or `default`."""
        values = self.query.get(name)
        return values[-1] if values else default

    def field(self, name: str, default: str = "") -> str:
        values = self.form.get(name)
        return values[-1] if values else default

    def fields(self, name: str) -> list[str]:
        return self.form.get(name, [])


def parse_query(text: str) -> dict[str, list[str]]:
    # errors="replace": a malformed %-escape or invalid UTF-8 is a value, not a crash.
    return parse_qs(text, keep_blank_values=True, errors="replace", max_num_fields=500)


def html(body: str, status: int = 200) -> Answer:
    return status, body.encode("utf-8"), HTML, list(_PAGE_HEADERS)


def json_answer(payload: bytes, status: int = 200) -> Answer:
    return status, payload, JSON, [(b"cache-control", b"no-store")]


def redirect(location: str) -> Answer:
    """303 See Other: after a form POST the browser GETs the page it lands on."""
    return 303, b"", None, [(b"location", location.encode("utf-8")), (b"cache-control", b"no-store")]


def table_url(name: str, page: str = "") -> str:
    url = "/console/tables/" + quote(name, safe="")
    return url + "/" + page if page else url


Authorizer = Callable[[Request], Answer | None]


def allow_all(request: Request) -> Answer | None:
    """No authentication configured: every console request is served (as the API is, unsigned)."""
    return None


AUTHORIZER: list[Authorizer] = [allow_all]
"""The one place a console request is authorised. The authentication work
installs its check with `set_authorizer`; it returns None to let the request
through, or the answer to send instead (a 401, or a redirect to a login page)."""


def set_authorizer(check: Authorizer) -> None:
    AUTHORIZER[0] = check
