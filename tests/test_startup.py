"""What a plain `partita serve` has imported once it answers: start-up's budget as a module list.

Issue 27: nothing optional is imported before it is used. A server that has
answered its first request, or a few plain item requests, must not have
loaded vector search (numpy, usearch), the console (Jinja2), backups and
exports (Amazon Ion, zstandard), PostgreSQL, PartiQL, Prometheus' client or
the AWS SDK (the shape validator reads botocore's model file, not its
client). The assertions are on module names, never on a timing: speed is
measured by bench/ (`bench/startup.py`), not in a test.
"""

from __future__ import annotations

import http.client
import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config

#: Runs `partita serve` in this interpreter and writes every imported module's name at exit
#: (after SIGTERM's graceful stop): what the server had loaded by then, start-up included.
_PROBE = """
import atexit, sys
def dump():
    with open(sys.argv[1], "w") as out:
        out.write("\\n".join(sorted(sys.modules)))
atexit.register(dump)
from partita.cli import main
main(sys.argv[2:])
"""

#: Packages a plain server must not import, and Partita's own optional parts.
NOT_AT_START = (
    "numpy", "usearch", "jinja2", "markupsafe", "psycopg", "psycopg_pool", "amazon", "zstandard",
    "prometheus_client", "boto3", "botocore", "urllib3", "dateutil", "s3transfer", "uvicorn",
    "partita.console", "partita.partiql", "partita.api.partiql", "partita.api.vector",
    "partita.api.backups", "partita.api.exports", "partita.admin.metrics", "partita.admin.backup_metrics",
    "partita.engine.vector.search", "partita.engine.vector.matrix", "partita.engine.vector.jobs",
    "partita.engine.backups.service", "partita.engine.backups.exports", "partita.engine.backups.export_job",
    "partita.engine.backups.imports", "partita.engine.backups.formats", "partita.engine.backups.objects",
    "partita.engine.backups.ondemand", "partita.engine.backups.restore",
    "partita.protocol.auth", "partita.protocol.tls", "partita.storage.postgres", "partita.storage.pg_schema",
    "partita.storage.sqlite", "sqlite3",  # the --data-dir store's
    "partita.cli.advise", "partita.cli.clock", "partita.cli.data", "partita.cli.remote", "partita.cli.streams",
)

#: What only the item operations (and streams) need, on top of the above: not loaded before
#: the first one. hashlib is for transactions' idempotency tokens and streams' shard ids and
#: iterators.
ITEM_PARTS = ("partita.engine.expressions", "partita.engine.items", "partita.api.items", "partita.api.reads",
              "hashlib", "hmac")

_AUTH = (
    "AWS4-HMAC-SHA256 Credential=partita/20240101/us-east-1/dynamodb/aws4_request, "
    "SignedHeaders=host;x-amz-date, Signature=0000"
)


def _matching(modules: list[str], names: tuple[str, ...]) -> list[str]:
    return [m for m in modules if any(m == name or m.startswith(name + ".") for name in names)]


class Probe:
    """A `partita serve --in-memory` whose imported modules are read after it stops."""

    def __init__(self, tmp_path: Path, *args: str) -> None:
        self.modules_file = tmp_path / "modules.txt"
        self.process = subprocess.Popen(
            [sys.executable, "-c", _PROBE, str(self.modules_file), "serve", "--port", "0", *args],
            stdout=subprocess.PIPE, text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert "://" in line, line
        self.url = line.strip().split()[-1]

    def post(self, operation: str, body: dict[str, Any]) -> tuple[int, Any]:
        host, port = self.url.rsplit("/", 1)[-1].rsplit(":", 1)
        connection = http.client.HTTPConnection(host, int(port), timeout=30)
        try:
            connection.request("POST", "/", json.dumps(body).encode(), {
                "X-Amz-Target": f"DynamoDB_20120810.{operation}",
                "Content-Type": "application/x-amz-json-1.0",
                "X-Amz-Date": "20240101T000000Z",
                "Authorization": _AUTH,
            })
            response = connection.getresponse()
            return response.status, json.loads(response.read() or b"null")
        finally:
            connection.close()

    def stop(self) -> list[str]:
        """SIGTERM, then the modules the server had imported (it exits 0 after a graceful stop)."""
        self.process.send_signal(signal.SIGTERM)
        assert self.process.wait(30) == 0
        return self.modules_file.read_text().split("\n")

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(30)


@pytest.fixture
def probe(tmp_path: Path) -> Iterator[Probe]:
    server = Probe(tmp_path, "--in-memory")
    yield server
    server.kill()


def test_first_request_loads_nothing_optional(probe: Probe) -> None:
    assert probe.post("ListTables", {}) == (200, {"TableNames": []})
    modules = probe.stop()
    assert "partita.api.tables" in modules  # the probe saw the server's modules
    assert _matching(modules, NOT_AT_START) == []
    assert _matching(modules, ITEM_PARTS) == []


def test_plain_item_requests_load_nothing_optional(probe: Probe) -> None:
    ddb = boto3.client("dynamodb", endpoint_url=probe.url, region_name="us-east-1",
                       aws_access_key_id="partita", aws_secret_access_key="partita",
                       config=Config(retries={"max_attempts": 1}))
    ddb.create_table(
        TableName="plain", BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "N"}],
    )
    ddb.put_item(TableName="plain", Item={"pk": {"S": "a"}, "sk": {"N": "1"}, "v": {"S": "x"}},
                 ConditionExpression="attribute_not_exists(pk)")
    ddb.update_item(TableName="plain", Key={"pk": {"S": "a"}, "sk": {"N": "1"}},
                    UpdateExpression="SET v = :v", ExpressionAttributeValues={":v": {"S": "y"}})
    ddb.batch_write_item(RequestItems={"plain": [{"PutRequest": {"Item": {"pk": {"S": "a"}, "sk": {"N": "2"}}}}]})
    assert ddb.get_item(TableName="plain", Key={"pk": {"S": "a"}, "sk": {"N": "1"}})["Item"] == {
        "pk": {"S": "a"}, "sk": {"N": "1"}, "v": {"S": "y"}}
    found = ddb.query(TableName="plain", KeyConditionExpression="pk = :p",
                      ExpressionAttributeValues={":p": {"S": "a"}})
    assert [item["sk"] for item in found["Items"]] == [{"N": "1"}, {"N": "2"}]
    assert ddb.scan(TableName="plain")["Count"] == 2
    ddb.delete_item(TableName="plain", Key={"pk": {"S": "a"}, "sk": {"N": "2"}})
    ddb.transact_write_items(TransactItems=[
        {"Put": {"TableName": "plain", "Item": {"pk": {"S": "b"}, "sk": {"N": "1"}}}}])
    ddb.describe_table(TableName="plain")
    modules = probe.stop()
    assert "partita.engine.items.single" in modules
    assert _matching(modules, NOT_AT_START) == []


def test_the_protocol_layer_routes_the_prefixes_the_admin_api_and_console_serve() -> None:
    """app.py routes by its own copies of the prefixes so as not to import either package."""
    from partita.admin import routes as admin_routes
    from partita.console import routes as console_routes
    from partita.protocol import app

    assert app.ADMIN_PREFIX == admin_routes.PREFIX
    assert app.CONSOLE_PREFIX == console_routes.PREFIX
    for path in (b"/console", b"/console/", b"/console/tables/x", b"/console?a=1", b"/consoles", b"/", b"/consol"):
        assert app.is_console(path) == console_routes.is_console(path), path
