"""The console's vector indexes: listed on the table page, searched through the real SearchVectors."""

from __future__ import annotations

import json
import re
from typing import Any

from console_helpers import request, text_between

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def _make(ddb: Any, table: str, vector: str = "emb", tenant: str = "tenant") -> None:
    ddb.create_table(
        TableName=table, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": tenant, "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        VectorIndexes=[{"IndexName": "vix", "VectorAttribute": {"AttributeName": vector}, "Dimensions": 3,
                        "DistanceFunction": "EUCLIDEAN", "Projection": {"ProjectionType": "ALL"},
                        "SearchSchema": [{"AttributeName": tenant, "SearchSchemaElementType": "HASH"}]}],
    )


def _vec(values: list[float]) -> dict[str, Any]:
    return {"L": [{"N": repr(v)} for v in values]}


def _search_form(vector: list[float], **extra: str) -> dict[str, str]:
    form = {"index": "vix", "vector": json.dumps(vector), "top_k": "2", "condition": "#t = :t",
            "names": json.dumps({"#t": "tenant"}), "values": json.dumps({":t": {"S": "a"}})}
    form.update(extra)
    return form


def test_table_page_lists_vector_indexes(ddb: Any, endpoint: str, table_name: str) -> None:
    _make(ddb, table_name)
    for pk, v in (("x", [0, 0, 0]), ("y", [1, 0, 0]), ("z", [5, 5, 5])):
        ddb.put_item(TableName=table_name, Item={"pk": {"S": pk}, "tenant": {"S": "a"}, "emb": _vec(v)})
    ddb.put_item(TableName=table_name, Item={"pk": {"S": "w"}, "emb": _vec([1, 1, 1])})  # no HASH: left out
    described = ddb.describe_table(TableName=table_name)["Table"]["VectorIndexes"][0]
    page = request(endpoint, f"/console/tables/{table_name}")
    assert page.status == 200
    row = text_between(page.text, r'<tr class="vector-index">(.*?)</tr>')
    assert len(row) == 1
    cells = [re.sub(r"\s+", " ", c).strip() for c in text_between(row[0], r"<td>(.*?)</td>")]
    assert cells == ["<b>vix</b>", "emb", "3", "EUCLIDEAN", "<span class=\"key\">tenant <small>HASH</small></span>",
                     "ACTIVE", "3", f"{described['IndexSizeBytes']} B"]
    assert described["ItemCount"] == 3
    assert 'action="/console/tables/' + table_name + '/vectors"' in page.text


def test_search_form_runs_search_vectors(ddb: Any, endpoint: str, table_name: str) -> None:
    _make(ddb, table_name)
    for pk, tenant, v in (("x", "a", [0, 0, 0]), ("y", "a", [1, 0, 0]), ("z", "a", [5, 5, 5]), ("q", "b", [1, 0, 0])):
        ddb.put_item(TableName=table_name, Item={"pk": {"S": pk}, "tenant": {"S": tenant}, "emb": _vec(v)})
    page = request(endpoint, f"/console/tables/{table_name}/vectors", method="POST", form=_search_form([0.9, 0, 0]))
    assert page.status == 200, page.text
    expected = ddb.search_vectors(TableName=table_name, IndexName="vix", TopK=2,
                                  SearchVector=[{"N": "0.9"}, {"N": "0"}, {"N": "0"}],
                                  SearchConditionExpression="tenant = :t",
                                  ExpressionAttributeValues={":t": {"S": "a"}}, ReturnConsumedCapacity="TOTAL")
    rows = text_between(page.text, r'<tr class="search-result">(.*?)</tr>')
    assert [re.search(r'&#34;pk&#34;: &#34;(\w+)&#34;', r).group(1) for r in rows] == ["y", "x"]  # type: ignore[union-attr]
    scores = [text_between(r, r'class="score">(.*?)<')[0] for r in rows]
    assert scores == [str(r["Score"]) for r in expected["SearchResults"]]
    consumed = expected["ConsumedCapacity"]["VectorSearchRequestBytes"]
    assert f"VectorSearchRequestBytes {consumed:g}</p>" in page.text
    assert 'name="vector" rows="3" cols="70" placeholder="[0.1, 0.2, 0.3]">[0.9, 0, 0]</textarea>' in page.text


def test_search_refusals_are_shown_on_the_form(ddb: Any, endpoint: str, table_name: str) -> None:
    _make(ddb, table_name)
    path = f"/console/tables/{table_name}/vectors"
    bad = request(endpoint, path, method="POST", form=_search_form([0.1]) | {"vector": "[1, \"a\"]"})
    assert bad.status == 400 and "the search vector is a JSON list of numbers" in bad.text
    no_hash = request(endpoint, path, method="POST", form=_search_form([1, 2, 3], condition="", names="", values=""))
    assert no_hash.status == 400
    assert ("ValidationException: SearchConditionExpression must be provided when SearchSchema has a HASH key"
            in no_hash.text)
    wrong = request(endpoint, path, method="POST", form=_search_form([1, 2]))
    assert wrong.status == 400
    assert "Input search vector dimension 2 does not match vector index dimension 3" in wrong.text
    assert request(endpoint, path).status == 200  # the GET page: the list and the form
    assert request(endpoint, path, method="PUT", form={}).status == 405


def test_hostile_attribute_names_and_values_are_escaped(ddb: Any, endpoint: str, table_name: str) -> None:
    _make(ddb, table_name, vector=HOSTILE, tenant=HOSTILE + "t")
    ddb.put_item(TableName=table_name, Item={"pk": {"S": HOSTILE}, HOSTILE + "t": {"S": HOSTILE},
                                             HOSTILE: _vec([1, 2, 3]), "note": {"S": HOSTILE}})
    form = _search_form([1, 2, 3], names=json.dumps({"#t": HOSTILE + "t"}), values=json.dumps({":t": {"S": HOSTILE}}))
    pages = [request(endpoint, f"/console/tables/{table_name}"),
             request(endpoint, f"/console/tables/{table_name}/vectors"),
             request(endpoint, f"/console/tables/{table_name}/vectors", method="POST", form=form),
             request(endpoint, f"/console/tables/{table_name}/vectors", method="POST",
                     form=_search_form([1, 2, 3], condition=HOSTILE))]
    for page in pages:
        assert page.status < 500, page.text
        assert "<script>alert" not in page.text and "<img src=x" not in page.text
        assert len(re.findall(r"<script", page.text)) == page.text.count('<script src="/console/static/')
    assert len(text_between(pages[2].text, r'<tr class="search-result">')) == 1
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in pages[2].text
