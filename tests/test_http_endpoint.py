"""What DynamoDB's endpoint does at the HTTP level: CORS, the health check, Server, head limits.

Expectations are from suites run against the service (dynalite's
connection tests, ScyllaDB Alternator's CORS, health and header tests).
Every test runs on both HTTP servers.
"""

from __future__ import annotations

import json

import pytest
from conftest import client_for, create_table
from http_helpers import any_server, send

__all__ = ["any_server"]

CORAL = "com.amazon.coral.service#"
EXPOSE = "x-amzn-RequestId,x-amzn-ErrorType,x-amzn-ErrorMessage,Date"
CORS_HEADERS = (
    "access-control-allow-origin",
    "access-control-allow-credentials",
    "access-control-expose-headers",
    "access-control-max-age",
    "access-control-allow-methods",
    "access-control-allow-headers",
)
UNKNOWN_XML = b"<UnknownOperationException/>\n"


def host_of(url: str) -> str:
    return url.removeprefix("http://")


# CORS


def test_no_cors_headers_without_an_origin(any_server: str) -> None:
    for method, operation in (("POST", "ListTables"), ("GET", None), ("OPTIONS", None)):
        response = send(any_server, operation, {} if operation else b"", method=method)
        assert not [h for h in CORS_HEADERS if h in response.headers], method
    # OPTIONS is not a method DynamoDB serves: without an Origin it is not a preflight.
    response = send(any_server, method="OPTIONS", dynamodb=False)
    assert response.status == 404
    assert response.body == UNKNOWN_XML


def test_an_origin_is_allowed_on_every_answer(any_server: str) -> None:
    asked = [
        ("Origin", "http://example.com/"),
        ("Access-Control-Request-Method", "dog"),
        ("Access-Control-Request-Headers", "cat, meerkat, mouse"),
    ]
    for method, operation, status in (("POST", "ListTables", 200), ("GET", None, 200), ("POST", "Nope", 400)):
        response = send(any_server, operation, {} if operation else b"", method=method, headers=asked)
        assert response.status == status, method
        assert response.headers["access-control-allow-origin"] == "*"
        assert response.headers["access-control-expose-headers"] == EXPOSE
        # Only a preflight gets Max-Age and the echo of what it asked for.
        for header in ("access-control-max-age", "access-control-allow-methods", "access-control-allow-headers"):
            assert header not in response.headers, (method, header)
    response = send(any_server, "ListTables", {}, headers=[("Origin", "http://example.com")])
    assert "TableNames" in response.json()


def test_preflight(any_server: str) -> None:
    asked = [
        ("Origin", "http://localhost:3000"),
        ("Access-Control-Request-Method", "POST"),
        ("Access-Control-Request-Headers", "authorization,content-type,x-amz-date,x-amz-target,x-amz-user-agent"),
    ]
    response = send(any_server, method="OPTIONS", headers=asked, dynamodb=False)
    assert response.status == 200
    assert response.body == b""
    assert response.headers["content-length"] == "0"
    assert response.headers["access-control-allow-origin"] == "*"
    assert response.headers["access-control-expose-headers"] == EXPOSE
    assert response.headers["access-control-max-age"] == "172800"
    assert response.headers["access-control-allow-methods"] == "POST"
    assert response.headers["access-control-allow-headers"] == asked[2][1]
    assert len(response.headers["x-amzn-requestid"]) == 52
    # Nothing asked, nothing echoed.
    response = send(any_server, method="OPTIONS", headers=[("Origin", "x")], dynamodb=False)
    assert response.status == 200
    assert response.headers["access-control-max-age"] == "172800"
    assert "access-control-allow-methods" not in response.headers
    assert "access-control-allow-headers" not in response.headers


def test_an_empty_origin_is_no_origin(any_server: str) -> None:
    response = send(any_server, "ListTables", {}, headers=[("Origin", "")])
    assert "access-control-allow-origin" not in response.headers
    response = send(any_server, method="OPTIONS", headers=[("Origin", "")], dynamodb=False)
    assert response.status == 404


def test_a_browser_round_trip(any_server: str, table_name: str) -> None:
    # What a browser app does: preflight, then the call with its Origin; the
    # answer's headers must be readable by the page.
    create_table(client_for(any_server), table_name)
    origin = [("Origin", "http://localhost:5173")]
    preflight = send(
        any_server,
        method="OPTIONS",
        dynamodb=False,
        headers=origin + [("Access-Control-Request-Method", "POST"), ("Access-Control-Request-Headers", "x-amz-target")],
    )
    assert preflight.status == 200
    item = {"pk": {"S": "browser"}}
    assert send(any_server, "PutItem", {"TableName": table_name, "Item": item}, headers=origin).status == 200
    got = send(any_server, "GetItem", {"TableName": table_name, "Key": item}, headers=origin)
    assert got.json() == {"Item": item}
    assert got.headers["access-control-allow-origin"] == "*"
    missing = send(any_server, "GetItem", {"TableName": "absent-" + table_name, "Key": item}, headers=origin)
    assert missing.status == 400
    assert missing.headers["access-control-allow-origin"] == "*"


# The health check


def test_health_check_names_the_host_the_client_used(any_server: str) -> None:
    response = send(any_server, method="GET", dynamodb=False)
    assert response.status == 200
    assert response.body == f"healthy: {host_of(any_server)} ".encode()
    for host in ("dynamodb.us-west-2.amazonaws.com", "localhost:8000"):
        response = send(any_server, method="GET", headers=[("Host", host)], dynamodb=False)
        assert response.body == f"healthy: {host} ".encode()


def test_health_check_is_get_root_only(any_server: str) -> None:
    # DynamoDB: GET / is the health check, GET /abc, /- and /index.htm are 4xx (Alternator's
    # test_health_only_works_for_root_path, run against it), /dog 404 and /health no longer
    # a 4xx since 2025 (scylladb/scylladb#26079). The 404's body is Partita's (other methods').
    for path in ("/", "/?x=1", "/health"):
        response = send(any_server, method="GET", path=path, dynamodb=False)
        assert response.status == 200, path
        assert response.body == f"healthy: {host_of(any_server)} ".encode(), path
    for path in ("/abc", "/-", "/index.htm", "/dog", "/healthy", "//", "/abc?x=1"):
        response = send(any_server, method="GET", path=path, dynamodb=False)
        assert (response.status, response.body) == (404, UNKNOWN_XML), path
        assert "content-type" not in response.headers, path
        assert response.headers["server"] == "Server", path


def test_partitas_own_get_paths_stay(any_server: str) -> None:
    metrics = send(any_server, method="GET", path="/metrics", dynamodb=False)
    assert metrics.status == 200 and b"# TYPE " in metrics.body
    clock = send(any_server, method="GET", path="/partita/v1/clock", dynamodb=False)
    assert clock.status == 200 and set(clock.json()) == {"now", "offset_seconds"}
    console = send(any_server, method="GET", path="/console", dynamodb=False)
    assert console.status == 200 and b"<html" in console.body.lower()


def test_health_check_without_a_host_names_the_region_endpoint(any_server: str) -> None:
    response = send(any_server, method="GET", headers=[("Host", "")], dynamodb=False)
    assert response.body == b"healthy: dynamodb.us-east-1.amazonaws.com "


@pytest.mark.parametrize("method", ["PUT", "DELETE", "PATCH", "HEAD"])
def test_other_methods_are_not_found(any_server: str, method: str) -> None:
    response = send(any_server, "ListTables", b"", method=method)
    assert response.status == 404
    assert response.body == (b"" if method == "HEAD" else UNKNOWN_XML)


def test_post_ignores_the_path(any_server: str) -> None:
    response = send(any_server, "ListTables", {}, path="/some/where?x=1")
    assert response.status == 200
    assert "TableNames" in response.json()


# The Server header


def test_every_answer_says_server_server(any_server: str) -> None:
    answers = [
        send(any_server, "ListTables", {}),
        send(any_server, "DescribeTable", {"TableName": "no-such-table"}),
        send(any_server, method="GET", dynamodb=False),
        send(any_server, "ListTables", b"x", headers=[("Content-Type", "text/plain")]),
        send(any_server, method="OPTIONS", headers=[("Origin", "x")], dynamodb=False),
    ]
    for response in answers:
        assert response.headers["server"] == "Server", response.status
    assert client_for(any_server).list_tables()["ResponseMetadata"]["HTTPHeaders"]["server"] == "Server"


# Request line and header limits


def test_request_line_over_16_kb_gets_400(any_server: str) -> None:
    fine = send(any_server, "ListTables", {}, path="/" + "x" * 16000)
    assert fine.status == 200
    response = send(any_server, "ListTables", {}, path="/" + "x" * 17000)
    assert response.status == 400
    assert response.body == b""
    assert response.headers["connection"] == "close"


def test_headers_over_16_kb_get_400(any_server: str) -> None:
    fine = send(any_server, "ListTables", {}, headers=[("X-Pad", "p" * 15000)])
    assert fine.status == 200
    for headers in ([("X-Pad", "p" * 17000)], [(f"X-Pad-{i}", "p" * 1000) for i in range(17)]):
        response = send(any_server, "ListTables", {}, headers=headers)
        assert response.status == 400
        assert response.body == b""
        assert response.headers["connection"] == "close"


def test_protocol_errors_echo_nothing_unbounded(any_server: str) -> None:
    # IncompleteSignatureException quotes the Authorization header: the
    # header limit bounds what it can quote.
    headers = [("Authorization", "AWS4-" + "a" * 8000)]
    response = send(any_server, "ListTables", {}, headers=headers)
    assert response.json()["__type"] == CORAL + "IncompleteSignatureException"
    assert response.json()["message"].endswith("Authorization=AWS4-" + "a" * 8000)
    response = send(any_server, "ListTables", {}, headers=[("Authorization", "AWS4-" + "a" * 20000)])
    assert response.status == 400
    assert response.body == b""
    # The same for the operation name in UnknownOperationException's message.
    response = send(any_server, None, {}, headers=[("X-Amz-Target", "DynamoDB_20120810." + "Op" * 10000)])
    assert response.status == 400
    assert response.body == b""
    response = send(any_server, method="GET", headers=[("Host", "h" * 20000)], dynamodb=False)
    assert response.status == 400
    assert json.dumps(response.headers).find("h" * 100) == -1
