"""Without `--auth`: what Partita refuses of browsers on its own routes (the console, the admin API).

Any web page a developer visits can make the browser send requests to a
local server: a form POST or a `no-cors` fetch needs no preflight, and DNS
rebinding gives another site's page the server's address under the site's
own name. Local developer tools (Jupyter, Datasette, many dev servers) answer
their own pages only to their own pages; Partita does the same for `/console`,
`/partita/...` and `/metrics`:

- the Host header must be a name the server is known by: `localhost` (and
  `*.localhost`, which browsers resolve to the loopback), a loopback address,
  the address it is bound to (any IP address when bound to all of them: an IP
  literal cannot be rebound) or a name given with `--allowed-hosts` (`.x.com`
  for x.com and its subdomains, `*` for any);
- a state-changing request (any method but GET, HEAD and OPTIONS) must not be
  cross-site: `Sec-Fetch-Site` other than `same-origin` or `none`, or an
  `Origin` that is not the request's own host (or an allowed host), refuses it;
  a request with neither header is not from a browser page (curl, SDKs,
  partita.testing) and passes;
- an admin POST must be `application/json`, which no page can send to
  another site without a CORS preflight (that Partita's own routes never grant);
- console forms carry a per-browser token (`console/forms.py`).

The DynamoDB API (`POST /`) is left exactly as it is: SDKs send no Origin,
and DynamoDB answers CORS requests from any origin. With `--auth` none of
this applies: the admin API needs a signature and the console a sign-in whose
cookie is SameSite=Strict, with its own CSRF tokens.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_SAME = (b"same-origin", b"none")

# Partita's own words (these routes are Partita's, not DynamoDB's).
HOST_REFUSED = (
    "Partita does not answer its console and admin routes under this Host name: {host}. "
    "Start it with --allowed-hosts {host} to allow it."
)
CROSS_SITE = "Partita refuses a cross-site request to its console and admin routes (Origin: {origin})."
ADMIN_JSON = "admin requests that change the server are sent as application/json"


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def host_name(raw: bytes) -> str:
    """The name of a Host header (or an Origin's authority): lower case, no port, no brackets, no final dot."""
    text = raw.decode("latin-1").strip().lower()
    if text.startswith("["):
        return text[1: text.find("]")] if "]" in text else text
    if text.count(":") == 1:
        text = text.partition(":")[0]
    return text.rstrip(".")


class Browsers:
    """The checks of one server without `--auth` (`bound`: the address it listens on)."""

    def __init__(self, bound: str, allowed: Iterable[str] = ()) -> None:
        address = _address(bound.strip("[]"))
        self._bound = address
        self._any_address = address is not None and address.is_unspecified
        self._names: set[str] = set()
        self._suffixes: list[str] = []
        self._anything = False
        for entry in allowed:
            for name in entry.split(","):
                name = name.strip().lower().rstrip(".")
                if name == "*":
                    self._anything = True
                elif name.startswith("."):
                    self._suffixes.append(name)
                    self._names.add(name[1:])
                elif name:
                    self._names.add(host_name(name.encode("latin-1")))

    def known(self, name: str) -> bool:
        """Whether `name` (a Host header's name) is one this server is known by."""
        if self._anything or name in self._names or name == "localhost" or name.endswith(".localhost"):
            return True
        if any(name.endswith(suffix) for suffix in self._suffixes):
            return True
        address = _address(name)
        if address is None:
            return False
        return address.is_loopback or self._any_address or address == self._bound

    def refusal(self, method: str, headers: dict[bytes, bytes]) -> tuple[int, str] | None:
        """(status, message) when this request to a console or admin route is refused, else None."""
        host = headers.get(b"host")
        if host is not None and not self.known(host_name(host)):
            return 403, HOST_REFUSED.format(host=host_name(host))
        if method in SAFE_METHODS:
            return None
        site = headers.get(b"sec-fetch-site")
        origin = headers.get(b"origin")
        if site is not None and site.lower() not in _SAME:
            return 403, CROSS_SITE.format(origin=(origin or b"unknown").decode("latin-1"))
        if origin is not None and not self._own_origin(origin, host):
            return 403, CROSS_SITE.format(origin=origin.decode("latin-1"))
        return None

    def _own_origin(self, origin: bytes, host: bytes | None) -> bool:
        """Whether an Origin header names the request's own host (port included), or an allowed name."""
        scheme, sep, authority = origin.strip().lower().partition(b"://")
        if not sep or scheme not in (b"http", b"https") or not authority or b"/" in authority:
            return False  # "null" (a sandboxed page, a file), or not an origin at all
        default = b":443" if scheme == b"https" else b":80"
        if host is not None:
            own = host.strip().lower()
            if own.endswith(default):
                own = own[: -len(default)]
            if authority.endswith(default):
                authority = authority[: -len(default)]
            if authority == own:
                return True
        name = host_name(authority)
        return self._anything or name in self._names or any(name.endswith(s) for s in self._suffixes)


def admin_refusal(method: str, headers: dict[bytes, bytes]) -> str | None:
    """An admin request that changes the server must be JSON (a page cannot send that cross-site)."""
    if method in SAFE_METHODS:
        return None
    kind = headers.get(b"content-type", b"").split(b";")[0].strip().lower()
    return None if kind == b"application/json" else ADMIN_JSON
