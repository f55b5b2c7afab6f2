"""PartiQL statements that run, as DynamoDB ran them in 2026.

Each case is a request sent as the public conformance suite
paritysuite/dynamodb-conformance sent it to AWS (tests/tier2/partiql/
setFunctions, whereFunctions, grammar, fromFirstUpdate, writeResponses and
whereOverlap), with what AWS answered or stored. Set members are compared
sorted: the order a set reads back in is not what these cases are about.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import create_table, error_of


def _name(tag: str) -> str:
    return f"t-tier2-{tag}-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def table(ddb: Any) -> str:
    """One S-keyed table; each case seeds its own item."""
    name = _name("s")
    create_table(ddb, name)
    return name


@pytest.fixture(scope="module")
def ntable(ddb: Any) -> str:
    """An N-keyed table holding the grammar file's numbers."""
    name = _name("n")
    create_table(ddb, name, hash_key=("pk", "N"))
    for n in ["7310000", "7.3", "-7.3"]:
        ddb.put_item(TableName=name, Item={"pk": {"N": n}, "tag": {"S": "grammar"}})
    return name


@pytest.fixture(scope="module")
def composite(ddb: Any) -> str:
    """A pk (S) / sk (S) table holding the overlap file's three rows."""
    name = _name("c")
    create_table(ddb, name, range_key=("sk", "S"))
    for sk in ["1", "2", "3"]:
        ddb.put_item(TableName=name, Item={"pk": {"S": "pq-overlap"}, "sk": {"S": sk}})
    return name


def run(ddb: Any, statement: str, parameters: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    extra = {"Parameters": parameters} if parameters else {}
    return ddb.execute_statement(Statement=statement, **extra)


def stored(ddb: Any, table: str, pk: str) -> dict[str, Any] | None:
    return ddb.get_item(TableName=table, Key={"pk": {"S": pk}}, ConsistentRead=True).get("Item")


def refused(ddb: Any, statement: str) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        run(ddb, statement)
    return error_of(excinfo)


# ── setFunctions ────────────────────────────────────────────────────────


def seed_sets(ddb: Any, table: str, pk: str) -> str:
    ddb.put_item(
        TableName=table,
        Item={
            "pk": {"S": pk},
            "ss": {"SS": ["a", "b", "c"]},
            "ns": {"NS": ["1", "2", "3"]},
            "bs": {"BS": [b"\x01", b"\x02"]},
            "s": {"S": "str"},
        },
    )
    return pk


SET_CASES = [
    ("set_add(ss, <<'0', 'z'>>)", "ss", ["0", "a", "b", "c", "z"]),
    ("set_add(ss, <<'a'>>)", "ss", ["a", "b", "c"]),
    ("SET_ADD(ss, <<'x'>>)", "ss", ["a", "b", "c", "x"]),
    ("set_delete(ss, <<'a'>>)", "ss", ["b", "c"]),
    ("set_delete(ss, <<'zz'>>)", "ss", ["a", "b", "c"]),
]


@pytest.mark.parametrize(("call", "attr", "members"), SET_CASES)
def test_set_functions_on_a_string_set(ddb: Any, table: str, call: str, attr: str, members: list[str]) -> None:
    pk = seed_sets(ddb, table, f"set-{uuid.uuid4().hex[:6]}")
    run(ddb, f"UPDATE \"{table}\" SET {attr} = {call} WHERE pk = '{pk}'")
    assert sorted(stored(ddb, table, pk)[attr]["SS"]) == members


def test_set_functions_on_a_number_set(ddb: Any, table: str) -> None:
    pk = seed_sets(ddb, table, "set-ns")
    run(ddb, f"UPDATE \"{table}\" SET ns = set_add(ns, <<4, 1>>) WHERE pk = '{pk}'")
    assert sorted(map(int, stored(ddb, table, pk)["ns"]["NS"])) == [1, 2, 3, 4]
    run(ddb, f"UPDATE \"{table}\" SET ns = set_delete(ns, <<2>>) WHERE pk = '{pk}'")
    assert sorted(map(int, stored(ddb, table, pk)["ns"]["NS"])) == [1, 3, 4]


def test_set_add_takes_a_binary_set_parameter(ddb: Any, table: str) -> None:
    pk = seed_sets(ddb, table, "set-bs")
    run(ddb, f"UPDATE \"{table}\" SET bs = set_add(bs, ?) WHERE pk = '{pk}'", [{"BS": [b"\x01", b"\x03"]}])
    assert sorted(stored(ddb, table, pk)["bs"]["BS"]) == [b"\x01", b"\x02", b"\x03"]


def test_set_add_to_a_missing_attribute_creates_it_and_set_delete_leaves_it_missing(ddb: Any, table: str) -> None:
    pk = seed_sets(ddb, table, "set-missing")
    run(ddb, f"UPDATE \"{table}\" SET nss = set_add(nss, <<'x'>>) WHERE pk = '{pk}'")
    assert stored(ddb, table, pk)["nss"] == {"SS": ["x"]}
    run(ddb, f"UPDATE \"{table}\" SET other = set_delete(other, <<'a'>>) WHERE pk = '{pk}'")
    assert "other" not in stored(ddb, table, pk)


def test_set_delete_of_every_member_removes_the_attribute(ddb: Any, table: str) -> None:
    pk = seed_sets(ddb, table, "set-all")
    run(ddb, f"UPDATE \"{table}\" SET ss = set_delete(ss, <<'a', 'b', 'c'>>) WHERE pk = '{pk}'")
    assert "ss" not in stored(ddb, table, pk)


def test_two_set_clauses_and_returning(ddb: Any, table: str) -> None:
    pk = seed_sets(ddb, table, "set-two")
    run(ddb, f"UPDATE \"{table}\" SET ss = set_add(ss, <<'x'>>) SET ns = set_add(ns, <<9>>) WHERE pk = '{pk}'")
    item = stored(ddb, table, pk)
    assert sorted(item["ss"]["SS"]) == ["a", "b", "c", "x"]
    assert sorted(map(int, item["ns"]["NS"])) == [1, 2, 3, 9]
    res = run(ddb, f"UPDATE \"{table}\" SET ss = set_add(ss, <<'r'>>) WHERE pk = '{pk}' RETURNING ALL NEW *")
    assert len(res["Items"]) == 1
    assert sorted(res["Items"][0]["ss"]["SS"]) == ["a", "b", "c", "r", "x"]


def test_set_add_on_a_missing_item_fails_its_condition(ddb: Any, table: str) -> None:
    code, _ = refused(ddb, f"UPDATE \"{table}\" SET ss = set_add(ss, <<'x'>>) WHERE pk = 'set-absent'")
    assert code == "ConditionalCheckFailedException"
    assert stored(ddb, table, "set-absent") is None


def test_set_add_in_a_transaction_and_a_batch(ddb: Any, table: str) -> None:
    pk = seed_sets(ddb, table, "set-tx")
    statement = f"UPDATE \"{table}\" SET ss = set_add(ss, <<'t'>>) WHERE pk = '{pk}'"
    ddb.execute_transaction(TransactStatements=[{"Statement": statement}])
    assert sorted(stored(ddb, table, pk)["ss"]["SS"]) == ["a", "b", "c", "t"]
    statement = statement.replace("'t'", "'u'")
    res = ddb.batch_execute_statement(Statements=[{"Statement": statement}])
    assert len(res["Responses"]) == 1 and "Error" not in res["Responses"][0]
    assert sorted(stored(ddb, table, pk)["ss"]["SS"]) == ["a", "b", "c", "t", "u"]


# ── whereFunctions ──────────────────────────────────────────────────────

FN_ITEM = "pq-fn-item"


@pytest.fixture(scope="module")
def fn_table(ddb: Any) -> str:
    name = _name("fn")
    create_table(ddb, name)
    ddb.put_item(
        TableName=name,
        Item={
            "pk": {"S": FN_ITEM},
            "ss": {"SS": ["a", "b", "c"]},
            "s": {"S": "str"},
            "m": {"M": {"sub": {"S": "x"}}},
            "nul": {"NULL": True},
            "flag": {"BOOL": True},
            "pqFnMarker": {"S": "present"},
        },
    )
    for pk in ["pq-fn-upd-ok", "pq-fn-upd-ccf", "pq-fn-upd-not", "pq-fn-del-ccf", "pq-fn-del-ok", "pq-fn-tx"]:
        ddb.put_item(TableName=name, Item={"pk": {"S": pk}, "a": {"N": "5"}})
    return name


WHERE_CASES = [
    ("attribute_exists(ss)", True),
    ("attribute_exists(nope)", False),
    ("attribute_not_exists(nope)", True),
    ("attribute_not_exists(ss)", False),
    ("NOT attribute_exists(nope)", True),
    ("ATTRIBUTE_EXISTS(ss)", True),
    ("(attribute_exists(nope) OR attribute_exists(ss))", True),
    ("attribute_exists(ss) = true", True),
    ('attribute_exists("ss")', True),
    ("attribute_exists(m.sub)", True),
    ("attribute_exists(m.nope)", False),
    ("size(s) = 3", True),
    ("size(s) = 4", False),
    ("attribute_type(ss, 'SS')", True),
    ("attribute_type(ss, 'S')", False),
    ("nul IS NULL", True),
    ("s IS NULL", False),
    ("s IS NOT NULL", True),
    ("nul IS NOT NULL", False),
    ("flag IS BOOL", True),
    ("s IS STRING", True),
    ("s IS BOOL", False),
]


@pytest.mark.parametrize(("condition", "holds"), WHERE_CASES)
def test_where_function_filters_a_select(ddb: Any, fn_table: str, condition: str, holds: bool) -> None:
    statement = f"SELECT * FROM \"{fn_table}\" WHERE pk = '{FN_ITEM}' AND {condition}"
    items = ddb.execute_statement(Statement=statement, ConsistentRead=True)["Items"]
    assert [i["pk"]["S"] for i in items] == ([FN_ITEM] if holds else [])


def test_where_function_filters_a_scan(ddb: Any, fn_table: str) -> None:
    statement = f'SELECT pk FROM "{fn_table}" WHERE attribute_exists(pqFnMarker)'
    assert ddb.execute_statement(Statement=statement, ConsistentRead=True)["Items"] == [{"pk": {"S": FN_ITEM}}]


def test_where_functions_condition_writes(ddb: Any, fn_table: str) -> None:
    t = fn_table
    run(ddb, f"UPDATE \"{t}\" SET z = 1 WHERE pk = 'pq-fn-upd-ok' AND attribute_exists(a)")
    assert stored(ddb, t, "pq-fn-upd-ok")["z"] == {"N": "1"}
    code, _ = refused(ddb, f"UPDATE \"{t}\" SET z = 2 WHERE pk = 'pq-fn-upd-ccf' AND attribute_exists(nope)")
    assert code == "ConditionalCheckFailedException" and "z" not in stored(ddb, t, "pq-fn-upd-ccf")
    guarded = f"UPDATE \"{t}\" SET y = 1 WHERE pk = 'pq-fn-upd-not' AND attribute_not_exists(y)"
    run(ddb, guarded)
    assert refused(ddb, guarded.replace("y = 1", "y = 2"))[0] == "ConditionalCheckFailedException"
    assert stored(ddb, t, "pq-fn-upd-not")["y"] == {"N": "1"}
    code, _ = refused(ddb, f"DELETE FROM \"{t}\" WHERE pk = 'pq-fn-del-ccf' AND attribute_exists(nope)")
    assert code == "ConditionalCheckFailedException" and stored(ddb, t, "pq-fn-del-ccf") is not None
    run(ddb, f"DELETE FROM \"{t}\" WHERE pk = 'pq-fn-del-ok' AND attribute_not_exists(nope)")
    assert stored(ddb, t, "pq-fn-del-ok") is None
    code, _ = refused(ddb, f"UPDATE \"{t}\" SET z = 1 WHERE pk = 'pq-fn-absent' AND attribute_not_exists(pk)")
    assert code == "ConditionalCheckFailedException" and stored(ddb, t, "pq-fn-absent") is None
    tx = f"UPDATE \"{t}\" SET z = 1 WHERE pk = 'pq-fn-tx' AND attribute_exists(a)"
    ddb.execute_transaction(TransactStatements=[{"Statement": tx}])
    assert stored(ddb, t, "pq-fn-tx")["z"] == {"N": "1"}


# ── grammar ─────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("literal", "key"),
    [
        ("7.31e6", "7310000"),
        ("7.31E6", "7310000"),
        ("7.31e+6", "7310000"),
        ("731e4", "7310000"),
        ("73100000e-1", "7310000"),
        (".73e1", "7.3"),
        ("-.73e1", "-7.3"),
    ],
)
def test_number_literal_forms_match_the_number(ddb: Any, ntable: str, literal: str, key: str) -> None:
    res = ddb.execute_statement(Statement=f'SELECT * FROM "{ntable}" WHERE pk = {literal}', ConsistentRead=True)
    assert [i["pk"] for i in res["Items"]] == [{"N": key}]


@pytest.mark.parametrize(("literal", "key"), [("7.32e6", "7320000"), (".7325e1", "7.325")])
def test_number_literal_forms_insert_the_number(ddb: Any, ntable: str, literal: str, key: str) -> None:
    run(ddb, f"INSERT INTO \"{ntable}\" VALUE {{'pk': {literal}, 'tag': 'grammar'}}")
    assert "Item" in ddb.get_item(TableName=ntable, Key={"pk": {"N": key}}, ConsistentRead=True)


@pytest.mark.parametrize(
    ("statement", "key"),
    [
        ("SELECT * FROM \"{T}\" WHERE pk = 'g-a' -- a note", "g-a"),
        ("SELECT * FROM \"{T}\" -- a note\nWHERE pk = 'g-b'", "g-b"),
        ("-- a note\nSELECT * FROM \"{T}\" WHERE pk = 'g-a'", "g-a"),
        ("SELECT * FROM \"{T}\" /* a note */ WHERE pk = 'g-c'", "g-c"),
        ("SELECT * FROM \"{T}\" WHERE pk = 'g-c' /* a note */", "g-c"),
    ],
)
def test_comments_are_whitespace(ddb: Any, table: str, statement: str, key: str) -> None:
    for pk in ["g-a", "g-b", "g-c"]:
        ddb.put_item(TableName=table, Item={"pk": {"S": pk}, "tag": {"S": "grammar"}})
    res = ddb.execute_statement(Statement=statement.replace("{T}", table), ConsistentRead=True)
    assert [i["pk"]["S"] for i in res["Items"]] == [key]


def test_order_by_the_sort_key(ddb: Any) -> None:
    name = _name("order")
    create_table(ddb, name, range_key=("sk", "N"))
    for n in ["2", "3", "1"]:
        ddb.put_item(TableName=name, Item={"pk": {"S": "o"}, "sk": {"N": n}})
    for order, expected in [("DESC", ["3", "2", "1"]), ("ASC", ["1", "2", "3"])]:
        res = ddb.execute_statement(Statement=f"SELECT * FROM \"{name}\" WHERE pk = 'o' ORDER BY sk {order}")
        assert [i["sk"]["N"] for i in res["Items"]] == expected


@pytest.mark.parametrize(
    "statement",
    [
        'SELECT * FROM "{N}" WHERE pk = 1e99999999999',
        "SELECT * FROM \"{T}\" WHERE pk = 'g-a' # a note",
        "INSERT INTO \"{N}\" VALUE {{'pk': 7330000}} foo",
        "SELECT * FROM \"{T}\" t WHERE pk = 'g-a'",
        "DELETE FROM \"{T}\" t WHERE pk = 'g-a'",
        "DELETE FROM \"{T}\" WHERE pk = 'g-b' ORDER BY pk",
    ],
)
def test_malformed_statements_are_refused_and_change_nothing(
    ddb: Any, table: str, ntable: str, statement: str
) -> None:
    for pk in ["g-a", "g-b"]:
        ddb.put_item(TableName=table, Item={"pk": {"S": pk}})
    code, _ = refused(ddb, statement.replace("{T}", table).replace("{N}", ntable).replace("{{", "{").replace("}}", "}"))
    assert code == "ValidationException"
    assert stored(ddb, table, "g-a") is not None and stored(ddb, table, "g-b") is not None
    assert "Item" not in ddb.get_item(TableName=ntable, Key={"pk": {"N": "7330000"}}, ConsistentRead=True)


# ── fromFirstUpdate ─────────────────────────────────────────────────────


def seed_ff(ddb: Any, table: str) -> str:
    pk = f"ff-{uuid.uuid4().hex[:6]}"
    ddb.put_item(TableName=table, Item={"pk": {"S": pk}, "a": {"N": "1"}, "b": {"S": "bee"}})
    return pk


def test_from_first_update_forms(ddb: Any, table: str) -> None:
    pk = seed_ff(ddb, table)
    run(ddb, f"FROM \"{table}\" WHERE pk = '{pk}' SET c = 1")
    assert stored(ddb, table, pk)["c"] == {"N": "1"}
    run(ddb, f"FROM \"{table}\" WHERE pk = '{pk}' REMOVE b")
    assert "b" not in stored(ddb, table, pk)
    run(ddb, f"FROM \"{table}\" WHERE pk = '{pk}' SET c = 2 REMOVE a")
    item = stored(ddb, table, pk)
    assert item["c"] == {"N": "2"} and "a" not in item
    run(ddb, f"from \"{table}\" where pk = '{pk}' set e = 4")
    assert stored(ddb, table, pk)["e"] == {"N": "4"}
    run(ddb, f'FROM "{table}" WHERE pk = ? SET c = ?', [{"S": pk}, {"N": "7"}])
    assert stored(ddb, table, pk)["c"] == {"N": "7"}


def test_from_first_update_returning(ddb: Any, table: str) -> None:
    pk = seed_ff(ddb, table)
    res = run(ddb, f"FROM \"{table}\" WHERE pk = '{pk}' SET d = 3 RETURNING ALL NEW *")
    assert res["Items"] == [{"pk": {"S": pk}, "a": {"N": "1"}, "b": {"S": "bee"}, "d": {"N": "3"}}]


def test_from_first_update_conditions(ddb: Any, table: str) -> None:
    pk = seed_ff(ddb, table)
    run(ddb, f"FROM \"{table}\" WHERE pk = '{pk}' AND a = 1 SET c = 5")
    assert stored(ddb, table, pk)["c"] == {"N": "5"}
    code, _ = refused(ddb, f"FROM \"{table}\" WHERE pk = '{pk}' AND a = 2 SET c = 6")
    assert code == "ConditionalCheckFailedException" and stored(ddb, table, pk)["c"] == {"N": "5"}
    code, _ = refused(ddb, f"FROM \"{table}\" WHERE pk = 'ff-absent' SET c = 1")
    assert code == "ConditionalCheckFailedException" and stored(ddb, table, "ff-absent") is None


def test_from_first_update_in_a_transaction_and_a_batch(ddb: Any, table: str) -> None:
    pk = seed_ff(ddb, table)
    ddb.execute_transaction(TransactStatements=[{"Statement": f"FROM \"{table}\" WHERE pk = '{pk}' SET c = 1"}])
    assert stored(ddb, table, pk)["c"] == {"N": "1"}
    res = ddb.batch_execute_statement(Statements=[{"Statement": f"FROM \"{table}\" WHERE pk = '{pk}' SET c = 2"}])
    assert len(res["Responses"]) == 1 and "Error" not in res["Responses"][0]
    assert stored(ddb, table, pk)["c"] == {"N": "2"}


# ── writeResponses ──────────────────────────────────────────────────────


def test_writes_answer_an_empty_items_list(ddb: Any, table: str) -> None:
    for pk in ["wr-update", "wr-delete"]:
        ddb.put_item(TableName=table, Item={"pk": {"S": pk}, "a": {"N": "1"}})
    assert run(ddb, f"INSERT INTO \"{table}\" VALUE {{'pk': 'wr-insert'}}")["Items"] == []
    assert run(ddb, f"UPDATE \"{table}\" SET a = 2 WHERE pk = 'wr-update'")["Items"] == []
    assert run(ddb, f"DELETE FROM \"{table}\" WHERE pk = 'wr-delete'")["Items"] == []
    assert run(ddb, f"DELETE FROM \"{table}\" WHERE pk = 'wr-never-written'")["Items"] == []


def test_a_transaction_of_writes_answers_an_empty_responses_list(ddb: Any, table: str) -> None:
    for pk in ["wr-tx-a", "wr-tx-b", "wr-tx-c"]:
        ddb.put_item(TableName=table, Item={"pk": {"S": pk}, "a": {"N": "1"}})
    updates = [{"Statement": f"UPDATE \"{table}\" SET a = 2 WHERE pk = '{pk}'"} for pk in ["wr-tx-a", "wr-tx-b"]]
    assert ddb.execute_transaction(TransactStatements=updates)["Responses"] == []
    mixed = [
        {"Statement": f"INSERT INTO \"{table}\" VALUE {{'pk': 'wr-tx-new'}}"},
        {"Statement": f"DELETE FROM \"{table}\" WHERE pk = 'wr-tx-c'"},
    ]
    assert ddb.execute_transaction(TransactStatements=mixed)["Responses"] == []
    res = ddb.execute_transaction(
        TransactStatements=[{"Statement": f"UPDATE \"{table}\" SET a = 3 WHERE pk = 'wr-tx-a'"}],
        ReturnConsumedCapacity="TOTAL",
    )
    assert res["Responses"] == []
    assert [c["TableName"] for c in res["ConsumedCapacity"]] == [table]


# ── whereOverlap ────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("left", "expected"),
    [
        ("pk = 'pq-overlap' AND NOT sk = '1'", ["2", "3"]),
        ("pk = 'pq-overlap' AND sk <> '1'", ["2", "3"]),
        ("pk = 'pq-overlap' AND NOT begins_with(sk, 'x')", ["1", "2", "3"]),
        ("pk = 'pq-overlap' AND NOT sk IN ['1', '3']", ["2"]),
        ("pk = 'pq-overlap' AND NOT sk > '5'", ["1", "2", "3"]),
        ("pk = 'pq-overlap' AND NOT (sk = '1')", ["2", "3"]),
        ("pk = 'pq-overlap'", ["1", "2", "3"]),
    ],
)
def test_a_negated_sort_key_branch_does_not_overlap(ddb: Any, composite: str, left: str, expected: list[str]) -> None:
    if left == "pk = 'pq-overlap'":
        where = f"{left} OR pk = 'pq-overlap' AND NOT sk = '1'"
    else:
        where = f"{left} OR pk = 'pq-overlap' AND sk = '2'"
    res = ddb.execute_statement(Statement=f'SELECT * FROM "{composite}" WHERE {where}', ConsistentRead=True)
    assert sorted(i["sk"]["S"] for i in res["Items"]) == expected
