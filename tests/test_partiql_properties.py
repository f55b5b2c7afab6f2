"""Random SELECTs against an independent model of what they mean, and against the JSON read they stand for.

Every generated statement's items (all pages, through NextToken) must be
exactly the items of a full Scan that satisfy the WHERE as evaluated here in
Python; with the partition key fixed by `=` they must come in sort-key order;
and its capacity must equal that of the equivalent Query (partition key fixed,
no sort-key condition) or Scan (partition key not fixed).
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from conftest import create_table, put_all
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

Item = dict[str, Any]
Pred = Callable[[Item], bool]
PARTITIONS = ("p0", "p1", "p2")
_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "=": lambda x, y: x == y,
    "<>": lambda x, y: x != y,
    "<": lambda x, y: x < y,
    "<=": lambda x, y: x <= y,
    ">": lambda x, y: x > y,
    ">=": lambda x, y: x >= y,
}


def _num(item: Item, name: str) -> int | None:
    value = item.get(name)
    return None if value is None or "N" not in value else int(value["N"])


def _str(item: Item, name: str) -> str | None:
    value = item.get(name)
    return None if value is None or "S" not in value else value["S"]


def _compare(value: Any, op: str, other: Any) -> bool:
    """DynamoDB's comparison: a missing attribute is unequal to everything, and unordered."""
    if value is None:
        return op == "<>"
    return _OPS[op](value, other)


@st.composite
def leaf(draw: st.DrawFn) -> tuple[str, Pred]:
    kind = draw(st.sampled_from(["a_cmp", "b_cmp", "between", "in", "begins", "missing", "size"]))
    if kind == "a_cmp":
        op, n = draw(st.sampled_from(sorted(_OPS))), draw(st.integers(0, 5))
        return f"a {op} {n}", lambda i: _compare(_num(i, "a"), op, n)
    if kind == "b_cmp":
        op, s = draw(st.sampled_from(sorted(_OPS))), draw(st.sampled_from(["x", "xy", "y", "z"]))
        return f"b {op} '{s}'", lambda i: _compare(_str(i, "b"), op, s)
    if kind == "between":
        lo, hi = sorted(draw(st.lists(st.integers(0, 5), min_size=2, max_size=2)))
        return f"a BETWEEN {lo} AND {hi}", lambda i: (v := _num(i, "a")) is not None and lo <= v <= hi
    if kind == "in":
        values = draw(st.lists(st.integers(0, 5), min_size=1, max_size=3))
        text = ", ".join(map(str, values))
        return f"a IN ({text})", lambda i: _num(i, "a") in values
    if kind == "begins":
        prefix = draw(st.sampled_from(["x", "y", "xy"]))
        return f"begins_with(b, '{prefix}')", lambda i: (v := _str(i, "b")) is not None and v.startswith(prefix)
    if kind == "size":
        n = draw(st.integers(0, 3))
        return f"size(b) >= {n}", lambda i: (v := _str(i, "b")) is not None and len(v) >= n
    name, negated = draw(st.sampled_from(["a", "b"])), draw(st.booleans())
    if negated:
        return f"{name} IS NOT MISSING", lambda i: name in i
    return f"{name} IS MISSING", lambda i: name not in i


def condition(depth: int = 2) -> st.SearchStrategy[tuple[str, Pred]]:
    if depth == 0:
        return leaf()

    @st.composite
    def composite(draw: st.DrawFn) -> tuple[str, Pred]:
        shape = draw(st.sampled_from(["leaf", "and", "or", "not"]))
        if shape == "leaf":
            return draw(leaf())
        if shape == "not":
            text, pred = draw(condition(depth - 1))
            return f"NOT ({text})", lambda i: not pred(i)
        (lt, lp), (rt, rp) = draw(condition(depth - 1)), draw(condition(depth - 1))
        if shape == "and":
            return f"({lt}) AND ({rt})", lambda i: lp(i) and rp(i)
        return f"({lt}) OR ({rt})", lambda i: lp(i) or rp(i)

    return composite()


@st.composite
def select(draw: st.DrawFn) -> tuple[str, Pred, str | None, bool, bool]:
    """(WHERE text or "", predicate, the fixed partition or None, sort-key term used, descending)."""
    terms: list[str] = []
    preds: list[Pred] = []
    fixed = None
    pk_mode = draw(st.sampled_from(["none", "eq", "in"]))
    if pk_mode == "eq":
        fixed = draw(st.sampled_from(PARTITIONS))
        terms.append(f"pk = '{fixed}'")
        preds.append(lambda i: i["pk"]["S"] == fixed)
    elif pk_mode == "in":
        chosen = draw(st.lists(st.sampled_from(PARTITIONS), min_size=1, max_size=3, unique=True))
        terms.append("pk IN (" + ", ".join(f"'{p}'" for p in chosen) + ")")
        preds.append(lambda i: i["pk"]["S"] in chosen)
    sort_term = draw(st.booleans())
    if sort_term:
        op, n = draw(st.sampled_from(["=", "<", "<=", ">", ">="])), draw(st.integers(0, 7))
        terms.append(f"sk {op} {n}")
        preds.append(lambda i: _OPS[op](int(i["sk"]["N"]), n))
    if draw(st.booleans()):
        text, pred = draw(condition())
        terms.append(f"({text})")
        preds.append(pred)
    draw(st.randoms()).shuffle(terms)
    where = " AND ".join(terms)
    descending = fixed is not None and draw(st.booleans())
    return where, (lambda i: all(p(i) for p in preds)), fixed, sort_term, descending


@pytest.fixture(scope="module")
def dataset(ddb: Any) -> tuple[str, list[Item]]:
    name = f"pq-prop-{uuid.uuid4().hex[:8]}"
    create_table(ddb, name, range_key=("sk", "N"))
    rng = random.Random(12)
    items = []
    for p in PARTITIONS:
        for s in range(8):
            item: Item = {"pk": {"S": p}, "sk": {"N": str(s)}}
            if rng.random() < 0.8:
                item["a"] = {"N": str(rng.randint(0, 5))}
            if rng.random() < 0.8:
                item["b"] = {"S": rng.choice(["x", "xy", "xyz", "y", "yz", "z"])}
            items.append(item)
    put_all(ddb, name, items)
    return name, items


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=select(), limit=st.one_of(st.none(), st.integers(1, 7)))
def test_random_selects(ddb: Any, dataset: tuple[str, list[Item]], query: Any, limit: int | None) -> None:
    table, items = dataset
    where, pred, fixed, sort_term, descending = query
    statement = f'SELECT * FROM "{table}"' + (f" WHERE {where}" if where else "")
    if descending:
        statement += " ORDER BY sk DESC"
    got: list[Item] = []
    token = None
    pages = 0
    capacity = 0.0
    while True:
        extra: dict[str, Any] = {"ReturnConsumedCapacity": "TOTAL"}
        if limit is not None:
            extra["Limit"] = limit
        if token is not None:
            extra["NextToken"] = token
        page = ddb.execute_statement(Statement=statement, **extra)
        assert limit is None or len(page["Items"]) <= limit
        got += page["Items"]
        capacity += page["ConsumedCapacity"]["CapacityUnits"]
        pages += 1
        token = page.get("NextToken")
        if token is None:
            break
        assert pages < 100
    expected = [i for i in items if pred(i)]

    def key(i: Item) -> tuple[str, int]:
        return i["pk"]["S"], int(i["sk"]["N"])

    assert sorted(got, key=key) == sorted(expected, key=key), statement
    if fixed is not None:
        order = [int(i["sk"]["N"]) for i in got]
        assert order == sorted(order, reverse=descending), statement
    if limit is None and not sort_term:
        if fixed is not None:
            json_read = ddb.query(
                TableName=table, KeyConditionExpression="pk = :p",
                ExpressionAttributeValues={":p": {"S": fixed}}, ReturnConsumedCapacity="TOTAL",
            )
        elif "pk IN" not in where:
            json_read = ddb.scan(TableName=table, ReturnConsumedCapacity="TOTAL")
        else:
            return
        assert capacity == json_read["ConsumedCapacity"]["CapacityUnits"], statement
