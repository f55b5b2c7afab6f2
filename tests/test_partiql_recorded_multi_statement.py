"""ExecuteStatement, BatchExecuteStatement and ExecuteTransaction, as DynamoDB answered in 2026.

Each case is a request the public conformance suites nubo-db/dynamodb-conformance and
Ketlark/dynamodb-conformance sent to AWS (eu-west-2; tests/tier2/partiql/
executeStatement, batchExecuteStatement, executeTransaction and tests/tier3/
error-messages/partiql), with what AWS answered: slot codes, TableName echoes,
RETURNING on batch members, per-member ConsistentRead rates and exact messages.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import create_table, error_of, raw_request


@pytest.fixture(scope="module")
def table(ddb: Any) -> str:
    name = f"t-multi-{uuid.uuid4().hex[:8]}"
    create_table(ddb, name)
    return name


def put(ddb: Any, table: str, pk: str, **attrs: dict[str, Any]) -> None:
    ddb.put_item(TableName=table, Item={"pk": {"S": pk}, **attrs})


def stored(ddb: Any, table: str, pk: str) -> dict[str, Any] | None:
    return ddb.get_item(TableName=table, Key={"pk": {"S": pk}}, ConsistentRead=True).get("Item")


def batch(ddb: Any, *statements: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return ddb.batch_execute_statement(Statements=list(statements), **extra)


def test_batch_selects_and_writes(ddb: Any, table: str) -> None:
    put(ddb, table, "batch-sel-1", data={"S": "one"})
    put(ddb, table, "batch-sel-2", data={"S": "two"})
    res = batch(
        ddb,
        {"Statement": f"SELECT * FROM \"{table}\" WHERE pk = 'batch-sel-1'"},
        {"Statement": f"SELECT * FROM \"{table}\" WHERE pk = 'batch-sel-2'"},
    )
    assert [r["Item"]["pk"]["S"] for r in res["Responses"]] == ["batch-sel-1", "batch-sel-2"]
    put(ddb, table, "batch-upd-1", data={"S": "before"})
    res = batch(
        ddb,
        {"Statement": f"INSERT INTO \"{table}\" VALUE {{'pk': 'batch-ins-1', 'data': 'new'}}"},
        {"Statement": f"UPDATE \"{table}\" SET data = 'after' WHERE pk = 'batch-upd-1'"},
    )
    assert len(res["Responses"]) == 2
    assert stored(ddb, table, "batch-ins-1")["data"] == {"S": "new"}  # type: ignore[index]
    assert stored(ddb, table, "batch-upd-1")["data"] == {"S": "after"}  # type: ignore[index]


def test_batch_missing_table_is_a_slot_error(ddb: Any, table: str) -> None:
    put(ddb, table, "batch-partial-1", data={"S": "exists"})
    res = batch(
        ddb,
        {"Statement": f"SELECT * FROM \"{table}\" WHERE pk = 'batch-partial-1'"},
        {"Statement": "SELECT * FROM \"_conformance_nonexistent_table\" WHERE pk = 'x'"},
    )
    first, second = res["Responses"]
    assert "Error" not in first and second["Error"]["Code"] == "ResourceNotFound"


def test_batch_honours_returning(ddb: Any, table: str) -> None:
    put(ddb, table, "batch-ret-allold", data={"S": "batchgone"})
    res = batch(
        ddb,
        {"Statement": f"DELETE FROM \"{table}\" WHERE pk = 'batch-ret-allold' RETURNING ALL OLD *"},
    )
    assert res["Responses"][0]["Item"] == {
        "pk": {"S": "batch-ret-allold"},
        "data": {"S": "batchgone"},
    }
    assert stored(ddb, table, "batch-ret-allold") is None
    put(ddb, table, "batch-ret-new", data={"S": "old"})
    res = batch(
        ddb,
        {
            "Statement": f"UPDATE \"{table}\" SET data = 'new' WHERE pk = 'batch-ret-new' RETURNING ALL NEW *"
        },
    )
    assert res["Responses"][0]["Item"] == {"pk": {"S": "batch-ret-new"}, "data": {"S": "new"}}
    res = batch(
        ddb,
        {
            "Statement": f"UPDATE \"{table}\" SET data = 'newer' WHERE pk = 'batch-ret-new' RETURNING MODIFIED NEW *"
        },
    )
    assert res["Responses"][0]["Item"] == {"data": {"S": "newer"}}
    res = batch(
        ddb,
        {
            "Statement": f"UPDATE \"{table}\" REMOVE data WHERE pk = 'batch-ret-new' RETURNING MODIFIED NEW *"
        },
    )
    slot = res["Responses"][0]
    assert "Item" not in slot and slot["TableName"] == table
    assert "data" not in stored(ddb, table, "batch-ret-new")  # type: ignore[operator]


def test_batch_slot_validation_errors(ddb: Any, table: str) -> None:
    put(ddb, table, "batch-parse-ok", data={"S": "valid"})
    bad_returning = batch(
        ddb,
        {
            "Statement": f"DELETE FROM \"{table}\" WHERE pk = 'batch-ret-badvariant' RETURNING MODIFIED OLD *"
        },
    )["Responses"][0]
    res = batch(
        ddb,
        {"Statement": f"SLECT * FROM \"{table}\" WHERE pk = 'batch-parse-ok'"},
        {"Statement": f"SELECT * FROM \"{table}\" WHERE pk = 'batch-parse-ok'"},
        {"Statement": f"SELECT * FROM \"{table}\" WHERE val = 'a'"},
    )
    parse, ok, no_key = res["Responses"]
    assert bad_returning["Error"] == {
        "Code": "ValidationError",
        "Message": "Invalid returning clause: RETURNING MODIFIED OLD *. Only RETURNING ALL OLD * is allowed in DELETE statements.",
    }
    assert parse["Error"] == {
        "Code": "ValidationError",
        "Message": "Statement wasn't well formed, can't be processed: Expected data manipulation",
    }
    assert ok["Item"]["data"] == {"S": "valid"}
    assert no_key["Error"]["Code"] == "ValidationError" and "TableName" not in no_key
    assert "must specify the primary key in the where clause" in no_key["Error"]["Message"]


def test_batch_failed_member_that_ran_echoes_its_table(ddb: Any, table: str) -> None:
    put(ddb, table, "batch-tn-cond", val={"S": "here"})
    put(ddb, table, "batch-tn-dup")
    res = batch(
        ddb,
        {
            "Statement": f"UPDATE \"{table}\" SET touched = 'yes' WHERE pk = ? AND val = ?",
            "Parameters": [{"S": "batch-tn-cond"}, {"S": "wrong"}],
        },
        {
            "Statement": f"INSERT INTO \"{table}\" VALUE {{'pk': ?}}",
            "Parameters": [{"S": "batch-tn-dup"}],
        },
    )
    cond, dup = res["Responses"]
    assert cond["Error"]["Code"] == "ConditionalCheckFailed" and cond["TableName"] == table
    assert dup["Error"]["Code"] == "DuplicateItem" and dup["TableName"] == table


@pytest.mark.parametrize("setting", ["ALL_OLD", "NONE", None])
def test_batch_member_returns_no_item_on_condition_failure(
    ddb: Any, table: str, setting: str | None
) -> None:
    put(ddb, table, "batch-rvocf", val={"S": "here"})
    member: dict[str, Any] = {
        "Statement": f"UPDATE \"{table}\" SET touched = 'yes' WHERE pk = ? AND val = ?",
        "Parameters": [{"S": "batch-rvocf"}, {"S": "wrong"}],
    }
    if setting:
        member["ReturnValuesOnConditionCheckFailure"] = setting
    slot = batch(ddb, member)["Responses"][0]
    assert slot["Error"]["Code"] == "ConditionalCheckFailed" and "Item" not in slot


@pytest.mark.parametrize(
    ("operation", "field"),
    [("BatchExecuteStatement", "Statements"), ("ExecuteTransaction", "TransactStatements")],
)
def test_empty_statement_list_is_refused(endpoint: str, operation: str, field: str) -> None:
    response = raw_request(endpoint, operation, {field: []})
    assert response.status == 400
    assert response.json()["__type"].endswith("ValidationException")


def test_batch_consistent_read_rated_per_member(ddb: Any, table: str) -> None:
    put(ddb, table, "batch-cr-a", val={"S": "a"})
    put(ddb, table, "batch-cr-b", val={"S": "b"})

    def total(*members: tuple[str, bool | None]) -> float:
        statements = []
        for key, consistent in members:
            member: dict[str, Any] = {
                "Statement": f'SELECT * FROM "{table}" WHERE pk = ?',
                "Parameters": [{"S": key}],
            }
            if consistent is not None:
                member["ConsistentRead"] = consistent
            statements.append(member)
        res = batch(ddb, *statements, ReturnConsumedCapacity="TOTAL")
        assert all("Item" in r for r in res["Responses"])
        return sum(c.get("CapacityUnits", 0) for c in res.get("ConsumedCapacity", []))

    assert total(("batch-cr-a", None)) == 0.5
    assert total(("batch-cr-a", True)) == 1.0
    assert total(("batch-cr-a", False)) == 0.5
    assert total(("batch-cr-a", True), ("batch-cr-b", None)) == 1.5


def test_transaction_writes_and_rollback(ddb: Any, table: str) -> None:
    put(ddb, table, "txn-update-1", data={"S": "before"})
    ddb.execute_transaction(
        TransactStatements=[
            {
                "Statement": f"INSERT INTO \"{table}\" VALUE {{'pk': 'txn-insert-1', 'data': 'txn-new'}}"
            },
            {"Statement": f"UPDATE \"{table}\" SET data = 'txn-after' WHERE pk = 'txn-update-1'"},
        ]
    )
    assert stored(ddb, table, "txn-insert-1")["data"] == {"S": "txn-new"}  # type: ignore[index]
    assert stored(ddb, table, "txn-update-1")["data"] == {"S": "txn-after"}  # type: ignore[index]
    put(ddb, table, "txn-dup-1", data={"S": "existing"})
    with pytest.raises(ClientError) as excinfo:
        ddb.execute_transaction(
            TransactStatements=[
                {
                    "Statement": f"INSERT INTO \"{table}\" VALUE {{'pk': 'txn-dup-1', 'data': 'should-fail'}}"
                },
                {
                    "Statement": f"INSERT INTO \"{table}\" VALUE {{'pk': 'txn-dup-2', 'data': 'should-rollback'}}"
                },
            ]
        )
    assert error_of(excinfo)[0] == "TransactionCanceledException"
    assert stored(ddb, table, "txn-dup-2") is None
    assert stored(ddb, table, "txn-dup-1")["data"] == {"S": "existing"}  # type: ignore[index]


def test_transaction_replay_under_a_token(ddb: Any, table: str) -> None:
    pk = f"txn-idem-{uuid.uuid4().hex[:6]}"
    ddb.execute_statement(Statement=f"INSERT INTO \"{table}\" VALUE {{'pk': '{pk}', 'n': 0}}")
    token = f"et-idem-{uuid.uuid4().hex[:20]}"
    statements = [{"Statement": f"UPDATE \"{table}\" SET n = n + 1 WHERE pk = '{pk}'"}]
    first = ddb.execute_transaction(
        ClientRequestToken=token, ReturnConsumedCapacity="INDEXES", TransactStatements=statements
    )
    replay = ddb.execute_transaction(
        ClientRequestToken=token, ReturnConsumedCapacity="INDEXES", TransactStatements=statements
    )
    assert stored(ddb, table, pk)["n"] == {"N": "1"}  # type: ignore[index]
    first_entry, replay_entry = first["ConsumedCapacity"][0], replay["ConsumedCapacity"][0]
    assert first_entry.get("WriteCapacityUnits") == 2 and "ReadCapacityUnits" not in first_entry
    assert replay_entry.get("ReadCapacityUnits") == 2 and "WriteCapacityUnits" not in replay_entry


def test_transaction_refuses_returning(ddb: Any, table: str) -> None:
    put(ddb, table, "txn-ret-reject", data={"S": "txnold"})
    with pytest.raises(ClientError) as excinfo:
        ddb.execute_transaction(
            TransactStatements=[
                {
                    "Statement": f"UPDATE \"{table}\" SET data = 'txnnew' WHERE pk = 'txn-ret-reject' RETURNING ALL NEW *"
                }
            ]
        )
    assert error_of(excinfo) == (
        "ValidationException",
        "Validation failed in TransactStatements[0]: RETURNING clause is not supported in ExecuteTransaction.",
    )
    assert stored(ddb, table, "txn-ret-reject")["data"] == {"S": "txnold"}  # type: ignore[index]


@pytest.mark.parametrize("variant", ["MODIFIED OLD *", "ALL NEW *", "MODIFIED NEW *"])
def test_delete_returning_variants(ddb: Any, table: str, variant: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        ddb.execute_statement(
            Statement=f"DELETE FROM \"{table}\" WHERE pk = 'x' RETURNING {variant}"
        )
    assert error_of(excinfo) == (
        "ValidationException",
        f"Invalid returning clause: RETURNING {variant}. Only RETURNING ALL OLD * is allowed in DELETE statements.",
    )


def test_negated_predicates_evaluate(ddb: Any, table: str) -> None:
    ddb.execute_statement(
        Statement=f"INSERT INTO \"{table}\" VALUE {{'pk': 'pq-neg-a', 'kind': 'alpha'}}"
    )
    ddb.execute_statement(
        Statement=f"INSERT INTO \"{table}\" VALUE {{'pk': 'pq-neg-b', 'kind': 'beta'}}"
    )
    rows = ddb.execute_statement(
        Statement=f"SELECT * FROM \"{table}\" WHERE pk IN ['pq-neg-a','pq-neg-b'] AND NOT begins_with(\"kind\", 'al')"
    )["Items"]
    assert [r["pk"]["S"] for r in rows] == ["pq-neg-b"]
    rows = ddb.execute_statement(
        Statement=f'SELECT * FROM "{table}" WHERE pk = \'pq-neg-a\' AND "kind" IS NOT MISSING'
    )["Items"]
    assert [r["pk"]["S"] for r in rows] == ["pq-neg-a"]


def test_write_predicates_are_conditions(ddb: Any, table: str) -> None:
    put(ddb, table, "pq-pred-false", name={"S": "alpha"}, n={"N": "5"})
    for statement in (
        f"DELETE FROM \"{table}\" WHERE pk = 'pq-pred-false' AND \"name\" = 'beta'",
        f"UPDATE \"{table}\" SET n = 9 WHERE pk = 'pq-pred-false' AND \"name\" = 'beta'",
        f"DELETE FROM \"{table}\" WHERE pk = 'pq-pred-false' AND NOT begins_with(\"name\", 'al')",
    ):
        with pytest.raises(ClientError) as excinfo:
            ddb.execute_statement(Statement=statement)
        assert error_of(excinfo)[0] == "ConditionalCheckFailedException"
    assert stored(ddb, table, "pq-pred-false")["n"] == {"N": "5"}  # type: ignore[index]
    ddb.execute_statement(
        Statement=f"UPDATE \"{table}\" SET n = 9 WHERE pk = 'pq-pred-false' AND \"name\" = 'alpha'"
    )
    assert stored(ddb, table, "pq-pred-false")["n"] == {"N": "9"}  # type: ignore[index]
    ddb.execute_statement(
        Statement=f"DELETE FROM \"{table}\" WHERE pk = 'pq-pred-false' AND NOT begins_with(\"name\", 'zz')"
    )
    assert stored(ddb, table, "pq-pred-false") is None
    ddb.execute_statement(
        Statement=f"DELETE FROM \"{table}\" WHERE pk = 'pq-pred-missing' AND \"name\" = 'x'"
    )
    with pytest.raises(ClientError) as excinfo:
        ddb.execute_statement(Statement=f'DELETE FROM "{table}" WHERE "name" = \'alpha\'')
    code, message = error_of(excinfo)
    assert code == "ValidationException"
    assert "Where clause does not contain a mandatory equality on all key attributes" in message


def test_statement_basics(ddb: Any, table: str) -> None:
    put(ddb, table, "partiql-nested", mymap={"M": {"nested": {"S": "deep"}}}, extra={"S": "x"})
    rows = ddb.execute_statement(
        Statement=f"SELECT mymap.nested FROM \"{table}\" WHERE pk = 'partiql-nested'"
    )["Items"]
    assert rows == [{"nested": {"S": "deep"}}]
    rows = ddb.execute_statement(
        Statement=f"SELECT pk, mymap FROM \"{table}\" WHERE pk = 'partiql-nested'"
    )["Items"]
    assert sorted(rows[0]) == ["mymap", "pk"]
    assert (
        ddb.execute_statement(Statement=f"SELECT * FROM \"{table}\" WHERE pk = 'nope'")["Items"]
        == []
    )
    res = ddb.execute_statement(
        Statement=f"SELECT * FROM \"{table}\" WHERE pk = 'partiql-nested'",
        ReturnConsumedCapacity="TOTAL",
    )
    assert res["ConsumedCapacity"]["CapacityUnits"] > 0
    with pytest.raises(ClientError) as excinfo:
        ddb.execute_statement(Statement=f'SELECTT * FROMM "{table}"')
    assert error_of(excinfo)[0] == "ValidationException"
    with pytest.raises(ClientError) as excinfo:
        ddb.execute_statement(
            Statement="SELECT * FROM \"_conformance_nonexistent_table\" WHERE pk = 'x'"
        )
    assert error_of(excinfo)[0] == "ResourceNotFoundException"
    ddb.execute_statement(
        Statement=f"INSERT INTO \"{table}\" VALUE {{'pk': 'partiql-dup', 'data': 'first'}}"
    )
    with pytest.raises(ClientError) as excinfo:
        ddb.execute_statement(
            Statement=f"INSERT INTO \"{table}\" VALUE {{'pk': 'partiql-dup', 'data': 'second'}}"
        )
    assert error_of(excinfo)[0] == "DuplicateItemException"
    ddb.execute_statement(Statement=f"DELETE FROM \"{table}\" WHERE pk = 'partiql-dup'")
    ddb.execute_statement(
        Statement=f"INSERT INTO \"{table}\" VALUE {{'pk': 'partiql-dup', 'data': 'again'}}"
    )
    assert stored(ddb, table, "partiql-dup")["data"] == {"S": "again"}  # type: ignore[index]
