"""Helpers for the console tests: plain HTTP to /console pages, and one headless Chromium per session.

Chromium is Debian's (`/usr/bin/chromium`, installed by `./dev`), driven by
Playwright for Python without Playwright's own browser download.
"""

from __future__ import annotations

import http.client
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode, urlparse

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
ARTIFACTS = Path(__file__).parent / "artifacts"


@dataclass
class Page:
    status: int
    headers: dict[str, str]
    text: str


#: url -> (cookie, form token) of the one browser session the plain-HTTP tests play.
_SESSIONS: dict[str, tuple[str, str]] = {}


def form_session(url: str) -> tuple[str, str]:
    """The console's per-browser cookie and form token (servers without `--auth`), as a
    browser gets them: from the first page it loads."""
    if url not in _SESSIONS:
        parsed = urlparse(url)
        conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
        try:
            conn.request("GET", "/console")
            response = conn.getresponse()
            text = response.read().decode()
            cookie = (response.getheader("set-cookie") or "").split(";")[0]
        finally:
            conn.close()
        match = re.search(r'name="csrf" value="([^"]+)"', text)
        assert cookie.startswith("partita_csrf=") and match is not None, text[:300]
        _SESSIONS[url] = (cookie, match.group(1))
    return _SESSIONS[url]


def request(url: str, path: str, *, method: str = "GET", form: dict[str, str] | None = None,
            body: bytes | None = None, content_type: str | None = None, token: bool = True) -> Page:
    """One request, redirects not followed (a form POST answers 303).

    A POST carries the console's cookie and form token, as the browser's forms do
    (`token=False`: as another site's page would send it, without them).
    """
    parsed = urlparse(url)
    payload = urlencode(form).encode() if form is not None else (body or b"")
    headers = {}
    if form is not None or content_type:
        headers["Content-Type"] = content_type or "application/x-www-form-urlencoded"
    if method == "POST" and token:
        cookie, csrf = form_session(url)
        headers["Cookie"] = cookie
        if form is not None and "csrf" not in form:
            payload = urlencode({**form, "csrf": csrf}).encode()
        elif form is None and (content_type or "application/x-www-form-urlencoded") == "application/x-www-form-urlencoded":
            payload = payload + b"&csrf=" + csrf.encode()
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
    try:
        conn.request(method, path, body=payload if method != "GET" else None, headers=headers)
        response = conn.getresponse()
        return Page(response.status, {k.lower(): v for k, v in response.getheaders()},
                    response.read().decode("utf-8", "replace"))
    finally:
        conn.close()


def item_path(table: str, key: dict[str, Any]) -> str:
    return f"/console/tables/{quote(table, safe='')}/item?key=" + quote(json.dumps(key), safe="")


def version_in(text: str) -> str:
    match = re.search(r'name="version" value="(\w+)"', text)
    assert match is not None
    return match.group(1)


def text_between(text: str, pattern: str) -> list[str]:
    return re.findall(pattern, text, re.S)


#: One Playwright and one Chromium per process, shared by every module that imports `browser`
#: (each import is its own session fixture, and Playwright's sync API cannot run twice at once).
_SHARED: dict[str, Any] = {"users": 0}


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    if not os.path.exists(CHROMIUM):
        if os.environ.get("PARTITA_SKIP_BROWSER") == "1":
            pytest.skip("PARTITA_SKIP_BROWSER=1 and no /usr/bin/chromium")
        pytest.fail("the console's browser tests need Debian's chromium: run ./dev (it installs it)")
    from playwright.sync_api import sync_playwright

    if _SHARED["users"] == 0:
        _SHARED["manager"] = sync_playwright()
        playwright = _SHARED["manager"].__enter__()
        _SHARED["chromium"] = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    _SHARED["users"] += 1
    try:
        yield _SHARED["chromium"]
    finally:
        _SHARED["users"] -= 1
        if _SHARED["users"] == 0:
            _SHARED.pop("chromium").close()
            _SHARED.pop("manager").__exit__(None, None, None)


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    tab = context.new_page()
    tab.set_default_timeout(15_000)
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    tab.on("dialog", lambda dialog: dialog.accept())
    yield tab
    context.close()
    assert errors == [], f"script errors on the page: {errors}"


def screenshot(tab: Any, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}-{os.environ.get('PARTITA_TEST_STORE', 'memory')}.png"
    tab.screenshot(path=str(path), full_page=True)
    return path


def make_table(ddb: Any, name: str, *, sk: tuple[str, str] | None = None,
               more: dict[str, str] | None = None, **extra: Any) -> None:
    """A table keyed by pk (S) and optionally `sk`, with `more` attribute definitions for its indexes."""
    schema = [{"AttributeName": "pk", "KeyType": "HASH"}]
    definitions = {"pk": "S"}
    if sk is not None:
        schema.append({"AttributeName": sk[0], "KeyType": "RANGE"})
        definitions[sk[0]] = sk[1]
    definitions.update(more or {})
    extra.setdefault("BillingMode", "PAY_PER_REQUEST")
    ddb.create_table(TableName=name, KeySchema=schema, AttributeDefinitions=[
        {"AttributeName": a, "AttributeType": t} for a, t in definitions.items()], **extra)
