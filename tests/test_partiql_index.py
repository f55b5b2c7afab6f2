"""Index-qualified PartiQL (`"T"."Index"`) through boto3: what a read may ask of an index, and the writes refused.

Every expectation follows answers the service gave in 2026 as other
emulators' suites recorded them (docs/decisions.md, PartiQL section). The
fixture mirrors theirs: `s3` carries no index attribute, so every index
leaves it out; `nonproj` is projected by no non-ALL index.
"""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import error_of, put_all

INDEX_WRITE = "This operation is not supported on an index"
INSERT_INDEX = "FROM clause may only contain a single table name in data manipulation statements"
NO_INDEX = "The table does not have the specified index"
MULTI = "PartiQL statements cannot be executed on tables with multi-attribute HASH keys or multi-attribute RANGE keys."
FILTER = "One or more parameter values were invalid: Secondary index {} does not project one or more filter attributes: [{}]"
BATCH_KEY = "Select statements within BatchExecuteStatement must specify the primary key in the where clause."


def _s(name: str) -> dict[str, str]:
    return {"AttributeName": name, "AttributeType": "S"}


def _key(*names: tuple[str, str]) -> list[dict[str, str]]:
    return [{"AttributeName": name, "KeyType": kind} for name, kind in names]


@pytest.fixture
def indexed(ddb: Any, table_name: str) -> str:
    """pk/sk (S) with a GSI per projection type, two LSIs and a multi-attribute GSI."""
    ddb.create_table(
        TableName=table_name,
        BillingMode="PAY_PER_REQUEST",
        KeySchema=_key(("pk", "HASH"), ("sk", "RANGE")),
        AttributeDefinitions=[_s(n) for n in ("pk", "sk", "gsiPk", "gsiPk2", "lsiSk", "lsiSk2", "h1", "h2")],
        GlobalSecondaryIndexes=[
            {"IndexName": "gsi-all", "KeySchema": _key(("gsiPk", "HASH")), "Projection": {"ProjectionType": "ALL"}},
            {
                "IndexName": "gsi-inc",
                "KeySchema": _key(("gsiPk2", "HASH")),
                "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["projattr"]},
            },
            {"IndexName": "gsi-keys", "KeySchema": _key(("gsiPk2", "HASH")), "Projection": {"ProjectionType": "KEYS_ONLY"}},
            {"IndexName": "gsi-multi", "KeySchema": _key(("h1", "HASH"), ("h2", "HASH")), "Projection": {"ProjectionType": "ALL"}},
        ],
        LocalSecondaryIndexes=[
            {"IndexName": "lsi-all", "KeySchema": _key(("pk", "HASH"), ("lsiSk", "RANGE")), "Projection": {"ProjectionType": "ALL"}},
            {
                "IndexName": "lsi-keys",
                "KeySchema": _key(("pk", "HASH"), ("lsiSk2", "RANGE")),
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            },
        ],
    )
    rows = []
    for n, gsi in ((1, "x"), (2, "y"), (4, "x")):
        rows.append({
            "pk": {"S": "p"}, "sk": {"S": f"s{n}"}, "gsiPk": {"S": gsi}, "gsiPk2": {"S": f"{gsi}2"},
            "lsiSk": {"S": f"l{n}"}, "lsiSk2": {"S": f"m{n}"}, "projattr": {"S": f"P{n}"}, "nonproj": {"S": f"N{n}"},
        })
    rows.append({"pk": {"S": "p"}, "sk": {"S": "s3"}, "projattr": {"S": "P3"}, "nonproj": {"S": "N3"}})
    put_all(ddb, table_name, rows)
    return table_name


def run(ddb: Any, statement: str, **extra: Any) -> dict[str, Any]:
    return ddb.execute_statement(Statement=statement, **extra)


def fails(ddb: Any, statement: str, **extra: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        run(ddb, statement, **extra)
    return error_of(excinfo)


def sks(items: list[dict[str, Any]]) -> list[str]:
    return sorted(i["sk"]["S"] for i in items)


def stored(ddb: Any, table: str, sk: str) -> dict[str, Any] | None:
    item: dict[str, Any] | None = ddb.get_item(TableName=table, Key={"pk": {"S": "p"}, "sk": {"S": sk}}).get("Item")
    return item


# -- writes ---------------------------------------------------------------------------------


def test_an_index_qualified_write_is_refused_and_writes_nothing(ddb: Any, indexed: str) -> None:
    t = indexed
    before = stored(ddb, t, "s1")
    # Partita used to run this DELETE against the table: data loss.
    assert fails(ddb, f"DELETE FROM \"{t}\".\"gsi-all\" WHERE pk = 'p' AND sk = 's1'") == ("ValidationException", INDEX_WRITE)
    assert fails(ddb, f"UPDATE \"{t}\".\"gsi-all\" SET projattr = 'z' WHERE pk = 'p' AND sk = 's1'") == (
        "ValidationException",
        INDEX_WRITE,
    )
    assert fails(ddb, f"DELETE FROM \"{t}\".\"lsi-keys\" WHERE pk = 'p' AND sk = 's1' RETURNING ALL OLD *") == (
        "ValidationException",
        INDEX_WRITE,
    )
    # Refused before the table (or the index) is looked up.
    assert fails(ddb, "UPDATE \"no-such-table\".\"gsi-all\" SET a = 'z' WHERE pk = 'p'") == ("ValidationException", INDEX_WRITE)
    assert fails(ddb, f"DELETE FROM \"{t}\".\"no-such-index\" WHERE pk = 'p' AND sk = 's1'") == (
        "ValidationException",
        INDEX_WRITE,
    )
    # INSERT cannot name an index at all, whether the index exists or not.
    for index in ("gsi-all", "no-such-index"):
        assert fails(ddb, f"INSERT INTO \"{t}\".\"{index}\" VALUE {{'pk': 'w', 'sk': 'w'}}") == (
            "ValidationException",
            INSERT_INDEX,
        )
    assert stored(ddb, t, "s1") == before
    assert stored(ddb, t, "w") is None


def test_batch_and_transaction_refuse_an_index_qualified_write(ddb: Any, indexed: str) -> None:
    t = indexed
    out = ddb.batch_execute_statement(
        Statements=[
            {"Statement": f"DELETE FROM \"{t}\".\"gsi-all\" WHERE pk = 'p' AND sk = 's1'"},
            {"Statement": f"UPDATE \"{t}\" SET touched = 'yes' WHERE pk = 'p' AND sk = 's2'"},
        ]
    )
    # Refused before it ran: no TableName; the other member runs.
    assert out["Responses"] == [{"Error": {"Code": "ValidationError", "Message": INDEX_WRITE}}, {"TableName": t}]
    with pytest.raises(ClientError) as excinfo:
        ddb.execute_transaction(
            TransactStatements=[{"Statement": f"UPDATE \"{t}\".\"gsi-all\" SET a = 'x' WHERE pk = 'p' AND sk = 's1'"}]
        )
    assert error_of(excinfo) == ("ValidationException", f"Validation failed in TransactStatements[0]: {INDEX_WRITE}")
    assert stored(ddb, t, "s1") is not None
    assert "a" not in (stored(ddb, t, "s1") or {})


def test_the_from_path_takes_at_most_two_non_empty_names(ddb: Any, indexed: str) -> None:
    t = indexed
    for statement in (f'SELECT * FROM "{t}".""', 'SELECT * FROM ""', 'SELECT * FROM "".""', "DELETE FROM \"\" WHERE pk = 'x'"):
        assert fails(ddb, statement) == ("ValidationException", "Path component cannot be an empty string")
    for table in (t, "no-such-table"):
        assert fails(ddb, f"SELECT * FROM \"{table}\".\"gsi-all\".\"extra\" WHERE pk = 'p'") == (
            "ValidationException",
            "A path may contain at most 2 components in the FROM clause",
        )
    assert fails(ddb, f"INSERT INTO \"{t}\".\"a\".\"b\" VALUE {{'pk': 'w', 'sk': 'w'}}") == ("ValidationException", INSERT_INDEX)


# -- reads ----------------------------------------------------------------------------------


def test_an_index_read_returns_its_members_and_its_projection(ddb: Any, indexed: str) -> None:
    t = indexed
    assert sks(run(ddb, f'SELECT * FROM "{t}"."gsi-all"')["Items"]) == ["s1", "s2", "s4"]
    assert sks(run(ddb, f"SELECT * FROM \"{t}\".\"gsi-all\" WHERE gsiPk = 'x'")["Items"]) == ["s1", "s4"]
    assert sks(run(ddb, f'SELECT * FROM "{t}"."lsi-all"')["Items"]) == ["s1", "s2", "s4"]
    # SELECT * on a non-ALL index is the index's projection, not the item.
    for index, where, names in (
        ("gsi-inc", "", ["gsiPk2", "pk", "projattr", "sk"]),
        ("gsi-keys", " WHERE gsiPk2 = 'x2'", ["gsiPk2", "pk", "sk"]),
        ("lsi-keys", " WHERE pk = 'p'", ["lsiSk2", "pk", "sk"]),
    ):
        rows = run(ddb, f'SELECT * FROM "{t}"."{index}"{where}')["Items"]
        assert rows and all(sorted(row) == names for row in rows), index
    out = run(ddb, f"SELECT pk FROM \"{t}\".\"gsi-all\" WHERE gsiPk = 'x'", ReturnConsumedCapacity="INDEXES")
    assert out["ConsumedCapacity"] == {
        "TableName": t,
        "CapacityUnits": 0.5,
        "Table": {"CapacityUnits": 0.0},
        "GlobalSecondaryIndexes": {"gsi-all": {"CapacityUnits": 0.5}},
    }


def test_unknown_and_multi_attribute_indexes(ddb: Any, indexed: str) -> None:
    t = indexed
    for index in ("no-such-index", t):
        assert fails(ddb, f"SELECT * FROM \"{t}\".\"{index}\" WHERE pk = 'p'") == ("ValidationException", NO_INDEX)
    assert fails(ddb, "SELECT * FROM \"no-such-table\".\"gsi-all\"") == ("ResourceNotFoundException", "Requested resource not found")
    # The refusal comes ahead of the key type, a non-key WHERE and a missing WHERE.
    for where in (" WHERE h1 = 'a'", " WHERE h1 = 5", " WHERE pk = 'p'", ""):
        assert fails(ddb, f'SELECT * FROM "{t}"."gsi-multi"{where}') == ("ValidationException", MULTI)
    # The table itself stays readable.
    assert sks(run(ddb, f"SELECT * FROM \"{t}\" WHERE pk = 'p'")["Items"]) == ["s1", "s2", "s3", "s4"]
    out = ddb.batch_execute_statement(
        Statements=[
            {"Statement": f"SELECT * FROM \"{t}\".\"gsi-all\" WHERE gsiPk = 'x'"},
            {"Statement": f"SELECT * FROM \"{t}\".\"gsi-all\" WHERE pk = 'p' AND sk = 's1' AND gsiPk = 'x'"},
            {"Statement": f"SELECT * FROM \"{t}\".\"gsi-multi\" WHERE h1 = 'a' AND h2 = 'b'"},
            {"Statement": f"SELECT sk FROM \"{t}\" WHERE pk = 'p' AND sk = 's1'"},
        ]
    )
    assert out["Responses"] == [
        {"Error": {"Code": "ValidationError", "Message": BATCH_KEY}},
        {"Error": {"Code": "ValidationError", "Message": BATCH_KEY}},
        {"Error": {"Code": "ValidationError", "Message": MULTI}},
        {"TableName": t, "Item": {"sk": {"S": "s1"}}},
    ]


def test_consistent_reads_of_an_index(ddb: Any, indexed: str) -> None:
    t = indexed
    assert fails(ddb, f"SELECT * FROM \"{t}\".\"gsi-all\" WHERE gsiPk = 'x'", ConsistentRead=True) == (
        "ValidationException",
        "Strongly consistent read is not supported on Global Secondary Indexes",
    )
    out = run(ddb, f"SELECT pk FROM \"{t}\".\"lsi-all\" WHERE pk = 'p'", ConsistentRead=True, ReturnConsumedCapacity="INDEXES")
    assert len(out["Items"]) == 3
    assert out["ConsumedCapacity"] == {
        "TableName": t,
        "CapacityUnits": 1.0,
        "Table": {"CapacityUnits": 0.0},
        "LocalSecondaryIndexes": {"lsi-all": {"CapacityUnits": 1.0}},
    }


def test_a_projection_the_index_does_not_hold(ddb: Any, indexed: str) -> None:
    t = indexed
    # A GSI refuses, listing the attributes in the order the statement names them.
    assert fails(ddb, f"SELECT zeta, nonproj, projattr, alpha FROM \"{t}\".\"gsi-inc\" WHERE gsiPk2 = 'x2'") == (
        "ValidationException",
        "One or more parameter values were invalid: Global secondary index gsi-inc does not project [zeta, nonproj, alpha]",
    )
    assert fails(ddb, f'SELECT nonproj.deep FROM "{t}"."gsi-keys"') == (
        "ValidationException",
        "One or more parameter values were invalid: Global secondary index gsi-keys does not project [nonproj]",
    )
    # An LSI fetches it from the table, each fetch charged to the table.
    out = run(ddb, f"SELECT nonproj FROM \"{t}\".\"lsi-keys\" WHERE pk = 'p'", ReturnConsumedCapacity="INDEXES")
    assert sorted(i["nonproj"]["S"] for i in out["Items"]) == ["N1", "N2", "N4"]
    assert out["ConsumedCapacity"] == {
        "TableName": t,
        "CapacityUnits": 2.0,
        "Table": {"CapacityUnits": 1.5},
        "LocalSecondaryIndexes": {"lsi-keys": {"CapacityUnits": 0.5}},
    }


@pytest.mark.parametrize(
    ("index", "where", "listed"),
    [
        ("gsi-inc", "gsiPk2 = 'x2' AND nonproj = 'N1'", "nonproj"),
        ("lsi-keys", "pk = 'p' AND nonproj = 'N1'", "nonproj"),
        ("lsi-keys", "pk = 'p' AND lsiSk2 BETWEEN 'm1' AND 'm4' AND nonproj = 'N1'", "nonproj"),
        ("gsi-inc", "gsiPk2 IN ['x2', 'y2'] AND nonproj = 'N1'", "nonproj"),
        ("gsi-inc", "gsiPk2 = 'x2' AND nonproj IS MISSING", "nonproj"),
        ("gsi-inc", "gsiPk2 = 'x2' AND nonproj IS NOT MISSING", "nonproj"),
        ("gsi-inc", "gsiPk2 = 'x2' AND begins_with(nonproj, 'N')", "nonproj"),
        ("gsi-inc", "gsiPk2 = 'x2' AND NOT nonproj = 'N1'", "nonproj"),
        ("gsi-inc", "gsiPk2 = 'x2' AND NOT (nonproj = 'N1' OR projattr = 'x')", "nonproj"),
        # The service lists them as a java.util.HashSet iterates them (recorded):
        ("gsi-inc", "gsiPk2 = 'x2' AND b = '1' AND (a = '2' OR projattr = '3')", "a, b"),
        ("gsi-inc", "gsiPk2 = 'x2' AND (zz = '1' OR aa = '2' OR mm = '3')", "zz, aa, mm"),
    ],
)
def test_a_keyed_read_may_not_filter_on_what_the_index_does_not_hold(
    ddb: Any, indexed: str, index: str, where: str, listed: str
) -> None:
    assert fails(ddb, f'SELECT pk FROM "{indexed}"."{index}" WHERE {where}') == (
        "ValidationException",
        FILTER.format(index, listed),
    )


def test_an_unkeyed_read_filters_on_the_index_entry(ddb: Any, indexed: str) -> None:
    t = indexed

    def got(statement: str) -> list[str]:
        return sks(run(ddb, statement)["Items"])

    # The attribute is missing from the index entry, whatever the item holds.
    assert got(f"SELECT sk FROM \"{t}\".\"gsi-inc\" WHERE nonproj = 'N1'") == []
    assert got(f"SELECT sk FROM \"{t}\".\"lsi-keys\" WHERE nonproj = 'N1'") == []
    assert got(f"SELECT sk FROM \"{t}\".\"gsi-inc\" WHERE nonproj = 'N1' AND nonproj = 'N2'") == []
    assert got(f"SELECT sk FROM \"{t}\".\"gsi-keys\" WHERE NOT nonproj = 'N1'") == ["s1", "s2", "s4"]
    # Even where an LSI fetches the item from the table for the projection.
    assert run(ddb, f"SELECT nonproj FROM \"{t}\".\"lsi-keys\" WHERE nonproj = 'N1'")["Items"] == []
    # An index key reached only through OR does not key the read.
    assert got(f"SELECT sk FROM \"{t}\".\"gsi-inc\" WHERE (gsiPk2 = 'x2' AND nonproj = 'N1') OR gsiPk2 = 'y2'") == ["s2"]
    # A keyed read filtering on what the index holds runs; the table itself sees every attribute.
    assert got(f"SELECT sk FROM \"{t}\".\"gsi-inc\" WHERE gsiPk2 = 'x2' AND projattr = 'P1'") == ["s1"]
    assert got(f"SELECT sk FROM \"{t}\" WHERE nonproj = 'N1'") == ["s1"]


def test_a_transaction_refuses_index_reads(ddb: Any, indexed: str) -> None:
    t = indexed

    def refused(*statements: str) -> tuple[str, str]:
        with pytest.raises(ClientError) as excinfo:
            ddb.execute_transaction(TransactStatements=[{"Statement": s} for s in statements])
        return error_of(excinfo)

    assert refused(f"SELECT * FROM \"{t}\".\"gsi-all\" WHERE gsiPk = 'x'") == (
        "ValidationException",
        "Validation failed in TransactStatements[0]: Reads on indices are not supported within transactions.",
    )
    # DynamoDB Local's words for an index-qualified EXISTS (no recording of the service's).
    assert refused(
        f"EXISTS(SELECT * FROM \"{t}\".\"gsi-all\" WHERE pk = 'p' AND sk = 's1' AND gsiPk = 'x')",
        f"UPDATE \"{t}\" SET a = 1 WHERE pk = 'p' AND sk = 's2'",
    ) == ("ValidationException", "Validation failed in TransactStatements[0]: Operations on indices are not supported in transactions")
    assert ddb.execute_transaction(
        TransactStatements=[{"Statement": f"SELECT sk FROM \"{t}\" WHERE pk = 'p' AND sk = 's1'"}]
    )["Responses"] == [{"Item": {"sk": {"S": "s1"}}}]
