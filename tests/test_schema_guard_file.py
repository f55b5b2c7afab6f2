"""A schema file Partita cannot use stops `partita serve` at start-up, saying where and why.

The messages are Partita's own (there is no DynamoDB counterpart); the
parts quoted from jsonschema and from Python's JSON reader are theirs.
Store-independent: each case is one `partita serve --in-memory` that exits.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import client_for, error_of, launch
from guard_helpers import REJECTED, keyed_table

pytestmark = pytest.mark.skipif(os.environ.get("PARTITA_TEST_STORE", "memory") != "memory",
                                reason="store-independent; runs with PARTITA_TEST_STORE=memory")

CUSTOMER = {"name": "Customer", "table": "Shop", "match": {"pk": "CLIENTE#*"},
            "schema": {"type": "object", "required": ["email"]}}


def start_up_error(path: Path, env: dict[str, str] | None = None) -> str:
    """What `partita serve --schema path` prints before exiting with status 1 (it must not serve)."""
    process = subprocess.run(
        [sys.executable, "-m", "partita", "serve", "--in-memory", "--port", "0", "--schema", str(path)],
        capture_output=True, text=True, timeout=60, env=env,
    )
    assert process.returncode == 1, process.stdout
    assert process.stdout == ""
    return process.stderr.strip()


def write(tmp_path: Path, document: Any, name: str = "schema.json") -> Path:
    path = tmp_path / name
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return path


@pytest.mark.parametrize(("document", "fault"), [
    ('{"mode": ', "not JSON (Expecting value: line 1 column 10 (char 9))"),
    ("[]", "[] is not of type 'object'"),
    ({"mode": "reject"}, "'entities' is a required property"),
    ({"mode": "strict", "entities": [CUSTOMER]}, "at mode: 'strict' is not one of ['reject', 'warn']"),
    ({"entities": [CUSTOMER], "entites": []}, "Additional properties are not allowed ('entites' was unexpected)"),
    ({"entities": []}, "at entities: [] should be non-empty"),
    ({"entities": [{**CUSTOMER, "schema": None}]}, "at entities[0].schema: None is not of type 'object', 'boolean'"),
    ({"entities": [{k: v for k, v in CUSTOMER.items() if k != "table"}]}, "at entities[0]: 'table' is a required property"),
    ({"entities": [{**CUSTOMER, "match": {"pk": 3}}]}, "at entities[0].match.pk: 3 is not of type 'string'"),
    ({"entities": [{**CUSTOMER, "name": ""}]}, "at entities[0].name: '' should be non-empty"),
    ({"entities": [CUSTOMER, CUSTOMER]}, "entities[1] (Customer): another entity has this name"),
    ({"entities": [{**CUSTOMER, "schema": {"type": "strin"}}]},
     "entities[0] (Customer): not a valid JSON Schema: at schema.type: 'strin' is not valid under any of the given schemas"),
    ({"entities": [{**CUSTOMER, "schema": {"properties": {"a": {"minimum": "1"}}}}]},
     "entities[0] (Customer): not a valid JSON Schema: at schema.properties.a.minimum: '1' is not of type 'number'"),
    ({"entities": [{**CUSTOMER, "schema": {"$ref": "https://example.com/s.json"}}]},
     "entities[0] (Customer): at schema.$ref: 'https://example.com/s.json' is not a reference inside this "
     "schema (only '#...' references are followed; nothing is fetched)"),
    ({"entities": [{**CUSTOMER, "schema": {"properties": {"a": {"$ref": "#/$defs/nope"}}}}]},
     "entities[0] (Customer): at schema.properties.a.$ref: '#/$defs/nope' points to nothing in this schema"),
])
def test_a_malformed_schema_file_is_a_start_up_error(tmp_path: Path, document: Any, fault: str) -> None:
    path = write(tmp_path, document)
    assert start_up_error(path) == f"partita: --schema: {path}: {fault}"


def test_a_missing_file_is_a_start_up_error(tmp_path: Path) -> None:
    path = tmp_path / "absent.json"
    assert start_up_error(path) == (
        f"partita: --schema: {path}: cannot read it ([Errno 2] No such file or directory: '{path}')")


def test_a_yaml_file_without_pyyaml_is_a_clear_start_up_error(tmp_path: Path) -> None:
    path = write(tmp_path, "entities: []\n", "schema.yaml")
    # A `yaml` package that cannot be imported, first on the path: as if PyYAML were not installed.
    fake = tmp_path / "site" / "yaml"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('No module named yaml')\n")
    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), root])}
    assert start_up_error(path, env) == (
        f"partita: --schema: {path}: reading a YAML schema file needs PyYAML, which is not installed "
        "(pip install 'partita[schema]', or give the file as JSON)")


def test_yaml_values_json_has_no_word_for_are_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "entities:\n- name: A\n  table: Shop\n  schema:\n    properties:\n"
                 "      day: {const: 2026-01-01}\n", "schema.yml")
    assert start_up_error(path) == (
        f"partita: --schema: {path}: at entities[0].schema.properties.day.const: datetime.date(2026, 1, 1) "
        "is not a JSON value (quote it to make it a string)")
    path = write(tmp_path, "entities: [{name: A, table: Shop, match: {1: x}, schema: {}}]\n", "schema.yaml")
    assert start_up_error(path) == f"partita: --schema: {path}: at entities[0].match: the key 1 is not a string (quote it)"


def test_a_yaml_schema_file_is_served_like_its_json(tmp_path: Path) -> None:
    path = write(tmp_path, """
mode: reject
entities:
  - name: Order
    table: Shop
    match: {pk: "CLIENTE#*", sk: "PEDIDO#*"}
    schema:
      type: object
      required: [total]
      properties:
        total: {type: number, multipleOf: 0.01}
""", "schema.yaml")
    srv = launch("--in-memory", "--schema", str(path))
    try:
        ddb = client_for(srv.url)
        keyed_table(ddb, "Shop")
        order = {"pk": {"S": "CLIENTE#1"}, "sk": {"S": "PEDIDO#1"}}
        ddb.put_item(TableName="Shop", Item={**order, "total": {"N": "19.99"}})  # exact, though YAML read a float
        with pytest.raises(Exception) as caught:
            ddb.put_item(TableName="Shop", Item={**order, "total": {"N": "0.001"}})
        assert error_of(caught) == ("ValidationException", REJECTED.format(
            entity="Order", error="at total: 0.001 is not a multiple of 0.01"))
    finally:
        srv.stop()
