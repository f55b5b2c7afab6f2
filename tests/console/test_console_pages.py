"""The console's pages over plain HTTP: forms, cost figures against ReturnConsumedCapacity, editing, escaping."""

from __future__ import annotations

import json
import re
import time
from typing import Any
from urllib.parse import quote, urlencode

import pytest
from conftest import create_table
from console_helpers import item_path, make_table, request, text_between, version_in
from streams_helpers import advance

from partita.engine.model.sizes import item_size


def test_tables_page_lists_schema_billing_counts_partitions_stream_and_ttl(ddb: Any, endpoint: str, table_name: str) -> None:
    make_table(
        ddb, table_name, sk=("sk", "N"), more={"g": "S"},
        BillingMode="PROVISIONED", ProvisionedThroughput={"ReadCapacityUnits": 7, "WriteCapacityUnits": 3},
        GlobalSecondaryIndexes=[{"IndexName": "byG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["x"]},
                                 "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}],
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"},
    )
    ddb.update_time_to_live(TableName=table_name, TimeToLiveSpecification={"Enabled": True, "AttributeName": "exp"})
    for i in range(3):
        ddb.put_item(TableName=table_name, Item={"pk": {"S": f"k{i}"}, "sk": {"N": "1"}})
    page = request(endpoint, "/console")
    assert page.status == 200 and page.headers["content-type"] == "text/html; charset=utf-8"
    row = text_between(page.text, rf'<tr data-table="{table_name}">(.*?)</tr>')[0]
    assert "pk <small>S HASH</small>" in row and "sk <small>N RANGE</small>" in row
    assert "GSI <b>byG</b>" in row and "INCLUDE (x)" in row
    assert "Provisioned 7 RCU / 3 WCU" in row
    assert re.search(r'item-count">3<', row)
    assert re.search(r'partitions">1<', row)  # ceil(7/3000 + 3/1000)
    assert "KEYS_ONLY" in row and "on (exp)" in row


def test_create_and_delete_a_table_from_the_forms(ddb: Any, endpoint: str, table_name: str) -> None:
    form = {
        "name": table_name, "hash": "pk", "hash_type": "S", "range": "sk", "range_type": "N",
        "billing": "PAY_PER_REQUEST", "gsi_name": "byEmail", "gsi_hash": "email", "gsi_hash_type": "S",
        "gsi_range": "", "gsi_projection": "KEYS_ONLY", "lsi_name": "byDate", "lsi_range": "date",
        "lsi_range_type": "S", "lsi_projection": "ALL", "stream": "NEW_IMAGE",
    }
    created = request(endpoint, "/console/tables", method="POST", form=form)
    assert created.status == 303 and created.headers["location"] == f"/console/tables/{table_name}"
    doc = ddb.describe_table(TableName=table_name)["Table"]
    assert doc["KeySchema"] == [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}]
    assert doc["GlobalSecondaryIndexes"][0]["Projection"] == {"ProjectionType": "KEYS_ONLY"}
    assert doc["LocalSecondaryIndexes"][0]["KeySchema"][1] == {"AttributeName": "date", "KeyType": "RANGE"}
    assert doc["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"}
    # DynamoDB's refusal is shown on the form with its exact message.
    again = request(endpoint, "/console/tables", method="POST", form=form)
    assert again.status == 400
    assert f"ResourceInUseException: Table already exists: {table_name}" in again.text
    deleted = request(endpoint, f"/console/tables/{table_name}/delete", method="POST", form={})
    assert deleted.status == 303 and deleted.headers["location"] == "/console"
    assert table_name not in ddb.list_tables()["TableNames"]


def test_table_page_draws_each_partition_and_the_gsi(ddb: Any, endpoint: str, table_name: str) -> None:
    make_table(
        ddb, table_name, more={"g": "S"},
        GlobalSecondaryIndexes=[{"IndexName": "byG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}],
    )
    for i in range(40):
        ddb.put_item(TableName=table_name, Item={"pk": {"S": f"k{i}"}, "g": {"S": "one"}})
    page = request(endpoint, f"/console/tables/{table_name}")
    api = json.loads(request(endpoint, f"/partita/v1/tables/{table_name}/partitions").text)
    cells = re.findall(r'class="partition[^"]*"\s+data-number="(\d+)" data-heat="[\d.]+"\s+data-items="(\d+)"', page.text)
    table_cells = cells[: api["partition_count"]]
    assert [(int(n), int(c)) for n, c in table_cells] == [(p["number"], p["item_count"]) for p in api["partitions"]]
    assert sum(int(c) for _, c in table_cells) == 40
    assert "GSI byG" in page.text
    gsi_cells = cells[api["partition_count"]:]
    assert sum(int(c) for _, c in gsi_cells) == 40 and sum(1 for _, c in gsi_cells if int(c) == 40) == 1


def _wire(item: dict[str, Any]) -> dict[str, Any]:
    """An item as boto3 returns it, back in DynamoDB JSON (binary as base64)."""
    import base64

    def value(av: dict[str, Any]) -> dict[str, Any]:
        (kind, raw), = av.items()
        if kind == "B":
            return {"B": base64.b64encode(raw).decode()}
        if kind == "M":
            return {"M": {k: value(v) for k, v in raw.items()}}
        if kind == "L":
            return {"L": [value(v) for v in raw]}
        return av

    return {k: value(v) for k, v in item.items()}


def _cost_rows(text: str) -> list[dict[str, float]]:
    rows = re.findall(r'<tr class="page-cost" data-page="(\d+)" data-scanned="(\d+)" data-count="(\d+)"\s+data-bytes="(\d+)" data-units="([\d.]+)">', text)
    return [{"scanned": int(s), "count": int(c), "bytes": int(b), "units": float(u)} for _, s, c, b, u in rows]


def test_scan_with_a_filter_costs_what_return_consumed_capacity_says_and_shows_the_query(
    ddb: Any, endpoint: str, table_name: str
) -> None:
    create_table(ddb, table_name, range_key=("sk", "N"))
    for user in range(6):
        for i in range(15):
            ddb.put_item(TableName=table_name, Item={"pk": {"S": f"u{user}"}, "sk": {"N": str(i)}, "pad": {"S": "x" * 500}})
    values = {":p": {"S": "u3"}}
    args = {"run": "1", "op": "Scan", "filter": "pk = :p", "values": json.dumps(values), "limit": "40", "pages": "5"}
    page = request(endpoint, f"/console/tables/{table_name}/query?" + urlencode(args))
    assert page.status == 200
    rows = _cost_rows(page.text)
    # The same pages through boto3, with ReturnConsumedCapacity.
    expected = []
    start = None
    while True:
        extra = {"ExclusiveStartKey": start} if start else {}
        answer = ddb.scan(TableName=table_name, FilterExpression="pk = :p", ExpressionAttributeValues=values,
                          Limit=40, ReturnConsumedCapacity="TOTAL", **extra)
        expected.append((answer["ScannedCount"], answer["Count"], answer["ConsumedCapacity"]["CapacityUnits"]))
        start = answer.get("LastEvaluatedKey")
        if start is None:
            break
    assert [(r["scanned"], r["count"], r["units"]) for r in rows[: len(expected)]] == expected
    assert sum(r["scanned"] for r in rows[: len(expected)]) == 90
    # Bytes read before the filter: every item read, whatever the filter kept (item sizes add up).
    every_item = ddb.scan(TableName=table_name)["Items"]
    assert sum(r["bytes"] for r in rows[: len(expected)]) == sum(item_size(_wire(i)) for i in every_item)
    assert "Read 90 items" in page.text and "to return 15" in page.text
    # Beside it, the Query that serves the access pattern, and what it cost.
    suggestion = page.text.split('id="suggestion"')[1].split("</section>")[0]
    assert "KeyConditionExpression=&#39;pk = :p&#39;" in suggestion
    query_rows = _cost_rows(suggestion)
    answer = ddb.query(TableName=table_name, KeyConditionExpression="pk = :p", ExpressionAttributeValues=values,
                       ReturnConsumedCapacity="TOTAL")
    assert [(r["scanned"], r["count"], r["units"]) for r in query_rows] == [
        (answer["ScannedCount"], answer["Count"], answer["ConsumedCapacity"]["CapacityUnits"])]


@pytest.mark.parametrize(("operator", "value", "value2", "expected"), [
    ("=", "3", "", [3]), ("<", "2", "", [0, 1]), ("<=", "1", "", [0, 1]), (">", "7", "", [8, 9]),
    (">=", "8", "", [8, 9]), ("BETWEEN", "4", "6", [4, 5, 6]), ("", "", "", list(range(10))),
])
def test_every_sort_key_operator(ddb: Any, endpoint: str, table_name: str, operator: str, value: str,
                                 value2: str, expected: list[int]) -> None:
    create_table(ddb, table_name, range_key=("sk", "N"))
    for i in range(10):
        ddb.put_item(TableName=table_name, Item={"pk": {"S": "p"}, "sk": {"N": str(i)}})
    args = {"run": "1", "op": "Query", "pk": "p", "sk_op": operator, "sk": value, "sk2": value2,
            "forward": "0", "consistent": "1"}
    page = request(endpoint, f"/console/tables/{table_name}/query?" + urlencode(args))
    assert page.status == 200, page.text
    # The partition key links to its collection, the sort key to the item.
    shown = [int(n) for n in re.findall(r'<tr><td><a href="[^"]+/collection\?pk=p">&#34;p&#34;</a></td>'
                                        r'<td><a href="[^"]+/item\?key=[^"]+">(\d+)</a></td>', page.text)]
    assert shown == sorted(expected, reverse=True)
    units = _cost_rows(page.text)[0]["units"]
    condition = {"": "pk = :p", "BETWEEN": "pk = :p AND sk BETWEEN :a AND :b"}.get(operator, f"pk = :p AND sk {operator} :a")
    vals = {":p": {"S": "p"}}
    if operator:
        vals[":a"] = {"N": value}
    if value2:
        vals[":b"] = {"N": value2}
    answer = ddb.query(TableName=table_name, KeyConditionExpression=condition, ExpressionAttributeValues=vals,
                       ConsistentRead=True, ReturnConsumedCapacity="TOTAL")
    assert units == answer["ConsumedCapacity"]["CapacityUnits"]


def test_begins_with_on_a_string_sort_key_and_the_generated_cli_command_runs(
    ddb: Any, endpoint: str, table_name: str
) -> None:
    import shlex
    import subprocess
    import sys

    create_table(ddb, table_name, range_key=("sk", "S"))
    for sk in ("order#1", "order#2", "order#3", "user#1"):
        ddb.put_item(TableName=table_name, Item={"pk": {"S": "c"}, "sk": {"S": sk}})
    args = {"run": "1", "op": "Query", "pk": "c", "sk_op": "begins_with", "sk": "order#", "limit": "2"}
    page = request(endpoint, f"/console/tables/{table_name}/query?" + urlencode(args))
    rows = _cost_rows(page.text)
    assert rows[0]["count"] == 2 and 'id="next-page"' in page.text
    cli = text_between(page.text, r'<pre class="code-cli">(.*?)</pre>')[0]
    import html

    command = shlex.split(html.unescape(cli).replace("\\\n", " "))
    assert command[:3] == ["aws", "dynamodb", "query"]
    out = subprocess.run([sys.executable, "-m", "awscli", *command[1:], "--output", "json"],
                         capture_output=True, text=True, timeout=60, check=True)
    answer = json.loads(out.stdout)
    assert [i["sk"]["S"] for i in answer["Items"]] == ["order#1", "order#2"]
    assert answer["ConsumedCapacity"]["CapacityUnits"] == rows[0]["units"]


def test_item_collection_in_sort_key_order_with_sizes_total_limit_and_partition(
    ddb: Any, endpoint: str, table_name: str
) -> None:
    make_table(
        ddb, table_name, sk=("sk", "N"), more={"d": "S"},
        LocalSecondaryIndexes=[{"IndexName": "byD", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                                                  {"AttributeName": "d", "KeyType": "RANGE"}],
                                "Projection": {"ProjectionType": "ALL"}}],
    )
    for i in (5, 1, 3, 2, 4):
        ddb.put_item(TableName=table_name, Item={"pk": {"S": "c1"}, "sk": {"N": str(i)}, "d": {"S": f"{9 - i}"}})
    ddb.put_item(TableName=table_name, Item={"pk": {"S": "other"}, "sk": {"N": "1"}})
    page = request(endpoint, f"/console/tables/{table_name}/collection?pk=c1")
    assert page.status == 200
    section = re.search(r'<section id="collection" data-count="(\d+)" data-total="(\d+)" data-partition="(\d+)">', page.text)
    assert section is not None
    collection = ddb.query(TableName=table_name, KeyConditionExpression="pk = :p",
                           ExpressionAttributeValues={":p": {"S": "c1"}})["Items"]
    assert section.groups() == ("5", str(sum(item_size(_wire(i)) for i in collection)), section.group(3))
    shown = re.findall(r'/collection\?pk=c1">&#34;c1&#34;</a></td><td><a href="[^"]+/item\?key=[^"]+">(\d)</a></td>', page.text)
    assert shown == ["1", "2", "3", "4", "5"]
    assert "Against the item collection limit of 10.0 GB" in page.text
    hot = json.loads(request(endpoint, f"/partita/v1/tables/{table_name}/partitions").text)
    assert int(section.group(3)) < hot["partition_count"]
    # The same collection through the local index: in d order.
    by_index = request(endpoint, f"/console/tables/{table_name}/collection?pk=c1&index=byD")
    assert re.findall(r'/collection\?pk=c1">&#34;c1&#34;</a></td><td><a href="[^"]+/item\?key=[^"]+">(\d)</a></td>',
                      by_index.text) == ["5", "4", "3", "2", "1"]


def test_item_view_shows_sets_binary_and_exact_numbers_and_saves_plain_json(ddb: Any, endpoint: str, table_name: str) -> None:
    create_table(ddb, table_name)
    big = "12345678901234567890123456789012345678"
    ddb.put_item(TableName=table_name, Item={
        "pk": {"S": "i"}, "n": {"N": big}, "ss": {"SS": ["a", "b"]}, "ns": {"NS": ["1", "2.5"]},
        "bs": {"BS": [b"\x00", b"\xff"]}, "b": {"B": b"\x01\x02\x03"}, "m": {"M": {"l": {"L": [{"NULL": True}, {"BOOL": False}]}}},
    })
    key = {"pk": {"S": "i"}}
    page = request(endpoint, item_path(table_name, key))
    types = dict(re.findall(r'<tr data-attribute="(\w+)"><td><code>\w+</code></td><td class="type">(.*?)</td>', page.text))
    assert types == {"b": "Binary (3 bytes)", "bs": "Binary set (2)", "m": "Map (1 keys)", "n": "Number",
                     "ns": "Number set (2)", "pk": "String", "ss": "String set (2)"}
    assert f"<code>{big}</code>" in page.text  # exact, not 1.2345678901234568e+37
    assert "{&#34;$set&#34;: [&#34;a&#34;, &#34;b&#34;]}" in page.text
    assert "{&#34;$binary&#34;: &#34;AQID&#34;}" in page.text
    plain = (
        '{"pk": "i", "n": 99999999999999999999999999999999999999, "ss": {"$set": ["x"]}, "ns": {"$set": [1, 2]},'
        ' "b": {"$binary": "AAE="}, "m": {"deep": [null, true, 0.1]}}'
    )
    saved = request(endpoint, f"/console/tables/{table_name}/item", method="POST", form={
        "format": "plain", "key": json.dumps(key), "version": version_in(page.text), "item": plain})
    assert saved.status == 303, saved.text
    item = ddb.get_item(TableName=table_name, Key=key)["Item"]
    assert item == {"pk": {"S": "i"}, "n": {"N": "99999999999999999999999999999999999999"}, "ss": {"SS": ["x"]},
                    "ns": {"NS": ["1", "2"]}, "b": {"B": b"\x00\x01"},
                    "m": {"M": {"deep": {"L": [{"NULL": True}, {"BOOL": True}, {"N": "0.1"}]}}}}


def test_saving_over_a_concurrent_change_is_refused_and_reported(ddb: Any, endpoint: str, table_name: str) -> None:
    create_table(ddb, table_name)
    key = {"pk": {"S": "c"}}
    ddb.put_item(TableName=table_name, Item={**key, "v": {"N": "1"}})
    loaded = request(endpoint, item_path(table_name, key))
    version = version_in(loaded.text)
    ddb.put_item(TableName=table_name, Item={**key, "v": {"N": "2"}, "by": {"S": "someone else"}})
    edit = {"format": "ddb", "key": json.dumps(key), "version": version,
            "item": json.dumps({**key, "v": {"N": "100"}})}
    refused = request(endpoint, f"/console/tables/{table_name}/item", method="POST", form=edit)
    assert refused.status == 409
    assert "The item changed since you loaded it" in refused.text and "someone else" in refused.text
    assert ddb.get_item(TableName=table_name, Key=key)["Item"]["v"] == {"N": "2"}
    deleted = request(endpoint, f"/console/tables/{table_name}/item/delete", method="POST",
                      form={"key": json.dumps(key), "version": version})
    assert deleted.status == 409 and "Item" in ddb.get_item(TableName=table_name, Key=key)
    fresh = version_in(request(endpoint, item_path(table_name, key)).text)
    edit["version"] = fresh
    assert request(endpoint, f"/console/tables/{table_name}/item", method="POST", form=edit).status == 303
    assert ddb.get_item(TableName=table_name, Key=key)["Item"] == {**key, "v": {"N": "100"}}
    newest = version_in(request(endpoint, item_path(table_name, key)).text)
    gone = request(endpoint, f"/console/tables/{table_name}/item/delete", method="POST",
                   form={"key": json.dumps(key), "version": newest})
    assert gone.status == 303 and "Item" not in ddb.get_item(TableName=table_name, Key=key)


def test_streams_and_ttl_page(start_server: Any, tmp_path: Any, table_name: str) -> None:
    from conftest import STORE, client_for

    # Its own server: the test moves the server clock, which other tests' servers must not see.
    server = start_server(*(["--data-dir", str(tmp_path / "s")] if STORE == "sqlite" else ["--in-memory"]))
    endpoint = server.url
    ddb = client_for(endpoint)
    create_table(ddb, table_name, StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"})
    ddb.update_time_to_live(TableName=table_name, TimeToLiveSpecification={"Enabled": True, "AttributeName": "exp"})
    now = json.loads(request(endpoint, "/partita/v1/clock").text)["now"]
    for i, ahead in enumerate((3000, 1000, 2000)):
        ddb.put_item(TableName=table_name, Item={"pk": {"S": f"e{i}"}, "exp": {"N": str(int(now) + ahead)}})
    ddb.delete_item(TableName=table_name, Key={"pk": {"S": "e0"}})
    page = request(endpoint, f"/console/tables/{table_name}/streams")
    assert page.status == 200
    assert re.findall(r'<tr class="record" data-event="(\w+)">', page.text) == ["REMOVE", "INSERT", "INSERT", "INSERT"]
    remaining = [float(r) for r in re.findall(r'<tr class="expiry" data-remaining="(-?\d+)">', page.text)]
    assert len(remaining) == 2 and 990 <= remaining[0] <= 1000 and 1990 <= remaining[1] <= 2000
    advance(endpoint, 1500)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        page = request(endpoint, f"/console/tables/{table_name}/streams?fragment=1")
        # The expiry list and the stream records are read apart: wait for both to show the deletion.
        if len(re.findall(r'<tr class="expiry"', page.text)) == 1 and '<span class="badge">TTL</span>' in page.text:
            break
        time.sleep(0.1)
    remaining = [float(r) for r in re.findall(r'<tr class="expiry" data-remaining="(-?\d+)">', page.text)]
    assert len(remaining) == 1 and 490 <= remaining[0] <= 500
    assert '<span class="badge">TTL</span>' in page.text  # the TTL deletion's stream record


def test_no_console_flag_turns_it_off(start_server: Any) -> None:
    server = start_server("--in-memory", "--no-console")
    page = request(server.url, "/console")
    # Not a console page: a GET other than / is DynamoDB's 404 (the health check is GET / only).
    assert (page.status, page.text) == (404, "<UnknownOperationException/>\n")


HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def test_hostile_names_and_values_are_escaped_everywhere(ddb: Any, endpoint: str, table_name: str) -> None:
    create_table(ddb, table_name, range_key=("sk", "S"),
                 StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"})
    ddb.update_time_to_live(TableName=table_name, TimeToLiveSpecification={"Enabled": True, "AttributeName": "exp"})
    item = {"pk": {"S": HOSTILE}, "sk": {"S": HOSTILE}, HOSTILE: {"S": HOSTILE}, "exp": {"N": "99999999999"},
            "m": {"M": {HOSTILE: {"SS": [HOSTILE]}}}}
    ddb.put_item(TableName=table_name, Item=item)
    key = {"pk": item["pk"], "sk": item["sk"]}
    pages = [
        "/console",
        f"/console/tables/{table_name}/query?" + urlencode({"run": "1", "op": "Scan", "filter": "attribute_exists(#h) OR pk = :v",
                                                             "names": json.dumps({"#h": HOSTILE}), "values": json.dumps({":v": {"S": HOSTILE}})}),
        f"/console/tables/{table_name}/query?" + urlencode({"run": "1", "pk": HOSTILE}),
        f"/console/tables/{table_name}/collection?" + urlencode({"pk": HOSTILE}),
        item_path(table_name, key),
        f"/console/tables/{table_name}/streams",
        f"/console/tables/{table_name}/query?" + urlencode({"run": "1", "filter": HOSTILE, "pk": "x"}),
        "/console/tables/" + quote(HOSTILE, safe=""),
    ]
    for path in pages:
        page = request(endpoint, path)
        assert page.status < 500, (path, page.text)
        assert "<script>alert" not in page.text and "<img src=x" not in page.text, path
        assert len(re.findall(r"<script", page.text)) == page.text.count('<script src="/console/static/'), path
    shown = request(endpoint, pages[1]).text
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in shown


@pytest.mark.parametrize(("method", "path", "body", "content_type", "status"), [
    ("GET", "/console/nowhere", None, None, 404),
    ("GET", "/console/tables/no-such-table-here", None, None, 404),
    ("GET", "/console/tables/no-such-table-here/query?run=1", None, None, 404),
    ("GET", "/console/static/../routes.py", None, None, 404),
    ("GET", "/console/static/%2e%2e%2froutes.py", None, None, 404),
    ("PUT", "/console/tables", None, None, 405),
    ("DELETE", "/console", None, None, 405),
    ("POST", "/console/tables", b'{"name": "x"}', "application/json", 415),
    ("POST", "/console/tables", b"name=%ff%fe&hash=", None, 400),
    ("POST", "/console/tables", b"name=abc&hash=pk&hash_type=Q", None, 400),
    ("POST", "/console/tables", b"name=abc&hash=pk&billing=PROVISIONED&rcu=-1", None, 400),
    ("POST", "/console/tables", b"name=ab&hash=pk", None, 400),
    ("POST", "/console/tables", b"%%%%&&&==", None, 400),
])
def test_bad_requests_get_a_page_and_never_a_500(method: str, path: str, body: bytes | None,
                                                 content_type: str | None, status: int, endpoint: str) -> None:
    ctype = content_type or ("application/x-www-form-urlencoded" if body else None)
    page = request(endpoint, path, method=method, body=body, content_type=ctype)
    assert page.status == status, page.text
    assert "text/html" in page.headers.get("content-type", "")


def test_bad_values_on_table_pages_never_500(ddb: Any, endpoint: str, table_name: str) -> None:
    create_table(ddb, table_name, range_key=("sk", "N"))
    base = f"/console/tables/{table_name}"
    gets = [
        "/query?run=1&pk=a&sk_op=%3C&sk=notanumber", "/query?run=1&op=Scan&limit=x", "/query?run=1&op=Scan&limit=0",
        "/query?run=1&pk=a&sk_op=LIKE", "/query?run=1&index=nope&pk=a", "/query?run=1&op=Scan&names=[1]",
        "/query?run=1&op=Scan&values=%7B", "/query?run=1&op=Scan&start=%7B%22pk%22%3A1%7D", "/query?run=1&op=Scan&pages=999999999",
        "/query?run=1&op=Scan&filter=((((", "/query?run=1&op=Scan&projection=%00", "/collection?pk=a&index=nope",
        "/item?key=nonsense", "/item?key=%7B%7D", "/item?key=%7B%22pk%22%3A%7B%22S%22%3A%22a%22%7D%7D",
        "/item?key=%5B%5D", "/streams?fragment=1", "/partitions", "/collection?pk=%ff",
    ]
    for path in gets:
        page = request(endpoint, base + path)
        assert 200 <= page.status < 500, (path, page.status, page.text[-400:])
    posts = [
        ("/item", {"format": "ddb", "item": "not json", "key": "", "version": ""}),
        ("/item", {"format": "plain", "item": '{"pk": NaN}', "key": "", "version": ""}),
        ("/item", {"format": "plain", "item": '{"pk": {"$set": []}}', "key": "", "version": ""}),
        ("/item", {"format": "plain", "item": "[1]", "key": "", "version": ""}),
        ("/item", {"format": "ddb", "item": '{"pk": {"S": 1}}', "key": "", "version": ""}),
        ("/item", {"format": "ddb", "item": '{"pk": {"S": "a"}}', "key": "{bad", "version": ""}),
        ("/item/delete", {"key": '{"pk": {"S": "zz"}, "sk": {"N": "1"}}', "version": "absent"}),
        ("/item/delete", {"key": "", "version": ""}),
        ("/delete", {}),
    ]
    for path, form in posts:
        page = request(endpoint, base + path, method="POST", form=form)
        assert 200 <= page.status < 500, (path, form, page.status, page.text[-400:])


def test_served_by_every_worker(start_server: Any, tmp_path: Any) -> None:
    from conftest import client_for

    server = start_server("--data-dir", str(tmp_path / "store"), "--workers", "2")
    ddb = client_for(server.url)
    name = "console-workers"
    create_table(ddb, name)
    ddb.put_item(TableName=name, Item={"pk": {"S": "a"}})
    for _ in range(6):  # connections spread over both workers
        page = request(server.url, f"/console/tables/{name}")
        assert page.status == 200 and 'id="item-count">1 (' in page.text
