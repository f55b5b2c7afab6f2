"""Every hot-path statement Partita issues is routable by the distribution column (docs/postgresql.md).

The test applies the documented schema DDL (the PostgreSQL-compatible part of
the Citus layout) to a fresh cluster before Partita first starts, logs every
statement PostgreSQL runs, drives each kind of request, and reads the log:
a statement on `partita_kv` that names no `ph = ...` and ranges over the
tables' row space (keys starting 0x01) may only come from the phases the
document lists as cross-shard (Scan, DescribeTable's counts).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
from conftest import Server, client_for, needs_postgres
from pg_helpers import own_cluster

pytestmark = needs_postgres()

DOC = Path(__file__).parent.parent / "docs" / "postgresql.md"
CROSS_SHARD_PHASES = {"scan", "describe"}


def _schema_ddl() -> str:
    """The first SQL block of docs/postgresql.md: the schema, as the Citus layout starts from."""
    blocks = re.findall(r"```sql\n(.*?)```", DOC.read_text(), re.S)
    return blocks[0]


def _phases(log: str) -> dict[str, list[tuple[str, str]]]:
    """(statement, its parameters) on partita_kv, grouped by the phase markers the test logged."""
    phase = "start"
    out: dict[str, list[tuple[str, str]]] = {}
    lines = log.splitlines()
    for i, line in enumerate(lines):
        marker = re.search(r"statement: SELECT 'phase:(\w+)'", line)
        if marker:
            phase = marker.group(1)
            continue
        if "partita_kv" not in line or ("statement:" not in line and "execute" not in line):
            continue
        params = lines[i + 1] if i + 1 < len(lines) and "detail:  parameters:" in lines[i + 1].lower() else ""
        out.setdefault(phase, []).append((line, params))
    return out


def _key_params(params: str) -> list[str]:
    return re.findall(r"'\\x([0-9a-f]*)'", params)


def test_hot_path_statements_name_the_distribution_column(start_server: Callable[..., Server]) -> None:
    with own_cluster() as (url, folder):
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(_schema_ddl())
            conn.execute("ALTER SYSTEM SET log_statement = 'all'")
            conn.execute("SELECT pg_reload_conf()")
        marker = psycopg.connect(url, autocommit=True)
        server = start_server("--backend", url)
        ddb = client_for(server.url)

        def phase(name: str) -> None:
            time.sleep(0.3)  # the duties' tick statements of the previous phase land first
            marker.execute(f"SELECT 'phase:{name}'")

        phase("setup")
        ddb.create_table(
            TableName="routed",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
            AttributeDefinitions=[
                {"AttributeName": a, "AttributeType": t} for a, t in (("pk", "S"), ("sk", "N"), ("g", "S"), ("l", "N"))
            ],
            GlobalSecondaryIndexes=[
                {"IndexName": "by-g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}], "Projection": {"ProjectionType": "ALL"}}
            ],
            LocalSecondaryIndexes=[
                {
                    "IndexName": "by-l",
                    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "l", "KeyType": "RANGE"}],
                    "Projection": {"ProjectionType": "ALL"},
                }
            ],
            StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
            BillingMode="PAY_PER_REQUEST",
        )
        item = lambda n: {"pk": {"S": "p"}, "sk": {"N": str(n)}, "g": {"S": "x"}, "l": {"N": str(-n)}}  # noqa: E731
        key = lambda n: {"pk": {"S": "p"}, "sk": {"N": str(n)}}  # noqa: E731
        calls: list[tuple[str, Callable[[], Any]]] = [
            ("put", lambda: ddb.put_item(TableName="routed", Item=item(1))),
            ("get", lambda: ddb.get_item(TableName="routed", Key=key(1), ConsistentRead=True)),
            ("update", lambda: ddb.update_item(TableName="routed", Key=key(1), UpdateExpression="SET v = :v",
                                               ExpressionAttributeValues={":v": {"S": "v"}})),
            ("batchwrite", lambda: ddb.batch_write_item(RequestItems={"routed": [{"PutRequest": {"Item": item(n)}} for n in (2, 3)]})),
            ("batchget", lambda: ddb.batch_get_item(RequestItems={"routed": {"Keys": [key(2), key(3)]}})),
            ("transactwrite", lambda: ddb.transact_write_items(
                TransactItems=[{"Put": {"TableName": "routed", "Item": item(4)}}, {"Delete": {"TableName": "routed", "Key": key(3)}}],
                ClientRequestToken="token-1")),
            ("transactget", lambda: ddb.transact_get_items(TransactItems=[{"Get": {"TableName": "routed", "Key": key(4)}}])),
            ("query", lambda: ddb.query(TableName="routed", KeyConditionExpression="pk = :p AND sk > :s",
                                        ExpressionAttributeValues={":p": {"S": "p"}, ":s": {"N": "0"}}, ScanIndexForward=False)),
            ("querylsi", lambda: ddb.query(TableName="routed", IndexName="by-l", KeyConditionExpression="pk = :p",
                                           ExpressionAttributeValues={":p": {"S": "p"}})),
            ("querygsi", lambda: ddb.query(TableName="routed", IndexName="by-g", KeyConditionExpression="g = :g",
                                           ExpressionAttributeValues={":g": {"S": "x"}})),
            ("delete", lambda: ddb.delete_item(TableName="routed", Key=key(4))),
            ("scan", lambda: ddb.scan(TableName="routed")),
            ("describe", lambda: ddb.describe_table(TableName="routed")),
        ]
        for name, call in calls:
            phase(name)
            call()
        phase("end")
        time.sleep(0.3)
        marker.close()
        log = (folder / "log").read_text(errors="replace")
    phases = _phases(log)
    for name, _ in calls:
        assert phases.get(name), f"no statement logged for {name}: the log did not record the requests"
    offenders = []
    for name, statements in phases.items():
        for statement, params in statements:
            if "ph = $" in statement or "INSERT INTO partita_kv" in statement:
                continue
            keys = _key_params(params)
            if any(k.startswith("01") for k in keys) and name not in CROSS_SHARD_PHASES:
                offenders.append((name, statement, params))
    assert offenders == []
    # The log parsing sees what it checks: GetItem's key parameter is an item row key ...
    assert any(k.startswith("01") for _, p in phases["get"] for k in _key_params(p))
    # ... and Scan really is the documented exception, over the row space (the check above can fail).
    assert any("ph = $" not in s and any(k.startswith("01") for k in _key_params(p)) for s, p in phases["scan"])
