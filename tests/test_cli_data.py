"""`partita load` and `partita dump`, run as users run them, against a real server."""

from __future__ import annotations

import base64
import gzip
import json
import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

from conftest import create_table

TYPED = [
    {"pk": {"S": "a"}, "n": {"N": "12345678901234567890.123456789"}, "b": {"B": base64.b64encode(b"\x00\xff").decode()},
     "ss": {"SS": ["x", "y"]}, "ns": {"NS": ["1", "2.5"]}, "bs": {"BS": [base64.b64encode(b"z").decode()]},
     "m": {"M": {"deep": {"L": [{"BOOL": True}, {"NULL": True}, {"B": base64.b64encode(b"q").decode()}]}}}},
    {"pk": {"S": "b"}},
]


def partita(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "partita", *args], input=stdin, capture_output=True,
                          timeout=120, check=False)


def _by_key(lines: list[dict[str, Any]]) -> dict[str, Any]:
    return {line["Item"]["pk"]["S"]: line for line in lines}


def _canonical(line: dict[str, Any]) -> dict[str, Any]:
    """Sets compare regardless of order."""
    item = {k: ({t: sorted(v)} if t in ("SS", "NS", "BS") else {t: v}) for k, av in line["Item"].items()
            for t, v in av.items()}
    return {"Item": item}


def test_dynamodb_json_lines_round_trip_gzipped(ddb: Any, endpoint: str, table_name: str, tmp_path: Path) -> None:
    create_table(ddb, table_name)
    source = tmp_path / "export.json.gz"
    with gzip.open(source, "wt") as out:  # the S3 export's shape: one {"Item": ...} per line
        for item in TYPED:
            out.write(json.dumps({"Item": item}) + "\n")
    loaded = partita("load", table_name, str(source), "--endpoint", endpoint)
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stderr.decode() == f"loaded 2 items into {table_name}\n"
    got = ddb.get_item(TableName=table_name, Key={"pk": {"S": "a"}})["Item"]
    assert got["b"] == {"B": b"\x00\xff"}
    assert got["n"] == {"N": "12345678901234567890.123456789"}
    assert got["m"]["M"]["deep"]["L"][2] == {"B": b"q"}
    dumped = partita("dump", table_name, "--endpoint", endpoint)
    assert dumped.returncode == 0, dumped.stderr
    assert dumped.stderr.decode() == f"dumped 2 items from {table_name}\n"
    lines = [json.loads(line) for line in dumped.stdout.decode().splitlines()]
    assert {k: _canonical(v) for k, v in _by_key(lines).items()} == {
        k: _canonical(v) for k, v in _by_key([{"Item": i} for i in TYPED]).items()
    }
    # And the dump loads back as it is, compressed or not.
    target = tmp_path / "again.json.gz"
    assert partita("dump", table_name, str(target), "--endpoint", endpoint).returncode == 0
    with gzip.open(target, "rt") as back:
        assert len(back.read().splitlines()) == 2


def test_plain_json_array_is_typed_like_boto3_and_streams(ddb: Any, endpoint: str, table_name: str,
                                                          tmp_path: Path) -> None:
    create_table(ddb, table_name)
    # Big enough to cross the reader's 64 KB chunks many times, and past one batch of 25.
    items = [{"pk": f"k{i:05}", "price": 10.25 + i, "count": i, "tags": ["a", "b"], "meta": {"ok": True,
              "none": None}, "pad": "x" * 60} for i in range(3000)]
    source = tmp_path / "items.json"
    source.write_text(json.dumps(items, indent=1))
    result = partita("load", table_name, str(source), "--endpoint", endpoint)
    assert result.returncode == 0, result.stderr
    assert result.stderr.decode() == f"loaded 3000 items into {table_name}\n"
    got = ddb.get_item(TableName=table_name, Key={"pk": {"S": "k00007"}})["Item"]
    assert got == {"pk": {"S": "k00007"}, "price": {"N": "17.25"}, "count": {"N": "7"},
                   "tags": {"L": [{"S": "a"}, {"S": "b"}]},
                   "meta": {"M": {"ok": {"BOOL": True}, "none": {"NULL": True}}}, "pad": {"S": "x" * 60}}
    out = tmp_path / "out.json"
    dumped = partita("dump", table_name, str(out), "--format", "json", "--endpoint", endpoint)
    assert dumped.returncode == 0, dumped.stderr
    back = json.loads(out.read_text(), parse_float=Decimal)
    assert len(back) == 3000
    assert sorted(back, key=lambda i: i["pk"])[7] == {**items[7], "price": Decimal("17.25")}


def test_plain_json_lines_from_stdin(ddb: Any, endpoint: str, table_name: str) -> None:
    create_table(ddb, table_name)
    lines = b'{"pk": "one", "v": 1}\n\n{"pk": "two", "v": [1, "x"]}\n'
    result = partita("load", table_name, "-", "--endpoint", endpoint, stdin=lines)
    assert result.returncode == 0, result.stderr
    assert ddb.get_item(TableName=table_name, Key={"pk": {"S": "two"}})["Item"]["v"] == {
        "L": [{"N": "1"}, {"S": "x"}]}


def test_errors_are_one_line_and_exit_nonzero(ddb: Any, endpoint: str, table_name: str, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"Item": {"pk": {"S": "a"}}}\n{not json\n')
    create_table(ddb, table_name)
    result = partita("load", table_name, str(bad), "--endpoint", endpoint)
    assert result.returncode == 1
    assert result.stderr.decode().startswith("partita: line 2: not JSON (Expecting property name")
    missing = partita("dump", "no-such-table", "--endpoint", endpoint)
    assert missing.returncode == 1
    assert missing.stderr.decode() == (
        "partita: An error occurred (ResourceNotFoundException) when calling the DescribeTable "
        "operation: Requested resource not found: Table: no-such-table not found\n"
    )
    array = tmp_path / "a.json"
    array.write_text("[]")
    wrong = partita("load", table_name, str(array), "--format", "ddb", "--endpoint", endpoint)
    assert wrong.stderr.decode() == "partita: a JSON array is plain JSON: use --format json (ddb is one item per line)\n"


def test_progress_line_on_a_terminal(ddb: Any, endpoint: str, table_name: str, tmp_path: Path) -> None:
    create_table(ddb, table_name)
    source = tmp_path / "many.jsonl"
    source.write_text("".join(json.dumps({"pk": f"p{i}"}) + "\n" for i in range(60)))
    master, slave = os.openpty()
    try:
        process = subprocess.run([sys.executable, "-m", "partita", "load", table_name, str(source),
                                  "--endpoint", endpoint], stderr=slave, timeout=120, check=False)
        os.close(slave)
        output = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            output += chunk
    finally:
        os.close(master)
    assert process.returncode == 0
    text = output.decode()
    assert "\rloaded 25 items (" in text  # the first redraw, with the share of the file read
    assert text.endswith(f"\rloaded 60 items into {table_name}\x1b[K\r\n")
