"""PartiQL reads of a multi-attribute-key GSI, as DynamoDB answered them in 2026.

Each case is a request sent as the public conformance suite
paritysuite/dynamodb-conformance sent it to AWS (tests/tier2/partiql/
multiAttributeIndex and tests/tier3/error-messages/partiqlMultiAttributeIndex),
with the code and message AWS answered: the refusal follows the index, not the
table; syntax, literal and parameter errors come ahead of it; key types, the
WHERE requirements and COUNT(*) come after it.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import error_of

REFUSED = "PartiQL statements cannot be executed on tables with multi-attribute HASH keys or multi-attribute RANGE keys."
NOT_WELL_FORMED = "Statement wasn't well formed, can't be processed: "
BATCH_NEEDS_KEY = "Select statements within BatchExecuteStatement must specify the primary key in the where clause."


def _gsi_table(ddb: Any, tag: str, hash_keys: list[str], range_keys: list[str], item: dict[str, str]) -> str:
    """A table keyed by `id` with one GSI `gsi` over the given HASH and RANGE attributes."""
    name = f"t-multi-{tag}-{uuid.uuid4().hex[:8]}"
    ddb.create_table(
        TableName=name,
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"} for a in ["id", *hash_keys, *range_keys]],
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "gsi",
                "KeySchema": [{"AttributeName": a, "KeyType": "HASH"} for a in hash_keys]
                + [{"AttributeName": a, "KeyType": "RANGE"} for a in range_keys],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
    )
    ddb.put_item(TableName=name, Item={k: {"S": v} for k, v in item.items()})
    return name


@pytest.fixture(scope="module")
def tables(ddb: Any) -> dict[str, str]:
    row = {"id": "i1", "h1": "a", "h2": "x", "r1": "m"}
    return {
        "hhrr": _gsi_table(ddb, "hhrr", ["h1", "h2"], ["r1", "r2"], {**row, "r2": "n"}),
        "hhr": _gsi_table(ddb, "hhr", ["h1", "h2"], ["r1"], row),
        "ctrl": _gsi_table(ddb, "ctrl", ["h1"], ["r1"], row),
    }


def answer(ddb: Any, statement: str, parameters: list[dict[str, Any]] | None = None) -> tuple[str, str]:
    extra = {"Parameters": parameters} if parameters else {}
    with pytest.raises(ClientError) as excinfo:
        ddb.execute_statement(Statement=statement, **extra)
    return error_of(excinfo)


@pytest.mark.parametrize(
    ("which", "rest", "message"),
    [
        ("hhrr", " WHERE h1 = 'a'", REFUSED),
        ("hhr", " WHERE h1 = 'a'", REFUSED),
        ("hhrr", " WHERE h1 = 'a' AND h2 = 'x' ORDER BY r1 DESC", REFUSED),
        ("hhr", " WHERE", NOT_WELL_FORMED + "Unexpected term"),
        ("hhr", " WHERE h1 = 1e99999999999", NOT_WELL_FORMED),
        ("hhr", " WHERE h1 = 5", REFUSED),
        ("hhr", " WHERE id = 'i1'", REFUSED),
        ("hhr", "", REFUSED),
    ],
)
def test_select_on_a_multi_attribute_gsi(ddb: Any, tables: dict[str, str], which: str, rest: str, message: str) -> None:
    assert answer(ddb, f'SELECT * FROM "{tables[which]}"."gsi"{rest}') == ("ValidationException", message)


def test_count_and_projection_on_a_multi_attribute_gsi(ddb: Any, tables: dict[str, str]) -> None:
    assert answer(ddb, f'SELECT COUNT(*) FROM "{tables["hhr"]}"."gsi"') == ("ValidationException", REFUSED)
    statement = f"SELECT id FROM \"{tables['hhrr']}\".\"gsi\" WHERE h1 = 'a' AND h2 = 'x' ORDER BY r1 DESC"
    assert answer(ddb, statement) == ("ValidationException", REFUSED)


def test_a_parameter_that_is_not_a_number_comes_first(ddb: Any, tables: dict[str, str]) -> None:
    statement = f'SELECT * FROM "{tables["hhr"]}"."gsi" WHERE h1 = ?'
    assert answer(ddb, statement, [{"N": "1e99999999999"}]) == (
        "ValidationException",
        "The parameter cannot be converted to a numeric value: 1e99999999999",
    )


def test_the_rest_of_the_table_reads_and_writes(ddb: Any, tables: dict[str, str]) -> None:
    t = tables["hhrr"]
    assert len(ddb.execute_statement(Statement=f"SELECT * FROM \"{t}\" WHERE id = 'i1'")["Items"]) == 1
    ddb.execute_statement(Statement=f"INSERT INTO \"{t}\" VALUE {{'id': 'n1'}}")
    assert "Item" in ddb.get_item(TableName=t, Key={"id": {"S": "n1"}}, ConsistentRead=True)
    ddb.execute_statement(Statement=f"UPDATE \"{t}\" SET a = 1 WHERE id = 'i1'")
    assert ddb.get_item(TableName=t, Key={"id": {"S": "i1"}}, ConsistentRead=True)["Item"]["a"] == {"N": "1"}
    assert ddb.execute_statement(Statement=f"DELETE FROM \"{t}\" WHERE id = 'zz'")["Items"] == []


def test_a_batch_fails_only_the_member_reading_the_index(ddb: Any, tables: dict[str, str]) -> None:
    out = ddb.batch_execute_statement(
        Statements=[
            {"Statement": f"SELECT * FROM \"{tables['ctrl']}\".\"gsi\" WHERE h1 = 'a' AND r1 = 'm'"},
            {"Statement": f"SELECT * FROM \"{tables['hhr']}\".\"gsi\" WHERE h1 = 'a' AND h2 = 'x' AND r1 = 'm'"},
            {"Statement": f"SELECT * FROM \"{tables['hhr']}\" WHERE id = 'i1'"},
        ]
    )
    control, multi, base = out["Responses"]
    assert control["Error"] == {"Code": "ValidationError", "Message": BATCH_NEEDS_KEY}
    assert multi["Error"] == {"Code": "ValidationError", "Message": REFUSED}
    assert "Error" not in base and base["Item"]["id"] == {"S": "i1"}
