"""The command line: start-up line, `python -m partita`, and the AWS CLI as a client."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import Server


def aws(endpoint: str, *args: str) -> dict[str, object]:
    env = {**os.environ, "AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x", "AWS_DEFAULT_REGION": "us-east-1"}
    out = subprocess.run(
        [str(Path(sys.executable).parent / "aws"), "dynamodb", *args, "--endpoint-url", endpoint, "--output", "json"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=60,
    )
    return json.loads(out.stdout) if out.stdout.strip() else {}


def test_aws_cli_round_trip(server: Server, table_name: str) -> None:
    aws(
        server.url, "create-table", "--table-name", table_name,
        "--attribute-definitions", "AttributeName=id,AttributeType=S",
        "--key-schema", "AttributeName=id,KeyType=HASH",
        "--billing-mode", "PAY_PER_REQUEST",
    )
    aws(server.url, "wait", "table-exists", "--table-name", table_name)
    aws(server.url, "put-item", "--table-name", table_name, "--item", '{"id": {"S": "1"}, "n": {"N": "007"}}')
    item = aws(server.url, "get-item", "--table-name", table_name, "--key", '{"id": {"S": "1"}}')
    assert item == {"Item": {"id": {"S": "1"}, "n": {"N": "7"}}}
    assert table_name in aws(server.url, "list-tables")["TableNames"]  # type: ignore[operator]
    failed = subprocess.run(
        [str(Path(sys.executable).parent / "aws"), "dynamodb", "put-item", "--table-name", table_name,
         "--item", '{"id": {"S": "1"}}', "--condition-expression", "attribute_not_exists(id)",
         "--endpoint-url", server.url],
        capture_output=True, text=True,
        env={**os.environ, "AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x", "AWS_DEFAULT_REGION": "us-east-1"},
        timeout=60,
    )
    assert failed.returncode != 0
    assert "ConditionalCheckFailedException" in failed.stderr


def test_python_m_partita_prints_url(tmp_path: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "partita", "serve", "--port", "0", "--data-dir", str(tmp_path / "d")],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("Partita serving DynamoDB at http://127.0.0.1:")
        assert (tmp_path / "d" / "partita.sqlite3").exists()
    finally:
        process.terminate()
        process.wait(10)
