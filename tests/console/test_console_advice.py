"""Issue 28 in a real browser (Debian's Chromium through Playwright): metering on a plain server, the
Advice page and its badge on the table list, the Entities page, and escaping of what requests carry.

The shared test server runs without --emulate-throughput, as a plain `partita serve`.
Screenshots are kept in tests/console/artifacts (metering-plain, advice, advice-badge, entities).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from console_helpers import browser, make_table, page, request, screenshot  # noqa: F401

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "advisor"))

import scan_filter  # noqa: E402


def test_plain_server_partition_strip_and_hot_keys_show_traffic(page: Any, ddb: Any, endpoint: str,  # noqa: F811
                                                                 table_name: str) -> None:
    make_table(ddb, table_name)
    for i in range(40):
        ddb.put_item(TableName=table_name, Item={"pk": {"S": f"USER#{i}"}, "v": {"S": "z" * 100}})
    for _ in range(20):  # 20 x 30 write units on one key
        ddb.put_item(TableName=table_name, Item={"pk": {"S": "STATUS#ACTIVE"}, "v": {"S": "x" * 30_000}})
    layout = json.loads(request(endpoint, f"/partita/v1/tables/{table_name}/partitions").text)
    assert layout["emulate_throughput"] is False
    assert sum(p["write_units_total"] for p in layout["partitions"]) == 40 + 20 * 30
    hot_number = max(layout["partitions"], key=lambda p: p["write_units_per_minute"])["number"]
    page.goto(f"{endpoint}/console/tables/{table_name}")
    section = page.locator("section.map").nth(0)
    assert section.locator("h2 small").inner_text() == "PAY_PER_REQUEST"  # no "throughput enforced"
    hot = section.locator(".partition.hot")
    assert hot.count() == 1 and hot.get_attribute("data-number") == str(hot_number)
    assert float(hot.get_attribute("data-heat")) == 1.0
    first = section.locator(".hot-keys tbody tr").first
    assert "STATUS#ACTIVE" in first.inner_text()
    assert "No traffic" not in section.locator(".hot-keys").inner_text()
    screenshot(page, "metering-plain")


def test_advice_badge_and_page_show_a_scan_used_as_where(page: Any, ddb: Any, endpoint: str,  # noqa: F811
                                                          table_name: str) -> None:
    scan_filter.run(ddb, table_name, lambda seconds: None)
    page.goto(f"{endpoint}/console")
    badge = page.locator(f'tr[data-table="{table_name}"] a.advice-badge')
    assert badge.inner_text() == "1 finding"
    screenshot(page, "advice-badge")
    badge.click()
    page.wait_for_url(f"**/console/tables/{table_name}/advice")
    findings = page.locator("section.finding")
    assert findings.count() == 1 and findings.get_attribute("data-kind") == "scan-filter"
    assert findings.locator("h2").inner_text().startswith("A filter doing a WHERE clause's job")
    assert findings.locator(".lesson").inner_text().startswith(
        "A Scan with a filter is not a WHERE clause: DynamoDB reads, and charges for, every item before the filter "
        "runs. These 3 requests paid 4.5 read units for 600 items to return 12 (2.0%).")
    assert findings.locator('tr[data-name="items_read"] td').inner_text() == "600"
    assert findings.locator('tr[data-name="filter_attributes"] td').inner_text() == '["status"]'
    update = json.loads(findings.locator("details.fix-input pre").first.inner_text())
    assert update["GlobalSecondaryIndexUpdates"][0]["Create"]["IndexName"] == "by_status"
    screenshot(page, "advice")


def test_advice_page_without_findings(page: Any, ddb: Any, endpoint: str, table_name: str) -> None:  # noqa: F811
    make_table(ddb, table_name)
    ddb.get_item(TableName=table_name, Key={"pk": {"S": "a"}})
    page.goto(f"{endpoint}/console/tables/{table_name}/advice")
    assert page.locator("#findings").get_attribute("data-count") == "0"
    assert page.locator("#no-findings").is_visible()
    page.goto(f"{endpoint}/console")
    assert page.locator(f'tr[data-table="{table_name}"] a.advice-badge').count() == 0


def test_entities_page_shows_types_attributes_and_the_patterns_that_read_them(page: Any, ddb: Any,  # noqa: F811
                                                                             endpoint: str, table_name: str) -> None:
    make_table(ddb, table_name, sk=("sk", "S"))
    for c in range(10):
        ddb.put_item(TableName=table_name, Item={"pk": {"S": f"CLIENTE#{c}"}, "sk": {"S": "PERFIL"},
                                                  "email": {"S": f"c{c}@x.org"}})
        ddb.put_item(TableName=table_name, Item={"pk": {"S": f"CLIENTE#{c}"}, "sk": {"S": f"PEDIDO#2026-09-01#{c}"},
                                                  "amount": {"N": "5"}})
    ddb.query(TableName=table_name, KeyConditionExpression="pk = :p AND begins_with(sk, :o)",
              ExpressionAttributeValues={":p": {"S": "CLIENTE#1"}, ":o": {"S": "PEDIDO#"}})
    page.goto(f"{endpoint}/console/tables/{table_name}")
    page.click("header nav >> text=Entities")
    page.wait_for_url(f"**/console/tables/{table_name}/entities")
    rows = page.locator("tr.entity")
    assert rows.count() == 2
    names = {rows.nth(i).get_attribute("data-name"): rows.nth(i) for i in range(2)}
    assert sorted(names) == ["CLIENTE# / PEDIDO#", "CLIENTE# / PERFIL"]
    orders = names["CLIENTE# / PEDIDO#"]
    assert orders.get_attribute("data-sampled") == "10" and orders.get_attribute("data-estimated") == "10"
    assert orders.locator(".attributes").inner_text().split() == ["amount", "N", "pk", "S", "sk", "S"]
    assert orders.locator(".pattern").inner_text().startswith(
        "Query pk = CLIENTE#… AND begins_with(sk, PEDIDO#…) · 1 request, 1 read, 1 returned")
    assert names["CLIENTE# / PERFIL"].locator(".patterns").inner_text() == "no request read it yet"
    screenshot(page, "entities")


def test_what_requests_carry_is_text_on_the_advice_and_entities_pages(page: Any, ddb: Any,  # noqa: F811
                                                                      endpoint: str, table_name: str) -> None:
    evil = '<img src=x onerror="window.pwned=1">'
    make_table(ddb, table_name)
    for n in range(20):
        ddb.put_item(TableName=table_name, Item={"pk": {"S": f"<script>window.pwned=2</script>#{n}"},
                                                  evil: {"S": "a" if n else "b"}})
    ddb.scan(TableName=table_name, FilterExpression="#e = :b", ExpressionAttributeNames={"#e": evil},
             ExpressionAttributeValues={":b": {"S": "b"}})
    for path in ("advice", "entities"):
        page.goto(f"{endpoint}/console/tables/{table_name}/{path}")
        assert page.evaluate("window.pwned") is None
    page.goto(f"{endpoint}/console/tables/{table_name}/advice")
    assert page.locator('tr[data-name="filter_attributes"] td').inner_text() == json.dumps([evil], separators=(",", ":"))
    page.goto(f"{endpoint}/console/tables/{table_name}/entities")
    assert evil in page.locator("tr.entity .attributes").first.inner_text()
    assert page.evaluate("window.pwned") is None
