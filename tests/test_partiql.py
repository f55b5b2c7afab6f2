"""ExecuteStatement through boto3: SELECT planning (Query vs Scan), paging, capacity, writes, errors."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import create_table, error_of, put_all

NOT_WELL_FORMED = "Statement wasn't well formed, can't be processed: "
KEY_EQUALITY = "Where clause does not contain a mandatory equality on all key attributes"


def run(ddb: Any, statement: str, *params: dict[str, Any], **extra: Any) -> dict[str, Any]:
    if params:
        extra["Parameters"] = list(params)
    return ddb.execute_statement(Statement=statement, **extra)


def fails(ddb: Any, statement: str, *params: dict[str, Any], **extra: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        run(ddb, statement, *params, **extra)
    return error_of(excinfo)


@pytest.fixture
def music(ddb: Any, table_name: str) -> str:
    """pk (S) + sk (N), three partitions of four items each."""
    create_table(ddb, table_name, range_key=("sk", "N"))
    put_all(
        ddb,
        table_name,
        [
            {"pk": {"S": p}, "sk": {"N": str(s)}, "v": {"N": str(10 * s)}, "tag": {"S": f"{p}{s}"}}
            for p in ("a", "b", "c")
            for s in range(4)
        ],
    )
    return table_name


def keys(items: list[dict[str, Any]]) -> list[tuple[str, int]]:
    return [(i["pk"]["S"], int(i["sk"]["N"])) for i in items]


# -- SELECT ---------------------------------------------------------------------------------


def test_select_partition_runs_as_query_in_sort_order(ddb: Any, music: str) -> None:
    out = run(ddb, f'SELECT * FROM "{music}" WHERE pk = ?', {"S": "b"}, ReturnConsumedCapacity="TOTAL")
    assert keys(out["Items"]) == [("b", 0), ("b", 1), ("b", 2), ("b", 3)]
    assert out["Items"][1] == {"pk": {"S": "b"}, "sk": {"N": "1"}, "v": {"N": "10"}, "tag": {"S": "b1"}}
    # A Query of four small items: one 4 KB unit, eventually consistent.
    assert out["ConsumedCapacity"] == {"TableName": music, "CapacityUnits": 0.5}
    assert "NextToken" not in out


def test_select_without_partition_key_is_a_scan_and_charged_as_one(ddb: Any, music: str) -> None:
    scan = ddb.scan(TableName=music, ReturnConsumedCapacity="TOTAL")
    out = run(ddb, f'SELECT * FROM "{music}" WHERE v >= 20', ReturnConsumedCapacity="TOTAL")
    assert sorted(keys(out["Items"])) == sorted(k for k in keys(scan["Items"]) if k[1] >= 2)
    assert out["ConsumedCapacity"] == scan["ConsumedCapacity"]
    # The same rows through a Query cost less than the whole-table Scan.
    query = run(ddb, f'SELECT * FROM "{music}" WHERE pk = \'a\' AND v >= 20', ReturnConsumedCapacity="TOTAL")
    assert keys(query["Items"]) == [("a", 2), ("a", 3)]
    assert query["ConsumedCapacity"]["CapacityUnits"] == 0.5


def test_select_sort_key_conditions_and_order_by(ddb: Any, music: str) -> None:
    def got(where: str, *params: dict[str, Any]) -> list[tuple[str, int]]:
        return keys(run(ddb, f'SELECT * FROM "{music}" WHERE {where}', *params)["Items"])

    assert got("pk = 'a' AND sk BETWEEN 1 AND 2") == [("a", 1), ("a", 2)]
    assert got("pk = 'a' AND sk > 1 AND sk < 3") == [("a", 2)]
    assert got("sk >= ? AND pk = 'c' ORDER BY sk DESC", {"N": "2"}) == [("c", 3), ("c", 2)]
    assert got("pk = 'a' AND (sk = 0 OR sk = 3)") == [("a", 0), ("a", 3)]
    assert got("pk IN ('c', 'a') AND sk = 1") == [("c", 1), ("a", 1)]
    assert got("pk = 'a' AND NOT sk IN (0, 1, 2)") == [("a", 3)]
    assert got("pk = 'zz'") == []


def test_select_functions_and_missing(ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name)
    put_all(
        ddb,
        table_name,
        [
            {"pk": {"S": "1"}, "name": {"S": "alpha"}, "tags": {"SS": ["x", "y"]}, "m": {"M": {"k": {"L": [{"N": "1"}, {"S": "two"}]}}}},
            {"pk": {"S": "2"}, "name": {"S": "beta"}, "n": {"NULL": True}},
            {"pk": {"S": "3"}, "name": {"N": "7"}},
        ],
    )

    def pks(where: str) -> list[str]:
        return sorted(i["pk"]["S"] for i in run(ddb, f'SELECT pk FROM "{table_name}" WHERE {where}')["Items"])

    assert pks("begins_with(name, 'al')") == ["1"]
    assert pks("contains(tags, 'y')") == ["1"]
    assert pks("attribute_type(name, 'N')") == ["3"]
    assert pks("size(name) > 4") == ["1"]
    assert pks("tags IS MISSING") == ["2", "3"]
    assert pks("tags IS NOT MISSING") == ["1"]
    assert pks("m.k[1] = 'two'") == ["1"]
    assert pks("\"name\" = 'beta' OR pk = '3'") == ["2", "3"]
    out = run(ddb, f'SELECT m.k[0], name FROM "{table_name}" WHERE pk = \'1\'')
    assert out["Items"] == [{"k": {"N": "1"}, "name": {"S": "alpha"}}]


def test_select_paging_with_limit_and_next_token(ddb: Any, music: str) -> None:
    statement = f'SELECT * FROM "{music}" WHERE pk = \'a\''
    first = run(ddb, statement, Limit=3)
    assert keys(first["Items"]) == [("a", 0), ("a", 1), ("a", 2)]
    assert first["LastEvaluatedKey"] == {"pk": {"S": "a"}, "sk": {"N": "2"}}
    second = run(ddb, statement, Limit=3, NextToken=first["NextToken"])
    assert keys(second["Items"]) == [("a", 3)]
    assert "NextToken" not in second
    # A Scan pages the same way, through every item exactly once.
    seen: list[tuple[str, int]] = []
    token = None
    while True:
        extra = {"NextToken": token} if token else {}
        page = run(ddb, f'SELECT * FROM "{music}"', Limit=5, **extra)
        seen += keys(page["Items"])
        token = page.get("NextToken")
        if token is None:
            break
    assert sorted(seen) == sorted((p, s) for p in "abc" for s in range(4))
    # IN over several partitions pages across them.
    seen = []
    token = None
    while True:
        extra = {"NextToken": token} if token else {}
        page = run(ddb, f'SELECT * FROM "{music}" WHERE pk IN (\'b\', \'c\')', Limit=3, **extra)
        assert len(page["Items"]) <= 3
        seen += keys(page["Items"])
        token = page.get("NextToken")
        if token is None:
            break
    assert seen == [("b", s) for s in range(4)] + [("c", s) for s in range(4)]
    # A token belongs to its statement.
    code, message = fails(ddb, f'SELECT * FROM "{music}" WHERE pk = \'b\'', NextToken=first["NextToken"])
    assert code == "ValidationException"


def test_select_one_megabyte_page(ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name, range_key=("sk", "N"))
    blob = "x" * 300_000
    put_all(ddb, table_name, [{"pk": {"S": "p"}, "sk": {"N": str(i)}, "b": {"S": blob}} for i in range(5)])
    page = run(ddb, f'SELECT sk FROM "{table_name}" WHERE pk = \'p\'')
    assert keys_n(page["Items"]) == [0, 1, 2, 3]
    assert "NextToken" in page
    rest = run(ddb, f'SELECT sk FROM "{table_name}" WHERE pk = \'p\'', NextToken=page["NextToken"])
    assert keys_n(rest["Items"]) == [4]


def keys_n(items: list[dict[str, Any]]) -> list[int]:
    return [int(i["sk"]["N"]) for i in items]


def test_select_consistent_read_capacity(ddb: Any, music: str) -> None:
    out = run(ddb, f'SELECT * FROM "{music}" WHERE pk = \'a\'', ConsistentRead=True, ReturnConsumedCapacity="INDEXES")
    assert out["ConsumedCapacity"] == {"TableName": music, "CapacityUnits": 1.0, "Table": {"CapacityUnits": 1.0}}


def test_select_on_an_index(ddb: Any, table_name: str) -> None:
    ddb.create_table(
        TableName=table_name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "g", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
        GlobalSecondaryIndexes=[
            {"IndexName": "byG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}], "Projection": {"ProjectionType": "ALL"}}
        ],
    )
    put_all(ddb, table_name, [{"pk": {"S": str(i)}, "g": {"S": "even" if i % 2 == 0 else "odd"}} for i in range(6)])
    out = run(ddb, f'SELECT pk FROM "{table_name}"."byG" WHERE g = \'odd\'', ReturnConsumedCapacity="INDEXES")
    assert sorted(i["pk"]["S"] for i in out["Items"]) == ["1", "3", "5"]
    assert out["ConsumedCapacity"]["GlobalSecondaryIndexes"] == {"byG": {"CapacityUnits": 0.5}}
    # Recorded: unlike Query's and Scan's, the PartiQL message does not name the index.
    assert fails(ddb, f'SELECT * FROM "{table_name}"."nope"') == (
        "ValidationException",
        "The table does not have the specified index",
    )


# -- writes ---------------------------------------------------------------------------------


def test_insert_then_duplicate(ddb: Any, range_table: str) -> None:
    statement = f"INSERT INTO \"{range_table}\" VALUE {{'pk': ?, 'sk': 1, 'l': [1, 'a', true, null], 'm': {{'x': <<'b', 'a'>>}}, 'ns': <<3, 1>>}}"
    out = run(ddb, statement, {"S": "k"}, ReturnConsumedCapacity="TOTAL")
    assert out["Items"] == []
    assert out["ConsumedCapacity"] == {"TableName": range_table, "CapacityUnits": 1.0}
    item = ddb.get_item(TableName=range_table, Key={"pk": {"S": "k"}, "sk": {"N": "1"}})["Item"]
    assert item["l"] == {"L": [{"N": "1"}, {"S": "a"}, {"BOOL": True}, {"NULL": True}]}
    assert sorted(item["m"]["M"]["x"]["SS"]) == ["a", "b"]
    assert sorted(item["ns"]["NS"]) == ["1", "3"]
    assert fails(ddb, statement, {"S": "k"}) == ("DuplicateItemException", "Duplicate primary key exists in table")


def test_update_set_arithmetic_lists_sets_remove_returning(ddb: Any, range_table: str) -> None:
    ddb.put_item(
        TableName=range_table,
        Item={"pk": {"S": "u"}, "sk": {"N": "1"}, "n": {"N": "5"}, "l": {"L": [{"N": "1"}]}, "s": {"SS": ["a"]}, "gone": {"S": "x"}},
    )
    where = "WHERE pk = 'u' AND sk = 1"
    out = run(
        ddb,
        f"UPDATE \"{range_table}\" SET n = n + 2, l = list_append(l, [2]) SET s = set_add(s, <<'b'>>) REMOVE gone {where} RETURNING ALL NEW *",
    )
    assert out["Items"] == [
        {"pk": {"S": "u"}, "sk": {"N": "1"}, "n": {"N": "7"}, "l": {"L": [{"N": "1"}, {"N": "2"}]}, "s": {"SS": ["a", "b"]}}
    ]
    out = run(ddb, f"UPDATE \"{range_table}\" SET n = ? {where} RETURNING MODIFIED OLD *", {"N": "1"})
    assert out["Items"] == [{"n": {"N": "7"}}]
    out = run(ddb, f"UPDATE \"{range_table}\" SET s = set_delete(s, <<'a'>>) {where} RETURNING MODIFIED NEW *")
    assert out["Items"] == [{"s": {"SS": ["b"]}}]
    out = run(ddb, f"UPDATE \"{range_table}\" SET z = 'new' {where}", ReturnConsumedCapacity="TOTAL")
    assert out == {"Items": [], "ConsumedCapacity": {"TableName": range_table, "CapacityUnits": 1.0}, "ResponseMetadata": out["ResponseMetadata"]}
    out = run(ddb, f"UPDATE \"{range_table}\" SET z = 'newer' {where} RETURNING ALL OLD *")
    assert out["Items"][0]["z"] == {"S": "new"}


def test_update_conditions(ddb: Any, range_table: str) -> None:
    ddb.put_item(TableName=range_table, Item={"pk": {"S": "c"}, "sk": {"N": "1"}, "n": {"N": "5"}})
    run(ddb, f"UPDATE \"{range_table}\" SET n = 6 WHERE pk = 'c' AND sk = 1 AND n = 5")
    assert fails(ddb, f"UPDATE \"{range_table}\" SET n = 7 WHERE pk = 'c' AND sk = 1 AND n = 5") == (
        "ConditionalCheckFailedException",
        "The conditional request failed",
    )
    with pytest.raises(ClientError) as excinfo:
        run(
            ddb,
            f"UPDATE \"{range_table}\" SET n = 7 WHERE pk = 'c' AND sk = 1 AND n > 100",
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )
    assert excinfo.value.response["Item"] == {"pk": {"S": "c"}, "sk": {"N": "1"}, "n": {"N": "6"}}
    # UPDATE does not create: a missing item fails its implicit existence check.
    assert fails(ddb, f"UPDATE \"{range_table}\" SET n = 1 WHERE pk = 'missing' AND sk = 1")[0] == (
        "ConditionalCheckFailedException"
    )
    assert "Item" not in ddb.get_item(TableName=range_table, Key={"pk": {"S": "missing"}, "sk": {"N": "1"}})


def test_delete(ddb: Any, range_table: str) -> None:
    ddb.put_item(TableName=range_table, Item={"pk": {"S": "d"}, "sk": {"N": "1"}, "n": {"N": "5"}})
    assert fails(ddb, f"DELETE FROM \"{range_table}\" WHERE pk = 'd' AND sk = 1 AND n = 4")[0] == (
        "ConditionalCheckFailedException"
    )
    out = run(ddb, f"DELETE FROM \"{range_table}\" WHERE pk = 'd' AND sk = 1 RETURNING ALL OLD *")
    assert out["Items"] == [{"pk": {"S": "d"}, "sk": {"N": "1"}, "n": {"N": "5"}}]
    assert run(ddb, f"DELETE FROM \"{range_table}\" WHERE pk = 'd' AND sk = 1")["Items"] == []
    # Documented: no item under the key is a success with nothing deleted, whatever else the WHERE says.
    out = run(ddb, f"DELETE FROM \"{range_table}\" WHERE pk = 'nobody' AND sk = 1 AND n = 4", ReturnConsumedCapacity="TOTAL")
    assert out["Items"] == []
    assert out["ConsumedCapacity"] == {"TableName": range_table, "CapacityUnits": 1.0}
    assert run(ddb, f"DELETE FROM \"{range_table}\" WHERE pk = 'nobody' AND sk = 1 AND n = 4 RETURNING ALL OLD *")["Items"] == []
    assert "Item" not in ddb.get_item(TableName=range_table, Key={"pk": {"S": "nobody"}, "sk": {"N": "1"}})
    assert fails(ddb, f"DELETE FROM \"{range_table}\" WHERE pk = 'd' AND sk = 1 RETURNING ALL NEW *") == (
        "ValidationException",
        "Invalid returning clause: RETURNING ALL NEW *. Only RETURNING ALL OLD * is allowed in DELETE statements.",
    )


# -- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        ('SELECT * FROM "{t}" WHERE', NOT_WELL_FORMED + "Unexpected term"),
        ('SELECT * FROM "{t}" WHERE pk = \'a\' AND', NOT_WELL_FORMED + "Missing right-hand side expression of infix operator"),
        ('SELECT * FROM "{t}" WHERE pk = 1 foo', NOT_WELL_FORMED + "Unexpected token after expression"),
        ('SELECT * FROM "{t}" WHERE pk = 1)', NOT_WELL_FORMED + "Unexpected token after expression"),
        ('SELECT * FROM "{t}" WHERE ORDER BY pk', NOT_WELL_FORMED + "Unexpected keyword"),
        ('SELECT * FROM "{t}" WHERE IS NULL', NOT_WELL_FORMED + "Unexpected operator"),
        ('SELECT * FROM "{t}" WHERE pk = \'a\' AND x IS FOO', NOT_WELL_FORMED + "Expected type name"),
        ('SELECT * FROM "{t}" WHERE pk = 1 /* note', NOT_WELL_FORMED),
        ("SELECT * FROM", NOT_WELL_FORMED + "Unexpected term"),
        ("DELETE FROM", NOT_WELL_FORMED + "Expected identifier for simple path"),
        ("BEGIN TRANSACTION", NOT_WELL_FORMED + "Expected data manipulation"),
        ('SELECT * FROM "{t}" t WHERE pk = \'x\'', "Aliasing is not supported"),
        ('INSERT INTO "{t}" t VALUE {{\'pk\': \'x\'}}', NOT_WELL_FORMED + "Unexpected token after expression"),
        ('UPDATE "{t}" SET a = 1 WHERE sk = 1', KEY_EQUALITY),
        ('UPDATE "{t}" SET a = 1 WHERE pk = \'a\'', KEY_EQUALITY),
        ('UPDATE "{t}" SET a = 1 WHERE pk = \'a\' OR sk = 1', KEY_EQUALITY),
        ('DELETE FROM "{t}" WHERE pk = \'a\' AND sk > 1', KEY_EQUALITY),
        ('FROM "{t}" SET c = 1', KEY_EQUALITY),
        ('SELECT * FROM "{t}" WHERE pk = ?', "Number of parameters in request and statement don't match."),
    ],
)
def test_statement_errors(ddb: Any, range_table: str, statement: str, message: str) -> None:
    assert fails(ddb, statement.format(t=range_table)) == ("ValidationException", message)


def test_parameter_count_and_unknown_table(ddb: Any, range_table: str) -> None:
    assert fails(ddb, f'SELECT * FROM "{range_table}"', {"S": "x"}) == (
        "ValidationException",
        "Number of parameters in request and statement don't match.",
    )
    assert fails(ddb, 'SELECT * FROM "no-such-table"') == ("ResourceNotFoundException", "Requested resource not found")
    assert fails(ddb, "INSERT INTO \"no-such-table\" VALUE {'pk': 'a'}") == (
        "ResourceNotFoundException",
        "Requested resource not found",
    )


def test_from_first_update_form(ddb: Any, range_table: str) -> None:
    ddb.put_item(TableName=range_table, Item={"pk": {"S": "f"}, "sk": {"N": "1"}})
    run(ddb, f"FROM \"{range_table}\" WHERE pk = 'f' AND sk = 1 SET c = 1")
    assert ddb.get_item(TableName=range_table, Key={"pk": {"S": "f"}, "sk": {"N": "1"}})["Item"]["c"] == {"N": "1"}


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        ('SELECT * FROM "{t}" ORDER BY sk', "Must have WHERE clause in the statement when using ORDER BY clause."),
        (
            'SELECT * FROM "{t}" WHERE sk = 1 ORDER BY sk',
            "Must have at least one non-optional hash key condition in WHERE clause when using ORDER BY clause.",
        ),
        ('SELECT * FROM "{t}" WHERE pk = \'a\' GROUP BY sk', "Unsupported clause: GROUP BY"),
        ('SELECT DISTINCT pk FROM "{t}"', "Unsupported token in expression: DISTINCT"),
        ('INSERT INTO "{t}" VALUE {{\'pk\': \'a\', \'sk\': 1}} RETURNING ALL OLD *', "RETURNING is not supported in INSERT"),
        ('INSERT INTO "{t}" VALUE 5', NOT_WELL_FORMED + "Expected a tuple in VALUE"),
    ],
)
def test_unsupported_forms(ddb: Any, range_table: str, statement: str, message: str) -> None:
    assert fails(ddb, statement.format(t=range_table)) == ("ValidationException", message)


def test_insert_attribute_values_are_named_from_their_own_root(ddb: Any, hash_table: str) -> None:
    """Recorded: each attribute of an INSERT's tuple is a value of its own ("root") in the messages."""
    overflow = "Number overflow. Attempting to store a number with magnitude larger than supported range under "
    for value, where in (
        ("{'pk': 'n', 'x': 1e126}", "root"),
        ("{'pk': 'n', 'm': {'x': 1e126}}", "root.x"),
        ("{'pk': 'n', 'l': [1, 1e126]}", "root[1]"),
    ):
        assert fails(ddb, f'INSERT INTO "{hash_table}" VALUE {value}') == ("ValidationException", overflow + where)
    assert "Item" not in ddb.get_item(TableName=hash_table, Key={"pk": {"S": "n"}})
