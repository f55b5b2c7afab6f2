"""Online index changes go through DynamoDB's phases, each timed on the server clock.

A server started with long phases (`--index-allocation-ms`, `--index-backfill-ms`)
shows every state DynamoDB reports; the tests move its clock instead of
waiting, then poll DescribeTable until the background job has acted (a
bounded wait for a thread, never an assertion about time).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import STORE, Server, client_for, durable_store, error_of, launch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streams_helpers import advance

#: Phase lengths of the dedicated server, in seconds of server time. Clock moves are
#: multiples of 1000 s, so wall time passing during a test never crosses a boundary.
ALLOCATION = 1500
BACKFILL = 2000
INVALID = "One or more parameter values were invalid: "


def _store_args(folder: Path) -> list[str]:
    return ["--in-memory"] if STORE == "memory" else durable_store(folder)


@pytest.fixture(scope="module")
def phased(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = launch(*_store_args(tmp_path_factory.mktemp("phased")),
                    "--index-allocation-ms", str(ALLOCATION * 1000), "--index-backfill-ms", str(BACKFILL * 1000))
    yield server
    server.stop()


_names = iter(range(10**6))


def _table(ddb: Any, items: int = 3) -> str:
    name = f"ph-{next(_names)}-{time.monotonic_ns() % 10**9}"
    ddb.create_table(TableName=name, KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                     BillingMode="PAY_PER_REQUEST")
    for i in range(items):
        ddb.put_item(TableName=name, Item={"pk": {"S": f"k{i}"}, "g": {"S": "G"}})
    ddb.put_item(TableName=name, Item={"pk": {"S": "no-g"}})
    return name


def _create_gsi(ddb: Any, table: str, name: str = "by-g") -> dict[str, Any]:
    return ddb.update_table(
        TableName=table, AttributeDefinitions=[{"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexUpdates=[{"Create": {
            "IndexName": name, "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"}}}],
    )["TableDescription"]


def _state(table: dict[str, Any], kind: str = "GlobalSecondaryIndexes") -> tuple[Any, ...]:
    """(TableStatus, IndexStatus, Backfilling, ItemCount) of a table's one index; None fields when it is gone."""
    docs = table.get(kind) or [{}]
    doc = docs[0]
    return table["TableStatus"], doc.get("IndexStatus"), doc.get("Backfilling", "absent"), doc.get("ItemCount")


def _settle(ddb: Any, table: str, expected: tuple[Any, ...], kind: str = "GlobalSecondaryIndexes") -> dict[str, Any]:
    """DescribeTable once the background job has reached `expected` (it acts within a poll of the clock).

    `expected` may be a prefix of the state (a DELETING index's count is not checked).
    """
    deadline = time.monotonic() + 60
    while True:
        described = ddb.describe_table(TableName=table)["Table"]
        state = _state(described, kind)[:len(expected)]
        if state == expected or time.monotonic() > deadline:
            assert state == expected
            return described
        time.sleep(0.02)


ALLOCATING = ("UPDATING", "CREATING", False, 0)
BACKFILLING = ("ACTIVE", "CREATING", True, 0)
DELETING = ("UPDATING", "DELETING", "absent")
GONE = ("ACTIVE", None, "absent", None)


def test_gsi_goes_through_allocation_and_backfill_then_active(phased: Server) -> None:
    ddb = client_for(phased.url)
    table = _table(ddb)
    answer = _create_gsi(ddb, table)
    arn = answer["TableArn"]
    expected_doc = {
        "IndexName": "by-g",
        "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
        "Projection": {"ProjectionType": "ALL"},
        "IndexStatus": "CREATING",
        "Backfilling": False,
        "ProvisionedThroughput": {"NumberOfDecreasesToday": 0, "ReadCapacityUnits": 0, "WriteCapacityUnits": 0},
        "WarmThroughput": {"ReadUnitsPerSecond": 12000, "WriteUnitsPerSecond": 4000, "Status": "ACTIVE"},
        "IndexSizeBytes": 0,
        "ItemCount": 0,
        "IndexArn": f"{arn}/index/by-g",
    }
    assert answer["TableStatus"] == "UPDATING"
    assert answer["GlobalSecondaryIndexes"] == [expected_doc]
    described = ddb.describe_table(TableName=table)["Table"]
    assert described["TableStatus"] == "UPDATING"
    assert described["GlobalSecondaryIndexes"] == [expected_doc]
    # Nothing reads the index, nor deletes it, nor starts another change, while resources are allocated.
    with pytest.raises(ClientError) as excinfo:
        ddb.query(TableName=table, IndexName="by-g", KeyConditionExpression="g = :g",
                  ExpressionAttributeValues={":g": {"S": "G"}})
    assert error_of(excinfo) == ("ValidationException", "Cannot read from backfilling global secondary index: by-g")
    with pytest.raises(ClientError) as excinfo:
        ddb.update_table(TableName=table, GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "by-g"}}])
    assert error_of(excinfo) == (
        "ResourceInUseException",
        "Attempt to change a resource which is still in use: Index creation is in resource allocation phase. "
        f"Retry deletion during backfilling phase or when the index is active. Table: {table} Index: by-g",
    )
    with pytest.raises(ClientError) as excinfo:
        _create_gsi(ddb, table, "by-g2")
    assert error_of(excinfo) == (
        "LimitExceededException",
        "Subscriber limit exceeded: Only 1 online index can be created or deleted simultaneously per table",
    )

    advance(phased.url, 2000)  # past the allocation phase, inside the backfill's minimum time
    described = _settle(ddb, table, BACKFILLING)
    assert described["GlobalSecondaryIndexes"] == [{**expected_doc, "Backfilling": True}]
    with pytest.raises(ClientError) as excinfo:
        ddb.scan(TableName=table, IndexName="by-g")
    assert error_of(excinfo) == ("ValidationException", "Cannot read from backfilling global secondary index: by-g")

    advance(phased.url, 2000)
    described = _settle(ddb, table, ("ACTIVE", "ACTIVE", "absent", 3))
    assert described["GlobalSecondaryIndexes"][0]["IndexSizeBytes"] == 3 * (len("pk") + 2 + len("g") + 1)
    found = ddb.query(TableName=table, IndexName="by-g", KeyConditionExpression="g = :g",
                      ExpressionAttributeValues={":g": {"S": "G"}})["Items"]
    assert sorted(i["pk"]["S"] for i in found) == ["k0", "k1", "k2"]
    assert described["AttributeDefinitions"] == [{"AttributeName": "pk", "AttributeType": "S"},
                                                 {"AttributeName": "g", "AttributeType": "S"}]

    answer = ddb.update_table(TableName=table, GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "by-g"}}])
    assert _state(answer["TableDescription"])[:3] == DELETING
    assert _state(ddb.describe_table(TableName=table)["Table"])[:3] == DELETING
    advance(phased.url, 2000)
    described = _settle(ddb, table, GONE)
    # The attribute only the deleted index used leaves AttributeDefinitions; the items stay.
    assert described["AttributeDefinitions"] == [{"AttributeName": "pk", "AttributeType": "S"}]
    assert described["ItemCount"] == 4


def test_an_index_may_be_deleted_while_it_backfills(phased: Server) -> None:
    ddb = client_for(phased.url)
    table = _table(ddb)
    _create_gsi(ddb, table)
    advance(phased.url, 2000)
    _settle(ddb, table, BACKFILLING)
    answer = ddb.update_table(TableName=table, GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "by-g"}}])
    assert _state(answer["TableDescription"])[:3] == DELETING
    advance(phased.url, 2000)
    described = _settle(ddb, table, GONE)
    assert described["ItemCount"] == 4
    with pytest.raises(ClientError) as excinfo:
        ddb.query(TableName=table, IndexName="by-g", KeyConditionExpression="g = :g",
                  ExpressionAttributeValues={":g": {"S": "G"}})
    assert error_of(excinfo) == ("ValidationException", "The table does not have the specified index: by-g")


def test_vector_index_phases(phased: Server) -> None:
    ddb = client_for(phased.url)
    table = _table(ddb, items=0)
    for i in range(3):
        ddb.put_item(TableName=table, Item={"pk": {"S": f"v{i}"}, "emb": {"L": [{"N": str(i + 1)}, {"N": "1"}]}})
    answer = ddb.update_table(TableName=table, VectorIndexUpdates=[{"Create": {
        "IndexName": "vix", "VectorAttribute": {"AttributeName": "emb"}, "Dimensions": 2,
        "DistanceFunction": "EUCLIDEAN", "Projection": {"ProjectionType": "KEYS_ONLY"}}}])["TableDescription"]
    assert _state(answer, "VectorIndexes") == ALLOCATING
    assert _state(ddb.describe_table(TableName=table)["Table"], "VectorIndexes") == ALLOCATING
    search = {"TableName": table, "IndexName": "vix", "SearchVector": [{"N": "1"}, {"N": "1"}], "TopK": 1}
    with pytest.raises(ClientError) as excinfo:
        ddb.search_vectors(**search)
    assert error_of(excinfo) == ("ValidationException", "Cannot search backfilling vector index: vix")
    advance(phased.url, 2000)
    _settle(ddb, table, BACKFILLING, "VectorIndexes")
    advance(phased.url, 2000)
    _settle(ddb, table, ("ACTIVE", "ACTIVE", "absent", 3), "VectorIndexes")
    assert [r["Item"] for r in ddb.search_vectors(**search)["SearchResults"]] == [{"pk": {"S": "v0"}}]
    answer = ddb.update_table(TableName=table, VectorIndexUpdates=[{"Delete": {"IndexName": "vix"}}])
    assert _state(answer["TableDescription"], "VectorIndexes")[:3] == DELETING
    advance(phased.url, 2000)
    _settle(ddb, table, GONE, "VectorIndexes")


# -- the phase order, whatever the clock does ------------------------------------------------

STEP = st.one_of(st.sampled_from([0, 1000, 2000, 4000]), st.just("delete"))


def _expected(elapsed: int, deleted_at: int | None) -> tuple[Any, ...]:
    if deleted_at is not None:
        return DELETING if elapsed < deleted_at + ALLOCATION else GONE
    if elapsed < ALLOCATION:
        return ALLOCATING
    if elapsed < ALLOCATION + BACKFILL:
        return BACKFILLING
    return ("ACTIVE", "ACTIVE", "absent", 3)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(STEP, min_size=1, max_size=4))
def test_phases_follow_the_server_clock(phased: Server, steps: list[int | str]) -> None:
    """Any mix of clock moves (one may jump several phases) and deletions lands in DynamoDB's state.

    Deleting during resource allocation is refused, during the backfill or
    once ACTIVE it is accepted; after that the index is DELETING for the
    allocation time, then gone.
    """
    ddb = client_for(phased.url)
    table = _table(ddb)
    _create_gsi(ddb, table)
    elapsed, deleted_at = 0, None
    for step in steps:
        if step == "delete":
            if deleted_at is not None:
                continue
            request = {"TableName": table, "GlobalSecondaryIndexUpdates": [{"Delete": {"IndexName": "by-g"}}]}
            if elapsed < ALLOCATION:
                with pytest.raises(ClientError) as excinfo:
                    ddb.update_table(**request)
                assert error_of(excinfo)[0] == "ResourceInUseException"
            else:
                _settle(ddb, table, _expected(elapsed, None))
                ddb.update_table(**request)
                deleted_at = elapsed
        else:
            advance(phased.url, step)
            elapsed += step
        _settle(ddb, table, _expected(elapsed, deleted_at))
    assert ddb.describe_table(TableName=table)["Table"]["ItemCount"] == 4


def test_phase_options_refuse_negative_values() -> None:
    from partita.cli.options import serve_parser

    parser = serve_parser()
    assert parser.parse_args([]).index_backfill_ms == 200
    assert parser.parse_args([]).index_allocation_ms == 0
    for flag in ("--index-backfill-ms", "--index-allocation-ms"):
        assert getattr(parser.parse_args([flag, "0"]), flag[2:].replace("-", "_")) == 0
        with pytest.raises(SystemExit):
            parser.parse_args([flag, "-1"])


def test_create_table_answers_its_indexes_creating(ddb: Any, table_name: str) -> None:
    """Recorded on the service: the CreateTable answer has every GSI CREATING and no index WarmThroughput;
    Partita's tables and their CreateTable indexes are ACTIVE from the first DescribeTable."""
    answer = ddb.create_table(
        TableName=table_name, KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "g", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
        GlobalSecondaryIndexes=[{"IndexName": "by-g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "KEYS_ONLY"}}],
    )["TableDescription"]
    (created,) = answer["GlobalSecondaryIndexes"]
    assert (answer["TableStatus"], created["IndexStatus"]) == ("CREATING", "CREATING")
    assert "WarmThroughput" not in created and "Backfilling" not in created
    (described,) = ddb.describe_table(TableName=table_name)["Table"]["GlobalSecondaryIndexes"]
    assert described == {**created, "IndexStatus": "ACTIVE", "WarmThroughput": {
        "ReadUnitsPerSecond": 12000, "WriteUnitsPerSecond": 4000, "Status": "ACTIVE"}}


def test_phase_deadlines_survive_a_restart(start_server: Any, tmp_path: Path) -> None:
    """The deadlines live in the catalog: a restarted server resumes the phase where it was."""
    args = [*durable_store(tmp_path), "--index-backfill-ms", str(BACKFILL * 1000)]
    server = start_server(*args)
    ddb = client_for(server.url)
    table = _table(ddb)
    _create_gsi(ddb, table)
    _settle(ddb, table, BACKFILLING)
    server.stop()
    server = start_server(*args)
    ddb = client_for(server.url)
    _settle(ddb, table, BACKFILLING)
    advance(server.url, 3000)
    _settle(ddb, table, ("ACTIVE", "ACTIVE", "absent", 3))
