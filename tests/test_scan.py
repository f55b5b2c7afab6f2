"""Scan against a real server: hash order, parallel segments, pages, filters, cost.

The exact orders and segment placements below are the real service's, as
dynalite recorded them (its "brittle" hash-order tests). They pin Partita's
partition hash to the service's: see docs/scan-order.md.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import create_table, error_of, put_all, raw_request
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

MISSING_TABLE = "no-such-table-for-scan"


def scan(ddb: Any, table: str, **kwargs: Any) -> dict[str, Any]:
    out = ddb.scan(TableName=table, **kwargs)
    out.pop("ResponseMetadata", None)
    return out


def scan_error(ddb: Any, table: str, **kwargs: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        ddb.scan(TableName=table, **kwargs)
    return error_of(excinfo)


def scan_all(ddb: Any, table: str, **kwargs: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    start = None
    while True:
        extra = {} if start is None else {"ExclusiveStartKey": start}
        out = scan(ddb, table, **kwargs, **extra)
        items += out.get("Items", [])
        start = out.get("LastEvaluatedKey")
        if start is None:
            return items


@pytest.fixture(scope="module")
def schema_tables(ddb: Any) -> tuple[str, str]:
    """An empty hash-key table and pk/sk (N) table for validation tests."""
    suffix = uuid.uuid4().hex[:10]
    create_table(ddb, f"sh-{suffix}")
    create_table(ddb, f"sr-{suffix}", range_key=("sk", "N"))
    return f"sh-{suffix}", f"sr-{suffix}"


# -- order --------------------------------------------------------------------------------


def test_string_hash_order(ddb: Any, hash_table: str) -> None:
    keys = [str(i) for i in range(10)] + ["aardman", "hello", "zapf", "äáöü"]
    put_all(ddb, hash_table, [{"pk": {"S": k}} for k in keys])
    out = scan(ddb, hash_table)
    assert [i["pk"]["S"] for i in out["Items"]] == [
        "2", "8", "9", "1", "6", "hello", "0", "5", "4", "äáöü", "aardman", "7", "3", "zapf"]
    assert out["Count"] == out["ScannedCount"] == 14


def test_number_hash_order(ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name, hash_key=("pk", "N"))
    keys = [str(i) for i in range(10)] + ["-0.09", "999.9", "0.012345", "-999.9"]
    put_all(ddb, table_name, [{"pk": {"N": k}} for k in keys])
    assert [i["pk"]["N"] for i in scan(ddb, table_name)["Items"]] == [
        "7", "999.9", "8", "3", "2", "-999.9", "9", "4", "-0.09", "6", "1", "0", "0.012345", "5"]


def test_sort_key_order_within_a_partition(ddb: Any, range_table: str) -> None:
    items = [{"pk": {"S": p}, "sk": {"N": n}} for p in ("hello", "2") for n in ("10", "-1", "2.5", "0")]
    put_all(ddb, range_table, items)
    got = [(i["pk"]["S"], i["sk"]["N"]) for i in scan(ddb, range_table)["Items"]]
    assert got == [("2", n) for n in ("-1", "0", "2.5", "10")] + [("hello", n) for n in ("-1", "0", "2.5", "10")]


def test_segments_split_the_hash_space_like_the_service(ddb: Any, hash_table: str, table_name: str) -> None:
    put_all(ddb, hash_table, [{"pk": {"S": k}} for k in ("3635", "228", "1668", "3435")])

    def segment(table: str, n: int, total: int = 4096) -> list[dict[str, Any]]:
        return scan(ddb, table, Segment=n, TotalSegments=total)["Items"]

    assert {i["pk"]["S"] for i in segment(hash_table, 0)} == {"3635", "228"}
    assert [i["pk"]["S"] for i in segment(hash_table, 1)] == ["1668"]
    assert [i["pk"]["S"] for i in segment(hash_table, 4)] == ["3435"]
    assert segment(hash_table, 2) == []
    number_table = table_name + "-n"
    create_table(ddb, number_table, hash_key=("pk", "N"))
    put_all(ddb, number_table, [{"pk": {"N": "251"}}, {"pk": {"N": "2388"}}])
    assert [i["pk"]["N"] for i in segment(number_table, 1)] == ["251"]
    assert [i["pk"]["N"] for i in segment(number_table, 4095)] == ["2388"]


def test_halves_nest_in_quarters(ddb: Any, hash_table: str) -> None:
    put_all(ddb, hash_table, [{"pk": {"S": str(i)}} for i in range(20)])
    halves = [scan(ddb, hash_table, Segment=s, TotalSegments=2)["Items"] for s in (0, 1)]
    quarters = [scan(ddb, hash_table, Segment=s, TotalSegments=4)["Items"] for s in range(4)]
    assert halves[0] == quarters[0] + quarters[1]
    assert halves[1] == quarters[2] + quarters[3]
    assert halves[0] + halves[1] == scan(ddb, hash_table)["Items"]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(total=st.integers(1, 40), limit=st.one_of(st.none(), st.integers(1, 7)))
def test_parallel_scan_returns_every_item_exactly_once(ddb: Any, total: int, limit: int | None) -> None:
    table = _parallel_table(ddb)
    seen: list[tuple[str, str]] = []
    for segment in range(total):
        kwargs: dict[str, Any] = {"Segment": segment, "TotalSegments": total}
        if limit is not None:
            kwargs["Limit"] = limit
        items = scan_all(ddb, table, **kwargs)
        seen += [(i["pk"]["S"], i["sk"]["N"]) for i in items]
    assert len(seen) == len(set(seen)) == len(_PARALLEL_KEYS)
    assert set(seen) == set(_PARALLEL_KEYS)


_PARALLEL_KEYS = [(f"p{p}", str(s)) for p in range(40) for s in range(p % 3 + 1)]
_parallel: dict[str, str] = {}


def _parallel_table(ddb: Any) -> str:
    """One table for every example: 40 partitions, 1 to 3 items each."""
    if "name" not in _parallel:
        name = f"par-{uuid.uuid4().hex[:10]}"
        create_table(ddb, name, range_key=("sk", "N"))
        put_all(ddb, name, [{"pk": {"S": p}, "sk": {"N": s}} for p, s in _PARALLEL_KEYS])
        _parallel["name"] = name
    return _parallel["name"]


def test_more_segments_than_items(ddb: Any, hash_table: str) -> None:
    put_all(ddb, hash_table, [{"pk": {"S": "only"}}])
    counts = [scan(ddb, hash_table, Segment=s, TotalSegments=1_000_000, Select="COUNT")["Count"]
              for s in (0, 1, 999_999)]
    assert sum(counts) <= 1
    everything = sum(scan(ddb, hash_table, Segment=s, TotalSegments=7)["Count"] for s in range(7))
    assert everything == 1


# -- pages ----------------------------------------------------------------------------------


def test_limit_and_exclusive_start_key(ddb: Any, hash_table: str) -> None:
    put_all(ddb, hash_table, [{"pk": {"S": str(i)}, "b": {"S": "x"}} for i in range(10)])
    full = scan(ddb, hash_table)["Items"]
    out = scan(ddb, hash_table, Limit=3, ReturnConsumedCapacity="INDEXES")
    assert out["Items"] == full[:3]
    assert out["ScannedCount"] == 3
    assert out["LastEvaluatedKey"] == {"pk": full[2]["pk"]}
    assert out["ConsumedCapacity"] == {"TableName": hash_table, "CapacityUnits": 0.5, "Table": {"CapacityUnits": 0.5}}
    out = scan(ddb, hash_table, ExclusiveStartKey={"pk": full[0]["pk"]})
    assert out["Items"] == full[1:]
    assert scan_all(ddb, hash_table, Limit=4) == full
    out = scan(ddb, hash_table, Limit=2, Select="COUNT")
    assert out == {"Count": 2, "ScannedCount": 2, "LastEvaluatedKey": {"pk": full[1]["pk"]}}
    assert "LastEvaluatedKey" not in scan(ddb, hash_table, Limit=11)
    assert "LastEvaluatedKey" in scan(ddb, hash_table, Limit=10)


def test_filter_limit_and_counts(ddb: Any, hash_table: str) -> None:
    put_all(ddb, hash_table, [{"pk": {"S": f"item{i}"}} for i in range(25)])
    out = scan(ddb, hash_table, FilterExpression="#k = :v", ExpressionAttributeNames={"#k": "pk"},
               ExpressionAttributeValues={":v": {"S": "item12"}}, Limit=2)
    assert out["ScannedCount"] == 2
    assert len(out["LastEvaluatedKey"]) == 1
    everything = scan(ddb, hash_table, FilterExpression="pk = :v", ExpressionAttributeValues={":v": {"S": "item12"}})
    assert everything == {"Items": [{"pk": {"S": "item12"}}], "Count": 1, "ScannedCount": 25}
    legacy = scan(ddb, hash_table, ScanFilter={"pk": {"ComparisonOperator": "EQ",
                                                      "AttributeValueList": [{"S": "item12"}]}})
    assert legacy == everything
    out = scan(ddb, hash_table, FilterExpression="begins_with(pk, :p)", ExpressionAttributeValues={":p": {"S": "item1"}},
               Select="COUNT")
    assert out == {"Count": 11, "ScannedCount": 25}


def test_projection(ddb: Any, hash_table: str) -> None:
    put_all(ddb, hash_table, [{"pk": {"S": "p"}, "b": {"S": "b1"}, "c": {"M": {"d": {"N": "1"}, "e": {"N": "2"}}}}])
    assert scan(ddb, hash_table, ProjectionExpression="b, c.e")["Items"] == [
        {"b": {"S": "b1"}, "c": {"M": {"e": {"N": "2"}}}}]
    assert scan(ddb, hash_table, AttributesToGet=["b", "zz"])["Items"] == [{"b": {"S": "b1"}}]
    assert scan(ddb, hash_table, ProjectionExpression="zz")["Items"] == [{}]


def test_one_megabyte_page(ddb: Any, hash_table: str) -> None:
    # 15 items of 100,006 bytes: the 11th crosses 1 MB and ends the first page
    # (1,100,066 bytes = 269 units, 134.5 eventually consistent).
    put_all(ddb, hash_table, [{"pk": {"S": f"k{i:02d}"}, "v": {"S": "x" * 100_000}} for i in range(15)])
    first = scan(ddb, hash_table, Select="COUNT", ReturnConsumedCapacity="TOTAL")
    assert first["Count"] == first["ScannedCount"] == 11
    assert first["ConsumedCapacity"]["CapacityUnits"] == 134.5
    second = scan(ddb, hash_table, Select="COUNT", ReturnConsumedCapacity="TOTAL", ConsistentRead=True,
                  ExclusiveStartKey=first["LastEvaluatedKey"])
    assert second == {"Count": 4, "ScannedCount": 4,
                      "ConsumedCapacity": {"TableName": hash_table, "CapacityUnits": 98.0}}


def test_empty_table(ddb: Any, hash_table: str) -> None:
    assert scan(ddb, hash_table, ReturnConsumedCapacity="TOTAL") == {
        "Items": [], "Count": 0, "ScannedCount": 0,
        "ConsumedCapacity": {"TableName": hash_table, "CapacityUnits": 0.5}}


# -- validation -------------------------------------------------------------------------------


def test_segment_rules(ddb: Any) -> None:
    assert scan_error(ddb, MISSING_TABLE, Segment=1) == (
        "ValidationException",
        "The TotalSegments parameter is required but was not present in the request when Segment parameter "
        "is present")
    assert scan_error(ddb, MISSING_TABLE, TotalSegments=1) == (
        "ValidationException",
        "The Segment parameter is required but was not present in the request when parameter TotalSegments "
        "is present")
    # Scan's September 2026 wording (a 2026 conformance suite, pinned region eu-west-2; most regions still
    # answered the older forms then: "...: Segment: 1 is not less than TotalSegments: 1", "Value '-1' at 'segment'",
    # "Value '0' at 'limit'").
    assert scan_error(ddb, MISSING_TABLE, Segment=1, TotalSegments=1) == (
        "ValidationException",
        "The Segment parameter is zero-based and must be less than parameter TotalSegments")
    # (botocore refuses these two itself, so they go as a hand-rolled client sends them.)
    endpoint = ddb.meta.endpoint_url
    for extra, member, bound in (({"Segment": -1, "TotalSegments": 4}, "Segment", 0), ({"Limit": 0}, "Limit", 1)):
        response = raw_request(endpoint, "Scan", {"TableName": MISSING_TABLE, **extra})
        assert (response.status, response.json()) == (400, {
            "__type": "com.amazon.coral.validate#ValidationException",
            "message": f"1 validation error detected: Value at '{member}' failed to satisfy constraint: Member must "
                       f"have value greater than or equal to {bound}"})
    code, message = scan_error(ddb, MISSING_TABLE, Segment=1_000_000, TotalSegments=1_000_001)
    assert (code, message) == (
        "ValidationException",
        "2 validation errors detected: Value '1000001' at 'totalSegments' failed to satisfy constraint: "
        "Member must have value less than or equal to 1000000; Value at 'Segment' failed to satisfy "
        "constraint: Member must have value less than or equal to 999999")
    assert scan_error(ddb, MISSING_TABLE, Segment=999_999, TotalSegments=1_000_000) == (
        "ResourceNotFoundException", "Requested resource not found")


def test_start_key_from_another_segment(ddb: Any, hash_table: str) -> None:
    put_all(ddb, hash_table, [{"pk": {"S": str(i)}} for i in range(10)])
    second = scan(ddb, hash_table, Segment=1, TotalSegments=2)["Items"]
    assert second
    assert scan_error(ddb, hash_table, Segment=0, TotalSegments=2, FilterExpression="attribute_exists(b.c)",
                      ExclusiveStartKey={"pk": second[0]["pk"]}) == (
        "ValidationException",
        "The provided starting key is invalid: Invalid ExclusiveStartKey. Please use ExclusiveStartKey with "
        "correct Segment. TotalSegments: 2 Segment: 0")
    out = scan(ddb, hash_table, Segment=1, TotalSegments=2, ExclusiveStartKey={"pk": second[0]["pk"]})
    assert out["Items"] == second[1:]


@pytest.mark.parametrize("start", [
    {}, {"b": {"S": "a"}}, {"pk": {"S": "a"}, "b": {"S": "a"}}, {"pk": {"B": b"ab"}}, {"pk": {"N": "1"}},
    {"pk": {"BOOL": True}}, {"pk": {"SS": ["a"]}},
])
def test_start_key_must_be_a_table_key(ddb: Any, schema_tables: tuple[str, str], start: dict[str, Any]) -> None:
    # Query's short form since Scan's September 2026 rewording (it appended ": The provided key element
    # does not match the schema" before; a 2026 conformance suite, pinned region eu-west-2).
    assert scan_error(ddb, schema_tables[0], FilterExpression="attribute_exists(a.b.c)", ExclusiveStartKey=start) == (
        "ValidationException", "The provided starting key is invalid")


def test_start_key_for_range_table(ddb: Any, schema_tables: tuple[str, str]) -> None:
    for start in ({"pk": {"S": "a"}}, {"pk": {"S": "a"}, "sk": {"S": "1"}}, {"pk": {"S": "a"}, "x": {"N": "1"}}):
        assert scan_error(ddb, schema_tables[1], ExclusiveStartKey=start) == (
            "ValidationException", "The provided starting key is invalid")


def test_start_key_values_before_the_table(endpoint: str) -> None:
    response = raw_request(endpoint, "Scan", {"TableName": MISSING_TABLE, "Segment": 1,
                                              "ExclusiveStartKey": {"a": {"NULL": False}}})
    assert response.json()["message"] == (
        "The provided starting key is invalid: One or more parameter values were invalid: Null attribute "
        "value types must have the value of true")


def test_scalar_keys(ddb: Any, schema_tables: tuple[str, str]) -> None:
    for expression in ("attribute_exists(pk.b.c) and #a = b", "attribute_exists(#a.b.c)", "attribute_exists(#a[0])"):
        assert scan_error(ddb, schema_tables[0], FilterExpression=expression, ExpressionAttributeNames={"#a": "pk"}) == (
            "ValidationException",
            "Key attributes must be scalars; list random access '[]' and map lookup '.' are not allowed: Key: pk")


SELECT_ERRORS = [
    ({"Select": "SPECIFIC_ATTRIBUTES"},
     "Must specify the AttributesToGet or ProjectionExpression when choosing to get SPECIFIC_ATTRIBUTES"),
    ({"Select": "ALL_PROJECTED_ATTRIBUTES"}, "ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName"),
    ({"Select": "COUNT", "ProjectionExpression": "a"},
     "Cannot specify the ProjectionExpression when choosing to get only the Count"),
    ({"Select": "ALL_ATTRIBUTES", "AttributesToGet": ["a"]},
     "Cannot specify the AttributesToGet when choosing to get ALL_ATTRIBUTES"),
]


@pytest.mark.parametrize(("extra", "message"), SELECT_ERRORS)
def test_select_rules(ddb: Any, schema_tables: tuple[str, str], extra: dict[str, Any], message: str) -> None:
    # Scan reports these bare, without Query's "1 validation error detected: ", except SPECIFIC_ATTRIBUTES
    # without a projection since its September 2026 rewording (a 2026 conformance suite, region eu-west-2).
    if extra == {"Select": "SPECIFIC_ATTRIBUTES"}:
        message = "1 validation error detected: " + message
    assert scan_error(ddb, schema_tables[0], **extra) == ("ValidationException", message)


def test_expression_parameter_rules(ddb: Any) -> None:
    assert scan_error(ddb, MISSING_TABLE, ScanFilter={"a": {"ComparisonOperator": "NULL"}}, FilterExpression="a = b") == (
        "ValidationException",
        "Can not use both expression and non-expression parameters in the same request: Non-expression "
        "parameters: {ScanFilter} Expression parameters: {FilterExpression}")
    assert scan_error(ddb, MISSING_TABLE, ExpressionAttributeValues={":a": {"S": "a"}}) == (
        "ValidationException",
        "ExpressionAttributeValues can only be specified when using expressions: FilterExpression is null")
    assert scan_error(ddb, MISSING_TABLE, FilterExpression="a > b", ProjectionExpression="") == (
        "ValidationException", "Invalid ProjectionExpression: The expression can not be empty;")


def test_scan_filter_validation(ddb: Any) -> None:
    assert scan_error(ddb, MISSING_TABLE, ScanFilter={"a": {"ComparisonOperator": "LT",
                                                            "AttributeValueList": [{"BOOL": True}]}}) == (
        "ValidationException",
        "One or more parameter values were invalid: ComparisonOperator LT is not valid for BOOL AttributeValue type")
    assert scan_error(ddb, MISSING_TABLE, AttributesToGet=["a", "a"]) == (
        "ValidationException", "One or more parameter values were invalid: Duplicate value in attribute name: a")


def test_missing_table_and_index(ddb: Any, schema_tables: tuple[str, str]) -> None:
    assert scan_error(ddb, MISSING_TABLE) == ("ResourceNotFoundException", "Requested resource not found")
    assert scan_error(ddb, schema_tables[0], IndexName="whatever", FilterExpression="attribute_exists(a.b.c)") == (
        "ValidationException", "The table does not have the specified index: whatever")
