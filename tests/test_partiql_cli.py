"""The AWS CLI's `execute-statement`, `batch-execute-statement` and `execute-transaction` against Partita."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import Server, create_table

_ENV = {**os.environ, "AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x", "AWS_DEFAULT_REGION": "us-east-1"}


def cli(endpoint: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(Path(sys.executable).parent / "aws"), "dynamodb", *args, "--endpoint-url", endpoint, "--output", "json"],
        capture_output=True, text=True, env=_ENV, timeout=60,
    )


def ok(endpoint: str, *args: str) -> dict[str, object]:
    done = cli(endpoint, *args)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else {}


def test_cli_execute_statement(server: Server, ddb: object, table_name: str) -> None:
    create_table(ddb, table_name, range_key=("sk", "N"))
    url = server.url
    for sk in (2, 1, 3):
        out = ok(url, "execute-statement", "--statement",
                 f"INSERT INTO \"{table_name}\" VALUE {{'pk': ?, 'sk': ?, 'title': 'song {sk}'}}",
                 "--parameters", json.dumps([{"S": "band"}, {"N": str(sk)}]))
        assert out == {"Items": []}
    out = ok(url, "execute-statement", "--statement",
             f"SELECT sk, title FROM \"{table_name}\" WHERE pk = 'band' ORDER BY sk DESC",
             "--return-consumed-capacity", "TOTAL")
    assert out["Items"] == [
        {"sk": {"N": "3"}, "title": {"S": "song 3"}},
        {"sk": {"N": "2"}, "title": {"S": "song 2"}},
        {"sk": {"N": "1"}, "title": {"S": "song 1"}},
    ]
    assert out["ConsumedCapacity"] == {"TableName": table_name, "CapacityUnits": 0.5}
    page = ok(url, "execute-statement", "--statement", f"SELECT * FROM \"{table_name}\"", "--limit", "2")
    assert len(page["Items"]) == 2  # type: ignore[arg-type]
    rest = ok(url, "execute-statement", "--statement", f"SELECT * FROM \"{table_name}\"", "--limit", "2",
              "--next-token", str(page["NextToken"]))
    assert len(rest["Items"]) == 1  # type: ignore[arg-type]

    failed = cli(url, "execute-statement", "--statement",
                 f"INSERT INTO \"{table_name}\" VALUE {{'pk': 'band', 'sk': 1}}")
    assert failed.returncode != 0
    assert "(DuplicateItemException) when calling the ExecuteStatement operation: Duplicate primary key exists in table" in failed.stderr
    failed = cli(url, "execute-statement", "--statement", f"UPDATE \"{table_name}\" SET a = 1 WHERE pk = 'band'")
    assert failed.returncode != 0
    assert (
        "(ValidationException) when calling the ExecuteStatement operation: "
        "Where clause does not contain a mandatory equality on all key attributes"
    ) in failed.stderr


def test_cli_batch_and_transaction(server: Server, ddb: object, table_name: str) -> None:
    create_table(ddb, table_name)
    url = server.url
    ok(url, "execute-transaction", "--transact-statements", json.dumps([
        {"Statement": f"INSERT INTO \"{table_name}\" VALUE {{'pk': 'a', 'n': 1}}"},
        {"Statement": f"INSERT INTO \"{table_name}\" VALUE {{'pk': 'b', 'n': 2}}"},
    ]))
    out = ok(url, "batch-execute-statement", "--statements", json.dumps([
        {"Statement": f"SELECT n FROM \"{table_name}\" WHERE pk = 'a'"},
        {"Statement": f"SELECT n FROM \"{table_name}\" WHERE pk = 'zz'"},
    ]))
    assert out["Responses"] == [{"TableName": table_name, "Item": {"n": {"N": "1"}}}, {"TableName": table_name}]
