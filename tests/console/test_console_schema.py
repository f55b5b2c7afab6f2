"""The console's Schema page (`--schema` in warn mode): the entities and the latest violations."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from auth_helpers import ALLOW_ALL, client, user, write_auth
from conftest import Server, client_for, launch
from console_helpers import browser, page, request, screenshot  # noqa: F401
from guard_helpers import guard_server, keyed_table, store_args
from test_console_login import Browser

SCHEMA = {"mode": "warn", "entities": [
    {"name": "Customer", "table": "Shop", "match": {"pk": "CLIENTE#*"},
     "schema": {"type": "object", "required": ["email"], "properties": {"age": {"type": "integer", "maximum": 1.5}}}},
    {"name": "Secret", "table": "Vault", "schema": {"required": ["v"]}},
]}


@pytest.fixture(scope="module")
def warned(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = guard_server(tmp_path_factory.mktemp("console-guard"), SCHEMA)
    ddb = client_for(srv.url)
    keyed_table(ddb, "Shop", sort=None)
    ddb.put_item(TableName="Shop", Item={"pk": {"S": "CLIENTE#1"}, "age": {"S": "<b>old</b>"}})
    yield srv
    srv.stop()


def test_the_schema_page_lists_entities_and_violations(warned: Server) -> None:
    shown = request(warned.url, "/console/schema")
    assert shown.status == 200
    assert '<a href="/console/schema" id="nav-schema">Schema</a>' in shown.text
    assert re.search(r'<small id="guard-mode">warn mode · .*\.json</small>', shown.text)
    rows = re.findall(r'<tr class="entity" data-entity="(\w+)">.*?class="num violations">(\d+)</td>', shown.text, re.S)
    assert rows == [("Customer", "1"), ("Secret", "0")]
    assert "<code>pk</code> ~ <code>CLIENTE#*</code>" in shown.text
    assert "&#34;maximum&#34;: 1.5" in shown.text  # the schema, exact, escaped
    (violation,) = re.findall(r'<tr class="violation">(.*?)</tr>', shown.text, re.S)
    assert re.search(r'<time datetime="[0-9T:+.-]+" title="[0-9.]+">\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC</time> '
                     r'<small class="relative">\((now|\d+ s ago)\)</small>', violation)
    assert "<td>Put</td>" in violation
    assert 'pk=&#34;CLIENTE#1&#34;</a>' in violation
    assert ("<li>&#39;email&#39; is a required property</li><li>at age: &#39;&lt;b&gt;old&lt;/b&gt;&#39; is not "
            "of type &#39;integer&#39;</li>") in violation


def test_without_a_schema_the_page_says_so_and_the_nav_has_no_link(endpoint: str) -> None:
    shown = request(endpoint, "/console/schema")
    assert shown.status == 200
    assert 'id="no-schema"' in shown.text and "partita serve --schema FILE" in shown.text
    assert "nav-schema" not in request(endpoint, "/console").text


def test_with_auth_a_violation_is_shown_only_to_who_may_scan_its_table(tmp_path: Path) -> None:
    deny_vault = {"Effect": "Deny", "Action": "dynamodb:Scan", "Resource": "arn:aws:dynamodb:*:*:table/Vault"}
    auth = write_auth(tmp_path / "users.json", user("admin", *ALLOW_ALL["Statement"]),
                      user("nosecret", *ALLOW_ALL["Statement"], deny_vault))
    (tmp_path / "schema.json").write_text(json.dumps(SCHEMA))
    srv = launch(*store_args(tmp_path / "store"), "--auth", str(auth), "--schema", str(tmp_path / "schema.json"))
    try:
        admin = client(srv.url, "admin")
        for name in ("Shop", "Vault"):
            keyed_table(admin, name, sort=None)
            admin.put_item(TableName=name, Item={"pk": {"S": "CLIENTE#9"}})
        seen = {}
        for name in ("admin", "nosecret"):
            agent = Browser(srv.url)
            agent.sign_in(f"AKIA{name.upper()}", f"{name}-secret")
            text = agent.send("/console/schema").text
            seen[name] = re.findall(r'<tr class="violation">.*?<a href="/console/tables/(\w+)">', text, re.S)
        assert seen == {"admin": ["Vault", "Shop"], "nosecret": ["Shop"]}
    finally:
        srv.stop()


def test_the_schema_page_in_the_browser(page: Any, warned: Server) -> None:  # noqa: F811 (the imported fixture)
    page.goto(warned.url + "/console")
    page.click("#nav-schema")
    page.wait_for_url("**/console/schema")
    assert page.locator("tr.violation").count() == 1
    assert page.locator("tr.violation li").nth(1).inner_text() == "at age: '<b>old</b>' is not of type 'integer'"
    assert page.locator("tr.violation b").count() == 0  # the value is text, not markup
    page.locator("tr.entity details summary").first.click()
    assert '"required": [' in page.locator("tr.entity pre").first.inner_text()
    screenshot(page, "schema-guard")
