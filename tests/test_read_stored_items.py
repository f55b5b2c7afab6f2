"""Query, Scan and GetItem hand out items as stored: the answer is the same JSON as the decoding path's.

A Query or Scan page with no filter, projection or table fetch sends its
items as their stored JSON (engine/items/reads.py, `PageSpec.as_stored`),
never decoded and encoded again, and so does a GetItem without a projection
(api/items.py, `get_item_operation`). The same page with a filter that keeps
every item takes the decoding path, so the answers are compared as text,
member order included, over random items (every type, nested, numbers in
non-canonical forms, any Unicode) on every store: the unfiltered page and
each GetItem against the filtered page.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from conftest import create_table, raw_request
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

TEXT = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=8)
NUMBER = st.one_of(
    st.integers(-10**6, 10**6).map(str),
    st.sampled_from(["01.50", "1e2", "-0.000", "1.0E-130", "9.9999999999999999999999999999999999999E+125",
                     "+7", ".5", "12345678901234567890123456789012345678"]),
)
BLOB = st.binary(min_size=1, max_size=6).map(lambda b: __import__("base64").b64encode(b).decode())
SCALAR = st.one_of(
    TEXT.map(lambda s: {"S": s}), NUMBER.map(lambda n: {"N": n}), BLOB.map(lambda b: {"B": b}),
    st.booleans().map(lambda b: {"BOOL": b}), st.just({"NULL": True}),
    st.lists(TEXT, min_size=1, max_size=3, unique=True).map(lambda v: {"SS": v}),
    st.lists(st.integers(-999, 999), min_size=1, max_size=3, unique=True).map(lambda v: {"NS": [str(n) for n in v]}),
    st.lists(BLOB, min_size=1, max_size=3, unique=True).map(lambda v: {"BS": v}),
)
VALUE = st.recursive(SCALAR, lambda inner: st.one_of(
    st.lists(inner, max_size=3).map(lambda v: {"L": v}),
    st.dictionaries(TEXT, inner, max_size=3).map(lambda v: {"M": v})), max_leaves=8)
ATTRIBUTES = st.dictionaries(TEXT.filter(lambda n: n not in ("pk", "sk", "f")), VALUE, max_size=4)


@pytest.fixture(scope="module")
def table(ddb: Any) -> str:
    name = f"stored-{uuid.uuid4().hex[:8]}"
    create_table(ddb, name, range_key=("sk", "N"))
    return name


def _call(endpoint: str, operation: str, body: dict[str, Any]) -> bytes:
    response = raw_request(endpoint, operation, body)
    assert response.status == 200, response.body
    return response.body


def _ordered(body: bytes) -> Any:
    """The answer with every object as its (name, value) pairs: member order counts."""
    return json.loads(body, object_pairs_hook=list)


def _members(body: bytes, *names: str) -> list[Any]:
    pairs = dict(_ordered(body))
    return [pairs.get(name) for name in names]


@SETTINGS
@given(st.lists(ATTRIBUTES, min_size=1, max_size=4))
def test_an_unfiltered_page_is_the_filtered_pages_text(endpoint: str, table: str,
                                                       attributes: list[dict[str, Any]]) -> None:
    pk = uuid.uuid4().hex
    for sk, extra in enumerate(attributes):
        _call(endpoint, "PutItem", {"TableName": table,
                                    "Item": {"pk": {"S": pk}, "sk": {"N": str(sk)}, **extra, "f": {"BOOL": True}}})
    query = {"TableName": table, "KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": pk}},
             "ReturnConsumedCapacity": "TOTAL"}
    keep_all = {"FilterExpression": "attribute_exists(f)"}
    for extra in ({}, {"Limit": 1}, {"ScanIndexForward": False, "Limit": 2}):
        plain = _call(endpoint, "Query", {**query, **extra})
        decoded = _call(endpoint, "Query", {**query, **extra, **keep_all})
        names = ("Items", "Count", "ScannedCount", "LastEvaluatedKey", "ConsumedCapacity")
        assert _members(plain, *names) == _members(decoded, *names)
    items = _members(_call(endpoint, "Query", {**query, **keep_all}), "Items")[0]  # decoded and encoded again
    assert len(items) == len(attributes)
    for sk, item in enumerate(items):
        got = _call(endpoint, "GetItem", {"TableName": table, "Key": {"pk": {"S": pk}, "sk": {"N": str(sk)}}})
        assert _members(got, "Item")[0] == item


def test_scan_pages_match_the_decoding_path(endpoint: str, table: str) -> None:
    """A whole Scan, page by page (Limit 3), unfiltered and through a filter that keeps every item."""
    pk = uuid.uuid4().hex
    for sk in range(7):
        _call(endpoint, "PutItem", {"TableName": table, "Item": {
            "pk": {"S": pk}, "sk": {"N": str(sk)}, "f": {"BOOL": True}, "é": {"M": {"x": {"NS": ["2", "1.50"]}}}}})
    start: dict[str, Any] | None = None
    pages = 0
    while True:
        scan: dict[str, Any] = {"TableName": table, "Limit": 3}
        if start is not None:
            scan["ExclusiveStartKey"] = start
        plain = _call(endpoint, "Scan", scan)
        decoded = _call(endpoint, "Scan", {**scan, "FilterExpression": "attribute_exists(f)"})
        names = ("Items", "Count", "ScannedCount", "LastEvaluatedKey")
        assert _members(plain, *names) == _members(decoded, *names)
        pages += 1
        start = json.loads(plain).get("LastEvaluatedKey")
        if start is None:
            break
    assert pages >= 3
