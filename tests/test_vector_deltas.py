"""Vector index caches follow writes by deltas, stay exact, and see other workers' writes."""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import Server, client_for, raw_request
from test_vector_indexes import DIMS, _create, _expected, _score, _search, _vec


def _check(ddb: Any, table: str, distance: str, items: dict[str, list[float]], rng: random.Random) -> None:
    q = [rng.uniform(-1, 1) for _ in range(DIMS)]
    k = 5
    out = _search(ddb, table, q, k=k)["SearchResults"]
    assert [r["Item"]["pk"]["S"] for r in out] == _expected(distance, q, items, k)
    for r in out:
        assert r["Score"] == pytest.approx(_score(distance, q, items[r["Item"]["pk"]["S"]]), abs=1e-5)


def _churn(ddb: Any, table: str, distance: str, seed: int, steps: int) -> None:
    """Random puts, overwrites, deletes and vector removals, a search after every few."""
    rng = random.Random(seed)
    items: dict[str, list[float]] = {}
    tenants: dict[str, str] = {}
    for step in range(steps):
        pk = f"i{rng.randrange(40)}"
        action = rng.random()
        if action < 0.55 or not items:
            v = [rng.uniform(-1, 1) for _ in range(DIMS)]
            tenant = rng.choice("ab")
            ddb.put_item(TableName=table, Item={"pk": {"S": pk}, "emb": _vec(v), "tenant": {"S": tenant},
                                                "yr": {"N": str(step)}})
            items[pk], tenants[pk] = v, tenant
        elif action < 0.8:
            ddb.delete_item(TableName=table, Key={"pk": {"S": pk}})
            items.pop(pk, None)
            tenants.pop(pk, None)
        else:
            ddb.update_item(TableName=table, Key={"pk": {"S": pk}}, UpdateExpression="REMOVE emb")
            items.pop(pk, None)
            tenants.pop(pk, None)
        if step % 3 == 0 and items:
            _check(ddb, table, distance, items, rng)
            # A HASH-scoped search reads the search-schema columns the deltas keep.
            q = [rng.uniform(-1, 1) for _ in range(DIMS)]
            scoped = {p: v for p, v in items.items() if tenants[p] == "a"}
            out = _search(ddb, table, q, k=3, SearchConditionExpression="tenant = :t",
                          ExpressionAttributeValues={":t": {"S": "a"}})["SearchResults"]
            assert [r["Item"]["pk"]["S"] for r in out] == _expected(distance, q, scoped, 3)
            assert all(r["Item"]["tenant"] == {"S": "a"} for r in out)
    count = ddb.describe_table(TableName=table)["Table"]["VectorIndexes"][0]["ItemCount"]
    assert count == len(items)


def _create_schema(ddb: Any, table: str, distance: str) -> None:
    definitions = [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "tenant", "AttributeType": "S"}]
    ddb.create_table(
        TableName=table, AttributeDefinitions=definitions, KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
        VectorIndexes=[{
            "IndexName": "vix", "VectorAttribute": {"AttributeName": "emb"}, "Dimensions": DIMS,
            "DistanceFunction": distance, "Projection": {"ProjectionType": "ALL"},
            "SearchSchema": [{"AttributeName": "tenant", "SearchSchemaElementType": "INLINE_FILTER"}],
        }],
    )


@pytest.mark.parametrize("distance", ["COSINE", "EUCLIDEAN", "DOT_PRODUCT"])
def test_interleaved_writes_and_searches_stay_exact(ddb: Any, table_name: str, distance: str) -> None:
    _create_schema(ddb, table_name, distance)
    _churn(ddb, table_name, distance, seed=len(distance), steps=150)


def test_approximate_graph_follows_deltas(start_server: Callable[..., Server]) -> None:
    server = start_server("--in-memory", "--vector-index", "approximate")
    ddb = client_for(server.url)
    _create_schema(ddb, "vtab", "COSINE")
    _churn(ddb, "vtab", "COSINE", seed=3, steps=150)


def _call(url: str, operation: str, body: dict[str, Any]) -> dict[str, Any]:
    response = raw_request(url, operation, body)  # a fresh connection each: spread over the workers
    assert response.status == 200, response.body
    return json.loads(response.body)


def test_workers_see_each_others_writes(start_server: Callable[..., Server], tmp_path: Path) -> None:
    server = start_server("--data-dir", str(tmp_path / "data"), "--workers", "2")
    _create(client_for(server.url), "vtab", "EUCLIDEAN")
    rng = random.Random(11)
    items: dict[str, list[float]] = {}
    for _ in range(60):
        pk = f"p{rng.randrange(15)}"
        if rng.random() < 0.7:
            v = [rng.uniform(-1, 1) for _ in range(DIMS)]
            _call(server.url, "PutItem", {"TableName": "vtab", "Item": {"pk": {"S": pk}, "emb": _vec(v)}})
            items[pk] = v
        else:
            _call(server.url, "DeleteItem", {"TableName": "vtab", "Key": {"pk": {"S": pk}}})
            items.pop(pk, None)
        q = [rng.uniform(-1, 1) for _ in range(DIMS)]
        out = _call(server.url, "SearchVectors", {"TableName": "vtab", "IndexName": "vix", "TopK": 4,
                                                  "SearchVector": [{"N": repr(x)} for x in q]})
        assert [r["Item"]["pk"]["S"] for r in out["SearchResults"]] == _expected("EUCLIDEAN", q, items, 4)


def test_query_and_scan_refuse_a_vector_index(ddb: Any, table_name: str) -> None:
    from botocore.exceptions import ClientError

    _create(ddb, table_name, "COSINE")
    with pytest.raises(ClientError) as query:
        ddb.query(TableName=table_name, IndexName="vix", KeyConditionExpression="pk = :p",
                  ExpressionAttributeValues={":p": {"S": "a"}})
    assert query.value.response["Error"]["Code"] == "ValidationException"
    assert query.value.response["Error"]["Message"] == "Query operation not supported on this index type."
    with pytest.raises(ClientError) as scan:
        ddb.scan(TableName=table_name, IndexName="vix")
    assert scan.value.response["Error"]["Message"] == "Scan operation not supported on this index type"
    with pytest.raises(ClientError) as missing:
        ddb.scan(TableName=table_name, IndexName="nope")
    assert missing.value.response["Error"]["Message"] == "The table does not have the specified index: nope"


@pytest.mark.parametrize("mode", ["exact", "approximate"])
def test_concurrent_searches_during_writes_stay_exact(start_server: Callable[..., Server], mode: str) -> None:
    """Searches share the matrix while a writer's deltas move rows: none may see a half-moved row."""
    server = start_server("--in-memory", "--vector-index", mode)
    ddb = client_for(server.url)
    _create(ddb, "vtab", "COSINE")
    near = {f"n{i}": [1.0, 0.01 * i, 0.0, 0.0] for i in range(8)}
    for pk, v in near.items():
        ddb.put_item(TableName="vtab", Item={"pk": {"S": pk}, "emb": _vec(v)})
    q = [1.0, 0.0, 0.0, 0.0]
    wanted = [(pk, _score("COSINE", q, near[pk])) for pk in _expected("COSINE", q, near, 5)]
    done = threading.Event()
    failures: list[Any] = []

    def searcher() -> None:
        client = client_for(server.url)
        while not done.is_set():
            out = _search(client, "vtab", q, k=5)["SearchResults"]
            got = [(r["Item"]["pk"]["S"], r["Score"]) for r in out]
            if [pk for pk, _ in got] != [pk for pk, _ in wanted] or any(
                    abs(a[1] - b[1]) > 1e-6 for a, b in zip(got, wanted, strict=True)):
                failures.append(got)

    threads = [threading.Thread(target=searcher) for _ in range(3)]
    for thread in threads:
        thread.start()
    rng = random.Random(5)
    try:
        for _ in range(120):  # far vectors come and go: removals move the last row into the hole
            pk = f"f{rng.randrange(30)}"
            if rng.random() < 0.6:
                v = [-1.0, rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1)]
                ddb.put_item(TableName="vtab", Item={"pk": {"S": pk}, "emb": _vec(v)})
            else:
                ddb.delete_item(TableName="vtab", Key={"pk": {"S": pk}})
    finally:
        done.set()
        for thread in threads:
            thread.join()
    assert failures == []
