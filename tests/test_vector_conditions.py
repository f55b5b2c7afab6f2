"""SearchConditionExpression through boto3: what it filters, what it refuses, in which order.

Neighbours are computed here independently (filter the rows, then rank them), so a
filter applied after TopK instead of before it, or a wrong score, fails.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import Server, client_for, error_of

DIMS = 6
V = "ValidationException"
COMPARATOR = "Invalid SearchConditionExpression: Invalid comparator used in SearchConditionExpression"
OPERATOR = "Invalid SearchConditionExpression: Invalid operator used in SearchConditionExpression"
INVALID = "One or more parameter values were invalid: "


def _vec(values: list[float]) -> dict[str, Any]:
    return {"L": [{"N": repr(v)} for v in values]}


def _create(ddb: Any, name: str, hash_key: bool = True, projection: dict[str, Any] | None = None) -> None:
    schema = [{"AttributeName": "yr", "SearchSchemaElementType": "INLINE_FILTER"},
              {"AttributeName": "kind", "SearchSchemaElementType": "INLINE_FILTER"}]
    if hash_key:
        schema.insert(0, {"AttributeName": "tenant", "SearchSchemaElementType": "HASH"})
    ddb.create_table(
        TableName=name, KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}], BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": n, "AttributeType": t}
                              for n, t in [("pk", "S"), ("tenant", "S"), ("yr", "N"), ("kind", "S")]
                              if hash_key or n != "tenant"],
        VectorIndexes=[{"IndexName": "vix", "VectorAttribute": {"AttributeName": "emb"}, "Dimensions": DIMS,
                        "DistanceFunction": "EUCLIDEAN", "SearchSchema": schema,
                        "Projection": projection or {"ProjectionType": "ALL"}}],
    )


def _rows(seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    rows = []
    for i in range(60):
        row: dict[str, Any] = {"pk": f"p{i:02d}", "tenant": rng.choice(["t1", "t2"]),
                               "vector": [round(rng.uniform(-1, 1), 3) for _ in range(DIMS)]}
        if i % 7:
            row["yr"] = rng.choice([2019, 2020, 2021])
        if i % 5:
            row["kind"] = rng.choice(["doc", "img"])
        rows.append(row)
    return rows


def _load(ddb: Any, table: str, rows: list[dict[str, Any]]) -> None:
    for row in rows:
        item = {"pk": {"S": row["pk"]}, "tenant": {"S": row["tenant"]}, "emb": _vec(row["vector"])}
        if "yr" in row:
            item["yr"] = {"N": str(row["yr"])}
        if "kind" in row:
            item["kind"] = {"S": row["kind"]}
        ddb.put_item(TableName=table, Item=item)


def _expected(rows: list[dict[str, Any]], q: list[float], k: int, **wanted: Any) -> list[str]:
    """The k nearest rows (Euclidean) among those whose attributes equal `wanted`, nearest first."""
    def distance(row: dict[str, Any]) -> float:
        return math.sqrt(sum((a - b) ** 2 for a, b in zip(q, row["vector"], strict=True)))

    matching = [r for r in rows if all(r.get(name) == value for name, value in wanted.items())]
    return [r["pk"] for r in sorted(matching, key=lambda r: (distance(r), r["pk"]))[:k]]


def _search(ddb: Any, table: str, q: list[float], k: int, **extra: Any) -> list[str]:
    out = ddb.search_vectors(TableName=table, IndexName="vix", SearchVector=[{"N": repr(x)} for x in q],
                             TopK=k, **extra)
    return [r["Item"]["pk"]["S"] for r in out["SearchResults"]]


def _check_filters(ddb: Any, table: str) -> None:
    rows = _rows(7)
    _load(ddb, table, rows)
    rng = random.Random(11)
    for _ in range(4):
        q = [round(rng.uniform(-1, 1), 3) for _ in range(DIMS)]
        for k in (1, 3, 10):
            assert _search(ddb, table, q, k, SearchConditionExpression="tenant = :t",
                           ExpressionAttributeValues={":t": {"S": "t1"}}) == _expected(rows, q, k, tenant="t1")
            # Filters apply before TopK: k matching rows come back even when nearer rows do not match.
            assert _search(ddb, table, q, k, SearchConditionExpression="tenant = :t AND yr = :y AND #k = :k",
                           ExpressionAttributeNames={"#k": "kind"},
                           ExpressionAttributeValues={":t": {"S": "t2"}, ":y": {"N": "2020"}, ":k": {"S": "img"}},
                           ) == _expected(rows, q, k, tenant="t2", yr=2020, kind="img")
            # The value may stand on the left, conditions may be parenthesised, Numbers compare by value.
            assert _search(ddb, table, q, k, SearchConditionExpression="(:y = yr) AND (tenant = :t)",
                           ExpressionAttributeValues={":t": {"S": "t1"}, ":y": {"N": "2.021E3"}},
                           ) == _expected(rows, q, k, tenant="t1", yr=2021)
    q = rows[0]["vector"]
    # A Number filter given a String (or another Number) matches nothing; so do two different values.
    assert _search(ddb, table, q, 5, SearchConditionExpression="tenant = :t AND yr = :y",
                   ExpressionAttributeValues={":t": {"S": "t1"}, ":y": {"S": "2020"}}) == []
    assert _search(ddb, table, q, 5, SearchConditionExpression="tenant = :t AND yr = :y AND yr = :z",
                   ExpressionAttributeValues={":t": {"S": "t1"}, ":y": {"N": "2020"}, ":z": {"N": "2021"}}) == []
    assert _search(ddb, table, q, 5, SearchConditionExpression="tenant = :t AND yr = :y AND yr = :z",
                   ExpressionAttributeValues={":t": {"S": "t1"}, ":y": {"N": "2020"}, ":z": {"N": "2020.00"}},
                   ) == _expected(rows, q, 5, tenant="t1", yr=2020)


def test_filters_apply_before_top_k(ddb: Any, table_name: str) -> None:
    _create(ddb, table_name)
    _check_filters(ddb, table_name)


@pytest.mark.parametrize("store", ["memory", "sqlite"])
def test_filters_in_approximate_mode(start_server: Callable[..., Server], tmp_path: Path, store: str) -> None:
    args = ["--in-memory"] if store == "memory" else ["--data-dir", str(tmp_path / "data")]
    ddb = client_for(start_server(*args, "--vector-index", "approximate").url)
    _create(ddb, "vcond")
    _check_filters(ddb, "vcond")
    # An index without a HASH element searches unfiltered (through the graph here) or filtered.
    _create(ddb, "vfree", hash_key=False)
    rows = _rows(3)
    _load(ddb, "vfree", rows)
    q = rows[5]["vector"]
    assert _search(ddb, "vfree", q, 1) == [rows[5]["pk"]]
    assert _search(ddb, "vfree", q, 4, SearchConditionExpression="kind = :k",
                   ExpressionAttributeValues={":k": {"S": "doc"}}) == _expected(rows, q, 4, kind="doc")


def _refused(ddb: Any, table: str, expression: str, **extra: Any) -> tuple[str, str]:
    values = {":t": {"S": "t1"}, ":u": {"S": "t2"}, ":y": {"N": "2020"}}
    used = {k: v for k, v in values.items() if k in expression}
    request: dict[str, Any] = {"TableName": table, "IndexName": "vix", "SearchVector": [{"N": "1"}] * DIMS,
                               "TopK": 1, "SearchConditionExpression": expression, **extra}
    if used:
        request["ExpressionAttributeValues"] = used
    with pytest.raises(ClientError) as err:
        ddb.search_vectors(**request)
    return error_of(err)


def test_refused_forms_and_their_order(ddb: Any, table_name: str) -> None:
    _create(ddb, table_name)
    cases = [
        # Recorded against the service (Aug 2026), on HASH and INLINE_FILTER attributes alike.
        ("tenant > :t", COMPARATOR),
        ("tenant = :t AND yr >= :y", COMPARATOR),
        ("tenant = :t AND yr <= :y", COMPARATOR),
        ("tenant = :t AND yr >= :y AND yr <= :y", COMPARATOR),
        ("tenant <> :t", COMPARATOR),
        ("tenant = :t AND yr BETWEEN :y AND :y", OPERATOR),
        ("tenant IN (:t, :u)", OPERATOR),
        # NOT recorded as an operator error (Alternator, Sept 2026); OR and functions unrecorded.
        ("NOT tenant = :t", OPERATOR),
        ("tenant = :t OR tenant = :u", OPERATOR),
        ("tenant = :t AND (yr = :y OR kind = :t)", OPERATOR),
        ("tenant = :t AND attribute_exists(yr)", OPERATOR),
        ("begins_with(tenant, :t)", OPERATOR),
        ("tenant = :t AND size(kind) = :y", COMPARATOR),
        ("tenant = kind", COMPARATOR),
        # Operators are checked before attribute names, wherever the bad attribute stands.
        ("colour = :t AND yr BETWEEN :y AND :y", OPERATOR),
        ("pk = :t AND NOT tenant = :t", OPERATOR),
        ("colour = :t AND tenant < :t", COMPARATOR),
        # Then the attributes: the table's own key is not part of the SearchSchema.
        ("tenant = :t AND pk = :u", "SearchConditionExpression must not contain any attributes that is not in "
                                    "SearchSchema. Invalid attribute: pk"),
        ("tenant = :t AND kind.part = :u", "Invalid SearchConditionExpression: Only top-level attributes can be "
                                          "used in SearchConditionExpression"),
        # Last the HASH rule: an INLINE_FILTER alone does not scope a HASH-partitioned index.
        ("yr = :y AND kind = :t", "SearchConditionExpression must be provided when SearchSchema has a HASH key"),
    ]
    for expression, message in cases:
        assert _refused(ddb, table_name, expression) == (V, message), expression


def _index(**projection: Any) -> dict[str, Any]:
    return {"IndexName": "vix", "VectorAttribute": {"AttributeName": "emb"}, "Dimensions": DIMS,
            "DistanceFunction": "COSINE", "Projection": projection}


def test_vector_projection_rules_are_the_secondary_index_rules(ddb: Any, table_name: str) -> None:
    defs = [{"AttributeName": "pk", "AttributeType": "S"}]
    base = {"TableName": table_name, "AttributeDefinitions": defs, "BillingMode": "PAY_PER_REQUEST",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}]}
    duplicate = INVALID + "Duplicate element in NonKeyAttributes: b"
    for projection, message in [
        ({"ProjectionType": "INCLUDE", "NonKeyAttributes": ["a", "b", "c", "b"]}, duplicate),
        ({"ProjectionType": "INCLUDE"}, INVALID + "ProjectionType is INCLUDE, but NonKeyAttributes is not specified"),
        ({"ProjectionType": "KEYS_ONLY", "NonKeyAttributes": ["a"]},
         INVALID + "ProjectionType is KEYS_ONLY, but NonKeyAttributes is specified"),
    ]:
        with pytest.raises(ClientError) as err:
            ddb.create_table(**base, VectorIndexes=[_index(**projection)])
        assert error_of(err) == (V, message)
    # The same message for a GSI, where the rule came from, and for a vector index added later.
    with pytest.raises(ClientError) as err:
        ddb.create_table(**base, GlobalSecondaryIndexes=[{
            "IndexName": "gix", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["a", "b", "c", "b"]}}])
    assert error_of(err) == (V, duplicate)
    ddb.create_table(**base)
    with pytest.raises(ClientError) as err:
        ddb.update_table(TableName=table_name, VectorIndexUpdates=[{"Create": _index(
            ProjectionType="INCLUDE", NonKeyAttributes=["a", "b", "c", "b"])}])
    assert error_of(err) == (V, duplicate)
    assert "VectorIndexes" not in ddb.describe_table(TableName=table_name)["Table"]
    # UpdateTable's GSI Create shares the rule too.
    with pytest.raises(ClientError) as err:
        ddb.update_table(TableName=table_name, AttributeDefinitions=defs, GlobalSecondaryIndexUpdates=[{"Create": {
            "IndexName": "gix", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["a", "b", "c", "b"]}}}])
    assert error_of(err) == (V, duplicate)
    assert "GlobalSecondaryIndexes" not in ddb.describe_table(TableName=table_name)["Table"]
    # A projection naming each attribute once is accepted.
    ddb.update_table(TableName=table_name, VectorIndexUpdates=[{"Create": _index(
        ProjectionType="INCLUDE", NonKeyAttributes=["a", "b"])}])
    described = ddb.describe_table(TableName=table_name)["Table"]["VectorIndexes"][0]
    assert described["Projection"] == {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["a", "b"]}
