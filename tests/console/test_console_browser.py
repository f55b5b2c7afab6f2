"""The console in a real browser: headless Chromium (Debian's) driven by Playwright.

Few and quick (one browser for the session, a handful of pages a test):
the machine running the suite is small and shared.
"""

from __future__ import annotations

import http.server
import json
import re
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError
from capacity_helpers import strict_client
from conftest import STORE, Server, client_for, create_table, launch
from console_helpers import browser, item_path, make_table, page, request, screenshot  # noqa: F401
from test_console_login import _auth, _table


@pytest.fixture(scope="module")
def hot_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    store = ["--data-dir", str(tmp_path_factory.mktemp("console"))] if STORE == "sqlite" else ["--in-memory"]
    srv = launch(*store, "--emulate-throughput")
    yield srv
    srv.stop()


def test_tables_page_creates_a_table_from_the_form_and_deletes_it(page: Any, ddb: Any, endpoint: str,  # noqa: F811 (the imported fixture)
                                                                  table_name: str) -> None:
    page.goto(endpoint + "/console")
    form = page.locator("#create-table")
    form.locator("input[name=name]").fill(table_name)
    form.locator("input[name=hash]").fill("pk")
    form.locator("input[name=range]").fill("sk")
    form.locator("select[name=range_type]").select_option("N")
    form.locator("input[name=gsi_name]").fill("byG")
    form.locator("input[name=gsi_hash]").fill("g")
    form.locator("select[name=stream]").select_option("NEW_AND_OLD_IMAGES")
    form.locator("button[type=submit]").click()
    page.wait_for_url(f"**/console/tables/{table_name}")
    assert page.locator("h1").inner_text().startswith(table_name)
    assert page.locator("section.map").count() == 2  # the table and its GSI
    assert page.locator("section.map").nth(0).locator(".partition").count() == 8
    doc = ddb.describe_table(TableName=table_name)["Table"]
    assert doc["GlobalSecondaryIndexes"][0]["IndexName"] == "byG"
    page.goto(endpoint + "/console")
    row = page.locator(f'tr[data-table="{table_name}"]')
    assert row.locator(".partitions").inner_text() == "8"
    screenshot(page, "tables")
    row.locator("button.danger").click()  # confirm() is accepted by the fixture
    page.wait_for_url("**/console")
    assert page.locator(f'tr[data-table="{table_name}"]').count() == 0
    assert table_name not in ddb.list_tables()["TableNames"]


def test_partition_strip_shows_the_hot_partition_live_with_throttles_and_hover(
    page: Any, hot_server: Server, table_name: str  # noqa: F811 (the imported fixture)
) -> None:
    url = hot_server.url
    ddb = strict_client(url)
    create_table(ddb, table_name)
    for i in range(40):
        ddb.put_item(TableName=table_name, Item={"pk": {"S": f"USER#{i}"}, "v": {"S": "z" * 100}})
    page.goto(f"{url}/console/tables/{table_name}")
    strip = page.locator("section.map").nth(0).locator(".strip")
    assert strip.locator(".partition").count() == 8
    before = page.locator("#maps").get_attribute("data-refreshed")
    # One hot key: 293 write units a put, faster than a partition's 1000 a second.
    throttled = 0
    for _ in range(12):
        try:
            ddb.put_item(TableName=table_name, Item={"pk": {"S": "STATUS#ACTIVE"}, "v": {"S": "x" * 300_000}})
        except ClientError as error:
            assert error.response["Error"]["Code"] == "ThrottlingException"
            throttled += 1
    assert throttled >= 1
    layout = json.loads(request(url, f"/partita/v1/tables/{table_name}/partitions").text)
    hot_number = max(layout["partitions"], key=lambda p: p["write_units_per_minute"])["number"]
    # No reload: the page's script polls the introspection API and redraws the strip.
    page.wait_for_function(
        "n => { const c = document.querySelectorAll('section.map')[0].querySelectorAll('.partition.hot');"
        " return c.length === 1 && c[0].dataset.number === String(n) && c[0].classList.contains('throttled'); }",
        arg=hot_number,
    )
    # data-refreshed is set once both fetches (strip and hot keys) are drawn: after the strip, so wait.
    page.wait_for_function("b => document.getElementById('maps').getAttribute('data-refreshed') !== b",
                           arg=before)
    hot = strip.locator(".partition.hot")
    assert float(hot.get_attribute("data-heat")) == 1.0
    assert hot.locator(".mark").inner_text() == f"✕ {throttled}"
    cold = strip.locator(".partition:not(.hot)")
    assert cold.count() == 7 and all(float(cold.nth(i).get_attribute("data-heat")) < 0.5 for i in range(7))
    hot.hover()
    details = page.locator("section.map").nth(0).locator(".hover-details").inner_text()
    part = layout["partitions"][hot_number]
    assert details.startswith(f"Partition {hot_number}: {part['item_count']} items, {part['size_bytes']} bytes")
    assert f"{throttled} throttled" in details
    first_key = page.locator("section.map").nth(0).locator(".hot-keys tbody tr").first.inner_text()
    assert "STATUS#ACTIVE" in first_key
    shot = screenshot(page, "partition-strip")
    assert shot.stat().st_size > 10_000


def test_query_scan_page_cost_and_code_in_the_browser(page: Any, ddb: Any, endpoint: str, table_name: str) -> None:  # noqa: F811 (the imported fixture)
    make_table(ddb, table_name, sk=("sk", "N"))
    for user in range(4):
        for i in range(10):
            ddb.put_item(TableName=table_name, Item={"pk": {"S": f"u{user}"}, "sk": {"N": str(i)}, "pad": {"S": "p" * 800}})
    page.goto(f"{endpoint}/console/tables/{table_name}/query")
    page.check("input[name=op][value=Scan]")
    page.fill("input[name=filter]", "pk = :p")
    page.fill("input[name=values]", '{":p": {"S": "u2"}}')
    page.click("#query-form button[type=submit]")
    page.wait_for_selector("#results")
    total = page.locator("#cost tr.total")
    answer = ddb.scan(TableName=table_name, FilterExpression="pk = :p", ExpressionAttributeValues={":p": {"S": "u2"}},
                      ReturnConsumedCapacity="TOTAL")
    assert total.get_attribute("data-scanned") == str(answer["ScannedCount"]) == "40"
    assert total.get_attribute("data-count") == str(answer["Count"]) == "10"
    assert float(total.get_attribute("data-units")) == answer["ConsumedCapacity"]["CapacityUnits"]
    assert "Read 40 items" in page.locator(".wasted-note").first.inner_text()
    suggestion = page.locator("#suggestion")
    assert suggestion.locator("tr.total").get_attribute("data-scanned") == "10"
    # The code is folded below the items and their cost: one click shows it.
    assert not suggestion.locator("details.code-tabs").evaluate("d => d.open")
    suggestion.locator("details.code-tabs summary").click()
    assert "client.query(" in suggestion.locator(".code-boto3").inner_text()
    page.locator("details.code-tabs summary").last.click()
    assert "client.scan(" in page.locator(".code-boto3").last.inner_text()
    assert page.locator("table.items tbody tr").count() == 10
    screenshot(page, "scan-vs-query")


def test_item_page_sets_binary_and_a_concurrent_edit(page: Any, ddb: Any, endpoint: str, table_name: str) -> None:  # noqa: F811 (the imported fixture)
    make_table(ddb, table_name, StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"})
    key = {"pk": {"S": "item-1"}}
    ddb.put_item(TableName=table_name, Item={**key, "ss": {"SS": ["red", "blue"]}, "bin": {"B": b"\x00\xffhi"},
                                             "n": {"N": "3.14159265358979323846264338327950288"}})
    page.goto(endpoint + item_path(table_name, key))
    types = dict(zip(page.locator("#attributes td:first-child").all_inner_texts(),
                     page.locator("#attributes td.type").all_inner_texts(), strict=True))
    assert types == {"bin": "Binary (4 bytes)", "n": "Number", "pk": "String", "ss": "String set (2)"}
    values = page.locator("#attributes td.value").all_inner_texts()
    assert '{"$binary": "AP9oaQ=="}' in values and '{"$set": ["red", "blue"]}' in values
    assert "3.14159265358979323846264338327950288" in values
    plain = page.locator("#edit-plain textarea").input_value()
    assert '"n": 3.14159265358979323846264338327950288' in plain
    # Someone else changes the item after the page loaded it.
    ddb.update_item(TableName=table_name, Key=key, UpdateExpression="SET who = :w", ExpressionAttributeValues={":w": {"S": "other"}})
    page.locator("#edit-plain textarea").fill(plain.replace('"pk": "item-1"', '"pk": "item-1", "mine": true'))
    page.click("#edit-plain button[type=submit]")
    assert "The item changed since you loaded it" in page.locator("#item-error").inner_text()
    item = ddb.get_item(TableName=table_name, Key=key)["Item"]
    assert "mine" not in item and item["who"] == {"S": "other"}
    # Reloaded, the edit goes through.
    page.goto(endpoint + item_path(table_name, key))
    edited = page.locator("#edit-plain textarea").input_value().replace('"pk": "item-1"', '"pk": "item-1", "mine": true')
    page.locator("#edit-plain textarea").fill(edited)
    page.click("#edit-plain button[type=submit]")
    assert page.locator("#notice").inner_text() == "Saved."
    assert ddb.get_item(TableName=table_name, Key=key)["Item"]["mine"] == {"BOOL": True}
    screenshot(page, "item")
    # The collection and the stream in the browser too.
    page.goto(f"{endpoint}/console/tables/{table_name}/collection?pk=item-1")
    assert page.locator("#collection").get_attribute("data-count") == "1"
    page.goto(f"{endpoint}/console/tables/{table_name}/streams")
    assert page.locator("#records tr.record").count() == 3
    ddb.delete_item(TableName=table_name, Key=key)
    page.wait_for_function("() => document.querySelectorAll('#records tr.record').length === 4")
    assert re.match(r"REMOVE", page.locator("#records tr.record").first.inner_text())
    screenshot(page, "streams")


def test_signing_in_and_out_in_chromium(page: Any, tmp_path: Path) -> None:  # noqa: F811 (the imported fixture)
    """The sign-in form in a real browser (here, not in test_console_login.py: one Playwright per process)."""
    srv = launch("--in-memory", "--auth", str(_auth(tmp_path)))
    try:
        _signing_in_and_out(page, srv.url)
    finally:
        srv.stop()


def _signing_in_and_out(page: Any, url: str) -> None:  # noqa: F811 (the imported fixture)
    _table(url, "in-chromium")
    page.goto(url + "/console/tables/in-chromium")
    assert page.url.startswith(url + "/console/login?next=")
    form = page.locator("#login")
    form.locator("input[name=access_key_id]").fill("AKIACAREFUL")
    form.locator("input[name=secret_access_key]").fill("careful-secret")
    form.locator("button[type=submit]").click()
    page.wait_for_url(url + "/console/tables/in-chromium")
    assert page.locator("#logout small").inner_text() == "careful"
    # The live strip polls the console's own JSON, which the session cookie opens.
    page.wait_for_function("() => document.getElementById('maps').hasAttribute('data-refreshed')")
    assert page.context.cookies()[0]["httpOnly"] is True
    page.goto(url + "/console")
    page.locator('tr[data-table="in-chromium"] form.delete-table button').click()  # the dialog is accepted
    assert "is not authorized to perform: dynamodb:DeleteTable" in page.locator("#error-message").inner_text()
    page.goto(url + "/console")
    page.locator("#logout button").click()
    page.wait_for_url(url + "/console/login")
    page.goto(url + "/console")
    assert page.url.startswith(url + "/console/login")


# -- issue 32: a hostile page without `--auth` --------------------------------------------------
# A page served from another origin (another port of the loopback: the same site to the browser,
# another origin) tries what the adversarial run recorded: a form POST that deletes a table, one
# that creates a table, `no-cors` fetches that reset the server and move its clock a century
# ahead. Chromium sends them (none needs a preflight); Partita refuses each. In this module
# because the session's one Chromium (the imported `browser` fixture) must be shared.

ATTACK = """<!doctype html>
<html><body>
<iframe name="sink"></iframe>
<form id="delete" method="post" action="{target}/console/tables/victim/delete" target="sink"></form>
<form id="create" method="post" action="{target}/console/tables" target="sink">
  <input name="name" value="made-by-evil"><input name="hash" value="pk"></form>
<script>
async function attack() {{
  const out = [];
  for (const [path, body] of [["/partita/v1/reset", ""], ["/partita/v1/clock", '{{"advance_seconds": 3153600000}}']]) {{
    try {{ await fetch("{target}" + path, {{method: "POST", mode: "no-cors", body}}); out.push("sent"); }}
    catch (e) {{ out.push("blocked"); }}
  }}
  document.getElementById("delete").submit();
  await new Promise(r => setTimeout(r, 300));
  document.getElementById("create").submit();
  await new Promise(r => setTimeout(r, 300));
  document.title = "done " + out.join(",");
}}
attack();
</script>
</body></html>
"""


@pytest.fixture(scope="module")
def target() -> Iterator[Server]:  # a server of its own: the attack would drop the shared one's tables
    srv = launch("--in-memory")
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def hostile(target: Server) -> Iterator[str]:
    html = ATTACK.format(target=target.url).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the http.server name)
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(html)))
            self.end_headers()
            self.wfile.write(html)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


def test_a_hostile_page_changes_nothing(page: Any, target: Server, hostile: str) -> None:  # noqa: F811
    ddb = client_for(target.url)
    create_table(ddb, "victim")
    ddb.put_item(TableName="victim", Item={"pk": {"S": "a"}})
    page.goto(hostile)
    page.wait_for_function("document.title.startsWith('done')")
    assert page.title() == "done sent,sent"  # the browser did send both fetches
    frame = page.frame(name="sink")
    assert frame is not None
    frame.wait_for_load_state()
    assert "Partita refuses a cross-site request to its console and admin routes" in frame.content()
    assert ddb.list_tables()["TableNames"] == ["victim"]
    assert ddb.get_item(TableName="victim", Key={"pk": {"S": "a"}})["Item"] == {"pk": {"S": "a"}}
    # The clock did not move.
    with urllib.request.urlopen(target.url + "/partita/v1/clock", timeout=10) as answer:
        assert json.loads(answer.read())["offset_seconds"] == 0


def test_the_console_itself_still_deletes_through_its_form(page: Any, target: Server) -> None:  # noqa: F811
    ddb = client_for(target.url)
    create_table(ddb, "mine")
    page.goto(target.url + "/console")
    page.locator('tr[data-table="mine"] button.danger').click()  # the fixture accepts confirm()
    page.wait_for_url("**/console")
    assert "mine" not in ddb.list_tables()["TableNames"]
