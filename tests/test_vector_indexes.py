"""Vector indexes and SearchVectors through boto3, with neighbours computed independently here."""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import Server, client_for, error_of

DIMS = 4


def _vec(values: list[float]) -> dict[str, Any]:
    return {"L": [{"N": repr(v)} for v in values]}


def _create(ddb: Any, name: str, distance: str = "COSINE", schema: bool = False, **extra: Any) -> None:
    definitions = [{"AttributeName": "pk", "AttributeType": "S"}]
    index: dict[str, Any] = {
        "IndexName": "vix",
        "VectorAttribute": {"AttributeName": "emb"},
        "Dimensions": DIMS,
        "DistanceFunction": distance,
        "Projection": {"ProjectionType": "ALL"},
    }
    if schema:
        definitions += [{"AttributeName": "tenant", "AttributeType": "S"},
                        {"AttributeName": "yr", "AttributeType": "N"}]
        index["SearchSchema"] = [
            {"AttributeName": "tenant", "SearchSchemaElementType": "HASH"},
            {"AttributeName": "yr", "SearchSchemaElementType": "INLINE_FILTER"},
        ]
    ddb.create_table(
        TableName=name, AttributeDefinitions=definitions, KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST", VectorIndexes=[index], **extra,
    )


def _score(distance: str, q: list[float], v: list[float]) -> float:
    dot = sum(a * b for a, b in zip(q, v, strict=True))
    if distance == "DOT_PRODUCT":
        return dot
    if distance == "EUCLIDEAN":
        return math.sqrt(sum((a - b) ** 2 for a, b in zip(q, v, strict=True)))
    return 1 - dot / (math.sqrt(sum(a * a for a in q)) * math.sqrt(sum(b * b for b in v)))


def _expected(distance: str, q: list[float], items: dict[str, list[float]], k: int) -> list[str]:
    ranked = sorted(items, key=lambda pk: (-_score(distance, q, items[pk]) if distance == "DOT_PRODUCT"
                                           else _score(distance, q, items[pk])))
    return ranked[:k]


def _search(ddb: Any, table: str, q: list[float], k: int = 3, **extra: Any) -> dict[str, Any]:
    return ddb.search_vectors(TableName=table, IndexName="vix", SearchVector=[{"N": repr(x)} for x in q],
                              TopK=k, **extra)


@pytest.mark.parametrize("distance", ["COSINE", "EUCLIDEAN", "DOT_PRODUCT"])
def test_exact_neighbours_and_scores(ddb: Any, table_name: str, distance: str) -> None:
    _create(ddb, table_name, distance)
    rng = random.Random(7)
    items = {f"i{n}": [rng.uniform(-1, 1) for _ in range(DIMS)] for n in range(60)}
    for pk, v in items.items():
        ddb.put_item(TableName=table_name, Item={"pk": {"S": pk}, "emb": _vec(v), "note": {"S": pk * 2}})
    for _ in range(5):
        q = [rng.uniform(-1, 1) for _ in range(DIMS)]
        out = _search(ddb, table_name, q, k=5)
        got = [r["Item"]["pk"]["S"] for r in out["SearchResults"]]
        assert got == _expected(distance, q, items, 5)
        for r in out["SearchResults"]:
            assert r["Score"] == pytest.approx(_score(distance, q, items[r["Item"]["pk"]["S"]]), abs=1e-5)
            assert "emb" not in r["Item"]  # the vector comes back only when asked for
            assert r["Item"]["note"] == {"S": r["Item"]["pk"]["S"] * 2}
        assert "ConsumedCapacity" not in out


def test_describe_counts_delete_and_update_keep_index_exact(ddb: Any, table_name: str) -> None:
    _create(ddb, table_name, "EUCLIDEAN")
    desc = ddb.describe_table(TableName=table_name)["Table"]["VectorIndexes"][0]
    assert desc["IndexStatus"] == "ACTIVE" and "Backfilling" not in desc
    assert desc["Dimensions"] == DIMS and desc["DistanceFunction"] == "EUCLIDEAN"
    assert desc["IndexArn"].endswith(f"table/{table_name}/index/vix")
    ddb.put_item(TableName=table_name, Item={"pk": {"S": "a"}, "emb": _vec([0, 0, 0, 0])})
    ddb.put_item(TableName=table_name, Item={"pk": {"S": "b"}, "emb": _vec([1, 0, 0, 0])})
    ddb.put_item(TableName=table_name, Item={"pk": {"S": "c"}})  # no vector: not indexed
    desc = ddb.describe_table(TableName=table_name)["Table"]["VectorIndexes"][0]
    assert desc["ItemCount"] == 2 and desc["IndexSizeBytes"] == 2 * (len("pk") + 1 + 3 + 16)
    assert [r["Item"]["pk"]["S"] for r in _search(ddb, table_name, [0.9, 0, 0, 0])["SearchResults"]] == ["b", "a"]
    ddb.update_item(TableName=table_name, Key={"pk": {"S": "b"}}, UpdateExpression="SET emb = :v",
                    ExpressionAttributeValues={":v": _vec([5, 5, 5, 5])})
    assert [r["Item"]["pk"]["S"] for r in _search(ddb, table_name, [0.9, 0, 0, 0])["SearchResults"]] == ["a", "b"]
    ddb.delete_item(TableName=table_name, Key={"pk": {"S": "a"}})
    ddb.update_item(TableName=table_name, Key={"pk": {"S": "b"}}, UpdateExpression="REMOVE emb")
    assert _search(ddb, table_name, [1, 0, 0, 0])["SearchResults"] == []
    assert ddb.describe_table(TableName=table_name)["Table"]["VectorIndexes"][0]["ItemCount"] == 0


def test_malformed_vectors_are_refused(ddb: Any, table_name: str) -> None:
    _create(ddb, table_name, schema=True)
    cases = [
        ({"S": "x"}, "One or more parameter values were invalid. Invalid type for parameter emb, Expected: "
                     "32-bit floating point number list IndexName: vix"),
        ({"L": [{"N": "1"}, {"S": "x"}, {"N": "1"}, {"N": "1"}]},
         "One or more parameter values were invalid. Invalid type for parameter emb[1], Expected: 32-bit floating "
         "point number, Actual: S. IndexName: vix"),
        ({"L": [{"N": "1"}, {"N": "1e39"}, {"N": "1"}, {"N": "1"}]},
         "One or more parameter values were invalid. Invalid type for parameter emb[1], Expected: 32-bit floating "
         "point number, Actual: N. IndexName: vix"),
        (_vec([1, 2, 3]), "One or more parameter values were invalid. Invalid size for parameter emb, Expected: 4, "
                          "Actual: 3 IndexName: vix"),
    ]
    for value, message in cases:
        with pytest.raises(ClientError) as err:
            ddb.put_item(TableName=table_name, Item={"pk": {"S": "p"}, "tenant": {"S": "t"}, "emb": value})
        assert error_of(err) == ("ValidationException", message)
    with pytest.raises(ClientError) as err:
        ddb.put_item(TableName=table_name, Item={"pk": {"S": "p"}, "tenant": {"N": "1"}, "emb": _vec([1, 1, 1, 1])})
    assert error_of(err) == ("ValidationException", "One or more parameter values were invalid: Type mismatch for "
                             "Index Key tenant Expected: S Actual: N IndexName: vix")
    with pytest.raises(ClientError) as err:
        ddb.update_item(TableName=table_name, Key={"pk": {"S": "q"}}, UpdateExpression="SET emb = :v",
                        ExpressionAttributeValues={":v": _vec([1, 1])})
    assert error_of(err)[0] == "ValidationException"
    assert "Item" not in ddb.get_item(TableName=table_name, Key={"pk": {"S": "q"}})


def test_search_schema_hash_scoping_and_inline_filters(ddb: Any, table_name: str) -> None:
    _create(ddb, table_name, schema=True)
    rows = [("a", "t1", 2020, [1, 0, 0, 0]), ("b", "t1", 2021, [0.9, 0.1, 0, 0]), ("c", "t2", 2020, [1, 0, 0, 0]),
            ("d", "t1", None, [0.8, 0.2, 0, 0])]
    for pk, tenant, year, v in rows:
        item = {"pk": {"S": pk}, "tenant": {"S": tenant}, "emb": _vec(v)}
        if year is not None:
            item["yr"] = {"N": str(year)}
        ddb.put_item(TableName=table_name, Item=item)
    ddb.put_item(TableName=table_name, Item={"pk": {"S": "e"}, "emb": _vec([1, 0, 0, 0])})  # no HASH: left out
    out = _search(ddb, table_name, [1, 0, 0, 0], k=10, SearchConditionExpression="tenant = :t",
                  ExpressionAttributeValues={":t": {"S": "t1"}})
    assert [r["Item"]["pk"]["S"] for r in out["SearchResults"]] == ["a", "b", "d"]
    out = _search(ddb, table_name, [1, 0, 0, 0], k=10, SearchConditionExpression="#t = :t AND (yr = :y)",
                  ExpressionAttributeNames={"#t": "tenant"},
                  ExpressionAttributeValues={":t": {"S": "t1"}, ":y": {"N": "2020.0"}},
                  ProjectionExpression="pk, emb, nothere", ReturnConsumedCapacity="TOTAL")
    assert out["SearchResults"] == [{"Item": {"pk": {"S": "a"}, "emb": _vec([1.0, 0.0, 0.0, 0.0])}, "Score": 0.0}]
    assert out["ConsumedCapacity"] == {"VectorSearchRequestBytes": 1024.0}


def _err(ddb: Any, table: str, **kwargs: Any) -> tuple[str, str]:
    request = {"TableName": table, "IndexName": "vix", "SearchVector": [{"N": "1"}] * DIMS, "TopK": 1, **kwargs}
    with pytest.raises(ClientError) as err:
        ddb.search_vectors(**request)
    return error_of(err)


def test_search_errors(ddb: Any, table_name: str) -> None:
    _create(ddb, table_name, schema=True)
    v = "ValidationException"
    assert _err(ddb, table_name, TopK=101) == (v, "Provided TopK value '101' is out of valid range. The value must "
                                               "be between 1 and 100 inclusive")
    assert _err(ddb, table_name, SearchVector=[{"S": "1"}] * DIMS) == (
        v, "Search vector contains invalid values. All values in the search vector must be a 32-bit floating-point "
           "number attribute")
    assert _err(ddb, "nosuchtable")[0] == "ResourceNotFoundException"
    assert _err(ddb, table_name, IndexName="other") == (v, "The table does not have the specified index: other")
    assert _err(ddb, table_name, SearchVector=[{"N": "1"}] * 3) == (
        v, "Input search vector dimension 3 does not match vector index dimension 4")
    assert _err(ddb, table_name) == (v, "SearchConditionExpression must be provided when SearchSchema has a HASH key")
    assert _err(ddb, table_name, SearchConditionExpression="yr = :y", ExpressionAttributeValues={
        ":y": {"N": "1"}}) == (v, "SearchConditionExpression must be provided when SearchSchema has a HASH key")
    values = {":t": {"S": "t"}, ":u": {"S": "u"}}
    for expr, message in [
        ("tenant < :t", "Invalid SearchConditionExpression: Invalid comparator used in SearchConditionExpression"),
        ("tenant = :t AND yr <> :u", "Invalid SearchConditionExpression: Invalid comparator used in "
                                       "SearchConditionExpression"),
        ("tenant BETWEEN :t AND :u", "Invalid SearchConditionExpression: Invalid operator used in "
                                     "SearchConditionExpression"),
        ("tenant IN (:t, :u)", "Invalid SearchConditionExpression: Invalid operator used in "
                               "SearchConditionExpression"),
        ("tenant = :t AND colour = :u", "SearchConditionExpression must not contain any attributes that is not in "
                                       "SearchSchema. Invalid attribute: colour"),
    ]:
        used = {k: x for k, x in values.items() if k in expr}
        assert _err(ddb, table_name, SearchConditionExpression=expr, ExpressionAttributeValues=used) == (v, message)
    code, message = _err(ddb, table_name, SearchConditionExpression="tenant = :t",
                         ExpressionAttributeValues={":t": {"S": "t"}, ":zz": {"S": "u"}})
    assert (code, message) == (v, "Value provided in ExpressionAttributeValues unused in expressions: keys: {:zz}")


def test_declaration_errors(ddb: Any, table_name: str) -> None:
    base = {"IndexName": "vix", "VectorAttribute": {"AttributeName": "emb"}, "Dimensions": 4,
            "DistanceFunction": "COSINE", "Projection": {"ProjectionType": "ALL"}}
    defs = [{"AttributeName": "pk", "AttributeType": "S"}]
    key = [{"AttributeName": "pk", "KeyType": "HASH"}]
    invalid = "One or more parameter values were invalid: "

    def refused(indexes: list[dict[str, Any]], **extra: Any) -> tuple[str, str]:
        request = {"TableName": table_name, "AttributeDefinitions": defs, "KeySchema": key,
                   "BillingMode": "PAY_PER_REQUEST", "VectorIndexes": indexes, **extra}
        with pytest.raises(ClientError) as err:
            ddb.create_table(**request)
        return error_of(err)

    v = "ValidationException"
    assert refused([{**base, "Dimensions": 4097}]) == (v, invalid + "Number of dimensions must be between 1 and 4096 "
                                                       "inclusive.")
    assert refused([{**base, "SearchSchema": [{"AttributeName": "t", "SearchSchemaElementType": "HASH"}]}]) == (
        v, invalid + "One element in SearchSchema is not defined in attribute definitions")
    assert refused([base, {**base, "IndexName": "vix2", "Dimensions": 8}]) == (
        v, invalid + "Conflicting attribute definition for 'emb'. All VectorIndexes on the same vector attribute "
                     "must use the same dimensions.")
    assert refused([base, base]) == (v, invalid + "Duplicate index name: vix")
    assert refused([{**base, "IndexName": f"v{i}x"} for i in range(6)]) == (
        v, invalid + "VectorIndex count exceeds the per-table limit of 5")
    assert refused([base], BillingMode="PROVISIONED",
                   ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}) == (
        v, invalid + "Vector indexes are only supported for PAY_PER_REQUEST tables")


def test_update_table_create_backfill_and_delete(ddb: Any, table_name: str) -> None:
    ddb.create_table(TableName=table_name, AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}], BillingMode="PAY_PER_REQUEST")
    items = {f"k{i}": [float(i), 1.0, 0.0, 0.0] for i in range(1200)}
    with ddb_batch(ddb, table_name) as put:
        for pk, vec in items.items():
            put({"pk": {"S": pk}, "emb": _vec(vec)})
    create = {"IndexName": "vix", "VectorAttribute": {"AttributeName": "emb"}, "Dimensions": DIMS,
              "DistanceFunction": "EUCLIDEAN", "Projection": {"ProjectionType": "KEYS_ONLY"}}
    with pytest.raises(ClientError) as err:
        ddb.update_table(TableName=table_name, VectorIndexUpdates=[
            {"Create": create}, {"Create": {**create, "IndexName": "v2x"}}])
    assert error_of(err) == ("LimitExceededException", "Subscriber limit exceeded: Only 1 online index can be "
                             "created or deleted simultaneously per table")
    out = ddb.update_table(TableName=table_name, VectorIndexUpdates=[{"Create": create}])
    assert out["TableDescription"]["VectorIndexes"][0]["IndexStatus"] == "CREATING"
    assert out["TableDescription"]["VectorIndexes"][0]["Backfilling"] is True
    _wait(ddb, table_name, lambda docs: docs and docs[0]["IndexStatus"] == "ACTIVE")
    doc = ddb.describe_table(TableName=table_name)["Table"]["VectorIndexes"][0]
    assert doc["ItemCount"] == 1200 and "Backfilling" not in doc
    got = _search(ddb, table_name, [10.2, 1, 0, 0], k=3)["SearchResults"]
    assert [r["Item"] for r in got] == [{"pk": {"S": "k10"}}, {"pk": {"S": "k11"}}, {"pk": {"S": "k9"}}]
    ddb.update_table(TableName=table_name, VectorIndexUpdates=[{"Delete": {"IndexName": "vix"}}])
    _wait(ddb, table_name, lambda docs: not docs)
    assert _err(ddb, table_name) == ("ValidationException", "The table does not have the specified index: vix")


class ddb_batch:  # noqa: N801 - a tiny context manager for bulk loads
    def __init__(self, ddb: Any, table: str) -> None:
        self.ddb, self.table, self.pending = ddb, table, []

    def __enter__(self) -> Callable[[dict[str, Any]], None]:
        return self.put

    def put(self, item: dict[str, Any]) -> None:
        self.pending.append({"PutRequest": {"Item": item}})
        if len(self.pending) == 25:
            self.flush()

    def flush(self) -> None:
        if self.pending:
            self.ddb.batch_write_item(RequestItems={self.table: self.pending})
            self.pending = []

    def __exit__(self, *exc: object) -> None:
        self.flush()


def _wait(ddb: Any, table: str, done: Callable[[list[dict[str, Any]]], Any]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if done(ddb.describe_table(TableName=table)["Table"].get("VectorIndexes", [])):
            return
        time.sleep(0.05)
    raise AssertionError("index change did not finish")


def test_restart_rebuilds_from_stored_rows(start_server: Callable[..., Server], tmp_path: Path) -> None:
    data = str(tmp_path / "data")
    first = start_server("--data-dir", data)
    ddb = client_for(first.url)
    _create(ddb, "vtab", "DOT_PRODUCT")
    for i in range(20):
        ddb.put_item(TableName="vtab", Item={"pk": {"S": f"p{i}"}, "emb": _vec([i, 0, 0, 1])})
    before = _search(ddb, "vtab", [1, 0, 0, 0], k=3)["SearchResults"]
    first.kill()
    second = start_server("--data-dir", data, "--vector-index", "approximate")
    ddb = client_for(second.url)
    after = _search(ddb, "vtab", [1, 0, 0, 0], k=3)["SearchResults"]
    assert after == before and [r["Item"]["pk"]["S"] for r in after] == ["p19", "p18", "p17"]
    ddb.put_item(TableName="vtab", Item={"pk": {"S": "top"}, "emb": _vec([100, 0, 0, 0])})
    assert _search(ddb, "vtab", [1, 0, 0, 0], k=1)["SearchResults"][0]["Item"]["pk"] == {"S": "top"}
