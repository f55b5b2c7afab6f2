"""The schema guard from a test suite: `local(schema=...)` and the pytest plugin's `--partita-schema`.

Store-independent (each test runs its own servers): once per `./dev test`, in the memory pass.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import error_of
from guard_helpers import REJECTED, keyed_table

from partita.engine.schema_guard.log import recent, totals, trim
from partita.engine.schema_guard.spec import SchemaFileError
from partita.testing import local

pytestmark = pytest.mark.skipif(os.environ.get("PARTITA_TEST_STORE", "memory") != "memory",
                                reason="store-independent; runs with PARTITA_TEST_STORE=memory")
pytest_plugins = ["pytester"]

SCHEMA: dict[str, Any] = {
    "mode": "reject",
    "entities": [{"name": "Customer", "table": "Shop", "match": {"pk": "CLIENTE#*"},
                  "schema": {"type": "object", "required": ["email"],
                             "properties": {"score": {"type": "number", "maximum": 0.5}}}}],
}
MISSING = REJECTED.format(entity="Customer", error="'email' is a required property")


def _refused(ddb: Any, item: dict[str, Any]) -> tuple[str, str]:
    with pytest.raises(ClientError) as caught:
        ddb.put_item(TableName="Shop", Item=item)
    return error_of(caught)


@pytest.mark.parametrize("subprocess", [False, True], ids=["in-process", "subprocess"])
def test_local_takes_the_schema_as_a_dict(subprocess: bool) -> None:
    with local(schema=SCHEMA, subprocess=subprocess, env=False) as server:
        ddb = server.client()
        keyed_table(ddb, "Shop", sort=None)
        assert _refused(ddb, {"pk": {"S": "CLIENTE#1"}}) == ("ValidationException", MISSING)
        # A float given in Python is exact, as in a file: 0.5 is the maximum, 0.50000000001 is over it.
        ddb.put_item(TableName="Shop", Item={"pk": {"S": "CLIENTE#1"}, "email": {"S": "e"}, "score": {"N": "0.5"}})
        assert _refused(ddb, {"pk": {"S": "CLIENTE#1"}, "email": {"S": "e"}, "score": {"N": "0.50000000001"}}) == (
            "ValidationException",
            REJECTED.format(entity="Customer", error="at score: 0.50000000001 is greater than the maximum of 0.5"))
        assert server.schema_violations() == {"mode": "reject", "total": 0, "findings": []}


@pytest.mark.parametrize("subprocess", [False, True], ids=["in-process", "subprocess"])
def test_local_takes_a_schema_file_and_reports_warn_mode_violations(tmp_path: Path, subprocess: bool) -> None:
    path = tmp_path / "schema.json"
    path.write_text(json.dumps({**SCHEMA, "mode": "warn"}))
    with local(schema=path, subprocess=subprocess, env=False) as server:
        ddb = server.client()
        keyed_table(ddb, "Shop", sort=None)
        ddb.put_item(TableName="Shop", Item={"pk": {"S": "CLIENTE#1"}})
        report = server.schema_violations()
        assert report["total"] == 1
        assert [f["evidence"]["errors"] for f in report["findings"]] == [["'email' is a required property"]]
        server.reset()  # the tables go, and their violations with them
        assert server.schema_violations()["total"] == 0


def test_a_bad_schema_fails_in_the_caller_before_anything_starts(tmp_path: Path) -> None:
    with pytest.raises(SchemaFileError) as caught:
        local(schema={"entities": [{"name": "A", "table": "T", "schema": {"type": 3}}]})
    assert str(caught.value) == "schema: entities[0] (A): not a valid JSON Schema: at schema.type: 3 is not valid under any of the given schemas"
    with pytest.raises(SchemaFileError) as caught:
        local(schema=tmp_path / "absent.yaml", subprocess=True)
    assert str(caught.value).startswith(f"{tmp_path / 'absent.yaml'}: cannot read it ([Errno 2]")
    with local(env=False) as server, pytest.raises(RuntimeError) as no_schema:
        server.schema_violations()
    assert str(no_schema.value) == "the server runs without a schema (local(schema=...))"


def test_the_oldest_violations_fold_into_an_exact_count() -> None:
    """The background duty keeps the newest rows and counts the rest (run here at once, with a small bound)."""
    with local(schema={**SCHEMA, "mode": "warn"}, env=False) as server:
        ddb = server.client()
        keyed_table(ddb, "Shop", sort=None)
        for n in range(12):
            ddb.put_item(TableName="Shop", Item={"pk": {"S": f"CLIENTE#{n}"}})
        store = server.engine.store
        assert trim(store, keep=5) is True
        assert trim(store, keep=5) is False
        assert totals(store) == {("Shop", "Customer"): 12}
        assert [doc["key"]["pk"]["S"] for doc in recent(store, 100)] == [f"CLIENTE#{n}" for n in range(11, 6, -1)]
        assert server.schema_violations()["total"] == 12


# -- the pytest plugin -------------------------------------------------------------------------

TEST_FILE = """
import boto3, pytest

@pytest.fixture
def shop(dynamodb_client):
    dynamodb_client.create_table(TableName="Shop", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}], BillingMode="PAY_PER_REQUEST")
    return dynamodb_client

def test_writes_a_bad_customer(shop):
    shop.put_item(TableName="Shop", Item={"pk": {"S": "CLIENTE#1"}, "score": {"N": "2"}})

def test_writes_a_good_customer(shop):
    shop.put_item(TableName="Shop", Item={"pk": {"S": "CLIENTE#2"}, "email": {"S": "e"}})
"""


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    pytester.makepyfile(test_shop=TEST_FILE)
    (pytester.path / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider -p no:randomly\n")
    return pytester


def test_plugin_reject_mode_fails_the_test_that_writes_a_bad_item(project: pytest.Pytester) -> None:
    (project.path / "schema.json").write_text(json.dumps(SCHEMA))
    result = project.runpytest_subprocess("-p", "no:xdist", "--partita-schema", "schema.json")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([f"*ClientError: An error occurred (ValidationException) when calling the "
                                 f"PutItem operation: {MISSING}"])


def test_plugin_warn_mode_warns_for_each_violation_of_the_test_that_wrote_it(project: pytest.Pytester) -> None:
    (project.path / "schema.yaml").write_text(
        "mode: warn\nentities:\n  - name: Customer\n    table: Shop\n    match: {pk: 'CLIENTE#*'}\n"
        "    schema: {required: [email], properties: {score: {maximum: 0.5}}}\n")
    (project.path / "pytest.ini").write_text(
        "[pytest]\naddopts = -p no:cacheprovider -p no:randomly\npartita_schema = schema.yaml\n")
    result = project.runpytest_subprocess("-p", "no:xdist")
    result.assert_outcomes(passed=2, warnings=1)
    result.stdout.fnmatch_lines([
        "test_shop.py::test_writes_a_bad_customer",
        "*PartitaSchemaWarning: Put on Shop (pk=CLIENTE#1) does not match schema Customer: "
        "'email' is a required property; at score: 2 is greater than the maximum of 0.5",
    ])
    assert "test_writes_a_good_customer\n" not in result.stdout.str().split("warnings summary")[1]
    # -W error turns each into an error of the test that wrote the item.
    strict = project.runpytest_subprocess("-p", "no:xdist", "-W", "error::partita.testing.plugin.PartitaSchemaWarning")
    strict.assert_outcomes(passed=2, errors=1)
