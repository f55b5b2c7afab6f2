"""Without `--auth`: another site's page cannot change the store through the console or the admin API.

Plain HTTP with the headers a browser sends (Origin, Sec-Fetch-Site, a form's
content type, a rebound Host name) against every route of the console's and
the admin API's route tables, so a route added later is met here too; the
DynamoDB API itself is untouched. The browser's own view is in
console/test_console_browser.py (the hostile page).
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode, urlparse

import pytest
from conftest import Server, client_for, create_table, launch

from partita.admin.routes import routes as admin_routes
from partita.console.routes import routes as console_routes
from partita.protocol.browsers import ADMIN_JSON, CROSS_SITE, HOST_REFUSED, SAFE_METHODS

VICTIM = "victim"


@pytest.fixture(scope="module")
def srv() -> Iterator[Server]:
    server = launch("--in-memory")
    yield server
    server.stop()


@pytest.fixture
def ddb(srv: Server) -> Any:
    ddb = client_for(srv.url)
    if VICTIM not in ddb.list_tables()["TableNames"]:
        create_table(ddb, VICTIM)
        ddb.put_item(TableName=VICTIM, Item={"pk": {"S": "a"}, "v": {"N": "1"}})
    return ddb


def send(url: str, method: str, path: str, headers: dict[str, str], body: bytes = b"") -> tuple[int, dict[str, str], bytes]:
    parsed = urlparse(url)
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
    try:
        conn.putrequest(method, path, skip_host="Host" in headers)
        for name, value in headers.items():
            conn.putheader(name, value)
        conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def _state_changing() -> list[Any]:
    out = []
    for method, path in console_routes() + admin_routes():
        if method not in SAFE_METHODS:
            out.append(pytest.param(method, path.replace("{table}", VICTIM), id=f"{method} {path}"))
    return out


def _all_routes() -> list[Any]:
    return [pytest.param(m, p.replace("{table}", VICTIM), id=f"{m} {p}") for m, p in console_routes() + admin_routes()]


def _body(path: str) -> tuple[bytes, str]:
    """What a hostile page sends: a form (console) or a no-cors fetch's text body (admin)."""
    if path.startswith("/partita/"):
        return json.dumps({"advance_seconds": 3153600000}).encode(), "text/plain;charset=UTF-8"
    return urlencode({"name": "made-by-evil", "hash": "pk", "key": json.dumps({"pk": {"S": "a"}}),
                      "vector": "[1]", "index": "v", "top_k": "1"}).encode(), "application/x-www-form-urlencoded"


def _unchanged(ddb: Any, srv: Server) -> None:
    assert VICTIM in ddb.list_tables()["TableNames"]
    assert "made-by-evil" not in ddb.list_tables()["TableNames"]
    assert ddb.get_item(TableName=VICTIM, Key={"pk": {"S": "a"}})["Item"]["v"] == {"N": "1"}
    status, _, raw = send(srv.url, "GET", "/partita/v1/clock", {"Host": _host(srv)})
    assert status == 200 and json.loads(raw)["offset_seconds"] == 0


def _host(srv: Server) -> str:
    return urlparse(srv.url).netloc


def _refusal(path: str, message: str) -> tuple[int, bytes]:
    if path.startswith("/partita/"):
        return 403, json.dumps({"error": message}, separators=(",", ":")).encode()
    return 403, message.encode()


@pytest.mark.parametrize(("method", "path"), _state_changing())
@pytest.mark.parametrize(("origin", "site"), [
    ("http://evil.example", "cross-site"),  # another site
    ("http://evil.example", None),  # a browser that sends no Fetch Metadata
    (None, "cross-site"),  # Fetch Metadata without an Origin
    ("http://127.0.0.1:3000", "same-site"),  # another local server (ports do not make a site)
    ("null", "cross-site"),  # a sandboxed frame or a file
])
def test_a_cross_site_request_changes_nothing(srv: Server, ddb: Any, method: str, path: str,
                                              origin: str | None, site: str | None) -> None:
    body, kind = _body(path)
    headers = {"Host": _host(srv), "Content-Type": kind}
    if origin is not None:
        headers["Origin"] = origin
    if site is not None:
        headers["Sec-Fetch-Site"] = site
    status, answer_headers, raw = send(srv.url, method, path, headers, body)
    assert (status, raw) == _refusal(path, CROSS_SITE.format(origin=origin or "unknown"))
    assert answer_headers["cache-control"] == "no-store"
    assert "access-control-allow-origin" not in answer_headers
    _unchanged(ddb, srv)


@pytest.mark.parametrize(("method", "path"), _all_routes())
def test_a_rebound_host_name_is_not_answered(srv: Server, ddb: Any, method: str, path: str) -> None:
    """DNS rebinding: the attacker's name resolves to the loopback; the Host header still says it."""
    body, kind = _body(path) if method not in SAFE_METHODS else (b"", "")
    headers = {"Host": "rebind.evil.example:" + str(urlparse(srv.url).port)}
    if kind:
        headers["Content-Type"] = kind
    status, _, raw = send(srv.url, method, path, headers, body)
    assert (status, raw) == _refusal(path, HOST_REFUSED.format(host="rebind.evil.example"))
    _unchanged(ddb, srv)


@pytest.mark.parametrize(("method", "path"), [p for p in _state_changing() if p.values[1].startswith("/partita/")])
def test_an_admin_change_must_be_json(srv: Server, ddb: Any, method: str, path: str) -> None:
    for kind in (None, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"):
        headers = {"Host": _host(srv)} if kind is None else {"Host": _host(srv), "Content-Type": kind}
        status, _, raw = send(srv.url, method, path, headers, b'{"advance_seconds": 3153600000}')
        assert (status, json.loads(raw)) == (415, {"error": ADMIN_JSON})
    _unchanged(ddb, srv)


def test_a_console_form_without_its_token_is_refused(srv: Server, ddb: Any) -> None:
    """A request with no Origin at all (not a page's) still needs the browser's form token."""
    body = urlencode({"name": "made-by-evil", "hash": "pk"}).encode()
    kind = {"Host": _host(srv), "Content-Type": "application/x-www-form-urlencoded"}
    for headers in (kind, {**kind, "Cookie": "partita_csrf=" + "A" * 43}):
        status, _, raw = send(srv.url, "POST", f"/console/tables/{VICTIM}/delete", headers, body)
        assert status == 403
        assert "The form&#39;s CSRF token is missing or wrong: reload the page and try again." in raw.decode()
    _unchanged(ddb, srv)


def test_the_console_and_the_tools_still_work(srv: Server, ddb: Any) -> None:
    # The browser's own page: its cookie and token, Origin its own, Sec-Fetch-Site same-origin.
    status, headers, raw = send(srv.url, "GET", "/console", {"Host": _host(srv)})
    assert status == 200
    cookie = headers["set-cookie"]
    assert cookie.startswith("partita_csrf=") and cookie.endswith("; Path=/console; HttpOnly; SameSite=Strict")
    token = raw.decode().split('name="csrf" value="')[1].split('"')[0]
    made = "made-by-console"
    status, headers, _ = send(srv.url, "POST", "/console/tables", {
        "Host": _host(srv), "Origin": "http://" + _host(srv), "Sec-Fetch-Site": "same-origin",
        "Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie.split(";")[0],
    }, urlencode({"name": made, "hash": "pk", "csrf": token}).encode())
    assert (status, headers["location"]) == (303, f"/console/tables/{made}")
    ddb.delete_table(TableName=made)
    # A typed URL, a bookmark: Sec-Fetch-Site none. localhost and [::1]-style names are the server's.
    for host in (_host(srv), "localhost:1", "LOCALHOST.", "app.localhost", "127.0.0.2"):
        assert send(srv.url, "GET", "/console", {"Host": host, "Sec-Fetch-Site": "none"})[0] == 200
    # The tools: JSON, no Origin (partita.testing, partita clock, curl -H 'Content-Type: application/json').
    status, _, raw = send(srv.url, "POST", "/partita/v1/clock", {"Host": _host(srv), "Content-Type": "application/json"},
                          b'{"advance_seconds": 0}')
    assert status == 200 and json.loads(raw)["offset_seconds"] == 0


def test_the_dynamodb_api_is_untouched(srv: Server, ddb: Any) -> None:
    """SDKs send no Origin, and DynamoDB answers CORS requests from any origin: nothing changes there."""
    body = json.dumps({}).encode()
    status, headers, raw = send(srv.url, "POST", "/", {
        "Host": "rebind.evil.example", "Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site",
        "Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "DynamoDB_20120810.ListTables",
        "X-Amz-Date": "20260101T000000Z",
        "Authorization": "AWS4-HMAC-SHA256 Credential=k/20260101/us-east-1/dynamodb/aws4_request, "
                         "SignedHeaders=host;x-amz-date, Signature=0000",
    }, body)
    assert status == 200 and VICTIM in json.loads(raw)["TableNames"]
    assert headers["access-control-allow-origin"] == "*"


def test_allowed_hosts_and_the_bound_address() -> None:
    named = launch("--in-memory", "--allowed-hosts", "partita.test,.dev.example")
    anywhere = launch("--in-memory", "--host", "0.0.0.0")
    try:
        for host, status in (("partita.test", 200), ("a.dev.example", 200), ("dev.example", 200),
                             ("other.test", 403), ("10.1.2.3", 403), ("localhost", 200)):
            assert send(named.url, "GET", "/console", {"Host": host})[0] == status, host
        # Bound to every address: any IP literal names this server (an IP cannot be rebound), names do not.
        url = anywhere.url.replace("0.0.0.0", "127.0.0.1")
        for host, status in (("10.1.2.3:8000", 200), ("[fe80::1]:8000", 200), ("evil.example", 403)):
            assert send(url, "GET", "/partita/v1/clock", {"Host": host})[0] == status, host
        # An allowed name may be the Origin of a form (a reverse proxy that rewrites Host).
        status, _, raw = send(named.url, "POST", "/partita/v1/clock", {
            "Host": urlparse(named.url).netloc, "Origin": "https://partita.test", "Content-Type": "application/json",
        }, b'{"advance_seconds": 0}')
        assert status == 200, raw
    finally:
        named.stop()
        anywhere.stop()


def test_metrics_are_not_answered_under_a_rebound_name(srv: Server) -> None:
    status, _, raw = send(srv.url, "GET", "/metrics", {"Host": "rebind.evil.example"})
    assert (status, json.loads(raw)) == (403, {"error": HOST_REFUSED.format(host="rebind.evil.example")})
    assert send(srv.url, "GET", "/metrics", {"Host": _host(srv)})[0] == 200
