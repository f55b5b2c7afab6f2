"""The pytest plugin, exercised as users run it: a sample project's suite in a subprocess.

The sample is `examples/pytest` (the example the docs point to). The plugin
is found through its `pytest11` entry point, as after `pip install partita`.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

#: One process, tests in file order (pytest-randomly, where installed, would shuffle them):
#: these sample files check what one test leaves for the next.
IN_FILE_ORDER = ("-p", "no:xdist", "-p", "no:cacheprovider", "-p", "no:randomly")

# Store-independent (the plugin runs its own servers): once per `./dev test`, in the memory pass.
pytestmark = pytest.mark.skipif(os.environ.get("PARTITA_TEST_STORE") == "sqlite",
                                reason="store-independent; runs with PARTITA_TEST_STORE=memory")

pytest_plugins = ["pytester"]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "pytest"


@pytest.fixture
def sample(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    # When this suite itself runs under xdist, the inner runs must not inherit its worker id.
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    for path in EXAMPLE.iterdir():
        if path.is_file() and path.suffix in (".py", ".yaml", ".json"):
            shutil.copy(path, pytester.path / path.name)
    # The sample's own rootdir: not this repository's pytest settings.
    (pytester.path / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n")
    return pytester


def _reports(report: Path) -> dict[str, set[str]]:
    """worker id -> endpoints its tests saw (see test_app._record_worker)."""
    seen: dict[str, set[str]] = {}
    for path in report.iterdir():
        seen.setdefault(path.name.split("-")[0], set()).update(path.read_text().split())
    return seen


def test_sample_suite_passes_with_fresh_tables_per_test(sample: pytest.Pytester, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PARTITA_EXAMPLE_REPORT", str(tmp_path))
    monkeypatch.delenv("AWS_ENDPOINT_URL_DYNAMODB", raising=False)
    result = sample.runpytest_subprocess("-p", "no:xdist")
    result.assert_outcomes(passed=12)
    assert list(_reports(tmp_path)) == ["main"]
    assert len(_reports(tmp_path)["main"]) == 1  # one server for the whole session


def test_sample_suite_under_xdist_gets_one_server_per_worker(sample: pytest.Pytester, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PARTITA_EXAMPLE_REPORT", str(tmp_path))
    monkeypatch.delenv("AWS_ENDPOINT_URL_DYNAMODB", raising=False)
    result = sample.runpytest_subprocess("-n", "2")
    result.assert_outcomes(passed=12)
    seen = _reports(tmp_path)
    assert sorted(seen) == ["gw0", "gw1"]
    assert all(len(endpoints) == 1 for endpoints in seen.values())
    assert seen["gw0"] != seen["gw1"]


def test_sample_suite_against_a_subprocess_server_with_per_worker_data_dirs(
    sample: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("PARTITA_EXAMPLE_REPORT", raising=False)
    data = tmp_path / "data"
    result = sample.runpytest_subprocess("-n", "2", "--partita-subprocess", "--partita-data-dir", str(data))
    result.assert_outcomes(passed=12)
    assert sorted(p.name for p in data.iterdir()) == ["gw0", "gw1"]
    assert all((data / worker / "partita.sqlite3").exists() for worker in ("gw0", "gw1"))


def test_keep_tables_marker_and_option(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_keep="""
        import pytest

        def make(client, name):
            client.create_table(TableName=name, BillingMode="PAY_PER_REQUEST",
                                KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}],
                                AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}])

        @pytest.mark.partita_keep_tables
        def test_1_kept(dynamodb_client):
            make(dynamodb_client, "kept")

        def test_2_sees_kept_then_drops(dynamodb_client):
            assert dynamodb_client.list_tables()["TableNames"] == ["kept"]
            make(dynamodb_client, "dropped")

        def test_3_sees_nothing(dynamodb_client):
            assert dynamodb_client.list_tables()["TableNames"] == []
    """)
    pytester.runpytest_subprocess(*IN_FILE_ORDER).assert_outcomes(passed=3)
    # With --partita-keep-tables nothing is ever dropped: the third test sees both.
    result = pytester.runpytest_subprocess(*IN_FILE_ORDER, "--partita-keep-tables")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*test_3_sees_nothing*", "*['dropped', 'kept']*"])


def test_environment_is_set_only_during_tests_that_use_partita(pytester: pytest.Pytester,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAOUTSIDE")
    monkeypatch.setenv("AWS_PROFILE", "prod")
    monkeypatch.delenv("AWS_ENDPOINT_URL_DYNAMODB", raising=False)
    pytester.makepyfile(test_env="""
        import os
        import boto3
        import pytest

        @pytest.fixture
        def my_repo(partita):
            return "repo"

        def test_1_outside():
            assert os.environ["AWS_ACCESS_KEY_ID"] == "AKIAOUTSIDE"
            assert "AWS_ENDPOINT_URL_DYNAMODB" not in os.environ

        def test_2_through_a_user_fixture(my_repo, partita):
            assert os.environ["AWS_ENDPOINT_URL_DYNAMODB"] == partita.endpoint
            assert os.environ["AWS_ACCESS_KEY_ID"] == "partita"
            assert "AWS_PROFILE" not in os.environ
            assert boto3.client("dynamodb").list_tables()["TableNames"] == []

        def test_3_restored():
            assert os.environ["AWS_ACCESS_KEY_ID"] == "AKIAOUTSIDE"
            assert os.environ["AWS_PROFILE"] == "prod"
            assert "AWS_ENDPOINT_URL_DYNAMODB" not in os.environ
    """)
    pytester.runpytest_subprocess(*IN_FILE_ORDER).assert_outcomes(passed=3)


def test_serve_options_from_the_command_line_and_ini(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\npartita_options =\n    ttl-delay=90s\n")
    pytester.makepyfile(test_opts="""
        def test_options(partita):
            assert partita.options.gsi_lag_ms == 150
            assert partita.options.ttl_delay == 90.0
            assert partita.engine.gsi_lag.lag_ms == 150
    """)
    result = pytester.runpytest_subprocess("-p", "no:xdist", "--partita-option", "gsi_lag_ms=150")
    result.assert_outcomes(passed=1)
    bad = pytester.runpytest_subprocess("-p", "no:xdist", "--partita-option", "gsi-lag-ms=soon")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["ERROR: bad Partita options: *gsi-lag-ms=soon*invalid int value: 'soon'*"])


def test_plugin_is_registered_through_the_entry_point(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("--help")
    result.stdout.fnmatch_lines(["*Partita (DynamoDB-compatible server)*", "*--partita-data-dir=DIR*"])
    markers = pytester.runpytest_subprocess("--markers")
    markers.stdout.fnmatch_lines(["@pytest.mark.partita:*", "@pytest.mark.partita_keep_tables:*"])


def test_tables_fixture_creates_a_working_vector_index(pytester: pytest.Pytester) -> None:
    """A declared table's VectorIndexes reach CreateTable: the index is ACTIVE and SearchVectors works.

    The same property name (`VectorIndexes`, of `AWS::DynamoDB::Table VectorIndex` entries) is
    passed through from a CloudFormation template's Properties unchanged.
    """
    pytester.makeconftest("""
        from partita.testing.plugin import tables_fixture

        INDEX = {"IndexName": "by-emb", "VectorAttribute": {"AttributeName": "emb"}, "Dimensions": 2,
                 "DistanceFunction": "EUCLIDEAN", "Projection": {"ProjectionType": "ALL"},
                 "SearchSchema": [{"AttributeName": "tenant", "SearchSchemaElementType": "HASH"}]}
        docs = tables_fixture({"TableName": "docs", "BillingMode": "PAY_PER_REQUEST",
                               "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
                               "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"},
                                                        {"AttributeName": "tenant", "AttributeType": "S"}],
                               "VectorIndexes": [INDEX]})
        stack = tables_fixture({"Resources": {"Docs": {"Type": "AWS::DynamoDB::Table", "Properties": {
            "TableName": "cfn-docs", "BillingMode": "PAY_PER_REQUEST",
            "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
            "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"},
                                     {"AttributeName": "tenant", "AttributeType": "S"}],
            "VectorIndexes": [INDEX]}}}}, name="stack")
    """)
    pytester.makepyfile(test_vectors="""
        import struct

        import pytest

        def f32(x):  # scores are computed in float32
            return struct.unpack("f", struct.pack("f", x))[0]

        @pytest.mark.parametrize("fixture", ["docs", "stack"])
        def test_search(request, dynamodb_client, fixture):
            (name,) = request.getfixturevalue(fixture)
            index = dynamodb_client.describe_table(TableName=name)["Table"]["VectorIndexes"][0]
            assert index["IndexName"] == "by-emb" and index["IndexStatus"] == "ACTIVE"
            for key, v in (("a", ["0", "0"]), ("b", ["3", "4"]), ("c", ["1", "1"])):
                dynamodb_client.put_item(TableName=name, Item={
                    "id": {"S": key}, "tenant": {"S": "t"}, "emb": {"L": [{"N": x} for x in v]}})
            out = dynamodb_client.search_vectors(
                TableName=name, IndexName="by-emb", TopK=2, SearchVector=[{"N": "3"}, {"N": "3"}],
                SearchConditionExpression="tenant = :t", ExpressionAttributeValues={":t": {"S": "t"}})
            assert [(r["Item"]["id"]["S"], r["Score"]) for r in out["SearchResults"]] == [("b", 1.0), ("c", f32(8 ** 0.5))]
    """)
    pytester.runpytest_subprocess(*IN_FILE_ORDER).assert_outcomes(passed=2)
