"""Index-qualified PartiQL, as DynamoDB answered it in 2026.

Each case is a request the public conformance suites sent to AWS, with what AWS
answered: paritysuite/dynamodb-conformance tests/tier2/partiql/executeStatementIndex
(eu-west-1, the compositeIndexed fixture) and nubo-db/dynamodb-conformance
tests/tier2/partiql/indexQualifier, batchExecuteStatement and executeTransaction
(eu-west-2, the partiqlIdx capture fixture, whose index names appear in messages).
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import error_of

BATCH_KEY = "Select statements within BatchExecuteStatement must specify the primary key in the where clause."


def _s(*names: str) -> list[dict[str, str]]:
    return [{"AttributeName": n, "AttributeType": "S"} for n in names]


def _keys(hash_key: str, range_key: str | None = None) -> list[dict[str, str]]:
    schema = [{"AttributeName": hash_key, "KeyType": "HASH"}]
    if range_key:
        schema.append({"AttributeName": range_key, "KeyType": "RANGE"})
    return schema


def _projection(kind: str, *extra: str) -> dict[str, Any]:
    return {"ProjectionType": kind, **({"NonKeyAttributes": list(extra)} if extra else {})}


@pytest.fixture(scope="module")
def indexed(ddb: Any) -> str:
    """paritysuite's compositeIndexedTableDef with its one item."""
    name = f"t-cidx-{uuid.uuid4().hex[:8]}"
    ddb.create_table(
        TableName=name,
        KeySchema=_keys("pk", "sk"),
        AttributeDefinitions=_s("pk", "sk", "lsi1sk", "lsi2sk"),
        BillingMode="PAY_PER_REQUEST",
        LocalSecondaryIndexes=[
            {
                "IndexName": "lsi1",
                "KeySchema": _keys("pk", "lsi1sk"),
                "Projection": _projection("ALL"),
            },
            {
                "IndexName": "lsi2",
                "KeySchema": _keys("pk", "lsi2sk"),
                "Projection": _projection("INCLUDE", "lsi1sk"),
            },
        ],
        GlobalSecondaryIndexes=[
            {"IndexName": "gsi1", "KeySchema": _keys("lsi1sk"), "Projection": _projection("ALL")},
            {
                "IndexName": "gsi2",
                "KeySchema": _keys("lsi1sk", "lsi2sk"),
                "Projection": _projection("INCLUDE", "data"),
            },
        ],
    )
    ddb.put_item(
        TableName=name,
        Item={
            "pk": {"S": "pq-idx-select"},
            "sk": {"S": "s1"},
            "lsi1sk": {"S": "pq-gsi-a"},
            "lsi2sk": {"S": "pq-lsi-b"},
            "data": {"S": "one"},
        },
    )
    return name


ITEMS: list[dict[str, Any]] = [
    {
        "pk": "p",
        "sk": "s1",
        "gsiPk": "x",
        "gsiPk2": "y",
        "lsiSk": "l1",
        "lsiSk2": "k1",
        "lsiSk3": "m1",
        "projattr": "proj1",
        "nonproj": "np1",
    },
    {
        "pk": "p",
        "sk": "s2",
        "gsiPk": "z",
        "gsiPk2": "y",
        "lsiSk": "l2",
        "lsiSk2": "k2",
        "lsiSk3": "m2",
        "projattr": "proj2",
        "nonproj": "np2",
    },
    {"pk": "p", "sk": "s3", "nonproj": "np3"},
    {
        "pk": "p",
        "sk": "s4",
        "gsiPk": "x",
        "gsiPk2": "y",
        "lsiSk": "l4",
        "lsiSk2": "k4",
        "lsiSk3": "m4",
        "projattr": "proj4",
        "nonproj": "np4",
    },
    {"pk": "q", "sk": "s5", "gsiPk2": "y2", "projattr": "proj5", "nonproj": "np5"},
]


@pytest.fixture(scope="module")
def capture(ddb: Any) -> str:
    """nubo-db's partiqlIndexTableDef, the capture fixture, with its five rows."""
    name = f"t-pidx-{uuid.uuid4().hex[:8]}"
    ddb.create_table(
        TableName=name,
        KeySchema=_keys("pk", "sk"),
        AttributeDefinitions=_s("pk", "sk", "gsiPk", "gsiPk2", "lsiSk", "lsiSk2", "lsiSk3"),
        BillingMode="PAY_PER_REQUEST",
        GlobalSecondaryIndexes=[
            {"IndexName": "gsi-all", "KeySchema": _keys("gsiPk"), "Projection": _projection("ALL")},
            {
                "IndexName": "gsi-inc",
                "KeySchema": _keys("gsiPk2"),
                "Projection": _projection("INCLUDE", "projattr"),
            },
            {
                "IndexName": "gsi-keys",
                "KeySchema": _keys("gsiPk2"),
                "Projection": _projection("KEYS_ONLY"),
            },
        ],
        LocalSecondaryIndexes=[
            {
                "IndexName": "lsi-all",
                "KeySchema": _keys("pk", "lsiSk"),
                "Projection": _projection("ALL"),
            },
            {
                "IndexName": "lsi-keys",
                "KeySchema": _keys("pk", "lsiSk2"),
                "Projection": _projection("KEYS_ONLY"),
            },
            {
                "IndexName": "lsi-inc",
                "KeySchema": _keys("pk", "lsiSk3"),
                "Projection": _projection("INCLUDE", "projattr"),
            },
        ],
    )
    for row in ITEMS:
        ddb.put_item(TableName=name, Item={k: {"S": v} for k, v in row.items()})
    return name


def select(ddb: Any, statement: str, **extra: Any) -> dict[str, Any]:
    res = ddb.execute_statement(Statement=statement, ReturnConsumedCapacity="INDEXES", **extra)
    cc = res.get("ConsumedCapacity", {})
    return {
        "items": res.get("Items", []),
        "next": res.get("NextToken"),
        "total": cc.get("CapacityUnits", 0),
        "table": cc.get("Table", {}).get("CapacityUnits", 0),
        "gsi": {k: v["CapacityUnits"] for k, v in cc.get("GlobalSecondaryIndexes", {}).items()},
        "lsi": {k: v["CapacityUnits"] for k, v in cc.get("LocalSecondaryIndexes", {}).items()},
    }


def refused(ddb: Any, statement: str, **extra: Any) -> str:
    with pytest.raises(ClientError) as excinfo:
        ddb.execute_statement(Statement=statement, **extra)
    code, message = error_of(excinfo)
    assert code == "ValidationException"
    return message


def sks(rows: list[dict[str, Any]]) -> list[str]:
    return sorted(r["sk"]["S"] for r in rows)


# ── paritysuite executeStatementIndex.test.ts ────────────────────────────────


def test_gsi_read_with_index_partition_key(ddb: Any, indexed: str) -> None:
    items = ddb.execute_statement(
        Statement=f'SELECT * FROM "{indexed}"."gsi1" WHERE lsi1sk = \'pq-gsi-a\''
    )["Items"]
    assert [i["pk"]["S"] for i in items] == ["pq-idx-select"]


def test_gsi_read_without_index_key_scans_the_index(ddb: Any, indexed: str) -> None:
    items = ddb.execute_statement(
        Statement=f'SELECT * FROM "{indexed}"."gsi1" WHERE pk = \'pq-idx-select\''
    )["Items"]
    assert [i["sk"]["S"] for i in items] == ["s1"]


def test_lsi_read_accepts_consistent_read(ddb: Any, indexed: str) -> None:
    res = ddb.execute_statement(
        Statement=f'SELECT * FROM "{indexed}"."lsi1" WHERE pk = \'pq-idx-select\'',
        ConsistentRead=True,
    )
    assert len(res["Items"]) == 1


def test_lsi_reaches_an_unprojected_column(ddb: Any, indexed: str) -> None:
    statement = f"SELECT data FROM \"{indexed}\".\"lsi2\" WHERE pk = 'pq-idx-select' AND lsi2sk = 'pq-lsi-b'"
    assert ddb.execute_statement(Statement=statement)["Items"] == [{"data": {"S": "one"}}]


def test_gsi_refuses_unprojected_columns_in_statement_order(ddb: Any, indexed: str) -> None:
    message = refused(
        ddb, f'SELECT alternate, mymap FROM "{indexed}"."gsi2" WHERE lsi1sk = \'pq-gsi-a\''
    )
    assert message == (
        "One or more parameter values were invalid: Global secondary index gsi2 does not project [alternate, mymap]"
    )
    message = refused(ddb, f'SELECT alternate FROM "{indexed}"."gsi2"')
    assert (
        message
        == "One or more parameter values were invalid: Global secondary index gsi2 does not project [alternate]"
    )


def test_batch_select_refuses_index_and_partial_key_per_slot(ddb: Any, indexed: str) -> None:
    res = ddb.batch_execute_statement(
        Statements=[
            {"Statement": f'SELECT * FROM "{indexed}"."gsi1" WHERE lsi1sk = \'pq-gsi-a\''},
            {"Statement": f"SELECT * FROM \"{indexed}\" WHERE pk = 'pq-idx-select'"},
        ]
    )
    assert [r["Error"] for r in res["Responses"]] == [
        {"Code": "ValidationError", "Message": BATCH_KEY}
    ] * 2


# ── nubo-db indexQualifier.test.ts ───────────────────────────────────────────


def test_membership_follows_the_index(ddb: Any, capture: str) -> None:
    assert sks(
        select(ddb, f'SELECT pk, sk FROM "{capture}"."gsi-all" WHERE gsiPk = \'x\'')["items"]
    ) == ["s1", "s4"]
    rows = select(ddb, f"SELECT pk, sk FROM \"{capture}\" WHERE pk = 'p'")["items"]
    assert sks(rows) == ["s1", "s2", "s3", "s4"]


@pytest.mark.parametrize(
    ("statement", "attrs"),
    [
        ('SELECT * FROM "{t}"."gsi-keys" WHERE gsiPk2 = \'y\'', ["gsiPk2", "pk", "sk"]),
        ('SELECT * FROM "{t}"."gsi-inc" WHERE gsiPk2 = \'y\'', ["gsiPk2", "pk", "projattr", "sk"]),
        ('SELECT * FROM "{t}"."lsi-keys" WHERE pk = \'p\'', ["lsiSk2", "pk", "sk"]),
    ],
)
def test_star_is_the_index_projection(
    ddb: Any, capture: str, statement: str, attrs: list[str]
) -> None:
    rows = select(ddb, statement.format(t=capture))["items"]
    assert len(rows) == 3
    assert all(sorted(row) == attrs for row in rows)


def test_star_on_a_narrow_index_does_not_reach_back(ddb: Any, capture: str) -> None:
    gsi = select(ddb, f'SELECT * FROM "{capture}"."gsi-keys" WHERE gsiPk2 = \'y\'')
    assert gsi["table"] == 0 and gsi["gsi"]["gsi-keys"] == gsi["total"]
    lsi = select(ddb, f'SELECT * FROM "{capture}"."lsi-keys" WHERE pk = \'p\'')
    assert lsi["table"] == 0 and lsi["lsi"]["lsi-keys"] == lsi["total"]


def test_lsi_reach_back_is_charged_on_the_table_arm(ddb: Any, capture: str) -> None:
    r = select(ddb, f'SELECT nonproj FROM "{capture}"."lsi-keys" WHERE pk = \'p\'')
    assert len(r["items"]) == 3 and all("S" in row["nonproj"] for row in r["items"])
    assert r["table"] > 0
    assert select(ddb, f'SELECT lsiSk2 FROM "{capture}"."lsi-keys" WHERE pk = \'p\'')["table"] == 0


def test_gsi_refuses_an_unprojected_column(ddb: Any, capture: str) -> None:
    refused(ddb, f'SELECT nonproj FROM "{capture}"."gsi-inc" WHERE gsiPk2 = \'y\'')


def test_reach_back_charged_on_rows_walked(ddb: Any, capture: str) -> None:
    none = select(
        ddb,
        f"SELECT nonproj FROM \"{capture}\".\"lsi-inc\" WHERE pk = 'p' AND projattr = 'no-such-value'",
    )
    every = select(ddb, f'SELECT nonproj FROM "{capture}"."lsi-inc" WHERE pk = \'p\'')
    assert (len(none["items"]), len(every["items"])) == (0, 3)
    assert none["table"] == every["table"]
    one = select(ddb, f'SELECT nonproj FROM "{capture}"."lsi-keys" WHERE pk = \'p\'', Limit=1)
    every = select(ddb, f'SELECT nonproj FROM "{capture}"."lsi-keys" WHERE pk = \'p\'')
    assert len(one["items"]) == 1 and one["table"] < every["table"]


@pytest.mark.parametrize(
    "statement",
    [
        "SELECT pk FROM \"{t}\".\"gsi-inc\" WHERE gsiPk2 = 'y' AND nonproj = 'np1'",
        "SELECT pk FROM \"{t}\".\"lsi-keys\" WHERE pk = 'p' AND nonproj = 'np1'",
        'SELECT pk FROM "{t}"."gsi-inc" WHERE gsiPk2 = \'y\' AND nonproj IS MISSING',
        'SELECT pk FROM "{t}"."gsi-inc" WHERE gsiPk2 = \'y\' AND nonproj IS NOT MISSING',
        "SELECT pk FROM \"{t}\".\"gsi-inc\" WHERE gsiPk2 = 'y' AND begins_with(nonproj, 'np')",
        "SELECT pk FROM \"{t}\".\"gsi-inc\" WHERE gsiPk2 = 'y' AND NOT nonproj = 'np1'",
        "SELECT pk FROM \"{t}\".\"gsi-inc\" WHERE gsiPk2 IN ['y', 'z'] AND nonproj = 'np1'",
        "SELECT pk FROM \"{t}\".\"lsi-keys\" WHERE pk = 'p' AND lsiSk2 BETWEEN 'k1' AND 'k4' AND nonproj = 'np1'",
    ],
)
def test_keyed_read_refuses_an_unprojected_filter(ddb: Any, capture: str, statement: str) -> None:
    refused(ddb, statement.format(t=capture))


@pytest.mark.parametrize(
    ("statement", "count"),
    [
        ('SELECT pk FROM "{t}"."gsi-inc" WHERE nonproj = \'np1\'', 0),
        ('SELECT pk FROM "{t}"."lsi-keys" WHERE nonproj = \'np1\'', 0),
        ("SELECT pk FROM \"{t}\".\"gsi-inc\" WHERE nonproj = 'np1' AND nonproj = 'np2'", 0),
        ("SELECT pk FROM \"{t}\".\"gsi-inc\" WHERE gsiPk2 = 'y' AND projattr = 'proj1'", 1),
        ('SELECT pk FROM "{t}"."gsi-inc" WHERE gsiPk2 = \'y\' AND projattr IS NOT MISSING', 3),
    ],
)
def test_unkeyed_or_projected_filter_runs(
    ddb: Any, capture: str, statement: str, count: int
) -> None:
    assert len(select(ddb, statement.format(t=capture))["items"]) == count


def test_negated_filter_on_an_absent_attribute_matches_every_index_row(
    ddb: Any, capture: str
) -> None:
    rows = select(ddb, f'SELECT pk, sk FROM "{capture}"."gsi-keys" WHERE NOT nonproj = \'np1\'')[
        "items"
    ]
    assert sks(rows) == ["s1", "s2", "s4", "s5"]


def test_unprojected_filter_inside_an_or_branch_runs(ddb: Any, capture: str) -> None:
    statement = (
        f'SELECT pk, sk FROM "{capture}"."gsi-inc" '
        "WHERE (gsiPk2 = 'y' AND nonproj = 'np1') OR (gsiPk2 = 'y2')"
    )
    assert [r["sk"]["S"] for r in select(ddb, statement)["items"]] == ["s5"]


def test_pagination_across_a_qualified_read(ddb: Any, capture: str) -> None:
    statement = f'SELECT pk, sk FROM "{capture}"."gsi-all" WHERE gsiPk = \'x\''
    first = select(ddb, statement, Limit=1)
    assert len(first["items"]) == 1 and first["next"]
    second = select(ddb, statement, NextToken=first["next"])
    assert sks(first["items"] + second["items"]) == ["s1", "s4"]


def test_token_from_one_index_is_refused_on_another(ddb: Any, capture: str) -> None:
    first = select(ddb, f'SELECT pk, sk FROM "{capture}"."gsi-inc" WHERE gsiPk2 = \'y\'', Limit=1)
    assert first["next"]
    refused(
        ddb,
        f'SELECT pk, sk FROM "{capture}"."gsi-keys" WHERE gsiPk2 = \'y\'',
        NextToken=first["next"],
    )


@pytest.mark.parametrize("index", ["gsi-all", "no-such-index"])
def test_insert_with_a_qualifier_is_a_parse_error(ddb: Any, capture: str, index: str) -> None:
    message = refused(
        ddb, f"INSERT INTO \"{capture}\".\"{index}\" VALUE {{'pk': 'w1', 'sk': 'w1'}}"
    )
    assert "FROM clause may only contain a single table name" in message


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE \"{t}\".\"gsi-all\" SET projattr = 'z' WHERE pk = 'p' AND sk = 's1'",
        "DELETE FROM \"{t}\".\"gsi-all\" WHERE pk = 'p' AND sk = 's1'",
    ],
)
def test_update_and_delete_with_a_qualifier_are_refused(
    ddb: Any, capture: str, statement: str
) -> None:
    assert "This operation is not supported on an index" in refused(
        ddb, statement.format(t=capture)
    )
    assert sks(select(ddb, f"SELECT pk, sk FROM \"{capture}\" WHERE pk = 'p'")["items"]) == [
        "s1",
        "s2",
        "s3",
        "s4",
    ]


def test_capacity_lands_on_the_index_arm(ddb: Any, capture: str) -> None:
    gsi = select(ddb, f'SELECT pk FROM "{capture}"."gsi-all" WHERE gsiPk = \'x\'')
    assert gsi["table"] == 0 and gsi["gsi"]["gsi-all"] > 0 and gsi["gsi"]["gsi-all"] == gsi["total"]
    lsi = select(ddb, f'SELECT pk FROM "{capture}"."lsi-all" WHERE pk = \'p\'')
    assert lsi["table"] == 0 and lsi["lsi"]["lsi-all"] > 0 and lsi["lsi"]["lsi-all"] == lsi["total"]
    strong = select(
        ddb, f'SELECT pk FROM "{capture}"."lsi-all" WHERE pk = \'p\'', ConsistentRead=True
    )
    assert (
        strong["lsi"]["lsi-all"] == lsi["lsi"]["lsi-all"] * 2
        and strong["total"] == lsi["total"] * 2
    )


def test_consistent_read_doubles_both_arms_of_a_reach_back(ddb: Any, capture: str) -> None:
    statement = f'SELECT nonproj FROM "{capture}"."lsi-keys" WHERE pk = \'p\''
    eventual = select(ddb, statement)
    strong = select(ddb, statement, ConsistentRead=True)
    assert strong["table"] == eventual["table"] * 2
    assert strong["lsi"]["lsi-keys"] == eventual["lsi"]["lsi-keys"] * 2


def test_consistent_read_on_a_gsi_is_refused(ddb: Any, capture: str) -> None:
    refused(ddb, f'SELECT pk FROM "{capture}"."gsi-all" WHERE gsiPk = \'x\'', ConsistentRead=True)


# ── nubo-db batchExecuteStatement / executeTransaction, index cases ───────────


@pytest.mark.parametrize(
    "statement",
    [
        'SELECT * FROM "{t}"."gsi-all" WHERE gsiPk = \'x\'',
        "SELECT * FROM \"{t}\".\"gsi-all\" WHERE pk = 'p' AND sk = 's1' AND gsiPk = 'x'",
        "SELECT * FROM \"{t}\" WHERE projattr = 'a'",
    ],
)
def test_batch_select_must_name_the_table_key(ddb: Any, capture: str, statement: str) -> None:
    res = ddb.batch_execute_statement(Statements=[{"Statement": statement.format(t=capture)}])
    slot = res["Responses"][0]
    assert slot["Error"]["Code"] == "ValidationError"
    assert "must specify the primary key in the where clause" in slot["Error"]["Message"]
    assert "TableName" not in slot


def test_transaction_refuses_an_index_read_outright(ddb: Any, capture: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        ddb.execute_transaction(
            TransactStatements=[
                {"Statement": f'SELECT * FROM "{capture}"."gsi-all" WHERE gsiPk = \'x\''}
            ]
        )
    code, message = error_of(excinfo)
    assert code == "ValidationException"
    assert "Reads on indices are not supported within transactions" in message
    res = ddb.execute_transaction(
        TransactStatements=[
            {"Statement": f"SELECT * FROM \"{capture}\" WHERE pk = 'p' AND sk = 's1'"}
        ]
    )
    assert len(res["Responses"]) == 1


# ── the wording of those refusals, as nubo-db's tier3 indexQualifier file pins it ──

_INVALID = "One or more parameter values were invalid: "


@pytest.mark.parametrize(
    ("statement", "extra", "message"),
    [
        (
            "SELECT pk FROM \"{t}\".\"gsi-inc\" WHERE gsiPk2 = 'y' AND nonproj = 'np1'",
            {},
            _INVALID
            + "Secondary index gsi-inc does not project one or more filter attributes: [nonproj]",
        ),
        (
            "SELECT pk FROM \"{t}\".\"lsi-keys\" WHERE pk = 'p' AND nonproj = 'np1'",
            {},
            _INVALID
            + "Secondary index lsi-keys does not project one or more filter attributes: [nonproj]",
        ),
        (
            'SELECT nonproj FROM "{t}"."gsi-inc" WHERE gsiPk2 = \'y\'',
            {},
            _INVALID + "Global secondary index gsi-inc does not project [nonproj]",
        ),
        (
            'SELECT * FROM "{t}"."no-such-index" WHERE pk = \'p\'',
            {},
            "The table does not have the specified index",
        ),
        (
            'SELECT * FROM "{t}"."{t}" WHERE pk = \'p\'',
            {},
            "The table does not have the specified index",
        ),
        (
            'SELECT * FROM "{t}"."gsi-all"."extra" WHERE pk = \'p\'',
            {},
            "A path may contain at most 2 components in the FROM clause",
        ),
        ('SELECT * FROM "{t}"."" WHERE pk = \'p\'', {}, "Path component cannot be an empty string"),
        (
            'SELECT * FROM "{t}"."gsi-all" WHERE gsiPk = \'x\'',
            {"ConsistentRead": True},
            "Strongly consistent read is not supported on Global Secondary Indexes",
        ),
    ],
)
def test_index_refusal_wording(
    ddb: Any, capture: str, statement: str, extra: dict[str, Any], message: str
) -> None:
    assert refused(ddb, statement.format(t=capture), **extra) == message


def test_transaction_index_read_wording(ddb: Any, capture: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        ddb.execute_transaction(
            TransactStatements=[
                {"Statement": f'SELECT * FROM "{capture}"."gsi-all" WHERE gsiPk = \'x\''}
            ]
        )
    assert error_of(excinfo) == (
        "ValidationException",
        "Validation failed in TransactStatements[0]: Reads on indices are not supported within transactions.",
    )
