"""PartiQL comparisons and number parameters, as DynamoDB answered them in 2026.

Each case is a request the public conformance suite paritysuite/dynamodb-conformance
sent to AWS (tests/tier2/partiql/comparison.test.ts, mirrored in nubo-db's copy, and
tests/tier3/error-messages/partiqlParameterNumbers.test.ts), with what AWS answered.
The comparison grid is every recorded type against = and <>, and the ordering
operators against every type that has no order.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import create_table, error_of

# type: (stored, same, differs, permuted value or None, permuted matches)
CASES: dict[
    str, tuple[dict[str, Any], dict[str, Any], dict[str, Any], dict[str, Any] | None, bool]
] = {
    "SS": (
        {"SS": ["a", "b", "c"]},
        {"SS": ["a", "b", "c"]},
        {"SS": ["a", "b", "d"]},
        {"SS": ["c", "a", "b"]},
        True,
    ),
    "NS": (
        {"NS": ["1", "2", "3"]},
        {"NS": ["1", "2", "3"]},
        {"NS": ["1", "2", "4"]},
        {"NS": ["3", "1", "2"]},
        True,
    ),
    "BS": (
        {"BS": [b"\x01\x02", b"\x03\x04"]},
        {"BS": [b"\x01\x02", b"\x03\x04"]},
        {"BS": [b"\x01\x02", b"\x05\x06"]},
        {"BS": [b"\x03\x04", b"\x01\x02"]},
        True,
    ),
    "L": (
        {"L": [{"S": "a"}, {"S": "b"}]},
        {"L": [{"S": "a"}, {"S": "b"}]},
        {"L": [{"S": "a"}, {"S": "c"}]},
        {"L": [{"S": "b"}, {"S": "a"}]},
        False,
    ),
    "M": (
        {"M": {"x": {"N": "1"}, "y": {"N": "2"}}},
        {"M": {"x": {"N": "1"}, "y": {"N": "2"}}},
        {"M": {"x": {"N": "1"}, "y": {"N": "3"}}},
        {"M": {"y": {"N": "2"}, "x": {"N": "1"}}},
        True,
    ),
    "B": ({"B": b"\x01\x02\x03"}, {"B": b"\x01\x02\x03"}, {"B": b"\x01\x02\x04"}, None, False),
    "NULL": ({"NULL": True}, {"NULL": True}, {"S": "not null"}, None, False),
}

UNORDERED: dict[str, dict[str, Any]] = {
    "BOOL": {"BOOL": True},
    "NULL": {"NULL": True},
    "L": {"L": [{"S": "a"}]},
    "M": {"M": {"a": {"S": "b"}}},
    "SS": {"SS": ["a"]},
    "NS": {"NS": ["1"]},
    "BS": {"BS": [b"\x01"]},
}


def _key(kind: str) -> str:
    return f"pq-cmp-{kind}"


@pytest.fixture(scope="module")
def table(ddb: Any) -> str:
    """The hash table of comparison.test.ts, one item per type."""
    name = f"t-cmp-{uuid.uuid4().hex[:8]}"
    create_table(ddb, name)
    for kind, (stored, *_rest) in CASES.items():
        ddb.put_item(TableName=name, Item={"pk": {"S": _key(kind)}, "val": stored})
    return name


def matches(ddb: Any, table: str, pk: str, value: dict[str, Any], op: str) -> bool:
    res = ddb.execute_statement(
        Statement=f'SELECT pk FROM "{table}" WHERE pk = ? AND val {op} ?',
        Parameters=[{"S": pk}, value],
    )
    return len(res["Items"]) == 1


def condition_holds(ddb: Any, table: str, pk: str, value: dict[str, Any], op: str) -> bool:
    try:
        ddb.update_item(
            TableName=table,
            Key={"pk": {"S": pk}},
            UpdateExpression="SET marker = :m",
            ConditionExpression=f"val {op} :v",
            ExpressionAttributeValues={":m": {"N": "1"}, ":v": value},
        )
    except ClientError as exc:
        assert exc.response["Error"]["Code"] == "ConditionalCheckFailedException"
        return False
    return True


@pytest.mark.parametrize("kind", sorted(CASES))
def test_equality_grid(ddb: Any, table: str, kind: str) -> None:
    _stored, same, differs, permuted, permuted_matches = CASES[kind]
    pk = _key(kind)
    assert matches(ddb, table, pk, same, "=") is True
    assert matches(ddb, table, pk, differs, "=") is False
    assert matches(ddb, table, pk, same, "<>") is False
    assert matches(ddb, table, pk, differs, "<>") is True
    if permuted is not None:
        assert matches(ddb, table, pk, permuted, "=") is permuted_matches
    for value in (same, differs):
        for op in ("=", "<>"):
            assert matches(ddb, table, pk, value, op) is condition_holds(ddb, table, pk, value, op)


@pytest.mark.parametrize("kind", sorted(UNORDERED))
@pytest.mark.parametrize("op", ["<", "<=", ">", ">="])
def test_ordering_refuses_a_type_without_order(ddb: Any, table: str, kind: str, op: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        ddb.execute_statement(
            Statement=f'SELECT pk FROM "{table}" WHERE pk = ? AND val {op} ?',
            Parameters=[{"S": _key("B")}, UNORDERED[kind]],
        )
    code, message = error_of(excinfo)
    assert code == "ValidationException"
    if kind == "BOOL":  # the recorded exact message
        assert message == (
            f"Incorrect operand type for operator or function; operator or function: {op}, operand type: BOOL"
        )


def test_between_refuses_bool_naming_between(ddb: Any, table: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        ddb.execute_statement(
            Statement=f'SELECT pk FROM "{table}" WHERE pk = ? AND val BETWEEN ? AND ?',
            Parameters=[{"S": _key("B")}, {"BOOL": True}, {"BOOL": False}],
        )
    code, message = error_of(excinfo)
    assert code == "ValidationException"
    assert "operator or function: BETWEEN" in message


@pytest.mark.parametrize("kind", sorted(UNORDERED))
def test_equality_accepts_every_unordered_type(ddb: Any, table: str, kind: str) -> None:
    assert matches(ddb, table, _key("B"), UNORDERED[kind], "=") is False
    assert matches(ddb, table, _key("B"), UNORDERED[kind], "<>") is True


def test_ordering_between_string_and_number_is_accepted(ddb: Any, table: str) -> None:
    res = ddb.execute_statement(
        Statement=f'SELECT pk FROM "{table}" WHERE pk = ? AND val < ?',
        Parameters=[{"S": _key("NULL")}, {"N": "5"}],
    )
    assert "Items" in res


def test_binary_orders_by_bytes(ddb: Any, table: str) -> None:
    below = f'SELECT pk FROM "{table}" WHERE pk = ? AND val < ?'
    above = f'SELECT pk FROM "{table}" WHERE pk = ? AND val > ?'
    params = [{"S": _key("B")}, {"B": b"\x01\x02\x04"}]
    assert len(ddb.execute_statement(Statement=below, Parameters=params)["Items"]) == 1
    assert len(ddb.execute_statement(Statement=above, Parameters=params)["Items"]) == 0


def test_update_conditioned_on_a_permuted_set_fires(ddb: Any, table: str) -> None:
    pk = _key("SS-write-true")
    ddb.put_item(TableName=table, Item={"pk": {"S": pk}, "val": {"SS": ["a", "b"]}})
    ddb.execute_statement(
        Statement=f"UPDATE \"{table}\" SET touched = 'yes' WHERE pk = ? AND val = ?",
        Parameters=[{"S": pk}, {"SS": ["b", "a"]}],
    )
    item = ddb.get_item(TableName=table, Key={"pk": {"S": pk}}, ConsistentRead=True)["Item"]
    assert item["touched"] == {"S": "yes"}


def test_update_conditioned_on_a_different_map_fails(ddb: Any, table: str) -> None:
    pk = _key("M-write-false")
    ddb.put_item(TableName=table, Item={"pk": {"S": pk}, "val": {"M": {"x": {"N": "1"}}}})
    with pytest.raises(ClientError) as excinfo:
        ddb.execute_statement(
            Statement=f"UPDATE \"{table}\" SET touched = 'yes' WHERE pk = ? AND val = ?",
            Parameters=[{"S": pk}, {"M": {"x": {"N": "2"}}}],
        )
    assert error_of(excinfo)[0] == "ConditionalCheckFailedException"
    item = ddb.get_item(TableName=table, Key={"pk": {"S": pk}}, ConsistentRead=True)["Item"]
    assert "touched" not in item


# ── partiqlParameterNumbers.test.ts ──────────────────────────────────────────

NEST = "Nesting Levels have exceeded supported limits: Attributes in the item have nested levels beyond supported limit"
UNCONVERTIBLE = "The parameter cannot be converted to a numeric value"
UNDERFLOW = (
    "Number underflow. Attempting to store a number with magnitude smaller than supported range"
)


@pytest.fixture(scope="module")
def composite(ddb: Any) -> str:
    name = f"t-pn-{uuid.uuid4().hex[:8]}"
    create_table(ddb, name, range_key=("sk", "S"))
    return name


def _positions(table: str) -> list[str]:
    return [
        f"SELECT * FROM \"{table}\" WHERE pk = 'pq-pn' AND n = ?",
        f"INSERT INTO \"{table}\" VALUE {{'pk': 'pq-pn-insert', 'sk': 's', 'n': ?}}",
        f"UPDATE \"{table}\" SET n = ? WHERE pk = 'pq-pn' AND sk = 's'",
        f'SELECT * FROM "{table}" WHERE pk = ?',
    ]


def refused(ddb: Any, statement: str, parameters: list[dict[str, Any]]) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        ddb.execute_statement(Statement=statement, Parameters=parameters)
    return error_of(excinfo)


def deep(depth: int, leaf: dict[str, Any] | None = None) -> dict[str, Any]:
    value: dict[str, Any] = leaf or {"S": "leaf"}
    for _ in range(depth):
        value = {"M": {"n": value}}
    return value


@pytest.mark.parametrize(
    "value", ["1e99999999999", "-1e99999999999", "1e-99999999999", "1e2147483648", "1e-2147483648"]
)
@pytest.mark.parametrize("position", range(4))
def test_exponent_outside_int32_cannot_be_converted(
    ddb: Any, composite: str, value: str, position: int
) -> None:
    statement = _positions(composite)[position]
    assert refused(ddb, statement, [{"N": value}]) == (
        "ValidationException",
        f"{UNCONVERTIBLE}: {value}",
    )


@pytest.mark.parametrize("position", range(4))
def test_exponent_at_int32_max_underflows(ddb: Any, composite: str, position: int) -> None:
    statement = _positions(composite)[position]
    assert refused(ddb, statement, [{"N": "1e2147483647"}]) == ("ValidationException", UNDERFLOW)


@pytest.mark.parametrize("position", range(4))
def test_empty_number_parameter(ddb: Any, composite: str, position: int) -> None:
    statement = _positions(composite)[position]
    assert refused(ddb, statement, [{"N": ""}]) == ("ValidationException", UNCONVERTIBLE)


@pytest.mark.parametrize(
    "parameter",
    [
        {"L": [{"N": "1"}, {"N": "1e99999999999"}]},
        {"M": {"x": {"N": "1e99999999999"}}},
        {"NS": ["1", "1e99999999999"]},
    ],
)
def test_unconvertible_inside_a_container(
    ddb: Any, composite: str, parameter: dict[str, Any]
) -> None:
    statement = _positions(composite)[0]
    assert refused(ddb, statement, [parameter]) == (
        "ValidationException",
        f"{UNCONVERTIBLE}: 1e99999999999",
    )


def test_unconvertible_in_execute_transaction(ddb: Any, composite: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        ddb.execute_transaction(
            TransactStatements=[
                {
                    "Statement": f"UPDATE \"{composite}\" SET n = ? WHERE pk = 'pq-pn' AND sk = 's'",
                    "Parameters": [{"N": "1e99999999999"}],
                }
            ]
        )
    assert error_of(excinfo) == ("ValidationException", f"{UNCONVERTIBLE}: 1e99999999999")


def test_unconvertible_in_batch_execute_statement(ddb: Any, composite: str) -> None:
    res = ddb.batch_execute_statement(
        Statements=[
            {
                "Statement": f"SELECT * FROM \"{composite}\" WHERE pk = 'pq-pn' AND sk = 's' AND n = ?",
                "Parameters": [{"N": "1e99999999999"}],
            }
        ]
    )
    assert len(res["Responses"]) == 1
    assert res["Responses"][0]["Error"]["Code"] == "ValidationError"
    assert res["Responses"][0]["Error"]["Message"] == f"{UNCONVERTIBLE}: 1e99999999999"


@pytest.mark.parametrize("depth", [40, 100])
def test_first_problem_in_document_order(ddb: Any, composite: str, depth: int) -> None:
    pair = f"SELECT * FROM \"{composite}\" WHERE pk = 'pq-pn' AND x = ? AND y = ?"
    single = f"SELECT * FROM \"{composite}\" WHERE pk = 'pq-pn' AND x = ?"
    bad = {"N": "abc"}
    v = "ValidationException"
    assert refused(ddb, pair, [deep(depth), bad]) == (v, NEST)
    assert refused(ddb, pair, [bad, deep(depth)]) == (v, f"{UNCONVERTIBLE}: abc")
    assert refused(ddb, single, [{"M": {"d": deep(depth), "bad": bad}}]) == (v, NEST)
    assert refused(ddb, single, [{"M": {"bad": bad, "d": deep(depth)}}]) == (
        v,
        f"{UNCONVERTIBLE}: abc",
    )
    assert refused(ddb, single, [deep(depth, bad)]) == (v, NEST)
    assert refused(ddb, pair, [deep(depth), {"N": "1e126"}]) == (v, NEST)


@pytest.mark.parametrize("depth", [40, 100])
def test_first_problem_in_transaction_and_batch(ddb: Any, composite: str, depth: int) -> None:
    with pytest.raises(ClientError) as excinfo:
        ddb.execute_transaction(
            TransactStatements=[
                {
                    "Statement": f"UPDATE \"{composite}\" SET x = ? SET y = ? WHERE pk = 'pq-pn' AND sk = '1'",
                    "Parameters": [deep(depth), {"N": "abc"}],
                }
            ]
        )
    assert error_of(excinfo) == ("ValidationException", NEST)
    pair = f"SELECT * FROM \"{composite}\" WHERE pk = 'pq-pn' AND x = ? AND y = ?"
    res = ddb.batch_execute_statement(
        Statements=[{"Statement": pair, "Parameters": [deep(depth), {"N": "abc"}]}]
    )
    assert res["Responses"][0]["Error"] == {"Code": "ValidationError", "Message": NEST}
