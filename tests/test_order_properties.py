"""Properties of Query order and pagination, checked over random keys against a real server.

* A Query returns its item collection sorted exactly as DynamoDB sorts sort
  keys: N by numeric value (negative, tiny, huge, 38 digits), S by UTF-8
  bytes (not by UTF-16 code units, which differ above U+FFFF), B by unsigned
  bytes; reversed with ScanIndexForward=false; and a sort-key condition
  selects exactly the values a direct comparison selects.
* Paging through a collection or a table while other clients write never
  skips or repeats an item that existed throughout.
"""

from __future__ import annotations

import base64
import threading
import uuid
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from conftest import client_for, create_table
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@st.composite
def numbers(draw: st.DrawFn) -> str:
    """Any number DynamoDB stores: up to 38 digits, magnitude 1E-130 to below 1E+126."""
    digits = draw(st.integers(1, 38))
    mantissa = draw(st.integers(10 ** (digits - 1), 10**digits - 1))
    adjusted = draw(st.integers(-130, 125))
    sign = draw(st.sampled_from(["", "-"]))
    return f"{sign}{mantissa}E{adjusted - (digits - 1)}"


NUMBER = st.one_of(
    numbers(),
    st.integers(-1000, 1000).map(str),
    st.decimals(min_value=-10, max_value=10, places=3, allow_nan=False, allow_infinity=False).map(str),
    st.sampled_from(["0", "1E-130", "-1E-130", "9.9999999999999999999999999999999999999E+125",
                     "-9.9999999999999999999999999999999999999E+125", "12345678901234567890123456789012345678"]),
)
STRING = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=12)
BINARY = st.binary(min_size=1, max_size=12)

TYPES: dict[str, tuple[Any, Callable[[str], Any], Callable[[Any], Any]]] = {
    # type: (strategy, key for sorting a wire value, wire value from a drawn value)
    "N": (NUMBER, Decimal, str),
    "S": (STRING, lambda s: s.encode("utf-8"), str),
    "B": (BINARY, lambda b: base64.b64decode(b), lambda b: base64.b64encode(b).decode()),
}

_tables: dict[str, str] = {}


def table_for(ddb: Any, key_type: str) -> str:
    """One pk/sk table per sort-key type for all examples; each example uses its own partition."""
    if key_type not in _tables:
        name = f"ord-{key_type.lower()}-{uuid.uuid4().hex[:8]}"
        create_table(ddb, name, range_key=("sk", key_type))
        _tables[key_type] = name
    return _tables[key_type]


def wire(key_type: str, value: Any) -> dict[str, Any]:
    """The value as boto3's low-level client takes it (bytes for B)."""
    return {key_type: value}


def sort_values(out: dict[str, Any], key_type: str) -> list[Any]:
    """Sort-key values of a Query answer, in the form TYPES' key functions read."""
    values = [item["sk"][key_type] for item in out["Items"]]
    if key_type == "B":
        return [base64.b64encode(v).decode() for v in values]
    return values


def load(ddb: Any, key_type: str, drawn: list[Any]) -> tuple[str, dict[str, Any], list[Any]]:
    """Store one item per distinct value; (table, partition key, canonical values sorted)."""
    _, sort_key, to_wire = TYPES[key_type]
    table = table_for(ddb, key_type)
    pk = {"S": uuid.uuid4().hex}
    distinct: dict[Any, Any] = {}
    for value in drawn:
        distinct.setdefault(sort_key(to_wire(value)), value)
    for value in distinct.values():
        ddb.put_item(TableName=table, Item={"pk": pk, "sk": wire(key_type, value)})
    return table, pk, sorted(distinct)


def query_all(ddb: Any, table: str, key_type: str, limit: int | None = None, **kwargs: Any) -> list[Any]:
    """Every page of a Query, concatenated, as sort keys."""
    _, sort_key, _ = TYPES[key_type]
    out_values: list[Any] = []
    start = None
    while True:
        extra: dict[str, Any] = {} if limit is None else {"Limit": limit}
        if start is not None:
            extra["ExclusiveStartKey"] = start
        out = ddb.query(TableName=table, **kwargs, **extra)
        out_values += [sort_key(v) for v in sort_values(out, key_type)]
        start = out.get("LastEvaluatedKey")
        if start is None:
            return out_values


@pytest.mark.parametrize("key_type", ["N", "S", "B"])
def test_query_returns_sort_key_order(ddb: Any, key_type: str) -> None:
    strategy = TYPES[key_type][0]

    @SETTINGS
    @given(drawn=st.lists(strategy, min_size=1, max_size=25), limit=st.one_of(st.none(), st.integers(1, 6)))
    def check(drawn: list[Any], limit: int | None) -> None:
        table, pk, expected = load(ddb, key_type, drawn)
        condition = {"KeyConditionExpression": "pk = :pk", "ExpressionAttributeValues": {":pk": pk}}
        assert query_all(ddb, table, key_type, **condition) == expected
        assert query_all(ddb, table, key_type, limit, ScanIndexForward=False, **condition) == expected[::-1]
        if limit is not None:
            assert query_all(ddb, table, key_type, limit, **condition) == expected

    check()


OPERATORS: dict[str, Callable[[Any, Any, Any], bool]] = {
    "sk = :a": lambda v, a, b: v == a,
    "sk < :a": lambda v, a, b: v < a,
    "sk <= :a": lambda v, a, b: v <= a,
    "sk > :a": lambda v, a, b: v > a,
    "sk >= :a": lambda v, a, b: v >= a,
    "sk BETWEEN :a AND :b": lambda v, a, b: a <= v <= b,
    "begins_with(sk, :a)": lambda v, a, b: v.startswith(a),
}


@pytest.mark.parametrize("key_type", ["N", "S", "B"])
def test_sort_key_conditions_select_what_comparison_selects(ddb: Any, key_type: str) -> None:
    strategy, sort_key, to_wire = TYPES[key_type]
    operators = [op for op in OPERATORS if key_type != "N" or not op.startswith("begins_with")]

    @SETTINGS
    @given(
        drawn=st.lists(strategy, min_size=1, max_size=15),
        bounds=st.lists(strategy, min_size=2, max_size=2),
        operator=st.sampled_from(operators),
        pick=st.integers(0, 100),
        forward=st.booleans(),
    )
    def check(drawn: list[Any], bounds: list[Any], operator: str, pick: int, forward: bool) -> None:
        table, pk, stored = load(ddb, key_type, drawn)
        # bounds from the stored values half of the time, to hit equality edges
        if pick % 2:
            bounds = [drawn[pick % len(drawn)], drawn[(pick // 2) % len(drawn)]]
        low, high = sorted(bounds, key=lambda v: sort_key(to_wire(v)))
        values = {":pk": pk, ":a": wire(key_type, low)}
        if "BETWEEN" in operator:
            values[":b"] = wire(key_type, high)
        a, b = sort_key(to_wire(low)), sort_key(to_wire(high))
        expected = [v for v in stored if OPERATORS[operator](v, a, b)]
        got = query_all(ddb, table, key_type, KeyConditionExpression=f"pk = :pk AND {operator}",
                        ExpressionAttributeValues=values, ScanIndexForward=forward)
        assert got == (expected if forward else expected[::-1])

    check()


# -- pagination under concurrent writes ---------------------------------------------


class Writer(threading.Thread):
    """Another client writing around the stable items until told to stop."""

    def __init__(self, endpoint: str, step: Callable[[Any, int], None]) -> None:
        super().__init__(daemon=True)
        self.client = client_for(endpoint)
        self.step = step
        self.stop = threading.Event()
        self.writes = 0
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            while not self.stop.is_set():
                self.step(self.client, self.writes)
                self.writes += 1
        except BaseException as error:  # surfaced by the test
            self.error = error


def test_query_pages_while_others_write(ddb: Any, endpoint: str, range_table: str) -> None:
    pk = {"S": "busy"}
    stable = list(range(0, 300, 3))  # sk = 0, 3, 6 ...: present throughout
    for sk in stable:
        ddb.put_item(TableName=range_table, Item={"pk": pk, "sk": {"N": str(sk)}, "v": {"N": "0"}})

    def step(client: Any, n: int) -> None:
        transient = {"pk": pk, "sk": {"N": str((n * 7) % 300 * 3 + 1 + n % 2)}}
        client.put_item(TableName=range_table, Item=transient)  # inserted between stable items
        client.put_item(TableName=range_table, Item={"pk": pk, "sk": {"N": str(stable[n % len(stable)])},
                                                     "v": {"N": str(n)}})  # stable items rewritten
        if n % 3 == 0:
            client.delete_item(TableName=range_table, Key=transient)
        client.put_item(TableName=range_table, Item={"pk": {"S": f"other{n % 5}"}, "sk": {"N": str(n)}})

    writer = Writer(endpoint, step)
    writer.start()
    try:
        for forward in (True, False, True, False):
            seen: list[Decimal] = []
            start = None
            while True:
                kwargs: dict[str, Any] = {"Limit": 7, "ScanIndexForward": forward}
                if start is not None:
                    kwargs["ExclusiveStartKey"] = start
                out = ddb.query(TableName=range_table, KeyConditionExpression="pk = :pk",
                                ExpressionAttributeValues={":pk": pk}, **kwargs)
                seen += [Decimal(i["sk"]["N"]) for i in out["Items"]]
                start = out.get("LastEvaluatedKey")
                if start is None:
                    break
            assert seen == sorted(seen, reverse=not forward)
            assert len(seen) == len(set(seen))
            assert [s for s in seen if s % 3 == 0] == [Decimal(s) for s in (stable if forward else stable[::-1])]
    finally:
        writer.stop.set()
        writer.join(10)
    assert writer.error is None
    assert writer.writes > 0


def test_scan_pages_while_others_write(ddb: Any, endpoint: str, hash_table: str) -> None:
    stable = [f"stable-{i}" for i in range(60)]
    for key in stable:
        ddb.put_item(TableName=hash_table, Item={"pk": {"S": key}})

    def step(client: Any, n: int) -> None:
        key = {"pk": {"S": f"transient-{n % 40}"}}
        if n % 2:
            client.delete_item(TableName=hash_table, Key=key)
        else:
            client.put_item(TableName=hash_table, Item=key)
        client.put_item(TableName=hash_table, Item={"pk": {"S": stable[n % len(stable)]}, "n": {"N": str(n)}})

    writer = Writer(endpoint, step)
    writer.start()
    try:
        for segments in (1, 3):
            seen: list[str] = []
            for segment in range(segments):
                start = None
                while True:
                    kwargs: dict[str, Any] = {"Limit": 5}
                    if segments > 1:
                        kwargs.update(Segment=segment, TotalSegments=segments)
                    if start is not None:
                        kwargs["ExclusiveStartKey"] = start
                    out = ddb.scan(TableName=hash_table, **kwargs)
                    seen += [i["pk"]["S"] for i in out["Items"]]
                    start = out.get("LastEvaluatedKey")
                    if start is None:
                        break
            assert len(seen) == len(set(seen))
            assert sorted(k for k in seen if k.startswith("stable-")) == sorted(stable)
    finally:
        writer.stop.set()
        writer.join(10)
    assert writer.error is None
