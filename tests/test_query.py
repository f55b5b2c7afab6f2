"""Query against a real server: key conditions, order, pages, filters, projections, cost.

The requests here succeed; the ones DynamoDB refuses are in test_query_validation.py.
Expected orders are the real service's, as recorded by dynalite's query tests and
moto's aws-verified tests (see docs/decisions.md, "Query and Scan").
"""

from __future__ import annotations

import base64
import uuid
from typing import Any

import pytest
from conftest import create_table, put_all


def query(ddb: Any, table: str, **kwargs: Any) -> dict[str, Any]:
    out = ddb.query(TableName=table, **kwargs)
    out.pop("ResponseMetadata", None)
    return out


def eq(pk: dict[str, Any]) -> dict[str, Any]:
    """The partition-key condition, as an expression and as KeyConditions."""
    return {"KeyConditionExpression": "pk = :pk", "ExpressionAttributeValues": {":pk": pk}}


@pytest.fixture
def string_range_table(ddb: Any, table_name: str) -> str:
    create_table(ddb, table_name, range_key=("sk", "S"))
    return table_name


# -- key conditions ------------------------------------------------------------------


def test_empty_hash_table(ddb: Any, hash_table: str) -> None:
    out = query(ddb, hash_table, **eq({"S": "nothing"}), ConsistentRead=False, ScanIndexForward=True,
                Select="ALL_ATTRIBUTES", ReturnConsumedCapacity="NONE")
    assert out == {"Items": [], "Count": 0, "ScannedCount": 0}


def test_hash_table_returns_the_one_item(ddb: Any, hash_table: str) -> None:
    items = [{"pk": {"S": f"h{i}"}, "n": {"N": str(i)}} for i in range(3)]
    put_all(ddb, hash_table, items)
    out = query(ddb, hash_table, **eq({"S": "h1"}), ConsistentRead=True)
    assert out == {"Items": [items[1]], "Count": 1, "ScannedCount": 1}
    legacy = query(ddb, hash_table, KeyConditions={"pk": {"ComparisonOperator": "EQ",
                                                          "AttributeValueList": [{"S": "h1"}]}})
    assert legacy == out


SORT_CASES = [
    ("sk = :v", "EQ", ["2"], ["2"]),
    ("sk < :v", "LT", ["2"], ["1"]),
    ("sk <= :v", "LE", ["2"], ["1", "2"]),
    ("sk > :v", "GT", ["2"], ["3"]),
    ("sk >= :v", "GE", ["2"], ["2", "3"]),
    (":v > sk", "LT", ["2"], ["1"]),
    (":v <= sk", "GE", ["2"], ["2", "3"]),
    ("sk BETWEEN :v AND :w", "BETWEEN", ["1", "2"], ["1", "2"]),
    ("begins_with(sk, :v)", "BEGINS_WITH", ["3"], ["3"]),
]


@pytest.mark.parametrize(("expression", "operator", "values", "expected"), SORT_CASES)
def test_sort_key_conditions(
    ddb: Any, string_range_table: str, expression: str, operator: str, values: list[str], expected: list[str]
) -> None:
    pk = {"S": uuid.uuid4().hex}
    put_all(ddb, string_range_table, [{"pk": pk, "sk": {"S": s}} for s in ("1", "2", "3")])
    names = [":v", ":w"][: len(values)]
    out = query(ddb, string_range_table, KeyConditionExpression=f"pk = :pk AND {expression}",
                ExpressionAttributeValues={":pk": pk, **{n: {"S": v} for n, v in zip(names, values, strict=True)}})
    assert [i["sk"]["S"] for i in out["Items"]] == expected
    assert out["Count"] == out["ScannedCount"] == len(expected)
    legacy = query(ddb, string_range_table, KeyConditions={
        "pk": {"ComparisonOperator": "EQ", "AttributeValueList": [pk]},
        "sk": {"ComparisonOperator": operator, "AttributeValueList": [{"S": v} for v in values]},
    })
    assert legacy == out


def test_begins_with_and_between_like_the_service(ddb: Any, string_range_table: str) -> None:
    pk = {"S": uuid.uuid4().hex}
    put_all(ddb, string_range_table, [{"pk": pk, "sk": {"S": s}} for s in ("aa", "ab", "abc", "ac", "aca")])
    out = query(ddb, string_range_table, KeyConditionExpression="pk = :pk AND sk BETWEEN :b AND :c",
                ExpressionAttributeValues={":pk": pk, ":b": {"S": "ab"}, ":c": {"S": "ac"}})
    assert [i["sk"]["S"] for i in out["Items"]] == ["ab", "abc", "ac"]
    out = query(ddb, string_range_table, KeyConditionExpression="pk = :pk AND begins_with(sk, :b)",
                ExpressionAttributeValues={":pk": pk, ":b": {"S": "a"}}, ScanIndexForward=False)
    assert [i["sk"]["S"] for i in out["Items"]] == ["aca", "ac", "abc", "ab", "aa"]


def test_binary_begins_with(ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name, range_key=("sk", "B"))
    pk = {"S": "bin"}
    values = [b"\x00", b"\x01\x00", b"\x01\x01", b"\x01\xff", b"\x02"]
    put_all(ddb, table_name, [{"pk": pk, "sk": {"B": v}} for v in values])
    out = query(ddb, table_name, KeyConditionExpression="pk = :pk AND begins_with(sk, :p)",
                ExpressionAttributeValues={":pk": pk, ":p": {"B": b"\x01"}})
    assert [i["sk"]["B"] for i in out["Items"]] == [b"\x01\x00", b"\x01\x01", b"\x01\xff"]


def test_names_placeholders_in_key_condition(ddb: Any, range_table: str) -> None:
    put_all(ddb, range_table, [{"pk": {"S": "ph"}, "sk": {"N": str(i)}} for i in range(4)])
    out = query(ddb, range_table, KeyConditionExpression="#p = :p AND #s >= :s",
                ExpressionAttributeNames={"#p": "pk", "#s": "sk"},
                ExpressionAttributeValues={":p": {"S": "ph"}, ":s": {"N": "2"}})
    assert [i["sk"]["N"] for i in out["Items"]] == ["2", "3"]


def test_number_and_binary_partition_keys(ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name, hash_key=("pk", "N"), range_key=("sk", "B"))
    put_all(ddb, table_name, [{"pk": {"N": "-1.50"}, "sk": {"B": bytes([i])}} for i in (3, 1, 2)])
    put_all(ddb, table_name, [{"pk": {"N": "1.5"}, "sk": {"B": b"\x00"}}])
    out = query(ddb, table_name, KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"N": "-15e-1"}})
    assert [i["sk"]["B"] for i in out["Items"]] == [b"\x01", b"\x02", b"\x03"]
    assert {i["pk"]["N"] for i in out["Items"]} == {"-1.5"}


# -- order (the service's own examples, from dynalite's recorded tests) ------------------


def test_string_order(ddb: Any, string_range_table: str) -> None:
    pk = {"S": uuid.uuid4().hex}
    put_all(ddb, string_range_table, [{"pk": pk, "sk": {"S": s}} for s in
                                       ["1", "2", "10", "a", "b", "aa", "ab", "A", "B"]])
    out = query(ddb, string_range_table, **eq(pk))
    assert [i["sk"]["S"] for i in out["Items"]] == ["1", "10", "2", "A", "B", "a", "aa", "ab", "b"]
    out = query(ddb, string_range_table, **eq(pk), ScanIndexForward=False, Limit=2)
    assert [i["sk"]["S"] for i in out["Items"]] == ["b", "ab"]
    assert out["LastEvaluatedKey"] == {"pk": pk, "sk": {"S": "ab"}}


NUMBERS = ["0", "99.1", "10.9", "10.1", "9.1", "9", "1.9", "1.1", "1", "0.9", "0.1", "0.09", "0.01",
           "-0.01", "-0.09", "-0.1", "-0.9", "-1", "-1.01", "-9", "-9.9", "-10.1", "-99.1"]


def test_number_order(ddb: Any, range_table: str) -> None:
    pk = {"S": uuid.uuid4().hex}
    put_all(ddb, range_table, [{"pk": pk, "sk": {"N": n}} for n in NUMBERS])
    out = query(ddb, range_table, **eq(pk))
    expected = ["-99.1", "-10.1", "-9.9", "-9", "-1.01", "-1", "-0.9", "-0.1", "-0.09", "-0.01", "0",
                "0.01", "0.09", "0.1", "0.9", "1", "1.1", "1.9", "9", "9.1", "10.1", "10.9", "99.1"]
    assert [i["sk"]["N"] for i in out["Items"]] == expected
    out = query(ddb, range_table, **eq(pk), ScanIndexForward=False, Limit=3)
    assert [i["sk"]["N"] for i in out["Items"]] == ["99.1", "10.9", "10.1"]
    assert out["LastEvaluatedKey"] == {"pk": pk, "sk": {"N": "10.1"}}


BINARIES = ["1Py5xA==", "JA==", "2w==", "cAeRhZE=", "6piVtA==", "MjA0", "1g==", "ER/jLQ==", "T7MzEUw=",
            "9FkiOH0=", "Iv/a", "9V0="]


def test_binary_order(ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name, range_key=("sk", "B"))
    pk = {"S": "b"}
    put_all(ddb, table_name, [{"pk": pk, "sk": {"B": base64.b64decode(b)}} for b in BINARIES])
    out = query(ddb, table_name, **eq(pk))
    order = [7, 10, 1, 5, 8, 3, 0, 6, 2, 4, 9, 11]  # item numbers of dynalite's test, minus one
    assert [i["sk"]["B"] for i in out["Items"]] == [base64.b64decode(BINARIES[k]) for k in order]
    out = query(ddb, table_name, **eq(pk), ScanIndexForward=False)
    assert [i["sk"]["B"] for i in out["Items"]] == [base64.b64decode(BINARIES[k]) for k in reversed(order)]


# -- pages ------------------------------------------------------------------------------


def test_limit_and_pagination_both_directions(ddb: Any, range_table: str) -> None:
    pk = {"S": uuid.uuid4().hex}
    put_all(ddb, range_table, [{"pk": pk, "sk": {"N": str(i)}} for i in range(7)])
    for forward, expected in ((True, list(range(7))), (False, list(range(6, -1, -1)))):
        seen: list[int] = []
        start = None
        pages = 0
        while True:
            kwargs: dict[str, Any] = {"Limit": 3, "ScanIndexForward": forward}
            if start is not None:
                kwargs["ExclusiveStartKey"] = start
            out = query(ddb, range_table, **eq(pk), **kwargs)
            pages += 1
            seen += [int(i["sk"]["N"]) for i in out["Items"]]
            start = out.get("LastEvaluatedKey")
            if start is None:
                break
            assert start == {"pk": pk, "sk": out["Items"][-1]["sk"]}
        assert seen == expected
        assert pages == 3


def test_limit_equal_to_the_rest_still_returns_last_evaluated_key(ddb: Any, range_table: str) -> None:
    pk = {"S": uuid.uuid4().hex}
    put_all(ddb, range_table, [{"pk": pk, "sk": {"N": str(i)}} for i in range(2)])
    out = query(ddb, range_table, **eq(pk), Limit=2)
    assert out["LastEvaluatedKey"] == {"pk": pk, "sk": {"N": "1"}}
    out = query(ddb, range_table, **eq(pk), ExclusiveStartKey=out["LastEvaluatedKey"])
    assert out == {"Items": [], "Count": 0, "ScannedCount": 0}
    assert "LastEvaluatedKey" not in query(ddb, range_table, **eq(pk), Limit=3)


def test_limit_counts_items_before_the_filter(ddb: Any, string_range_table: str) -> None:
    pk = {"S": uuid.uuid4().hex}
    items = [{"pk": pk, "sk": {"S": s}, "c": {"S": "c"}} for s in ("1", "2", "3", "4", "5")]
    items[2]["d"] = {"S": "d"}
    put_all(ddb, string_range_table, items)
    out = query(ddb, string_range_table, KeyConditionExpression="pk = :pk AND sk >= :b",
                FilterExpression="d = :d", Limit=2,
                ExpressionAttributeValues={":pk": pk, ":b": {"S": "2"}, ":d": {"S": "d"}})
    assert out == {"Items": [items[2]], "Count": 1, "ScannedCount": 2,
                   "LastEvaluatedKey": {"pk": pk, "sk": {"S": "3"}}}
    legacy = query(ddb, string_range_table, Limit=2, KeyConditions={
        "pk": {"ComparisonOperator": "EQ", "AttributeValueList": [pk]},
        "sk": {"ComparisonOperator": "GE", "AttributeValueList": [{"S": "2"}]},
    }, QueryFilter={"d": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "d"}]}})
    assert legacy == out
    # the last evaluated item need not match the filter
    out = query(ddb, string_range_table, KeyConditionExpression="pk = :pk", FilterExpression="d = :d",
                Limit=4, ExpressionAttributeValues={":pk": pk, ":d": {"S": "d"}})
    assert out["Count"] == 1 and out["ScannedCount"] == 4
    assert out["LastEvaluatedKey"] == {"pk": pk, "sk": {"S": "4"}}


def test_select_count(ddb: Any, string_range_table: str) -> None:
    pk = {"S": uuid.uuid4().hex}
    put_all(ddb, string_range_table, [{"pk": pk, "sk": {"S": s}} for s in ("1", "2", "3", "4", "5")])
    out = query(ddb, string_range_table, **eq(pk), Select="COUNT")
    assert out == {"Count": 5, "ScannedCount": 5}
    out = query(ddb, string_range_table, **eq(pk), Select="COUNT", Limit=2)
    assert out == {"Count": 2, "ScannedCount": 2, "LastEvaluatedKey": {"pk": pk, "sk": {"S": "2"}}}


def test_exclusive_start_key_in_reverse(ddb: Any, string_range_table: str) -> None:
    pk = {"S": uuid.uuid4().hex}
    put_all(ddb, string_range_table, [{"pk": pk, "sk": {"S": s}} for s in ("1", "2", "10")])
    out = query(ddb, string_range_table, **eq(pk), ScanIndexForward=False,
                ExclusiveStartKey={"pk": pk, "sk": {"S": "2"}})
    assert [i["sk"]["S"] for i in out["Items"]] == ["10", "1"]
    # a start key that is not an item still positions the page
    out = query(ddb, string_range_table, **eq(pk), ExclusiveStartKey={"pk": pk, "sk": {"S": "11"}})
    assert [i["sk"]["S"] for i in out["Items"]] == ["2"]


def big_items(pk: dict[str, Any], count: int) -> list[dict[str, Any]]:
    return [{"pk": pk, "sk": {"N": str(i)}, "v": {"S": "x" * 100_000}} for i in range(count)]


def test_one_megabyte_page_counts_bytes_read_before_filter(ddb: Any, range_table: str) -> None:
    # Each item is 100,010 bytes (sk=0: 100,009). Ten make 1,000,099 bytes, the
    # eleventh crosses 1,048,576 and ends the page: 1,100,109 bytes read, which
    # is 269 read units, 134.5 eventually consistent, whatever the filter keeps.
    pk = {"S": "big"}
    put_all(ddb, range_table, big_items(pk, 15))
    out = query(ddb, range_table, KeyConditionExpression="pk = :pk", FilterExpression="attribute_exists(nothing)",
                ExpressionAttributeValues={":pk": pk}, ReturnConsumedCapacity="TOTAL")
    assert out == {"Items": [], "Count": 0, "ScannedCount": 11,
                   "LastEvaluatedKey": {"pk": pk, "sk": {"N": "10"}},
                   "ConsumedCapacity": {"TableName": range_table, "CapacityUnits": 134.5}}
    out = query(ddb, range_table, **eq(pk), ExclusiveStartKey=out["LastEvaluatedKey"], Select="COUNT",
                ConsistentRead=True, ReturnConsumedCapacity="INDEXES")
    # four items, 400,040 bytes: 98 units
    assert out == {"Count": 4, "ScannedCount": 4,
                   "ConsumedCapacity": {"TableName": range_table, "CapacityUnits": 98.0,
                                        "Table": {"CapacityUnits": 98.0}}}
    out = query(ddb, range_table, **eq(pk), ProjectionExpression="sk", ScanIndexForward=False)
    assert [i["sk"]["N"] for i in out["Items"]] == [str(i) for i in range(14, 3, -1)]


def test_consumed_capacity_is_charged_on_the_page_total(ddb: Any, range_table: str) -> None:
    # three items of 3,010 bytes: 9,030 bytes read is 3 units, not 3 x 1
    pk = {"S": "cap"}
    put_all(ddb, range_table, [{"pk": pk, "sk": {"N": str(i)}, "v": {"S": "x" * 3000}} for i in (1, 2, 3)])
    out = query(ddb, range_table, **eq(pk), ReturnConsumedCapacity="TOTAL")
    assert out["ConsumedCapacity"] == {"TableName": range_table, "CapacityUnits": 1.5}
    out = query(ddb, range_table, **eq(pk), ReturnConsumedCapacity="TOTAL", ConsistentRead=True,
                ProjectionExpression="sk")
    assert out["ConsumedCapacity"] == {"TableName": range_table, "CapacityUnits": 3.0}
    out = query(ddb, range_table, **eq({"S": "none"}), ReturnConsumedCapacity="TOTAL")
    assert out["ConsumedCapacity"] == {"TableName": range_table, "CapacityUnits": 0.5}
    out = query(ddb, range_table, **eq({"S": "none"}), ReturnConsumedCapacity="TOTAL", ConsistentRead=True)
    assert out["ConsumedCapacity"] == {"TableName": range_table, "CapacityUnits": 1.0}


# -- filters and projections ------------------------------------------------------------


def test_projection_expression_and_attributes_to_get(ddb: Any, string_range_table: str) -> None:
    pk = {"S": uuid.uuid4().hex}
    items = [
        {"pk": pk, "sk": {"S": "b1"}, "d": {"S": "d1"}},
        {"pk": pk, "sk": {"S": "b2"}},
        {"pk": pk, "sk": {"S": "b3"}, "d": {"S": "d3"}, "e": {"S": "e3"}},
    ]
    put_all(ddb, string_range_table, items)
    expected = [{"sk": {"S": "b1"}, "d": {"S": "d1"}}, {"sk": {"S": "b2"}}, {"sk": {"S": "b3"}, "d": {"S": "d3"}}]
    forms = [
        {"ProjectionExpression": "sk, d", **eq(pk)},
        {"ProjectionExpression": "#s, #d", "ExpressionAttributeNames": {"#s": "sk", "#d": "d"}, **eq(pk)},
        {"AttributesToGet": ["sk", "d"],
         "KeyConditions": {"pk": {"ComparisonOperator": "EQ", "AttributeValueList": [pk]}}},
        {"ProjectionExpression": "sk, d", "Select": "SPECIFIC_ATTRIBUTES",
         "KeyConditions": {"pk": {"ComparisonOperator": "EQ", "AttributeValueList": [pk]}}},
    ]
    for form in forms:
        out = query(ddb, string_range_table, **form)
        assert out == {"Items": expected, "Count": 3, "ScannedCount": 3}


def test_nested_projection(ddb: Any, string_range_table: str) -> None:
    pk = {"S": uuid.uuid4().hex}
    items = [
        {"pk": pk, "sk": {"S": "b1"}, "e": {"M": {"a": {"S": "b1"}, "d": {"S": "b1"}}},
         "f": {"L": [{"S": "d1"}, {"S": "d2"}, {"S": "d3"}]}},
        {"pk": pk, "sk": {"S": "b2"}},
        {"pk": pk, "sk": {"S": "b3"}, "d": {"S": "d3"}, "e": {"S": "e3"}},
    ]
    put_all(ddb, string_range_table, items)
    out = query(ddb, string_range_table, **eq(pk), ProjectionExpression="f[2], f[0], e.d, e.a, d")
    assert out["Items"] == [
        {"e": {"M": {"a": {"S": "b1"}, "d": {"S": "b1"}}}, "f": {"L": [{"S": "d1"}, {"S": "d3"}]}},
        {},
        {"d": {"S": "d3"}},
    ]


def test_filter_expression(ddb: Any, string_range_table: str) -> None:
    pk = {"S": uuid.uuid4().hex}
    items = [
        {"pk": pk, "sk": {"S": "b1"}, "d": {"S": "1"}},
        {"pk": pk, "sk": {"S": "b2"}},
        {"pk": pk, "sk": {"S": "b3"}, "d": {"S": "d3"}, "e": {"S": "e3"}},
    ]
    put_all(ddb, string_range_table, items)
    out = query(ddb, string_range_table, **eq(pk), FilterExpression="attribute_exists(e)", ConsistentRead=True)
    assert out == {"Items": [items[2]], "Count": 1, "ScannedCount": 3}
    legacy = query(ddb, string_range_table, ConsistentRead=True,
                   KeyConditions={"pk": {"ComparisonOperator": "EQ", "AttributeValueList": [pk]}},
                   QueryFilter={"e": {"ComparisonOperator": "NOT_NULL"}})
    assert legacy == out
    both = query(ddb, string_range_table, QueryFilter={
        "e": {"ComparisonOperator": "NOT_NULL"},
        "d": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "1"}]},
    }, ConditionalOperator="OR", KeyConditions={"pk": {"ComparisonOperator": "EQ", "AttributeValueList": [pk]}})
    assert both["Items"] == [items[0], items[2]]


def test_key_conditions_with_filter_expression_may_mix(ddb: Any, string_range_table: str) -> None:
    pk = {"S": uuid.uuid4().hex}
    put_all(ddb, string_range_table, [{"pk": pk, "sk": {"S": "1"}, "x": {"N": "1"}}])
    out = query(ddb, string_range_table, KeyConditions={"pk": {"ComparisonOperator": "EQ",
                                                              "AttributeValueList": [pk]}},
                FilterExpression="x = :one", ExpressionAttributeValues={":one": {"N": "1"}})
    assert out["Count"] == 1
