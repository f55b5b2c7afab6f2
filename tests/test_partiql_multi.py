"""BatchExecuteStatement and ExecuteTransaction through boto3."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import error_of, put_all


def item(pk: str, sk: int, **attrs: str) -> dict[str, Any]:
    out: dict[str, Any] = {"pk": {"S": pk}, "sk": {"N": str(sk)}}
    out.update({k: {"S": v} for k, v in attrs.items()})
    return out


# -- BatchExecuteStatement ------------------------------------------------------------------


def test_batch_reads_each_answer_in_order(ddb: Any, range_table: str) -> None:
    put_all(ddb, range_table, [item("a", 1, v="one"), item("a", 2, v="two")])
    t = range_table
    out = ddb.batch_execute_statement(
        Statements=[
            {"Statement": f"SELECT * FROM \"{t}\" WHERE pk = 'a' AND sk = 2"},
            {"Statement": f'SELECT v FROM "{t}" WHERE pk = ? AND sk = ?', "Parameters": [{"S": "a"}, {"N": "1"}]},
            {"Statement": f"SELECT * FROM \"{t}\" WHERE pk = 'a' AND sk = 9"},
            {"Statement": f"SELECT * FROM \"{t}\" WHERE pk = 'a'"},
            {"Statement": f'SELECT * FROM "{t}" WHERE'},
            {"Statement": "SELECT * FROM \"missing-table\" WHERE pk = 'a' AND sk = 1"},
        ],
        ReturnConsumedCapacity="TOTAL",
    )
    responses = out["Responses"]
    assert responses[0] == {"TableName": t, "Item": item("a", 2, v="two")}
    assert responses[1] == {"TableName": t, "Item": {"v": {"S": "one"}}}
    assert responses[2] == {"TableName": t}
    assert responses[3] == {
        "Error": {
            "Code": "ValidationError",
            "Message": "Select statements within BatchExecuteStatement must specify the primary key in the where clause.",
        }
    }
    assert responses[4] == {
        "Error": {"Code": "ValidationError", "Message": "Statement wasn't well formed, can't be processed: Unexpected term"}
    }
    assert responses[5] == {"Error": {"Code": "ResourceNotFound", "Message": "Requested resource not found"}}
    # Three eventually consistent reads of small items (the missing one too).
    assert out["ConsumedCapacity"] == [{"TableName": t, "CapacityUnits": 1.5}]


def test_batch_writes_fail_one_by_one(ddb: Any, range_table: str) -> None:
    t = range_table
    put_all(ddb, t, [item("w", 1, v="old")])
    out = ddb.batch_execute_statement(
        Statements=[
            {"Statement": f"INSERT INTO \"{t}\" VALUE {{'pk': 'w', 'sk': 2}}"},
            {"Statement": f"INSERT INTO \"{t}\" VALUE {{'pk': 'w', 'sk': 1}}"},
            {"Statement": f"UPDATE \"{t}\" SET v = 'new' WHERE pk = 'w' AND sk = 1 AND v = 'nope'",
             "ReturnValuesOnConditionCheckFailure": "ALL_OLD"},
            {"Statement": f"UPDATE \"{t}\" SET v = 'new' WHERE pk = 'w' AND sk = 1"},
            {"Statement": f"DELETE FROM \"{t}\" WHERE pk = 'w' AND sk = 2"},
        ],
        ReturnConsumedCapacity="TOTAL",
    )
    responses = out["Responses"]
    assert responses[0] == {"TableName": t}
    assert responses[1] == {
        "TableName": t,
        "Error": {"Code": "DuplicateItem", "Message": "Duplicate primary key exists in table"},
    }
    # ReturnValuesOnConditionCheckFailure is inert on a batch member: no Item (recorded).
    assert responses[2] == {
        "TableName": t,
        "Error": {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"},
    }
    assert responses[3] == {"TableName": t}
    assert responses[4] == {"TableName": t}
    assert ddb.get_item(TableName=t, Key={"pk": {"S": "w"}, "sk": {"N": "1"}})["Item"]["v"] == {"S": "new"}
    assert "Item" not in ddb.get_item(TableName=t, Key={"pk": {"S": "w"}, "sk": {"N": "2"}})
    # The three writes that succeeded, 1 WCU each (a refused write reports no capacity here).
    assert out["ConsumedCapacity"][0]["TableName"] == t
    assert out["ConsumedCapacity"][0]["CapacityUnits"] == 3.0


def test_batch_limits_and_mixing(ddb: Any, range_table: str) -> None:
    t = range_table
    with pytest.raises(ClientError) as excinfo:
        ddb.batch_execute_statement(
            Statements=[
                {"Statement": f"SELECT * FROM \"{t}\" WHERE pk = 'a' AND sk = 1"},
                {"Statement": f"DELETE FROM \"{t}\" WHERE pk = 'a' AND sk = 1"},
            ]
        )
    assert error_of(excinfo)[0] == "ValidationException"
    with pytest.raises(ClientError) as excinfo:
        ddb.batch_execute_statement(
            Statements=[{"Statement": f"SELECT * FROM \"{t}\" WHERE pk = 'a' AND sk = {i}"} for i in range(26)]
        )
    code, message = error_of(excinfo)
    assert code == "ValidationException"
    assert "Member must have length less than or equal to 25" in message


# -- ExecuteTransaction ---------------------------------------------------------------------


def test_transaction_writes_atomically(ddb: Any, range_table: str) -> None:
    t = range_table
    put_all(ddb, t, [item("x", 1, v="a"), item("x", 2, v="b")])
    out = ddb.execute_transaction(
        TransactStatements=[
            {"Statement": f"INSERT INTO \"{t}\" VALUE {{'pk': 'x', 'sk': 3}}"},
            {"Statement": f"UPDATE \"{t}\" SET v = ? WHERE pk = 'x' AND sk = 1", "Parameters": [{"S": "A"}]},
            {"Statement": f"DELETE FROM \"{t}\" WHERE pk = 'x' AND sk = 2"},
        ],
        ReturnConsumedCapacity="TOTAL",
    )
    assert out["ConsumedCapacity"] == [{"TableName": t, "CapacityUnits": 6.0, "WriteCapacityUnits": 6.0}]
    rows = ddb.query(TableName=t, KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": "x"}})["Items"]
    assert rows == [item("x", 1, v="A"), item("x", 3)]


def test_transaction_cancelled_with_one_reason_per_statement(ddb: Any, range_table: str) -> None:
    t = range_table
    put_all(ddb, t, [item("y", 1, v="a"), item("y", 2, v="b")])
    with pytest.raises(ClientError) as excinfo:
        ddb.execute_transaction(
            TransactStatements=[
                {"Statement": f"INSERT INTO \"{t}\" VALUE {{'pk': 'y', 'sk': 1}}"},
                {"Statement": f"UPDATE \"{t}\" SET v = 'b' WHERE pk = 'y' AND sk = 9"},
                {"Statement": f"INSERT INTO \"{t}\" VALUE {{'pk': 'y', 'sk': 5}}"},
                {"Statement": f"EXISTS(SELECT * FROM \"{t}\" WHERE pk = 'y' AND sk = 2 AND v = 'zzz')"},
            ]
        )
    code, message = error_of(excinfo)
    assert code == "TransactionCanceledException"
    assert message == (
        "Transaction cancelled, please refer cancellation reasons for specific reasons "
        "[DuplicateItem, ConditionalCheckFailed, None, ConditionalCheckFailed]"
    )
    reasons = excinfo.value.response["CancellationReasons"]
    assert reasons[0] == {"Code": "DuplicateItem", "Message": "Duplicate primary key exists in table"}
    assert reasons[1] == {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"}
    assert reasons[2] == {"Code": "None"}
    assert "Item" not in ddb.get_item(TableName=t, Key={"pk": {"S": "y"}, "sk": {"N": "5"}})


def test_transaction_exists_condition_passes(ddb: Any, range_table: str) -> None:
    t = range_table
    put_all(ddb, t, [item("e", 1, v="ok")])
    ddb.execute_transaction(
        TransactStatements=[
            {"Statement": f"EXISTS(SELECT * FROM \"{t}\" WHERE pk = 'e' AND sk = 1 AND v = 'ok')"},
            {"Statement": f"INSERT INTO \"{t}\" VALUE {{'pk': 'e', 'sk': 2}}"},
        ]
    )
    assert "Item" in ddb.get_item(TableName=t, Key={"pk": {"S": "e"}, "sk": {"N": "2"}})


def test_transaction_reads(ddb: Any, range_table: str) -> None:
    t = range_table
    put_all(ddb, t, [item("r", 1, v="a", w="b")])
    out = ddb.execute_transaction(
        TransactStatements=[
            {"Statement": f"SELECT v FROM \"{t}\" WHERE pk = 'r' AND sk = 1"},
            {"Statement": f"SELECT * FROM \"{t}\" WHERE pk = 'r' AND sk = 2"},
        ],
        ReturnConsumedCapacity="TOTAL",
    )
    assert out["Responses"] == [{"Item": {"v": {"S": "a"}}}, {}]
    assert out["ConsumedCapacity"] == [{"TableName": t, "CapacityUnits": 4.0, "ReadCapacityUnits": 4.0}]


def test_transaction_errors(ddb: Any, range_table: str) -> None:
    t = range_table

    def fails(*statements: str) -> tuple[str, str]:
        with pytest.raises(ClientError) as excinfo:
            ddb.execute_transaction(TransactStatements=[{"Statement": s} for s in statements])
        return error_of(excinfo)

    assert fails(
        f"SELECT * FROM \"{t}\" WHERE pk = 'a' AND sk = 1", f"DELETE FROM \"{t}\" WHERE pk = 'a' AND sk = 1"
    ) == ("ValidationException", "ExecuteTransaction API does not support both read and write operations in the same request.")
    assert fails(f"SELECT * FROM \"{t}\" WHERE pk = 'a'") == (
        "ValidationException",
        "Validation failed in TransactStatements[0]: "
        "Select statements within ExecuteTransaction must specify the primary key in the where clause.",
    )
    assert fails(f'SELECT * FROM "{t}" WHERE') == (
        "ValidationException",
        "Validation failed in TransactStatements[0]: Statement wasn't well formed, can't be processed: Unexpected term",
    )
    assert fails(f"DELETE FROM \"{t}\" WHERE pk = 'a' AND sk = 1", f"UPDATE \"{t}\" SET a = 1 WHERE pk = 'a'") == (
        "ValidationException",
        "Validation failed in TransactStatements[1]: "
        "Where clause does not contain a mandatory equality on all key attributes",
    )
    assert fails(f"DELETE FROM \"{t}\" WHERE pk = 'a' AND sk = 1", f"UPDATE \"{t}\" SET a = 1 WHERE pk = 'a' AND sk = 1") == (
        "ValidationException",
        "Transaction request cannot include multiple operations on one item",
    )
    code, _ = fails(*[f"DELETE FROM \"{t}\" WHERE pk = 'a' AND sk = {i}" for i in range(101)])
    assert code == "ValidationException"


def test_transaction_client_request_token(ddb: Any, range_table: str) -> None:
    t = range_table
    token = uuid.uuid4().hex
    statements = [{"Statement": f"INSERT INTO \"{t}\" VALUE {{'pk': 'tok', 'sk': 1}}"}]
    ddb.execute_transaction(TransactStatements=statements, ClientRequestToken=token)
    # The same request again is answered as done, not run again (which would be a DuplicateItem).
    ddb.execute_transaction(TransactStatements=statements, ClientRequestToken=token)
    other = [{"Statement": f"INSERT INTO \"{t}\" VALUE {{'pk': 'tok', 'sk': 2}}"}]
    with pytest.raises(ClientError) as excinfo:
        ddb.execute_transaction(TransactStatements=other, ClientRequestToken=token)
    assert error_of(excinfo)[0] == "IdempotentParameterMismatchException"


# -- per-statement rules (recorded against the service in 2026, docs/decisions.md) ---------

BATCH_KEY = "Select statements within BatchExecuteStatement must specify the primary key in the where clause."
TRANSACTION_KEY = "Select statements within ExecuteTransaction must specify the primary key in the where clause."


def test_batch_select_must_name_the_key_and_nothing_else(ddb: Any, range_table: str) -> None:
    t = range_table
    put_all(ddb, t, [item("k", 1, flag="one"), item("k", 2, flag="two")])
    select = f'SELECT sk FROM "{t}" WHERE '
    out = ddb.batch_execute_statement(
        Statements=[
            {"Statement": select + "pk IN ['k'] AND sk = 1"},
            {"Statement": select + "(sk = 2) AND pk = 'k' AND pk = 'k'"},
            {"Statement": select + "pk = 'k' AND sk = 1 AND flag = 'one'"},
            {"Statement": select + "pk = 'k' AND sk = 1 AND pk = 'other'"},
            {"Statement": select + "pk IN ['k', 'j'] AND sk = 1"},
            {"Statement": select + "pk = 'k' AND sk > 0"},
        ]
    )
    refused = {"Error": {"Code": "ValidationError", "Message": BATCH_KEY}}
    assert out["Responses"] == [
        {"TableName": t, "Item": {"sk": {"N": "1"}}},
        {"TableName": t, "Item": {"sk": {"N": "2"}}},
        refused,
        refused,
        refused,
        refused,
    ]
    # The same rule in a transaction, with its own words.
    tx = ddb.execute_transaction(TransactStatements=[{"Statement": select + "pk IN ['k'] AND sk IN [2]"}])
    assert tx["Responses"] == [{"Item": {"sk": {"N": "2"}}}]
    with pytest.raises(ClientError) as excinfo:
        ddb.execute_transaction(TransactStatements=[{"Statement": select + "pk IN ['other'] AND pk = 'k' AND sk = 1"}])
    assert error_of(excinfo) == ("ValidationException", f"Validation failed in TransactStatements[0]: {TRANSACTION_KEY}")


def test_batch_members_honour_returning(ddb: Any, range_table: str) -> None:
    t = range_table
    put_all(ddb, t, [item("r", 1, data="old", keep="same"), item("r", 2, data="old"), item("r", 3, data="gone")])
    out = ddb.batch_execute_statement(
        Statements=[
            {"Statement": f"UPDATE \"{t}\" SET data = 'new' WHERE pk = 'r' AND sk = 1 RETURNING ALL NEW *"},
            {"Statement": f"UPDATE \"{t}\" SET data = 'newer' WHERE pk = 'r' AND sk = 1 RETURNING MODIFIED NEW *"},
            {"Statement": f"UPDATE \"{t}\" REMOVE data WHERE pk = 'r' AND sk = 2 RETURNING MODIFIED NEW *"},
            {"Statement": f"DELETE FROM \"{t}\" WHERE pk = 'r' AND sk = 3 RETURNING ALL OLD *"},
            {"Statement": f"DELETE FROM \"{t}\" WHERE pk = 'r' AND sk = 1 RETURNING MODIFIED OLD *"},
        ]
    )
    assert out["Responses"] == [
        {"TableName": t, "Item": item("r", 1, data="new", keep="same")},
        {"TableName": t, "Item": {"data": {"S": "newer"}}},
        # An empty MODIFIED projection: no Item at all, the table still echoed.
        {"TableName": t},
        {"TableName": t, "Item": item("r", 3, data="gone")},
        {
            "Error": {
                "Code": "ValidationError",
                "Message": "Invalid returning clause: RETURNING MODIFIED OLD *. "
                "Only RETURNING ALL OLD * is allowed in DELETE statements.",
            }
        },
    ]
    assert "Item" not in ddb.get_item(TableName=t, Key={"pk": {"S": "r"}, "sk": {"N": "3"}})
    assert ddb.get_item(TableName=t, Key={"pk": {"S": "r"}, "sk": {"N": "2"}})["Item"] == item("r", 2)


@pytest.mark.parametrize("option", ["ALL_OLD", "NONE", None])
def test_batch_member_return_values_on_condition_failure_is_inert(ddb: Any, range_table: str, option: str | None) -> None:
    t = range_table
    put_all(ddb, t, [item("c", 1, val="here")])
    member: dict[str, Any] = {"Statement": f"UPDATE \"{t}\" SET touched = 'yes' WHERE pk = 'c' AND sk = 1 AND val = 'no'"}
    if option is not None:
        member["ReturnValuesOnConditionCheckFailure"] = option
    out = ddb.batch_execute_statement(Statements=[member])
    assert out["Responses"] == [
        {"TableName": t, "Error": {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"}}
    ]


def test_transaction_refuses_returning(ddb: Any, range_table: str) -> None:
    t = range_table
    put_all(ddb, t, [item("x", 1, data="old")])
    for statement in (
        f"UPDATE \"{t}\" SET data = 'new' WHERE pk = 'x' AND sk = 1 RETURNING ALL NEW *",
        f"DELETE FROM \"{t}\" WHERE pk = 'x' AND sk = 1 RETURNING ALL OLD *",
    ):
        with pytest.raises(ClientError) as excinfo:
            ddb.execute_transaction(
                TransactStatements=[{"Statement": f"INSERT INTO \"{t}\" VALUE {{'pk': 'x', 'sk': 2}}"}, {"Statement": statement}]
            )
        assert error_of(excinfo) == (
            "ValidationException",
            "Validation failed in TransactStatements[1]: RETURNING clause is not supported in ExecuteTransaction.",
        )
    assert ddb.get_item(TableName=t, Key={"pk": {"S": "x"}, "sk": {"N": "1"}})["Item"] == item("x", 1, data="old")
    assert "Item" not in ddb.get_item(TableName=t, Key={"pk": {"S": "x"}, "sk": {"N": "2"}})


def test_delete_of_a_missing_key_with_a_condition_deletes_nothing_and_succeeds(ddb: Any, range_table: str) -> None:
    t = range_table
    put_all(ddb, t, [item("d", 1, name="alpha")])
    # Batch and transaction members as ExecuteStatement (tests/test_partiql.py::test_delete).
    out = ddb.batch_execute_statement(
        Statements=[
            {"Statement": f"DELETE FROM \"{t}\" WHERE pk = 'nobody' AND sk = 1 AND name = 'x'"},
            {"Statement": f"DELETE FROM \"{t}\" WHERE pk = 'd' AND sk = 1 AND name = 'beta'"},
        ]
    )
    assert out["Responses"] == [
        {"TableName": t},
        {"TableName": t, "Error": {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"}},
    ]
    ddb.execute_transaction(
        TransactStatements=[
            {"Statement": f"DELETE FROM \"{t}\" WHERE pk = 'nobody' AND sk = 2 AND name = 'x'"},
            {"Statement": f"UPDATE \"{t}\" SET seen = 1 WHERE pk = 'd' AND sk = 1"},
        ]
    )
    assert ddb.get_item(TableName=t, Key={"pk": {"S": "d"}, "sk": {"N": "1"}})["Item"]["seen"] == {"N": "1"}
