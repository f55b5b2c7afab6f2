"""Property: an item loaded by a bulk put, from DynamoDB JSON or Ion, is the item PutItem stores.

Hypothesis draws items of every attribute type, nested; each example writes
them as one input object, runs one bulk put and compares every item with
the same item written by PutItem into a twin table (canonical numbers, set
order, binary values and all).
"""

from __future__ import annotations

import base64
import itertools
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from bulk_helpers import finished, json_line, start, write_object
from conftest import Server, client_for, create_table, launch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from partita.engine.backups.formats import ion_line

NUMBER = st.one_of(
    st.integers(-10**20, 10**20).map(str),
    st.decimals(min_value=-1000, max_value=1000, places=4, allow_nan=False, allow_infinity=False).map(str),
    st.sampled_from(["1E-130", "-9.9E+125", "0.000", "12.50"]),
)
TEXT = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=8)
BLOB = st.binary(min_size=1, max_size=8)
SCALAR = st.one_of(
    TEXT.map(lambda s: {"S": s}), NUMBER.map(lambda n: {"N": n}), BLOB.map(lambda b: {"B": b}),
    st.booleans().map(lambda b: {"BOOL": b}), st.just({"NULL": True}),
    st.lists(TEXT, min_size=1, max_size=3, unique=True).map(lambda v: {"SS": v}),
    st.lists(st.integers(-999, 999).map(str), min_size=1, max_size=3, unique=True).map(lambda v: {"NS": v}),
    st.lists(BLOB, min_size=1, max_size=3, unique=True).map(lambda v: {"BS": v}),
)
VALUE = st.recursive(SCALAR, lambda inner: st.one_of(
    st.lists(inner, max_size=3).map(lambda v: {"L": v}),
    st.dictionaries(TEXT, inner, max_size=3).map(lambda v: {"M": v})), max_leaves=8)
ATTRIBUTES = st.dictionaries(TEXT.filter(lambda n: n != "pk"), VALUE, max_size=4)
SETTINGS = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def wire(value: dict[str, Any]) -> dict[str, Any]:
    """boto3's form (bytes) -> DynamoDB JSON's (base64 text)."""
    (kind, v), = value.items()
    if kind == "B":
        return {"B": base64.b64encode(v).decode()}
    if kind == "BS":
        return {"BS": [base64.b64encode(b).decode() for b in v]}
    if kind == "L":
        return {"L": [wire(x) for x in v]}
    if kind == "M":
        return {"M": {k: wire(x) for k, x in v.items()}}
    return value


def canonical(value: dict[str, Any]) -> Any:
    """One attribute value with sets compared as sets and numbers by value."""
    (kind, v), = value.items()
    if kind in ("SS", "BS"):
        return kind, frozenset(v)
    if kind == "NS":
        return kind, frozenset(Decimal(x) for x in v)
    if kind == "N":
        return kind, Decimal(v)
    if kind == "L":
        return kind, tuple(canonical(x) for x in v)
    if kind == "M":
        return kind, {k: canonical(x) for k, x in v.items()}
    return kind, v


def same(item: dict[str, Any]) -> dict[str, Any]:
    return {name: canonical(value) for name, value in item.items()}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Path]]:
    root = tmp_path_factory.mktemp("s3")
    srv = launch("--in-memory", "--s3-dir", str(root))
    yield srv, root
    srv.stop()


_runs = itertools.count()


@pytest.mark.parametrize("fmt", ["DYNAMODB_JSON", "ION"])
def test_bulk_loaded_items_equal_put_items(server: tuple[Server, Path], fmt: str) -> None:
    srv, root = server
    ddb = client_for(srv.url)

    @SETTINGS
    @given(items=st.lists(ATTRIBUTES, min_size=1, max_size=5))
    def check(items: list[dict[str, Any]]) -> None:
        run = next(_runs)
        loaded, twin = f"bulk-{fmt.lower()}-{run}", f"twin-{fmt.lower()}-{run}"
        for name in (loaded, twin):
            create_table(ddb, name)
        full = [{"pk": {"S": f"k{i}"}, **attrs} for i, attrs in enumerate(items)]
        if fmt == "DYNAMODB_JSON":
            lines = [json_line({k: wire(v) for k, v in item.items()}) for item in full]
        else:
            lines = [ion_line({"Item": {k: wire(v) for k, v in item.items()}}).decode().rstrip("\n") for item in full]
        write_object(root, "input", f"prop-{run}/data", lines)
        doc = finished(ddb, start(ddb, loaded, prefix=f"prop-{run}/", fmt=fmt))
        assert (doc["BulkOperationStatus"], doc["ProcessedItemCount"]) == ("COMPLETED", len(full))
        for item in full:
            ddb.put_item(TableName=twin, Item=item)
            key = {"pk": item["pk"]}
            got = ddb.get_item(TableName=loaded, Key=key, ConsistentRead=True)["Item"]
            want = ddb.get_item(TableName=twin, Key=key, ConsistentRead=True)["Item"]
            assert same(got) == same(want)

    check()


def test_strategies_stay_valid(server: tuple[Server, Path]) -> None:
    """The drawn items are items PutItem takes (else the property would test nothing)."""
    srv, _ = server
    ddb = client_for(srv.url)
    create_table(ddb, "strategy-check")
    put: Callable[[dict[str, Any]], Any] = lambda attrs: ddb.put_item(  # noqa: E731
        TableName="strategy-check", Item={"pk": {"S": "k"}, **attrs})

    @SETTINGS
    @given(ATTRIBUTES)
    def check(attrs: dict[str, Any]) -> None:
        put(attrs)

    check()
