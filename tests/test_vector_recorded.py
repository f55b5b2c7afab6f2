"""Vector answers recorded against DynamoDB by public conformance suites (2026), asserted exactly.

Each test is a case where Partita's answer differed from the recording; the
sources are named in docs/decisions.md ("Vector indexes"). Index phases run on
the server clock of a dedicated server, moved instead of waited for.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import STORE, Server, client_for, durable_store, error_of, launch
from streams_helpers import advance

#: Phase lengths of the dedicated server, in seconds of server time (clock moves are 2000 s).
ALLOCATION = 1500
BACKFILL = 2000
IN_USE = "Attempt to change a resource which is still in use: "
ONE_ONLINE = "Subscriber limit exceeded: Only 1 online index can be created or deleted simultaneously per table"


def _vec(*values: float | str) -> dict[str, Any]:
    return {"L": [{"N": str(v)} for v in values]}


def _index(name: str = "vix", attribute: str = "embedding", dims: int = 3, projection: str = "ALL") -> dict[str, Any]:
    return {"IndexName": name, "VectorAttribute": {"AttributeName": attribute}, "Dimensions": dims,
            "DistanceFunction": "COSINE", "Projection": {"ProjectionType": projection}}


def _table(ddb: Any, name: str, **extra: Any) -> str:
    ddb.create_table(TableName=name, AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}], BillingMode="PAY_PER_REQUEST", **extra)
    return name


@pytest.fixture(scope="module")
def phased(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    store = ["--in-memory"] if STORE == "memory" else durable_store(tmp_path_factory.mktemp("recorded"))
    server = launch(*store, "--index-allocation-ms", str(ALLOCATION * 1000),
                    "--index-backfill-ms", str(BACKFILL * 1000))
    yield server
    server.stop()


def _seeded(ddb: Any) -> str:
    name = _table(ddb, f"rec-{time.monotonic_ns() % 10**12}")
    for i in range(5):
        ddb.put_item(TableName=name, Item={"pk": {"S": f"item-{i}"}, "embedding": _vec(i, 1, 0)})
    return name


def _index_doc(ddb: Any, table: str) -> dict[str, Any] | None:
    docs = ddb.describe_table(TableName=table)["Table"].get("VectorIndexes") or []
    return docs[0] if docs else None


def _until(ddb: Any, table: str, ready: Any) -> None:
    """Wait (bounded) for the background index job to act on a clock move."""
    deadline = time.monotonic() + 60
    while not ready(_index_doc(ddb, table)):
        assert time.monotonic() < deadline
        time.sleep(0.02)


def test_vector_index_delete_follows_the_creation_phase(phased: Server) -> None:
    """updateLifecycle (eu-west-2, 2026-08-23): refused while allocating, taken once backfilling."""
    ddb = client_for(phased.url)
    table = _seeded(ddb)
    ddb.update_table(TableName=table, VectorIndexUpdates=[{"Create": _index()}])
    with pytest.raises(ClientError) as excinfo:
        ddb.update_table(TableName=table, VectorIndexUpdates=[{"Delete": {"IndexName": "vix"}}])
    assert error_of(excinfo) == (
        "ResourceInUseException",
        IN_USE + "Index creation is in resource allocation phase. Retry deletion during backfilling phase "
        f"or when the index is active. Table: {table} Index: vix",
    )
    # A second index in its own call is refused for the limit, not the phase.
    with pytest.raises(ClientError) as excinfo:
        ddb.update_table(TableName=table, VectorIndexUpdates=[{"Create": _index("vix2", projection="KEYS_ONLY")}])
    assert error_of(excinfo) == ("LimitExceededException", ONE_ONLINE)
    advance(phased.url, 2000)
    _until(ddb, table, lambda doc: doc is not None and doc.get("Backfilling") is True)
    answer = ddb.update_table(TableName=table, VectorIndexUpdates=[{"Delete": {"IndexName": "vix"}}])
    assert answer["TableDescription"]["VectorIndexes"][0]["IndexStatus"] == "DELETING"
    advance(phased.url, 2000)
    _until(ddb, table, lambda doc: doc is None)
    assert ddb.describe_table(TableName=table)["Table"]["TableStatus"] == "ACTIVE"


def test_delete_table_waits_for_its_vector_index(phased: Server) -> None:
    """updateLifecycle (eu-west-2, 2026-08-21): table ACTIVE, index CREATING -> ResourceInUseException."""
    ddb = client_for(phased.url)
    table = _seeded(ddb)
    ddb.update_table(TableName=table, VectorIndexUpdates=[{"Create": _index()}])
    advance(phased.url, 2000)
    _until(ddb, table, lambda doc: doc is not None and doc.get("Backfilling") is True)
    assert ddb.describe_table(TableName=table)["Table"]["TableStatus"] == "ACTIVE"
    with pytest.raises(ClientError) as excinfo:
        ddb.delete_table(TableName=table)
    assert error_of(excinfo) == (
        "ResourceInUseException",
        IN_USE + "Cannot delete table while indexes are being created, updated, or deleted.",
    )
    ddb.update_table(TableName=table, VectorIndexUpdates=[{"Delete": {"IndexName": "vix"}}])
    advance(phased.url, 2000)
    _until(ddb, table, lambda doc: doc is None)
    assert ddb.delete_table(TableName=table)["TableDescription"]["TableStatus"] == "DELETING"


def test_partiql_select_from_a_vector_index(ddb: Any, table_name: str) -> None:
    """partiql (eu-west-2, 2026-08-11): the Scan answer; the base table reads the vector as stored."""
    _table(ddb, table_name, VectorIndexes=[_index()])
    ddb.put_item(TableName=table_name, Item={"pk": {"S": "a"}, "embedding": _vec(1, 0, 0)})
    with pytest.raises(ClientError) as excinfo:
        ddb.execute_statement(Statement=f'SELECT * FROM "{table_name}"."vix"')
    assert error_of(excinfo) == ("ValidationException", "Scan operation not supported on this index type")
    items = ddb.execute_statement(Statement=f"SELECT * FROM \"{table_name}\" WHERE pk = 'a'")["Items"]
    assert items == [{"pk": {"S": "a"}, "embedding": _vec(1, 0, 0)}]


#: A 38-digit integer: 20 bytes as a number, 4 as a billed dimension.
WIDE = "12345678901234567890123456789012345678"


def _stored_vector(dims: int) -> int:
    return 3 + dims * (1 + 20)


def _sized(target: int, key: str, attribute: str, dims: int, vector_bytes: int) -> dict[str, Any]:
    """An item of `target` bytes with its vector counted as `vector_bytes`: key, vector, padding."""
    fixed = len("pk") + len(key) + len(attribute) + vector_bytes + len("pad")
    return {"pk": {"S": key}, attribute: {"L": [{"N": WIDE}] * dims}, "pad": {"S": "a" * (target - fixed)}}


def test_a_vector_is_billed_four_bytes_a_dimension_on_writes(ddb: Any, table_name: str) -> None:
    """consumedCapacity (eu-west-2, us-east-1, 2026-10-09): writes bill name + 4 x dimensions;
    reads and the 400 KB limit size the vector as its numbers."""
    _table(ddb, table_name, VectorIndexes=[_index(), _index("vdims", "sixdimvec", 6)])

    def units(item: dict[str, Any]) -> float:
        answer = ddb.put_item(TableName=table_name, Item=item, ReturnConsumedCapacity="TOTAL")
        return answer["ConsumedCapacity"]["CapacityUnits"]

    for dims, attribute in ((3, "embedding"), (6, "sixdimvec")):
        assert units(_sized(1024, f"a{dims}", attribute, dims, 4 * dims)) == 1.0
        assert units(_sized(1025, f"b{dims}", attribute, dims, 4 * dims)) == 2.0
    # Deleting bills the same figure as writing it did.
    gone = ddb.delete_item(TableName=table_name, Key={"pk": {"S": "a3"}}, ReturnConsumedCapacity="TOTAL")
    assert gone["ConsumedCapacity"]["CapacityUnits"] == 1.0

    item = _sized(4096, "r6", "sixdimvec", 6, 24)  # 4,096 billed, 4,195 stored
    ddb.put_item(TableName=table_name, Item=item)
    read = ddb.get_item(TableName=table_name, Key={"pk": item["pk"]}, ConsistentRead=True,
                        ReturnConsumedCapacity="TOTAL")
    assert read["ConsumedCapacity"]["CapacityUnits"] == 2.0

    limit = 400 * 1024
    ddb.put_item(TableName=table_name, Item=_sized(limit, "g0", "sixdimvec", 6, _stored_vector(6)))
    with pytest.raises(ClientError) as excinfo:
        ddb.put_item(TableName=table_name, Item=_sized(limit + 1, "g1", "sixdimvec", 6, _stored_vector(6)))
    assert error_of(excinfo) == ("ValidationException", "Item size has exceeded the maximum allowed size")


def test_an_unindexed_list_is_billed_as_stored(ddb: Any, table_name: str) -> None:
    """Only an attribute a vector index reads is billed by dimension; another list is its numbers."""
    _table(ddb, table_name, VectorIndexes=[_index()])
    item = _sized(1024, "u3", "other", 3, _stored_vector(3))
    answer = ddb.put_item(TableName=table_name, Item=item, ReturnConsumedCapacity="TOTAL")
    assert answer["ConsumedCapacity"]["CapacityUnits"] == 1.0
    item = _sized(1025, "v3", "other", 3, _stored_vector(3))
    answer = ddb.put_item(TableName=table_name, Item=item, ReturnConsumedCapacity="TOTAL")
    assert answer["ConsumedCapacity"]["CapacityUnits"] == 2.0
