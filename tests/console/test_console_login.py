"""The console with `--auth`: sign-in, the session cookie, CSRF, sign-out, IAM policies, several workers."""

from __future__ import annotations

import http.client
import json
import re
import shutil
import signal
import ssl
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode, urlparse

import pytest
from auth_helpers import ALLOW_ALL, client, send, signed_headers, user, write_auth
from conftest import Server, launch
from test_auth_tls import _certificate

DENY_DELETE = {"Effect": "Deny", "Action": "dynamodb:DeleteTable", "Resource": "*"}
DENY_DESCRIBE = {"Effect": "Deny", "Action": "dynamodb:DescribeTable", "Resource": "*"}
DENY_SCAN = {"Effect": "Deny", "Action": "dynamodb:Scan", "Resource": "*"}


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    cookies: list[str]
    text: str


@dataclass
class Browser:
    """A agent as far as the console can tell: a cookie jar, forms, no redirects followed."""

    url: str
    jar: dict[str, str] = field(default_factory=dict)
    tls: ssl.SSLContext | None = None

    def send(self, path: str, form: dict[str, str] | None = None, method: str | None = None) -> Answer:
        parsed = urlparse(self.url)
        headers = {}
        if self.jar:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.jar.items())
        body = None
        if form is not None:
            body = urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        conn = (http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30) if self.tls is None
                else http.client.HTTPSConnection(parsed.hostname, parsed.port, timeout=30, context=self.tls))
        try:
            conn.request(method or ("POST" if form is not None else "GET"), path, body=body, headers=headers)
            response = conn.getresponse()
            cookies = response.msg.get_all("set-cookie") or []
            for cookie in cookies:
                name, _, rest = cookie.partition("=")
                value = rest.split(";")[0]
                if "Max-Age=0" in cookie:
                    self.jar.pop(name, None)
                else:
                    self.jar[name] = value
            return Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, cookies,
                          response.read().decode("utf-8", "replace"))
        finally:
            conn.close()

    def sign_in(self, key: str, secret: str) -> Answer:
        form = self.send("/console/login")
        assert form.status == 200
        nonce = re.search(r'name="nonce" value="([^"]+)"', form.text)
        assert nonce is not None
        return self.send("/console/login", {"nonce": nonce.group(1), "next": "/console",
                                            "access_key_id": key, "secret_access_key": secret})

    def csrf(self, path: str = "/console") -> str:
        shown = self.send(path)
        assert shown.status == 200, shown.text
        match = re.search(r'name="csrf" value="([^"]+)"', shown.text)
        assert match is not None
        return match.group(1)


def _auth(tmp: Path) -> Path:
    return write_auth(tmp / "users.json", user("admin", *ALLOW_ALL["Statement"]),
                      user("careful", *ALLOW_ALL["Statement"], DENY_DELETE),
                      user("blind", *ALLOW_ALL["Statement"], DENY_DESCRIBE),
                      user("noscan", *ALLOW_ALL["Statement"], DENY_SCAN))


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    srv = launch("--in-memory", "--auth", str(_auth(tmp_path_factory.mktemp("console-login"))))
    yield srv.url
    srv.stop()


def _table(url: str, name: str) -> None:
    client(url, "admin").create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}])


def test_signed_out_pages_redirect_to_the_login_page_and_posts_are_refused(url: str) -> None:
    agent = Browser(url)
    shown = agent.send("/console/tables/t1/query?x=1")
    assert shown.status == 303
    assert shown.headers["location"] == "/console/login?next=/console/tables/t1/query%3Fx%3D1"
    assert agent.send("/console").headers["location"] == "/console/login?next=/console"
    posted = agent.send("/console/tables", {"name": "made", "hash": "pk", "hash_type": "S"})
    assert posted.status == 403
    assert "Sign in to the console first" in posted.text
    assert "made" not in client(url, "admin").list_tables()["TableNames"]
    assert agent.send("/console/static/console.css").status == 200  # the login shown's stylesheet
    login = agent.send("/console/login")
    assert login.status == 200 and 'id="login"' in login.text


def test_a_good_secret_signs_in_with_a_strict_http_only_cookie(url: str) -> None:
    agent = Browser(url)
    answer = agent.sign_in("AKIAADMIN", "admin-secret")
    assert answer.status == 303 and answer.headers["location"] == "/console"
    (session,) = [c for c in answer.cookies if c.startswith("partita_session=")]
    token = session.split(";")[0].split("=", 1)[1]
    assert len(token) >= 43  # 256 random bits, url-safe base64
    attributes = {part.strip() for part in session.split(";")[1:]}
    assert {"HttpOnly", "SameSite=Strict", "Path=/console", "Max-Age=43200"} <= attributes
    assert "Secure" not in attributes  # plain HTTP (a Secure cookie would never come back)
    shown = agent.send("/console")
    assert shown.status == 200 and "<small>admin</small>" in shown.text and 'id="tables"' in shown.text


def test_signing_in_goes_back_to_the_page_asked_for_and_only_to_a_console_page(url: str) -> None:
    for asked, landed in (("/console/tables/t1/query?x=1&y=2", "/console/tables/t1/query?x=1&y=2"),
                          ("//evil.example/console", "/console"), ("/console//evil.example", "/console"),
                          ("/console/x\r\nSet-Cookie: a=b", "/console"), ("/console\\evil", "/console"),
                          ("https://evil.example/", "/console"), ("/console/login", "/console")):
        agent = Browser(url)
        nonce = re.search(r'name="nonce" value="([^"]+)"', agent.send("/console/login").text)
        assert nonce is not None
        answer = agent.send("/console/login", {"nonce": nonce.group(1), "next": asked,
                                               "access_key_id": "AKIAADMIN", "secret_access_key": "admin-secret"})
        assert (answer.status, answer.headers["location"]) == (303, landed), asked
        assert "a" not in agent.jar


def test_a_bad_secret_and_an_unknown_key_are_refused(url: str) -> None:
    for key, secret in (("AKIAADMIN", "admin-secreT"), ("AKIAADMIN", ""), ("AKIANOBODY", "admin-secret")):
        agent = Browser(url)
        answer = agent.sign_in(key, secret)
        assert answer.status == 403, (key, secret)
        assert "The access key id or the secret access key is wrong." in answer.text
        assert "partita_session" not in agent.jar
        assert agent.send("/console").status == 303


def test_the_login_form_needs_its_own_csrf_token(url: str) -> None:
    agent = Browser(url)
    agent.send("/console/login")
    answer = agent.send("/console/login", {"nonce": "forged", "access_key_id": "AKIAADMIN",
                                             "secret_access_key": "admin-secret"})
    assert answer.status == 403 and "partita_session" not in agent.jar


def test_a_form_without_the_session_csrf_token_writes_nothing(url: str) -> None:
    agent = Browser(url)
    agent.sign_in("AKIAADMIN", "admin-secret")
    _table(url, "csrf-kept")
    for form in ({}, {"csrf": "wrong"}):
        answer = agent.send("/console/tables/csrf-kept/delete", form)
        assert answer.status == 403
        assert "CSRF token is missing or wrong" in answer.text
    assert "csrf-kept" in client(url, "admin").list_tables()["TableNames"]
    answer = agent.send("/console/tables/csrf-kept/delete", {"csrf": agent.csrf()})
    assert answer.status == 303
    assert "csrf-kept" not in client(url, "admin").list_tables()["TableNames"]


def test_sign_out_ends_the_session_for_every_holder_of_the_cookie(url: str) -> None:
    agent = Browser(url)
    agent.sign_in("AKIAADMIN", "admin-secret")
    stolen = dict(agent.jar)
    csrf = agent.csrf()
    answer = agent.send("/console/logout", {"csrf": csrf})
    assert answer.status == 303 and answer.headers["location"] == "/console/login"
    assert any(c.startswith("partita_session=;") and "Max-Age=0" in c for c in answer.cookies)
    replay = Browser(url, stolen)
    assert replay.send("/console").status == 303
    assert replay.send("/console/tables", {"csrf": csrf, "name": "x", "hash": "pk"}).status == 403


def test_a_policy_denying_delete_table_holds_in_the_console(url: str) -> None:
    _table(url, "guarded")
    agent = Browser(url)
    agent.sign_in("AKIACAREFUL", "careful-secret")
    answer = agent.send("/console/tables/guarded/delete", {"csrf": agent.csrf()})
    assert answer.status == 400
    assert ("AccessDeniedException: User: arn:aws:iam::000000000000:user/careful is not authorized to perform: "
            "dynamodb:DeleteTable on resource: arn:aws:dynamodb:us-east-1:000000000000:table/guarded "
            "with an explicit deny in an identity-based policy") in answer.text.replace("&#39;", "'")
    assert "guarded" in client(url, "admin").list_tables()["TableNames"]
    # What the policy allows still works from the console.
    assert agent.send("/console/tables/guarded").status == 200


def test_the_live_partition_map_is_served_to_a_signed_in_browser(url: str) -> None:
    _table(url, "mapped")
    path = "/partita/v1/tables/mapped/partitions"
    status, api = send(url, signed_headers(url, "admin", b"", None, path, "GET"), b"", path, "GET")
    assert status == 200
    agent = Browser(url)
    assert agent.send("/console/tables/mapped/partitions").status == 303
    agent.sign_in("AKIAADMIN", "admin-secret")
    shown = agent.send("/console/tables/mapped/partitions")
    assert shown.status == 200 and shown.headers["content-type"] == "application/json"
    mine = json.loads(shown.text)
    assert mine.keys() == api.keys() and mine["partitions"] == api["partitions"]  # no traffic in between
    assert agent.send("/console/tables/mapped/hot-keys").status == 200
    blind = Browser(url)
    blind.sign_in("AKIABLIND", "blind-secret")
    refused = blind.send("/console/tables/mapped/partitions")
    assert refused.status == 400 and "dynamodb:DescribeTable" in refused.text


def test_items_expiring_next_are_shown_only_to_a_user_who_may_scan(url: str) -> None:
    _table(url, "expiring")
    admin = client(url, "admin")
    admin.update_time_to_live(TableName="expiring", TimeToLiveSpecification={"Enabled": True, "AttributeName": "exp"})
    admin.put_item(TableName="expiring", Item={"pk": {"S": "soon"}, "exp": {"N": str(int(time.time()) + 3600)}})
    seen = {}
    for name in ("admin", "noscan"):
        agent = Browser(url)
        agent.sign_in(f"AKIA{name.upper()}", f"{name}-secret")
        shown = agent.send("/console/tables/expiring/streams")
        assert shown.status == 200
        seen[name] = "/console/tables/expiring/item?key=" in shown.text
    assert seen == {"admin": True, "noscan": False}


def test_without_auth_the_console_needs_no_sign_in(endpoint: str) -> None:
    shown = Browser(endpoint).send("/console")
    # Nobody signs in; the forms still carry the browser's token (issue 32), and there is no sign-out.
    assert shown.status == 200 and 'name="csrf"' in shown.text and 'id="logout"' not in shown.text
    assert Browser(endpoint).send("/console/login").status == 404


def test_a_session_opened_on_one_worker_is_served_by_the_others(tmp_path: Path) -> None:
    srv: Server = launch("--data-dir", str(tmp_path / "data"), "--workers", "2", "--auth", str(_auth(tmp_path)))
    try:
        agent = Browser(srv.url)
        assert agent.sign_in("AKIAADMIN", "admin-secret").status == 303
        # Each request is a new connection, which the kernel spreads over the workers.
        for _ in range(30):
            assert agent.send("/console").status == 200
        assert agent.send("/console/logout", {"csrf": agent.csrf()}).status == 303
        for _ in range(10):
            assert agent.send("/console").status == 303
    finally:
        srv.stop()


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
def test_over_tls_the_session_cookie_is_secure(tmp_path: Path) -> None:
    cert, key = _certificate(tmp_path)
    srv = launch("--in-memory", "--tls-cert", str(cert), "--tls-key", str(key), "--auth", str(_auth(tmp_path)))
    try:
        agent = Browser(srv.url, tls=ssl.create_default_context(cafile=str(cert)))
        answer = agent.sign_in("AKIAADMIN", "admin-secret")
        (session,) = [c for c in answer.cookies if c.startswith("partita_session=")]
        assert "Secure" in {part.strip() for part in session.split(";")}
        assert agent.send("/console").status == 200
    finally:
        srv.stop()


def test_a_rotated_secret_ends_the_sessions_opened_with_the_old_one(tmp_path: Path) -> None:
    path = _auth(tmp_path)
    srv = launch("--in-memory", "--auth", str(path))
    try:
        agent = Browser(srv.url)
        agent.sign_in("AKIAADMIN", "admin-secret")
        assert agent.send("/console").status == 200
        rotated = user("admin", *ALLOW_ALL["Statement"])
        rotated["secret_access_key"] = "admin-new-secret"
        write_auth(path, rotated)
        srv.process.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while agent.send("/console").status == 200 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert agent.send("/console").status == 303
        assert agent.sign_in("AKIAADMIN", "admin-new-secret").status == 303
        assert agent.send("/console").status == 200
    finally:
        srv.stop()
