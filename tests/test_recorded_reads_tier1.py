"""Read answers (GetItem, Query, Scan, BatchGetItem, DescribeTable, ListTables) as the tier-1 suites recorded them.

The suites (Ketlark/dynamodb-conformance and nubo-db/dynamodb-conformance, tests/tier1/{query,scan,getItem,
batchGetItem,describeTable,listTables}) run the same requests against AWS and pin what comes back. Every read
case there was sent to Partita and agreed; the cases below are the ones other emulators most often get wrong
(projection merging, page keys on index ties, capacity breakdowns, check order), pinned so they keep agreeing.
Tables mirror the suites' shared ones. A case the suites pin only in part (a `toContain`, a type check) is
asserted the same way here.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError
from conftest import client_for, create_table

VE = "ValidationException"


def S(text: str) -> dict[str, str]:
    return {"S": text}


L0 = {"M": {"x": S("x0"), "y": S("y0")}}
N0 = {"L": [{"M": {"p": S("p00"), "q": S("q00")}}, {"M": {"p": S("p01"), "q": S("q01")}}]}


@pytest.fixture(scope="module")
def raw(endpoint: str) -> Any:
    return boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1",
                        config=Config(retries={"max_attempts": 1}, parameter_validation=False))


@pytest.fixture(scope="module")
def t(endpoint: str) -> Iterator[dict[str, str]]:
    """hash (pk S), comp (pk/sk S with lsi1 ALL, lsi2 INCLUDE lsi1sk, gsi1 ALL, gsi2 INCLUDE data), bin (sk B)."""
    ddb = client_for(endpoint)
    tag = uuid.uuid4().hex[:8]
    names = {key: f"rt1-{key}-{tag}" for key in ("hash", "comp", "bin")}
    create_table(ddb, names["hash"])
    create_table(ddb, names["bin"], range_key=("sk", "B"))
    pk, sk = {"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}

    def key(name: str, kind: str) -> dict[str, str]:
        return {"AttributeName": name, "KeyType": kind}

    ddb.create_table(
        TableName=names["comp"], KeySchema=[pk, sk],
        AttributeDefinitions=[{"AttributeName": n, "AttributeType": "S"} for n in ("pk", "sk", "lsi1sk", "lsi2sk")],
        ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 5},
        LocalSecondaryIndexes=[
            {"IndexName": "lsi1", "KeySchema": [pk, key("lsi1sk", "RANGE")], "Projection": {"ProjectionType": "ALL"}},
            {"IndexName": "lsi2", "KeySchema": [pk, key("lsi2sk", "RANGE")],
             "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["lsi1sk"]}}],
        GlobalSecondaryIndexes=[
            {"IndexName": "gsi1", "KeySchema": [key("lsi1sk", "HASH")], "Projection": {"ProjectionType": "ALL"},
             "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}},
            {"IndexName": "gsi2", "KeySchema": [key("lsi1sk", "HASH"), key("lsi2sk", "RANGE")],
             "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["data"]},
             "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}}])
    put = ddb.put_item
    put(TableName=names["hash"], Item={
        "pk": S("proj"), "name": S("Alice"), "a": {"M": {"b": S("bb"), "c": S("cc"), "d": {"M": {"e": S("ee")}}}},
        "l": {"L": [{"M": {"x": S("x0"), "y": S("y0"), "n": N0}}, {"M": {"x": S("x1"), "y": S("y1")}},
                    {"M": {"x": S("x2"), "z": S("z2")}}]}})
    for i in range(10):
        put(TableName=names["comp"], Item={"pk": S("page"), "sk": S(f"{i:03d}"), "cat": S("odd" if i % 2 else "even"),
                                           "filler": S("x" * 200)})
    for i in range(4):
        put(TableName=names["comp"], Item={"pk": S(f"tie-{i}"), "sk": S(f"s-{i}"), "lsi1sk": S("tie-hash"),
                                           "lsi2sk": S("tie-range"), "data": S(f"d{i}"), "extra": S("no")})
        put(TableName=names["comp"], Item={"pk": S("lsi-tie"), "sk": S(f"s-{i}"), "lsi1sk": S("lsi-tie-sk")})
    put(TableName=names["comp"], Item={"pk": S("size"), "sk": S("1"), "s": S("é\U0001d11e")})
    put(TableName=names["comp"], Item={"pk": S("empty"), "sk": S("has"), "tags": {"SS": ["", "a"]}})
    put(TableName=names["comp"], Item={"pk": S("empty"), "sk": S("not"), "tags": {"SS": ["a", "b"]}})
    for raw_key, label in ((b"\x01", "01"), (b"\x01\x02", "0102"), (b"\x02", "02"), (b"\xff", "ff")):
        put(TableName=names["bin"], Item={"pk": S("b"), "sk": {"B": raw_key}, "label": S(label)})
    yield names
    for name in names.values():
        ddb.delete_table(TableName=name)


def refusal(call: Any, **request: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as caught:
        call(**request)
    error = caught.value.response["Error"]
    return error["Code"], error.get("Message", "")


# ---- projections (getItem/projection, query|scan|batchGetItem/projection, getItem/projectionValidation)

PROJECTIONS = [
    ("#l[1], #l[0]", {"l": {"L": [{"M": {**L0["M"], "n": N0}}, {"M": {"x": S("x1"), "y": S("y1")}}]}}),
    ("#l[0].#x, #l[0].#y", {"l": {"L": [L0]}}),
    ("#l[0].#y, #l[0].#x", {"l": {"L": [L0]}}),
    ("#l[0].#x, #l[2].#z", {"l": {"L": [{"M": {"x": S("x0")}}, {"M": {"z": S("z2")}}]}}),
    ("#l[0].#n[0].#p, #l[0].#n[0].#q", {"l": {"L": [{"M": {"n": {"L": [{"M": {"p": S("p00"), "q": S("q00")}}]}}}]}}),
    ("#l[0].#n[0].#p, #l[0].#n[1].#q",
     {"l": {"L": [{"M": {"n": {"L": [{"M": {"p": S("p00")}}, {"M": {"q": S("q01")}}]}}}]}}),
    ("#a.#b, #a.#c", {"a": {"M": {"b": S("bb"), "c": S("cc")}}}),
    ("nonexistent", {}),
]
NAMES = {"#l": "l", "#x": "x", "#y": "y", "#z": "z", "#n": "n", "#p": "p", "#q": "q", "#a": "a", "#b": "b", "#c": "c"}


@pytest.mark.parametrize(("expression", "want"), PROJECTIONS, ids=[p for p, _ in PROJECTIONS])
def test_projection_merges_and_compacts_the_same_way_on_every_read(
        ddb: Any, t: dict[str, str], expression: str, want: dict[str, Any]) -> None:
    names = {k: v for k, v in NAMES.items() if any(tok == k for tok in _tokens(expression))}
    extra = {"ExpressionAttributeNames": names} if names else {}
    key = {"pk": S("proj")}
    got = ddb.get_item(TableName=t["hash"], Key=key, ProjectionExpression=expression, ConsistentRead=True, **extra)
    assert got["Item"] == want
    batch = ddb.batch_get_item(RequestItems={t["hash"]: {"Keys": [key], "ProjectionExpression": expression, **extra}})
    assert batch["Responses"][t["hash"]] == [want]
    assert batch["UnprocessedKeys"] == {}
    scanned = ddb.scan(TableName=t["hash"], ProjectionExpression=expression, FilterExpression="pk = :pk",
                       ExpressionAttributeValues={":pk": S("proj")}, **extra)
    assert scanned["Items"] == [want]


def _tokens(expression: str) -> list[str]:
    for sep in ",.[]0123456789":
        expression = expression.replace(sep, " ")
    return expression.split()


def test_attributes_to_get_matching_nothing_gives_an_empty_item(ddb: Any, t: dict[str, str]) -> None:
    got = ddb.get_item(TableName=t["hash"], Key={"pk": S("proj")}, AttributesToGet=["nonexistent"])
    assert got["Item"] == {}


PROJECTION_REFUSALS = [
    ("overlap", {"ProjectionExpression": "#a, #a.#b", "ExpressionAttributeNames": {"#a": "a", "#b": "b"}}),
    ("duplicate", {"ProjectionExpression": "#a, #a", "ExpressionAttributeNames": {"#a": "a"}}),
]


@pytest.mark.parametrize("request_", [r for _, r in PROJECTION_REFUSALS], ids=[i for i, _ in PROJECTION_REFUSALS])
def test_overlapping_projection_paths_are_refused(raw: Any, t: dict[str, str], request_: dict[str, Any]) -> None:
    code, message = refusal(raw.get_item, TableName=t["hash"], Key={"pk": S("proj")}, **request_)
    assert code == VE
    assert message.startswith("Invalid ProjectionExpression: Two document paths overlap with each other")


@pytest.mark.parametrize("request_", [
    {"ProjectionExpression": "#undef"},
    {"FilterExpression": "begins_with(#p, :n)", "ExpressionAttributeNames": {"#p": "no_such_attr"}},
], ids=["undefined-name", "begins-with-number"])
def test_scan_refuses_a_bad_expression_before_reading_rows(raw: Any, t: dict[str, str], request_: dict[str, Any]) -> None:
    request_ = dict(request_)
    if "FilterExpression" in request_:
        request_["ExpressionAttributeValues"] = {":n": {"N": "5"}}
    else:
        request_.update(FilterExpression="pk = :never", ExpressionAttributeValues={":never": S("none")})
    assert refusal(raw.scan, TableName=t["hash"], **request_)[0] == VE


# ---- Select rules (query/select, scan/select)

SELECTS = [
    ({"Select": "ALL_ATTRIBUTES", "ProjectionExpression": "sk"},
     "Cannot specify the ProjectionExpression when choosing to get ALL_ATTRIBUTES"),
    ({"Select": "ALL_PROJECTED_ATTRIBUTES"}, "ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName"),
    ({"Select": "COUNT", "ProjectionExpression": "sk"},
     "Cannot specify the ProjectionExpression when choosing to get only the Count"),
    ({"Select": "ALL_PROJECTED_ATTRIBUTES", "ProjectionExpression": "sk"},
     "Cannot specify the ProjectionExpression when choosing to get ALL_PROJECTED_ATTRIBUTES"),
    ({"Select": "SPECIFIC_ATTRIBUTES"}, ""),
]


@pytest.mark.parametrize(("op", "request_", "fragment"),
                         [(op, r, f) for op in ("query", "scan") for r, f in SELECTS],
                         ids=[f"{op}-{i}" for op in ("query", "scan") for i in range(len(SELECTS))])
def test_select_rules(raw: Any, t: dict[str, str], op: str, request_: dict[str, Any], fragment: str) -> None:
    body = dict(request_, TableName=t["comp"])
    if op == "query":
        body.update(KeyConditionExpression="pk = :pk", ExpressionAttributeValues={":pk": S("x")})
    code, message = refusal(getattr(raw, op), **body)
    assert code == VE
    assert fragment in message


def test_select_count_on_query_counts_before_and_after_the_filter(ddb: Any, t: dict[str, str]) -> None:
    got = ddb.query(TableName=t["comp"], KeyConditionExpression="pk = :pk", FilterExpression="cat = :c",
                    ExpressionAttributeValues={":pk": S("page"), ":c": S("even")}, Select="COUNT", ConsistentRead=True)
    assert (got["Count"], got["ScannedCount"], "Items" in got) == (5, 10, False)


def test_index_selects_return_the_projection_or_the_whole_item(ddb: Any, t: dict[str, str]) -> None:
    projected = ddb.query(TableName=t["comp"], IndexName="gsi2", KeyConditionExpression="lsi1sk = :h",
                          ExpressionAttributeValues={":h": S("tie-hash")}, Select="ALL_PROJECTED_ATTRIBUTES")
    assert [sorted(item) for item in projected["Items"]] == [["data", "lsi1sk", "lsi2sk", "pk", "sk"]] * 4
    whole = ddb.query(TableName=t["comp"], IndexName="lsi1", KeyConditionExpression="pk = :p",
                      ExpressionAttributeValues={":p": S("tie-0")}, Select="ALL_ATTRIBUTES", ConsistentRead=True)
    assert [sorted(item) for item in whole["Items"]] == [["data", "extra", "lsi1sk", "lsi2sk", "pk", "sk"]]


# ---- paging (query/basic, query/gsi, query/lsi, query/gsiHashOnlyPagination, scan/basic)

def test_limit_counts_items_read_not_items_kept(ddb: Any, t: dict[str, str]) -> None:
    got = ddb.query(TableName=t["comp"], KeyConditionExpression="pk = :pk", FilterExpression="cat = :c",
                    ExpressionAttributeValues={":pk": S("page"), ":c": S("even")}, Limit=2, ConsistentRead=True)
    assert (got["Count"], got["ScannedCount"], got["LastEvaluatedKey"]) == (1, 2, {"pk": S("page"), "sk": S("001")})
    whole = ddb.query(TableName=t["comp"], KeyConditionExpression="pk = :pk",
                      ExpressionAttributeValues={":pk": S("page")}, ConsistentRead=True)
    assert (whole["Count"], "LastEvaluatedKey" in whole) == (10, False)
    scan = ddb.scan(TableName=t["comp"], Limit=1, FilterExpression="cat = :c", ExpressionAttributeValues={":c": S("no")})
    assert (scan["Count"], scan["ScannedCount"], "LastEvaluatedKey" in scan) == (0, 1, True)


@pytest.mark.parametrize(("index", "condition", "values", "key_names"), [
    ("gsi2", "lsi1sk = :h AND lsi2sk = :r", {":h": S("tie-hash"), ":r": S("tie-range")}, ["lsi1sk", "lsi2sk", "pk", "sk"]),
    ("gsi1", "lsi1sk = :h", {":h": S("tie-hash")}, ["lsi1sk", "pk", "sk"]),
    ("lsi1", "pk = :p AND lsi1sk = :v", {":p": S("lsi-tie"), ":v": S("lsi-tie-sk")}, ["lsi1sk", "pk", "sk"]),
])
def test_index_pages_on_tied_keys_carry_the_table_key(
        ddb: Any, t: dict[str, str], index: str, condition: str, values: dict[str, Any], key_names: list[str]) -> None:
    seen: list[str] = []
    start: dict[str, Any] = {}
    for _ in range(6):
        page = ddb.query(TableName=t["comp"], IndexName=index, KeyConditionExpression=condition,
                         ExpressionAttributeValues=values, Limit=1, **start)
        seen += [item["pk"]["S"] + "/" + item["sk"]["S"] for item in page["Items"]]
        if "LastEvaluatedKey" not in page:
            break
        assert sorted(page["LastEvaluatedKey"]) == key_names
        start = {"ExclusiveStartKey": page["LastEvaluatedKey"]}
    assert len(seen) == len(set(seen)) == 4


@pytest.mark.parametrize(("op", "extra"), [
    ("query", {"KeyConditionExpression": "pk = :pk", "ExpressionAttributeValues": {":pk": S("page")}}),
    ("scan", {}),
    ("query", {"IndexName": "gsi1", "KeyConditionExpression": "lsi1sk = :v", "ExpressionAttributeValues": {":v": S("x")},
               "ExclusiveStartKey": {"pk": S("x")}}),
], ids=["query", "scan", "gsi-missing-index-key"])
def test_a_start_key_off_the_schema_is_refused(raw: Any, t: dict[str, str], op: str, extra: dict[str, Any]) -> None:
    extra = dict(extra)
    extra.setdefault("ExclusiveStartKey", {"bad": S("p")})
    code, message = refusal(getattr(raw, op), TableName=t["comp"], **extra)
    assert (code, message) == (VE, "The provided starting key is invalid")


# ---- key conditions and filters (query/keyConditionSemantics, keyConditionParens, expressions, binaryKeys)

def test_key_condition_forms(raw: Any, ddb: Any, t: dict[str, str]) -> None:
    names = {"#pk": "pk", "#sk": "sk"}
    got = ddb.query(TableName=t["comp"], KeyConditionExpression="#pk = :pk AND :lo <= #sk", ExpressionAttributeNames=names,
                    ExpressionAttributeValues={":pk": S("page"), ":lo": S("008")})
    assert [item["sk"]["S"] for item in got["Items"]] == ["008", "009"]
    nested = refusal(raw.query, TableName=t["comp"], KeyConditionExpression="#pk = :pk AND #sk.foo = :v",
                     ExpressionAttributeNames=names, ExpressionAttributeValues={":pk": S("page"), ":v": S("x")})
    assert nested == (VE, "KeyConditionExpressions cannot have conditions on nested attributes")
    parens = refusal(raw.query, TableName=t["comp"], KeyConditionExpression="((#pk = :pk)) AND (#sk = :sk)",
                     ExpressionAttributeNames=names, ExpressionAttributeValues={":pk": S("page"), ":sk": S("001")})
    assert parens[0] == VE and "redundant parentheses" in parens[1]


@pytest.mark.parametrize(("pk", "filter_", "values", "want"), [
    ("size", "size(s) = :n", {":n": {"N": "3"}}, ["1"]),
    ("size", "size(s) = :n", {":n": {"N": "6"}}, []),
    ("size", "size(no_such_attr) = :n", {":n": {"N": "0"}}, []),
    ("empty", "contains(tags, :e)", {":e": S("")}, ["has"]),
], ids=["utf16-units", "not-utf8-bytes", "absent-is-not-zero", "empty-set-member"])
def test_filter_functions(ddb: Any, t: dict[str, str], pk: str, filter_: str, values: dict[str, Any],
                          want: list[str]) -> None:
    got = ddb.query(TableName=t["comp"], KeyConditionExpression="pk = :pk", FilterExpression=filter_,
                    ExpressionAttributeValues={":pk": S(pk), **values})
    assert [item["sk"]["S"] for item in got["Items"]] == want


@pytest.mark.parametrize(("condition", "values", "forward", "want"), [
    ("pk = :pk", {}, True, ["01", "0102", "02", "ff"]),
    ("pk = :pk", {}, False, ["ff", "02", "0102", "01"]),
    ("pk = :pk AND sk > :v", {":v": {"B": b"\x01\x02"}}, True, ["02", "ff"]),
    ("pk = :pk AND begins_with(sk, :v)", {":v": {"B": b"\x01"}}, True, ["01", "0102"]),
], ids=["asc", "desc", "gt", "begins-with"])
def test_binary_sort_keys_order_bytewise(ddb: Any, t: dict[str, str], condition: str, values: dict[str, Any],
                                         forward: bool, want: list[str]) -> None:
    got = ddb.query(TableName=t["bin"], KeyConditionExpression=condition, ScanIndexForward=forward,
                    ExpressionAttributeValues={":pk": S("b"), **values})
    assert [item["label"]["S"] for item in got["Items"]] == want


# ---- capacity (getItem/consumedCapacity, query/indexConsumedCapacity, query|scan/consumedCapacity)

def test_single_reads_report_units_without_a_read_write_split(ddb: Any, t: dict[str, str]) -> None:
    key = {"pk": S("proj")}
    strong = ddb.get_item(TableName=t["hash"], Key=key, ConsistentRead=True, ReturnConsumedCapacity="TOTAL")
    eventual = ddb.get_item(TableName=t["hash"], Key=key, ReturnConsumedCapacity="TOTAL")
    assert strong["ConsumedCapacity"] == {"TableName": t["hash"], "CapacityUnits": 1.0}
    assert eventual["ConsumedCapacity"] == {"TableName": t["hash"], "CapacityUnits": 0.5}
    query = ddb.query(TableName=t["comp"], KeyConditionExpression="pk = :pk", ExpressionAttributeValues={":pk": S("tie-0")},
                      ConsistentRead=True, ReturnConsumedCapacity="INDEXES")
    assert query["ConsumedCapacity"] == {"TableName": t["comp"], "CapacityUnits": 1.0, "Table": {"CapacityUnits": 1.0}}


def test_an_index_query_reports_the_index_beside_the_table(ddb: Any, t: dict[str, str]) -> None:
    got = ddb.query(TableName=t["comp"], IndexName="gsi1", KeyConditionExpression="lsi1sk = :h",
                    ExpressionAttributeValues={":h": S("tie-hash")}, ReturnConsumedCapacity="INDEXES")
    spent = got["ConsumedCapacity"]
    index = spent["GlobalSecondaryIndexes"]["gsi1"]["CapacityUnits"]
    assert index > 0
    assert spent["CapacityUnits"] == spent["Table"]["CapacityUnits"] + index


@pytest.mark.parametrize("op", ["query", "scan"])
def test_filter_and_projection_do_not_change_what_a_read_costs(ddb: Any, t: dict[str, str], op: str) -> None:
    base: dict[str, Any] = {"TableName": t["comp"], "ReturnConsumedCapacity": "TOTAL"}
    values: dict[str, Any] = {}
    if op == "query":
        base["KeyConditionExpression"] = "pk = :pk"
        values = {":pk": S("page")}

    def units(**extra: Any) -> float:
        merged = {**values, **extra.pop("ExpressionAttributeValues", {})}
        body = {**base, **extra, **({"ExpressionAttributeValues": merged} if merged else {})}
        return float(getattr(ddb, op)(**body)["ConsumedCapacity"]["CapacityUnits"])

    plain = units()
    assert units(FilterExpression="cat = :c", ExpressionAttributeValues={":c": S("none")}) == plain
    assert units(ProjectionExpression="sk") == plain


# ---- batches and the control plane (batchGetItem/*, describeTable/*, listTables/basic)

def test_batch_get_answers(raw: Any, ddb: Any, t: dict[str, str]) -> None:
    got = ddb.batch_get_item(RequestItems={t["hash"]: {"Keys": [{"pk": S("proj")}], "ProjectionExpression": "#n",
                                                       "ExpressionAttributeNames": {"#n": "name"}},
                                           t["comp"]: {"Keys": [{"pk": S("no"), "sk": S("no")}]}})
    assert got["Responses"] == {t["hash"]: [{"name": S("Alice")}], t["comp"]: []}
    assert got["UnprocessedKeys"] == {}
    dup = refusal(raw.batch_get_item, RequestItems={t["hash"]: {"Keys": [{"pk": S("same")}, {"pk": S("same")}]}})
    assert dup == (VE, "Provided list of item keys contains duplicates")
    many = {t["hash"]: {"Keys": [{"pk": S(f"k{i}")} for i in range(101)]}}
    assert refusal(raw.batch_get_item, RequestItems=many)[0] == VE
    assert refusal(raw.batch_get_item, RequestItems={})[0] == VE
    absent = {f"rt1-absent-{uuid.uuid4().hex[:6]}": {"Keys": [{"pk": S("t")}]}}
    assert refusal(raw.batch_get_item, RequestItems=absent)[0] == "ResourceNotFoundException"


def test_describe_and_list_tables(ddb: Any, t: dict[str, str]) -> None:
    first = ddb.describe_table(TableName=t["comp"])["Table"]
    assert len(first["LocalSecondaryIndexes"]) == 2
    assert [(g["IndexName"], g["IndexStatus"]) for g in first["GlobalSecondaryIndexes"]] == [("gsi1", "ACTIVE"),
                                                                                           ("gsi2", "ACTIVE")]
    assert ddb.describe_table(TableName=t["comp"])["Table"]["TableId"] == first["TableId"]
    page = ddb.list_tables(Limit=1)
    assert len(page["TableNames"]) == 1 and page["LastEvaluatedTableName"] == page["TableNames"][0]
    names = ddb.list_tables()["TableNames"]
    assert names == sorted(names)
