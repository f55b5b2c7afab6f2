"""The pytest plugin's advice option: `--partita-advice=warn|fail` and the `partita_advice_ignore` marker.

A small suite written by pytester, run in a subprocess as a user runs it:
one test uses a Scan as a WHERE clause, one does the same under the marker,
one reads by key.
"""

from __future__ import annotations

import os

import pytest

pytestmark = pytest.mark.skipif(os.environ.get("PARTITA_TEST_STORE") == "sqlite",
                                reason="store-independent; runs with PARTITA_TEST_STORE=memory")

pytest_plugins = ["pytester"]

SUITE = '''
import pytest


def _table(client, name):
    client.create_table(TableName=name, BillingMode="PAY_PER_REQUEST",
                        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}])
    for n in range(20):
        client.put_item(TableName=name, Item={"pk": {"S": f"USER#{n}"}, "banned": {"BOOL": n == 3}})


def _banned(client, name):
    return client.scan(TableName=name, FilterExpression="banned = :t",
                       ExpressionAttributeValues={":t": {"BOOL": True}})["Items"]


def test_scan_as_where(dynamodb_client):
    _table(dynamodb_client, "users")
    assert len(_banned(dynamodb_client, "users")) == 1


@pytest.mark.partita_advice_ignore("scan-filter", table="users")
def test_scan_as_where_on_purpose(dynamodb_client):
    _table(dynamodb_client, "users")
    assert len(_banned(dynamodb_client, "users")) == 1


def test_read_by_key(dynamodb_client):
    _table(dynamodb_client, "users")
    assert dynamodb_client.get_item(TableName="users", Key={"pk": {"S": "USER#3"}})["Item"]["banned"] == {"BOOL": True}
'''


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    monkeypatch.delenv("AWS_ENDPOINT_URL_DYNAMODB", raising=False)
    pytester.makepyfile(test_users=SUITE)
    (pytester.path / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider -p no:randomly\n")
    return pytester


def test_fail_mode_fails_the_test_that_scans_as_where(suite: pytest.Pytester) -> None:
    result = suite.runpytest_subprocess("-p", "no:xdist", "--partita-advice=fail")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines([
        "Partita's access-pattern advisor found 1 problem(s) in this test's requests (silence one with "
        "@pytest.mark.partita_advice_ignore(KIND)):",
        "",
        "scan-filter: users",
        "  A Scan with a filter is not a WHERE clause: DynamoDB reads, and charges for, every item before the "
        "filter runs. This request paid 0.5 read units for 20 items to return 1 (5.0%).",
        "  evidence: operation=Scan, requests=1, items_read=20, items_returned=1, bytes_read=310, read_units=0.5, "
        "share_of_read_units=1, filter=banned = :t, filter_attributes=[\"banned\"], returned_share=0.05",
        "  fix: A boolean cannot be a key, but an index can be sparse: *",
        "    UpdateTable (adds the sparse index by_banned_key): *",
        "FAILED test_users.py::test_scan_as_where - Failed: *",
    ])


def test_warn_mode_warns_and_passes(suite: pytest.Pytester) -> None:
    result = suite.runpytest_subprocess("-p", "no:xdist", "--partita-advice=warn")
    result.assert_outcomes(passed=3, warnings=1)
    result.stdout.fnmatch_lines(["*test_users.py::test_scan_as_where", "*PartitaAdviceWarning: scan-filter: users"])


def test_off_by_default_and_from_the_ini(suite: pytest.Pytester) -> None:
    suite.runpytest_subprocess("-p", "no:xdist").assert_outcomes(passed=3)
    (suite.path / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider -p no:randomly\n"
                                           "partita_advice = fail\n")
    suite.runpytest_subprocess("-p", "no:xdist").assert_outcomes(passed=2, failed=1)
    (suite.path / "pytest.ini").write_text("[pytest]\npartita_advice = loud\n")
    result = suite.runpytest_subprocess("-p", "no:xdist")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*partita_advice must be one of off, warn, fail, not 'loud'"])
