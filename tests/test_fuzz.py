"""Requests generated from the service model never get a 500, a hang or a dead server.

For every operation Partita implements, hypothesis builds request bodies by
walking the operation's input shape in botocore's model: mostly plausible
values (the test's real table names, key attributes, expressions, enum
values) so that requests reach the operations' own logic, mixed with broken
ones at any depth: wrong JSON kinds, nulls, floats and huge numbers for
integers, huge strings, values nested hundreds of levels deep, unknown
members. Each body goes over one keep-alive connection as raw JSON (boto3
would refuse most of them before sending). Every answer must be a success or
DynamoDB's 400/413 with an error `__type`; after each operation's batch the
server must still answer ListTables.

Derandomized, so CI sees the same few thousand requests every run.
"""

from __future__ import annotations

import http.client
import json
from dataclasses import dataclass
from functools import cache
from typing import Any
from urllib.parse import urlparse

import pytest
from botocore.loaders import Loader
from conftest import FAKE_AUTH, create_table
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from partita.api.dispatch import OPERATIONS

pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")

EXAMPLES_PER_OPERATION = 250
MAX_DEPTH = 5  # of generated structures; deep attribute values are made separately

MODEL = Loader().load_service_model("dynamodb", "service-2")
SHAPES: dict[str, Any] = MODEL["shapes"]

HASH_TABLE = "fuzz-hash"
RANGE_TABLE = "fuzz-range"
TABLES = [HASH_TABLE, RANGE_TABLE]
ARNS = [f"arn:aws:dynamodb:us-east-1:000000000000:table/{t}" for t in TABLES]
ATTRIBUTE_NAMES = ["pk", "sk", "a", "b", "gpk", "#n", ":v", ""]


@dataclass(frozen=True)
class RawJSON:
    """JSON text sent as is: nesting too deep for the json module to write."""

    text: str


def encode(value: Any) -> str:
    if isinstance(value, RawJSON):
        return value.text
    if isinstance(value, dict):
        return "{" + ",".join(json.dumps(k) + ":" + encode(v) for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(encode(v) for v in value) + "]"
    return json.dumps(value)


def _deep_value(levels: int, kind: str) -> RawJSON:
    inner = '{"S":"x"}'
    opening, closing = ('{"M":{"a":', "}}") if kind == "M" else ('{"L":[', "]}")
    return RawJSON(opening * levels + inner + closing * levels)


def _deep_json(levels: int) -> RawJSON:
    return RawJSON("[" * levels + "]" * levels)


HUGE_STRING = "x" * 70_000
# Values that are wrong for nearly every member, at any depth.
BROKEN = st.sampled_from(
    [
        None,
        1.5,
        -1,
        10**30,
        1e300,
        "",
        HUGE_STRING,
        [],
        {},
        True,
        "str",
        [None],
        {"a": None},
        {"Unknown": 1},
        _deep_json(600),
        _deep_value(400, "M"),
    ]
)

NUMBERS = st.sampled_from(
    ["1", "-0", "1.50", "1e9999999999999999999", "1e-9999999999999999999", "0e126", "1" * 39, "abc", ""]
)
CONDITIONS = [
    "pk = :v",
    "#n = :v",
    "attribute_exists(a)",
    "a IN (" + ",".join([":v"] * 120) + ")",
    "size(" * 300 + "a" + ")" * 300 + " = :v",
    "(" * 300 + "a = :v" + ")" * 300,
    "NOT " * 900 + "a = :v",
    " OR ".join(["a = :v"] * 500),
    "a = :v" + " " * 5000,
    "pk = :v AND sk BETWEEN :v AND :w",
    "begins_with(sk, :v)",
    ")(",
]
UPDATES = [
    "SET a = :v",
    "SET #n = :v REMOVE b",
    "ADD a :v",
    "DELETE a :v",
    "SET a = list_append(if_not_exists(a, :v), :v)",
    "SET a" + ".b" * 31 + " = :v",
    "SET a = " + "if_not_exists(b, " * 250 + ":v" + ")" * 250,
    "REMOVE " + ", ".join(f"a[{i}]" for i in range(600)),
]
PROJECTIONS = ["a", "#n, b", "a.b[1]", "a" + "[0]" * 40, ", ".join(["a"] * 900)]
EXPRESSIONS = st.sampled_from(CONDITIONS + UPDATES + PROJECTIONS)

SPECIAL_MEMBERS: dict[str, st.SearchStrategy[Any]] = {
    "TableName": st.sampled_from([*TABLES, *ARNS, "missing-table", "ab", "x" * 300]),
    "IndexName": st.sampled_from(["gsi", "lsi", "missing", "x"]),
    "ResourceArn": st.sampled_from([*ARNS, "arn:aws:dynamodb:us-east-1:000000000000:table/nope", "nope"]),
    "KeyConditionExpression": st.sampled_from(CONDITIONS),
    "FilterExpression": st.sampled_from(CONDITIONS),
    "ConditionExpression": st.sampled_from(CONDITIONS),
    "UpdateExpression": st.sampled_from(UPDATES),
    "ProjectionExpression": st.sampled_from(PROJECTIONS),
    "AttributeName": st.sampled_from(ATTRIBUTE_NAMES),
}


def attribute_values() -> st.SearchStrategy[Any]:
    scalars = st.one_of(
        st.builds(lambda s: {"S": s}, st.sampled_from(["", "x", "é" * 3, HUGE_STRING])),
        st.builds(lambda n: {"N": n}, NUMBERS),
        st.builds(lambda b: {"B": b}, st.sampled_from(["", "AA==", "AAA", "!!!!"])),
        st.builds(lambda b: {"BOOL": b}, st.sampled_from([True, False, "yes"])),
        st.builds(lambda b: {"NULL": b}, st.sampled_from([True, False])),
        st.builds(lambda s: {"SS": s}, st.lists(st.sampled_from(["a", "b", None, 1]), max_size=3)),
        st.builds(lambda s: {"NS": s}, st.lists(NUMBERS, max_size=3)),
        st.builds(lambda s: {"BS": s}, st.lists(st.sampled_from(["AA==", ""]), max_size=3)),
        st.sampled_from([{}, {"S": "x", "N": "1"}, {"Q": "x"}, None]),
        st.builds(_deep_value, st.integers(30, 510), st.sampled_from(["M", "L"])),
    )
    return st.recursive(
        scalars,
        lambda children: st.one_of(
            st.builds(lambda v: {"L": v}, st.lists(children, max_size=3)),
            st.builds(lambda v: {"M": v}, st.dictionaries(st.sampled_from(ATTRIBUTE_NAMES), children, max_size=3)),
        ),
        max_leaves=6,
    )


def _scalar(shape_name: str) -> st.SearchStrategy[Any]:
    shape = SHAPES[shape_name]
    kind = shape["type"]
    if kind == "string":
        options: list[Any] = list(shape.get("enum", ())) or ["a", "pk", "gsi", HASH_TABLE]
        return st.one_of(st.sampled_from(options), st.text(max_size=8), EXPRESSIONS)
    if kind in ("integer", "long"):
        return st.one_of(st.integers(-3, 200), st.sampled_from([1.5, 2**31, 2**63, 10**30, 0.0]))
    if kind == "double":
        return st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.integers(-3, 10))
    if kind == "boolean":
        return st.booleans()
    if kind == "blob":
        return st.sampled_from(["AA==", "", "abc", "!!!!"])
    # timestamp: epoch seconds, and the strings a hand-rolled client might send instead
    return st.one_of(
        st.integers(0, 2_000_000_000),
        st.floats(0, 2e9),
        st.sampled_from(["2026-01-01T00:00:00Z", "1700000000", "", "yesterday", -1, 10**30]),
    )


@cache
def value_for(shape_name: str, depth: int = 0) -> st.SearchStrategy[Any]:
    """A plausible value of the shape, broken now and then at any depth."""
    return st.one_of(_plausible(shape_name, depth), BROKEN) if depth else _plausible(shape_name, depth)


def _plausible(shape_name: str, depth: int) -> st.SearchStrategy[Any]:
    if shape_name == "AttributeValue":
        return attribute_values()
    shape = SHAPES[shape_name]
    kind = shape["type"]
    if kind not in ("structure", "list", "map"):
        return _scalar(shape_name)
    if depth >= MAX_DEPTH:
        return st.just({} if kind != "list" else [])
    if kind == "list":
        return st.lists(value_for(shape["member"]["shape"], depth + 1), max_size=4)
    if kind == "map":
        keys = st.sampled_from([*TABLES, *ATTRIBUTE_NAMES, ":v", ":w", "#n"])
        return st.dictionaries(keys, value_for(shape["value"]["shape"], depth + 1), max_size=3)
    members = shape["members"]

    def member(name: str) -> st.SearchStrategy[Any]:
        special = SPECIAL_MEMBERS.get(name)
        if special is not None:
            return st.one_of(special, BROKEN) if depth else special
        return value_for(members[name]["shape"], depth + 1)

    required = set(shape.get("required", ()))
    body = st.fixed_dictionaries(
        {name: member(name) for name in members if name in required},
        optional={name: member(name) for name in members if name not in required},
    )
    return st.one_of(body, st.builds(lambda b: {**b, "NotAMember": [1, {"x": None}]}, body))


class Client:
    """Raw requests over one keep-alive connection (reopened when the server closes it)."""

    def __init__(self, url: str) -> None:
        parsed = urlparse(url)
        self.host, self.port = parsed.hostname, parsed.port
        self.conn = self._connect()
        self.sent = 0

    def _connect(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(self.host, self.port, timeout=30)

    def send(self, operation: str, body: str) -> tuple[int, bytes]:
        headers = {
            "Content-Type": "application/x-amz-json-1.0",
            "Authorization": FAKE_AUTH,
            "X-Amz-Date": "20260101T000000Z",
            "X-Amz-Target": f"DynamoDB_20120810.{operation}",
        }
        self.sent += 1
        for attempt in (1, 2):
            try:
                self.conn.request("POST", "/", body=body.encode(), headers=headers)
                response = self.conn.getresponse()
                return response.status, response.read()
            except (http.client.RemoteDisconnected, ConnectionError, http.client.CannotSendRequest):
                # A closed keep-alive connection, not a dead server: the retry tells.
                self.conn.close()
                self.conn = self._connect()
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")


def _ensure_tables(ddb: Any) -> None:
    """The two tables with an item each, as before (a fuzzed DeleteTable may have dropped them)."""
    for name in TABLES:
        try:
            # A fuzzed UpdateTable may have turned deletion protection on.
            ddb.update_table(TableName=name, DeletionProtectionEnabled=False)
            ddb.delete_table(TableName=name)
        except ddb.exceptions.ResourceNotFoundException:
            pass
    create_table(ddb, HASH_TABLE)
    ddb.create_table(
        TableName=RANGE_TABLE,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "N"},
            {"AttributeName": "gpk", "AttributeType": "S"},
        ],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "gsi",
                "KeySchema": [{"AttributeName": "gpk", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    ddb.put_item(TableName=HASH_TABLE, Item={"pk": {"S": "x"}, "a": {"L": [{"S": "v"}]}})
    ddb.put_item(TableName=RANGE_TABLE, Item={"pk": {"S": "x"}, "sk": {"N": "1"}, "gpk": {"S": "g"}})


@pytest.fixture(scope="module")
def client(endpoint: str) -> Client:
    return Client(endpoint)


def _bodies(operation: str) -> st.SearchStrategy[Any]:
    shape = MODEL["operations"][operation].get("input", {}).get("shape")
    return value_for(shape) if shape else st.just({})


@pytest.mark.parametrize("operation", sorted(OPERATIONS))
def test_generated_requests_get_dynamodb_errors(ddb: Any, client: Client, operation: str) -> None:
    _ensure_tables(ddb)
    before = client.sent

    @settings(
        max_examples=EXAMPLES_PER_OPERATION,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(body=_bodies(operation))
    def check(body: Any) -> None:
        status, payload = client.send(operation, encode(body))
        assert status != 500, payload[:500]
        if status != 200:
            assert status in (400, 413), (status, payload[:500])
            if status == 400:
                error = json.loads(payload)
                assert error["__type"].split("#")[0] in (
                    "com.amazonaws.dynamodb.v20120810",
                    "com.amazon.coral.validate",
                    "com.amazon.coral.service",
                ), error

    check()
    assert client.sent > before  # small input shapes run out of distinct examples sooner
    status, payload = client.send("ListTables", "{}")
    assert status == 200 and "TableNames" in json.loads(payload)
    print(f"fuzz {operation}: {client.sent - before - 1} requests")
