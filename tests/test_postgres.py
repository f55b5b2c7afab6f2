"""The PostgreSQL backend: schema versions, many servers over one database, real concurrency.

These run in the PostgreSQL pass of `./dev test` (they need its cluster);
each test gets a database of its own.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import psycopg
import pytest
from botocore.exceptions import ClientError
from conftest import Server, client_for, create_table, fresh_database, needs_postgres

pytestmark = needs_postgres()


def _meta(url: str, name: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT value FROM partita_meta WHERE name = %s", (name,)).fetchone()
        assert row is not None
        return int(row[0])


def test_schema_created_on_first_start_and_version_recorded(start_server: Callable[..., Server]) -> None:
    url = fresh_database()
    server = start_server("--backend", url)
    create_table(client_for(server.url), "first")
    assert _meta(url, "schema_version") == 3
    with psycopg.connect(url) as conn:
        columns = conn.execute(
            "SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid "
            "AND a.attnum = ANY(i.indkey) WHERE i.indrelid = 'partita_kv'::regclass AND i.indisprimary "
            "ORDER BY array_position(i.indkey, a.attnum)"
        ).fetchall()
    assert [c[0] for c in columns] == ["tid", "ph", "k"]


def test_newer_partita_upgrades_an_older_schema(start_server: Callable[..., Server]) -> None:
    url = fresh_database()
    first = start_server("--backend", url)
    ddb = client_for(first.url)
    create_table(ddb, "kept")
    ddb.put_item(TableName="kept", Item={"pk": {"S": "a"}})
    first.stop()
    with psycopg.connect(url, autocommit=True) as conn:  # what version 1 left behind
        conn.execute("DROP INDEX partita_kv_k")
        conn.execute("DROP TABLE IF EXISTS partita_capacity")
        conn.execute("UPDATE partita_meta SET value = 1 WHERE name = 'schema_version'")
    second = start_server("--backend", url)
    ddb = client_for(second.url)
    assert _meta(url, "schema_version") == 3
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT to_regclass('partita_kv_k') IS NOT NULL").fetchone() == (True,)
        assert conn.execute("SELECT to_regclass('partita_capacity') IS NOT NULL").fetchone() == (True,)
    assert ddb.scan(TableName="kept")["Items"] == [{"pk": {"S": "a"}}]


def test_older_partita_refuses_a_newer_schema() -> None:
    url = fresh_database()
    proc = subprocess.run(
        [sys.executable, "-c", f"from partita.storage.postgres import PostgresStore; PostgresStore({url!r}).close()"],
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 0
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE partita_meta SET value = 99 WHERE name = 'schema_version'")
    proc = subprocess.run(
        [sys.executable, "-m", "partita", "serve", "--port", "0", "--backend", url],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert proc.stderr.strip() == (
        "partita: the database schema is version 99, made by a newer Partita; this Partita "
        "understands versions up to 3. Upgrade Partita to serve this database."
    )
    assert _meta(url, "schema_version") == 99


def test_servers_share_tables_and_items(start_server: Callable[..., Server]) -> None:
    url = fresh_database()
    one = client_for(start_server("--backend", url, "--workers", "2").url)
    two = client_for(start_server("--backend", url, "--workers", "2").url)
    create_table(one, "shared", range_key=("sk", "N"))
    # Learned through NOTIFY, well before the listener's 2-second re-read would find it.
    deadline = time.monotonic() + 1.0
    while "shared" not in two.list_tables()["TableNames"]:
        assert time.monotonic() < deadline, "the other server did not learn of the table"
        time.sleep(0.01)
    for i in range(20):
        (one if i % 2 else two).put_item(TableName="shared", Item={"pk": {"S": "p"}, "sk": {"N": str(i)}})
    for ddb in (one, two):
        got = ddb.query(
            TableName="shared", KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": "p"}}
        )
        assert [int(i["sk"]["N"]) for i in got["Items"]] == list(range(20))


def _write_kinds(name: str, key: str) -> dict[str, Callable[[Any], Any]]:
    """One write of each kind: a single item, and batches whose rows are read in one round trip."""
    items = [{"pk": {"S": key}}, {"pk": {"S": key + "2"}}]
    return {
        "put": lambda ddb: ddb.put_item(TableName=name, Item=items[0]),
        "batch": lambda ddb: ddb.batch_write_item(RequestItems={name: [{"PutRequest": {"Item": i}} for i in items]}),
        "transaction": lambda ddb: ddb.transact_write_items(
            TransactItems=[{"Put": {"TableName": name, "Item": i}} for i in items]),
    }


@pytest.mark.parametrize("kind", ["put", "batch", "transaction"])
def test_write_after_delete_on_another_server_finds_no_table(start_server: Callable[..., Server], kind: str) -> None:
    """The generation is re-read inside every write: no write lands in a table another server deleted."""
    url = fresh_database()
    one = client_for(start_server("--backend", url).url)
    two = client_for(start_server("--backend", url).url)
    for round_ in range(5):
        name = f"short-lived-{round_}"
        create_table(one, name)
        deadline = time.monotonic() + 5
        while True:  # until the second server has the table cached
            try:
                _write_kinds(name, "x")[kind](two)
                break
            except ClientError as error:
                assert error.response["Error"]["Code"] == "ResourceNotFoundException"
                assert time.monotonic() < deadline
        one.delete_table(TableName=name)
        with pytest.raises(ClientError) as excinfo:  # at once: no waiting for the NOTIFY
            _write_kinds(name, "y")[kind](two)
        assert excinfo.value.response["Error"]["Code"] == "ResourceNotFoundException"


def test_duty_lock_held_by_one_store_at_a_time() -> None:
    from partita.storage.postgres import PostgresStore

    url = fresh_database()
    first, second = PostgresStore(url), PostgresStore(url)
    try:
        with first.duty_lock() as got:
            assert got
            with second.duty_lock() as other:
                assert not other
            with first.duty_lock() as again:  # not reentrant within one process either
                assert not again
        with second.duty_lock() as got:
            assert got
    finally:
        first.close()
        second.close()


def test_duty_lock_released_when_its_server_dies(start_server: Callable[..., Server]) -> None:
    from partita.storage.postgres import PostgresStore

    url = fresh_database()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from partita.storage.postgres import PostgresStore\n"
            f"s = PostgresStore({url!r})\n"
            "with s.duty_lock() as got:\n"
            "    print(got, flush=True)\n"
            "    time.sleep(60)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == "True"
    store = PostgresStore(url)
    try:
        with store.duty_lock() as got:
            assert not got
        holder.kill()
        holder.wait(10)
        deadline = time.monotonic() + 10
        while True:
            with store.duty_lock() as got:
                if got:
                    break
            assert time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        store.close()


def _error_code(error: ClientError) -> str:
    return str(error.response["Error"]["Code"])


def test_conflicts_surface_as_dynamodb_does(start_server: Callable[..., Server]) -> None:
    """Transactions and plain writes racing on two servers: DynamoDB's errors, never a 500, no lost update."""
    url = fresh_database()
    urls = [start_server("--backend", url, "--workers", "2").url for _ in range(2)]
    setup = client_for(urls[0])
    create_table(setup, "race")
    for key in ("a", "b"):
        setup.put_item(TableName="race", Item={"pk": {"S": key}, "n": {"N": "0"}})
    applied = {"a": 0, "b": 0}
    seen: dict[str, int] = {}
    lock = threading.Lock()
    bad: list[Any] = []

    def add(key: str, by: int = 1) -> dict[str, Any]:
        return {
            "Update": {
                "TableName": "race",
                "Key": {"pk": {"S": key}},
                "UpdateExpression": "ADD n :one",
                "ExpressionAttributeValues": {":one": {"N": str(by)}},
            }
        }

    def transactions(slot: int) -> None:
        ddb = client_for(urls[slot % 2])
        for _ in range(40):
            try:
                ddb.transact_write_items(TransactItems=[add("a"), add("b")])
            except ClientError as error:
                code = _error_code(error)
                reasons = [r["Code"] for r in error.response.get("CancellationReasons", [])]
                if code != "TransactionCanceledException" or set(reasons) != {"TransactionConflict"}:
                    bad.append((code, error.response["Error"]["Message"], reasons))
                with lock:
                    seen[code] = seen.get(code, 0) + 1
                continue
            with lock:
                applied["a"] += 1
                applied["b"] += 1

    def plain(slot: int) -> None:
        ddb = client_for(urls[slot % 2])
        for _ in range(60):
            try:
                ddb.update_item(
                    TableName="race",
                    Key={"pk": {"S": "a"}},
                    UpdateExpression="ADD n :one",
                    ExpressionAttributeValues={":one": {"N": "1"}},
                )
            except ClientError as error:
                code = _error_code(error)
                if (code, error.response["Error"]["Message"]) != (
                    "TransactionConflictException",
                    "Transaction is ongoing for the item",
                ):
                    bad.append((code, error.response["Error"]["Message"]))
                with lock:
                    seen[code] = seen.get(code, 0) + 1
                continue
            with lock:
                applied["a"] += 1

    threads = [threading.Thread(target=transactions, args=(i,)) for i in range(3)]
    threads += [threading.Thread(target=plain, args=(i,)) for i in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    print("errors seen:", seen, "applied:", applied)
    assert bad == []
    final = {
        key: int(setup.get_item(TableName="race", Key={"pk": {"S": key}}, ConsistentRead=True)["Item"]["n"]["N"])
        for key in ("a", "b")
    }
    assert final == applied  # every acknowledged increment, and no failed one, is in the table
    assert applied["b"] > 0 and applied["a"] > applied["b"]


def _waiting_for_a_table_lock(url: str) -> bool:
    """Whether a session of this database (not another test's) waits for a table lock."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_locks WHERE NOT granted AND locktype = 'relation' "
            "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
        ).fetchone()
        return row is not None and row[0] > 0


@pytest.mark.parametrize("kind", ["transaction", "update"])
def test_a_cycle_of_reads_and_writes_sharing_no_item_is_run_again(
    start_server: Callable[..., Server], kind: str
) -> None:
    """PostgreSQL's serializable check can cancel a write that shares no item with any other writer
    (its predicate locks cover whole ranges and index pages: a background index job, another table's
    write). DynamoDB has no such conflict, so the write runs again inside Partita; a TransactWriteItems
    is not cancelled with TransactionConflict for it, and a plain write is not refused."""
    url = fresh_database()
    ddb = client_for(start_server("--backend", url).url)
    create_table(ddb, "pivot")
    ddb.put_item(TableName="pivot", Item={"pk": {"S": "a"}, "n": {"N": "0"}})
    update = {"TableName": "pivot", "Key": {"pk": {"S": "a"}}, "UpdateExpression": "SET n = :one",
              "ExpressionAttributeValues": {":one": {"N": "1"}}}
    outcome: list[Any] = []

    def write() -> None:
        try:
            if kind == "transaction":
                outcome.append(ddb.transact_write_items(TransactItems=[{"Update": update}]))
            else:
                outcome.append(ddb.update_item(**update))
        except ClientError as error:
            outcome.append(error.response)

    # Another transaction that reads every row and rewrites the row every write reads (the catalog
    # generation, unchanged), holding the rows' table until the write waits for it: the two then form
    # a cycle of reads and writes through no item, and the write is the one PostgreSQL cancels.
    with psycopg.connect(url, autocommit=True) as other:
        other.execute("BEGIN ISOLATION LEVEL SERIALIZABLE")
        other.execute("SELECT count(*) FROM partita_kv")
        other.execute("UPDATE partita_meta SET value = value WHERE name = 'generation'")
        other.execute("LOCK TABLE partita_kv IN SHARE MODE")
        writer = threading.Thread(target=write)
        writer.start()
        deadline = time.monotonic() + 30
        while not _waiting_for_a_table_lock(url):
            assert time.monotonic() < deadline, "the write never reached the table"
            time.sleep(0.01)
        other.execute("COMMIT")
    writer.join(30)
    assert outcome and "Error" not in outcome[0], outcome
    item = ddb.get_item(TableName="pivot", Key={"pk": {"S": "a"}}, ConsistentRead=True)["Item"]
    assert item == {"pk": {"S": "a"}, "n": {"N": "1"}}
