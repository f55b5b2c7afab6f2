"""The console's readability fixes (issue 28, part 5), each seen in Chromium with a screenshot kept.

Screenshots go to tests/console/artifacts/ (gitignored): streams-keys-times,
table-first-items, query-items-first, item-one-editor, hostile-item-*.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from conftest import STORE, client_for, create_table, launch
from console_helpers import browser, item_path, make_table, page, request, screenshot  # noqa: F401
from guard_helpers import store_args
from test_console_vectors import _make as make_vector_table

from partita.engine.model.sizes import item_size

DATE = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC"


def _own_server(tmp_path: Path, *extra: str) -> Any:
    """A server of the test's own: these tests read the server clock, which others may move."""
    return launch(*(["--data-dir", str(tmp_path / "s")] if STORE == "sqlite" else ["--in-memory"]), *extra)


def test_streams_page_shows_keys_dates_and_distances_with_dynamodb_json_one_click_away(
    page: Any, tmp_path: Path, table_name: str  # noqa: F811 (the imported fixture)
) -> None:
    srv = _own_server(tmp_path)
    try:
        ddb = client_for(srv.url)
        make_table(ddb, table_name, sk=("sk", "N"),
                   StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"})
        ddb.update_time_to_live(TableName=table_name, TimeToLiveSpecification={"Enabled": True, "AttributeName": "exp"})
        now = json.loads(request(srv.url, "/partita/v1/clock").text)["now"]
        ddb.put_item(TableName=table_name, Item={"pk": {"S": "a"}, "sk": {"N": "1"}, "exp": {"N": str(int(now) + 3599)}})
        ddb.put_item(TableName=table_name, Item={"pk": {"S": "b"}, "sk": {"N": "2"}, "exp": {"N": str(int(now) + 93660)}})
        page.goto(f"{srv.url}/console/tables/{table_name}/streams")
        assert "built-in method" not in page.content()
        records = page.locator("#records tr.record")
        assert records.count() == 2
        newest = records.first
        assert newest.locator("td.keys").inner_text() == 'pk="b", sk=2'
        assert newest.locator("td.keys a").get_attribute("href") == item_path(table_name, {"pk": {"S": "b"}, "sk": {"N": "2"}}).replace(
            "%7B%22pk%22%3A%20%7B%22S%22%3A%20%22b%22%7D%2C%20%22sk%22%3A%20%7B%22N%22%3A%20%222%22%7D%7D",
            "%7B%22pk%22%3A%7B%22S%22%3A%22b%22%7D%2C%22sk%22%3A%7B%22N%22%3A%222%22%7D%7D")
        assert re.fullmatch(rf"{DATE} \((now|\d+ s ago)\)", newest.locator("td.time").inner_text())
        assert newest.locator("td.image").first.inner_text() == f'{{"pk": "b", "sk": 2, "exp": {int(now) + 93660}}}'
        # DynamoDB JSON is one click away, not a second notation on the page.
        details = newest.locator("details")
        assert not details.evaluate("d => d.open")
        details.locator("summary").click()
        shown = json.loads(details.locator("pre").inner_text())
        assert shown["Keys"] == {"pk": {"S": "b"}, "sk": {"N": "2"}}
        assert shown["NewImage"]["exp"] == {"N": str(int(now) + 93660)}
        rows = page.locator("#expiring tr.expiry")
        assert rows.count() == 2
        first = rows.first
        assert re.fullmatch(rf"{DATE} \(in 59 min\)", first.locator("td").nth(1).inner_text())
        assert first.locator("td time").get_attribute("title") == str(int(now) + 3599)
        assert first.locator("td.countdown").inner_text() == "in 59 min"
        assert rows.nth(1).locator("td.countdown").inner_text() == "in 1 day 2 h"
        assert re.search(rf"server clock {DATE}", page.locator("#streams-section h2").nth(1).inner_text())
        screenshot(page, "streams-keys-times")
    finally:
        srv.stop()


def test_table_page_lists_the_first_scan_page_linking_collections_and_items(
    page: Any, ddb: Any, endpoint: str, table_name: str  # noqa: F811 (the imported fixture)
) -> None:
    make_table(ddb, table_name, sk=("sk", "S"))
    for user in ("u1", "u2"):
        for order in ("o1", "o2", "o3"):
            ddb.put_item(TableName=table_name, Item={"pk": {"S": user}, "sk": {"S": order}, "total": {"N": "9.5"}})
    page.goto(f"{endpoint}/console/tables/{table_name}")
    section = page.locator("#first-items")
    scan = ddb.scan(TableName=table_name, Limit=50, ReturnConsumedCapacity="TOTAL")
    units = scan["ConsumedCapacity"]["CapacityUnits"]
    assert section.locator("h2").inner_text() == f"Items the first 6, by a Scan ({units:g} read units)"
    rows = section.locator("table.items tbody tr")
    assert rows.count() == 6
    # Scan order, as the API answers it.
    assert [rows.nth(i).locator("td").nth(1).inner_text() for i in range(6)] == [
        f'"{item["sk"]["S"]}"' for item in scan["Items"]]
    first = rows.first
    user = scan["Items"][0]["pk"]["S"]
    first.locator("td").nth(0).locator("a").click()
    page.wait_for_url(f"**/console/tables/{table_name}/collection?pk={user}")
    assert page.locator("#collection").get_attribute("data-count") == "3"
    page.go_back()
    rows.first.locator("td").nth(1).locator("a").click()
    page.wait_for_url(f"**/console/tables/{table_name}/item?key=*")
    assert page.locator("#attributes tr[data-attribute=sk] td.value").inner_text() == f'"{scan["Items"][0]["sk"]["S"]}"'
    page.go_back()
    screenshot(page, "table-first-items")


def test_a_table_with_more_than_a_page_links_the_rest_and_a_hash_key_cell_links_the_item(
    ddb: Any, endpoint: str, table_name: str
) -> None:
    create_table(ddb, table_name)
    for i in range(55):
        ddb.put_item(TableName=table_name, Item={"pk": {"S": f"k{i:02}"}})
    text = request(endpoint, f"/console/tables/{table_name}").text
    assert len(re.findall(r'<tr><td><a href="/console/tables/[^/]+/item\?key=[^"]+">&#34;k\d\d&#34;</a></td>',
                          text)) == 50
    more = re.search(r'<a id="scan-more" href="([^"]+)">Scan on →</a>', text)
    assert more is not None
    rest = request(endpoint, more.group(1).replace("&amp;", "&")).text
    assert len(re.findall(r'&#34;k\d\d&#34;</a>', rest)) == 5


def test_query_page_shows_the_items_first_and_folds_the_code_which_runs_as_given(
    page: Any, ddb: Any, endpoint: str, table_name: str, tmp_path: Path  # noqa: F811 (the imported fixture)
) -> None:
    make_table(ddb, table_name, sk=("sk", "N"))
    for i in range(3):
        ddb.put_item(TableName=table_name, Item={"pk": {"S": "p"}, "sk": {"N": str(i)}, "pad": {"S": "x" * 450}})
    page.goto(f"{endpoint}/console/tables/{table_name}/query?" + urlencode({"run": "1", "op": "Query", "pk": "p"}))
    order = page.evaluate("""() => [...document.querySelectorAll('#items-heading, table.items, #cost, details.code-tabs')]
                              .map(e => e.id || e.className)""")
    assert order == ["items-heading", "grid items", "cost", "code-tabs"]
    assert page.locator("details.code-tabs").evaluate("d => d.open") is False
    assert page.locator("#items-heading").inner_text() == "Items 3 returned of 3 read"
    # One size, once: 1.5 KB and its exact bytes, "B" alone under 1 KB.
    sizes = [item_size({"pk": {"S": "p"}, "sk": {"N": str(i)}, "pad": {"S": "x" * 450}}) for i in range(3)]
    assert page.locator("table.items tbody tr").first.locator("td").last.inner_text() == f"{sizes[0]} B"
    read = page.locator("#cost tr.page-cost td").nth(3).inner_text()
    total = sum(sizes)
    assert read == f"{total / 1024:.1f} KB ({total:,} B)"
    page.locator("details.code-tabs summary").click()
    code = page.locator(".code-boto3").inner_text()
    assert "region_name='us-east-1'" in code
    screenshot(page, "query-items-first")
    # The boto3 snippet runs as shown: no region (or endpoint) needed from the environment.
    script = tmp_path / "snippet.py"
    script.write_text(code + "\nprint(response['Count'])\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_") or k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}
    env["AWS_CONFIG_FILE"] = str(tmp_path / "none")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60, env=env)
    assert (out.returncode, out.stdout) == (0, "3\n"), out.stderr


def test_item_page_has_one_notation_and_one_save_with_dynamodb_json_one_click_away(
    page: Any, ddb: Any, endpoint: str, table_name: str  # noqa: F811 (the imported fixture)
) -> None:
    create_table(ddb, table_name)
    key = {"pk": {"S": "one"}}
    ddb.put_item(TableName=table_name, Item={**key, "n": {"N": "1.50"}, "tags": {"SS": ["a"]}})
    page.goto(endpoint + item_path(table_name, key))
    assert page.locator("button[type=submit]", has_text="Save").count() == 1
    assert page.locator("textarea").count() == 1
    assert page.locator("#edit-plain textarea").input_value() == (
        '{\n  "pk": "one",\n  "n": 1.5,\n  "tags": {"$set": [\n      "a"\n    ]}\n}')
    page.click("#switch-format")
    page.wait_for_url("**&format=ddb")
    assert page.locator("button[type=submit]", has_text="Save").count() == 1
    editor = page.locator("#edit-ddb textarea")
    assert json.loads(editor.input_value()) == {**key, "n": {"N": "1.5"}, "tags": {"SS": ["a"]}}
    editor.fill(json.dumps({**key, "n": {"N": "2"}}))
    page.click("#edit-ddb button[type=submit]")
    page.wait_for_url("**saved=1&format=ddb")
    assert page.locator("#notice").inner_text() == "Saved."
    assert ddb.get_item(TableName=table_name, Key=key)["Item"] == {**key, "n": {"N": "2"}}
    screenshot(page, "item-one-editor")
    page.click("#switch-format")
    assert page.locator("#edit-plain textarea").input_value() == '{\n  "pk": "one",\n  "n": 2\n}'


def test_the_vector_search_tab_is_only_on_tables_with_a_vector_index(ddb: Any, endpoint: str, table_name: str) -> None:
    create_table(ddb, table_name)
    plain = request(endpoint, f"/console/tables/{table_name}")
    assert ">Vector search</a>" not in plain.text and "/vectors" not in plain.text
    make_vector_table(ddb, table_name + "-v")
    with_index = request(endpoint, f"/console/tables/{table_name}-v")
    assert f'<a href="/console/tables/{table_name}-v/vectors">Vector search</a>' in with_index.text


HOSTILE_NAME = '"><img src=x onerror=alert(1)>'
HOSTILE_VALUE = '<script>alert(2)</script>"><img src=x onerror=alert(3)>'


def test_no_item_content_runs_as_script(page: Any, tmp_path: Path) -> None:  # noqa: F811 (the imported fixture)
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"mode": "warn", "entities": [
        {"name": "Hostile", "table": "hostile", "schema": {"properties": {HOSTILE_NAME: {"type": "number"}}}}]}))
    srv = launch(*store_args(tmp_path / "store"), "--schema", str(schema))
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: dialogs.append(dialog.message))
    try:
        ddb = client_for(srv.url)
        make_table(ddb, "hostile", sk=("sk", "S"),
                   StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"})
        ddb.update_time_to_live(TableName="hostile", TimeToLiveSpecification={"Enabled": True, "AttributeName": "exp"})
        key = {"pk": {"S": HOSTILE_VALUE}, "sk": {"S": HOSTILE_NAME}}
        ddb.put_item(TableName="hostile", Item={
            **key, HOSTILE_NAME: {"S": HOSTILE_VALUE}, "exp": {"N": "99999999999"},
            "m": {"M": {HOSTILE_VALUE: {"L": [{"S": HOSTILE_NAME}]}}}})
        paths = {
            "tables": "/console",
            "table": "/console/tables/hostile",
            "scan": "/console/tables/hostile/query?run=1&op=Scan",
            "collection": "/console/tables/hostile/collection?" + urlencode({"pk": HOSTILE_VALUE}),
            "item": item_path("hostile", key),
            "item-ddb": item_path("hostile", key) + "&format=ddb",
            "streams": "/console/tables/hostile/streams",
            "schema": "/console/schema",
        }
        for name, path in paths.items():
            page.goto(srv.url + path)
            page.wait_for_load_state("load")
            assert page.locator("img").count() == 0, name
            scripts = page.evaluate("() => [...document.scripts].map(s => s.getAttribute('src'))")
            assert all(src is not None and src.startswith("/console/static/") for src in scripts), (name, scripts)
            if name in ("table", "scan", "collection", "item", "streams"):
                # Shown as text, in the plain notation (a JSON string: its quote escaped).
                assert json.dumps(HOSTILE_VALUE, ensure_ascii=False) in page.inner_text("main"), name
            screenshot(page, f"hostile-item-{name}")
        assert HOSTILE_NAME in page.inner_text("#violations")  # the schema page quotes the attribute's name
        assert dialogs == []
    finally:
        srv.stop()
