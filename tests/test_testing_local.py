"""partita.testing.local(): the in-process (and subprocess) server for test suites."""

from __future__ import annotations

import os
import socket
import threading
import time
from pathlib import Path
from typing import Any

import boto3
import pytest
from conftest import create_table

from partita.testing import LocalPartita, local
from partita.testing.server import serve_argv


def _tables(server: LocalPartita) -> list[str]:
    names: list[str] = server.client().list_tables()["TableNames"]
    return names


def test_context_manager_serves_and_stops_freeing_port_and_threads() -> None:
    before = set(threading.enumerate())
    with local() as server:
        assert server.endpoint.startswith("http://127.0.0.1:")
        create_table(server.client(), "users")
        assert _tables(server) == ["users"]
        port = int(server.endpoint.rsplit(":", 1)[1])
    assert not server.started
    assert server.endpoint == ""
    # The port is free again and no server thread is left behind.
    probe = socket.socket()
    probe.bind(("127.0.0.1", port))
    probe.close()
    deadline = time.monotonic() + 5
    while set(threading.enumerate()) - before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert {t.name for t in set(threading.enumerate()) - before} == set()


def test_plain_start_stop_object_and_fresh_store_each_time() -> None:
    server = local().start()
    try:
        create_table(server.client(), "orders")
        assert server.start() is server  # starting twice is harmless
    finally:
        server.stop()
    server.stop()  # and so is stopping twice
    with local() as again:
        assert _tables(again) == []


def test_environment_points_argumentless_boto3_at_partita_and_is_restored(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAREALKEY")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "real-secret")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "real-token")
    monkeypatch.setenv("AWS_PROFILE", "production")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-3")
    monkeypatch.delenv("AWS_ENDPOINT_URL_DYNAMODB", raising=False)
    monkeypatch.delenv("AWS_REGION", raising=False)
    with local(region="us-west-2") as server:
        assert os.environ["AWS_ENDPOINT_URL_DYNAMODB"] == server.endpoint
        assert os.environ["AWS_ENDPOINT_URL_DYNAMODB_STREAMS"] == server.endpoint
        assert os.environ["AWS_ACCESS_KEY_ID"] == "partita"
        assert os.environ["AWS_DEFAULT_REGION"] == os.environ["AWS_REGION"] == "us-west-2"
        assert "AWS_SESSION_TOKEN" not in os.environ and "AWS_PROFILE" not in os.environ
        # Application code that builds its own clients with no arguments:
        app = boto3.client("dynamodb")
        create_table(app, "from-app", StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})
        boto3.resource("dynamodb").Table("from-app").put_item(Item={"pk": "a"})
        assert server.client().get_item(TableName="from-app", Key={"pk": {"S": "a"}})["Item"] == {"pk": {"S": "a"}}
        streams = boto3.client("dynamodbstreams").list_streams(TableName="from-app")["Streams"]
        assert [s["TableName"] for s in streams] == ["from-app"]
        assert app.describe_table(TableName="from-app")["Table"]["TableArn"].startswith(
            "arn:aws:dynamodb:us-west-2:"
        )
    assert os.environ["AWS_ACCESS_KEY_ID"] == "AKIAREALKEY"
    assert os.environ["AWS_SESSION_TOKEN"] == "real-token"
    assert os.environ["AWS_PROFILE"] == "production"
    assert os.environ["AWS_DEFAULT_REGION"] == "eu-west-3"
    assert "AWS_ENDPOINT_URL_DYNAMODB" not in os.environ
    assert "AWS_REGION" not in os.environ


def test_env_false_leaves_the_environment_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_ENDPOINT_URL_DYNAMODB", raising=False)
    with local(env=False) as server:
        assert "AWS_ENDPOINT_URL_DYNAMODB" not in os.environ
        assert _tables(server) == []


def test_reset_drops_every_table_stream_and_the_clock() -> None:
    with local() as server:
        ddb = server.client()
        create_table(ddb, "kept-safe", DeletionProtectionEnabled=True)
        create_table(ddb, "streamed", StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"})
        ddb.put_item(TableName="streamed", Item={"pk": {"S": "x"}})
        server.advance_clock(90000)
        assert server.reset() == 2
        assert _tables(server) == []
        assert server.streams_client().list_streams()["Streams"] == []
        assert abs(server.clock() - time.time()) < 5
        # Tables come back empty under the same names.
        create_table(ddb, "streamed")
        assert ddb.scan(TableName="streamed")["Items"] == []
        assert server.reset() == 1


def test_reset_can_keep_the_clock() -> None:
    with local() as server:
        server.advance_clock(3600)
        assert server.reset(keep_clock=True) == 0
        assert server.clock() - time.time() == pytest.approx(3600, abs=5)


def test_advance_clock_expires_ttl_items() -> None:
    with local() as server:
        ddb = server.client()
        create_table(ddb, "sessions")
        ddb.update_time_to_live(TableName="sessions",
                                TimeToLiveSpecification={"Enabled": True, "AttributeName": "exp"})
        soon = int(time.time()) + 600
        ddb.put_item(TableName="sessions", Item={"pk": {"S": "s1"}, "exp": {"N": str(soon)}})
        before = server.clock()
        assert server.advance_clock(3600) - before == pytest.approx(3600, abs=5)
        deadline = time.monotonic() + 10
        while ddb.scan(TableName="sessions")["Items"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ddb.scan(TableName="sessions")["Items"] == []
        with pytest.raises(ValueError, match="only moves forward"):
            server.advance_clock(-1)


def test_serve_options_pass_through_and_unknown_ones_fail() -> None:
    with local(gsi_lag_ms=250, ttl_delay=5, item_collection_limit=1234) as server:
        assert server.engine.gsi_lag.lag_ms == 250
        assert server.engine.ttl_delay == 5
        assert server.options.item_collection_limit == 1234
    with pytest.raises(TypeError, match="unknown partita serve option 'no_such_flag'"):
        local(no_such_flag=1)
    with pytest.raises(ValueError, match="need subprocess=True"):
        local(workers=2)
    with pytest.raises(ValueError, match="not both"):
        local(data_dir="x", in_memory=True)


def test_data_dir_keeps_tables_across_servers(tmp_path: Path) -> None:
    with local(data_dir=tmp_path) as server:
        create_table(server.client(), "durable")
        server.client().put_item(TableName="durable", Item={"pk": {"S": "k"}})
    assert (tmp_path / "partita.sqlite3").exists()
    with local(data_dir=str(tmp_path)) as again:
        assert again.client().get_item(TableName="durable", Key={"pk": {"S": "k"}})["Item"] == {"pk": {"S": "k"}}
        assert again.reset() == 1
    with local(data_dir=tmp_path) as third:
        assert _tables(third) == []


def test_serve_argv_maps_python_names_to_flags(tmp_path: Path) -> None:
    assert serve_argv({"in_memory": True, "port": 0, "gsi_lag_ms": 5, "workers": 1}) == [
        "--in-memory", "--port", "0", "--gsi-lag-ms", "5", "--workers", "1",
    ]
    assert serve_argv({"in_memory": False, "data_dir": tmp_path}) == ["--data-dir", str(tmp_path)]
    with pytest.raises(SystemExit):
        serve_argv({"gsi_lag_ms": "soon"})


def test_subprocess_mode_resets_and_moves_the_clock_over_the_admin_api(tmp_path: Path) -> None:
    with local(subprocess=True, data_dir=tmp_path, workers=2) as server:
        assert server.engine is None and server._process is not None
        assert os.environ["AWS_ENDPOINT_URL_DYNAMODB"] == server.endpoint
        create_table(server.client(), "remote")
        now = server.advance_clock(7200)
        assert now - time.time() == pytest.approx(7200, abs=5)
        assert server.reset() == 1
        assert _tables(server) == []
        assert abs(server.clock() - time.time()) < 5
        process = server._process
    assert process.poll() is not None


@pytest.mark.parametrize(
    ("method", "body", "status", "error"),
    [
        ("GET", b"", 405, "use POST to reset the server"),
        ("POST", b'{"keep_clock": "yes"}', 400, 'expected no body or {"keep_clock": true|false}'),
        ("POST", b"[1]", 400, 'expected no body or {"keep_clock": true|false}'),
    ],
)
def test_admin_reset_rejects_bad_requests(endpoint: str, method: str, body: bytes, status: int,
                                          error: str) -> None:
    import http.client
    from urllib.parse import urlparse

    parsed = urlparse(endpoint)
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=10)
    try:
        conn.request(method, "/partita/v1/reset", body=body, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        assert response.status == status
        import json

        assert json.loads(response.read()) == {"error": error}
    finally:
        conn.close()


def test_admin_reset_over_http(start_server: Any) -> None:
    srv = start_server("--in-memory")
    ddb = boto3.client("dynamodb", endpoint_url=srv.url, region_name="us-east-1")
    create_table(ddb, "gone-soon")
    import json
    import urllib.request

    request = urllib.request.Request(srv.url + "/partita/v1/reset", data=b"", method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        doc = json.loads(answer.read())
    assert doc["dropped_tables"] == 1
    assert ddb.list_tables()["TableNames"] == []
