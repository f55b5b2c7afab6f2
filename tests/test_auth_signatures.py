"""`--auth`: SigV4 verified as DynamoDB verifies it, over boto3 and raw HTTP."""

from __future__ import annotations

import datetime
import gzip
import json
import os
import re
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import botocore.auth
import pytest
from auth_helpers import ALLOW_ALL, client, create, send, signed_headers, user, write_auth
from botocore.exceptions import ClientError
from conftest import Server, error_of, launch, raw_request

MISMATCH = (
    "The request signature we calculated does not match the signature you provided. "
    "Check your AWS Secret Access Key and signing method. Consult the service documentation for details."
)
INVALID_TOKEN = "The security token included in the request is invalid."
TABLE = "auth-table"


@pytest.fixture(scope="module")
def auth_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_auth(
        tmp_path_factory.mktemp("auth") / "auth.json",
        user("admin", *ALLOW_ALL["Statement"]),
        user("temp", *ALLOW_ALL["Statement"], token="session-token-1"),
        user("reader", {"Effect": "Allow", "Action": "dynamodb:*", "Resource": "*"}),
    )


@pytest.fixture(scope="module")
def url(auth_file: Path) -> Iterator[str]:
    srv = launch("--in-memory", "--auth", str(auth_file))
    create(client(srv.url, "admin"), TABLE)
    yield srv.url
    srv.stop()


def test_the_right_key_is_served(url: str) -> None:
    ddb = client(url, "admin")
    ddb.put_item(TableName=TABLE, Item={"pk": {"S": "a"}, "v": {"N": "1"}})
    assert ddb.get_item(TableName=TABLE, Key={"pk": {"S": "a"}})["Item"] == {"pk": {"S": "a"}, "v": {"N": "1"}}


def test_a_wrong_secret_is_an_invalid_signature(url: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        client(url, "admin", secret="not-the-secret").get_item(TableName=TABLE, Key={"pk": {"S": "a"}})
    assert error_of(excinfo) == ("InvalidSignatureException", MISMATCH)
    assert excinfo.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_an_unknown_key_is_unrecognized(url: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        client(url, "nobody").list_tables()
    assert error_of(excinfo) == ("UnrecognizedClientException", INVALID_TOKEN)


def test_session_tokens(url: str) -> None:
    ok = client(url, "temp", aws_session_token="session-token-1")
    assert TABLE in ok.list_tables()["TableNames"]
    with pytest.raises(ClientError) as excinfo:  # no token: the key id alone is not one DynamoDB knows
        client(url, "temp").list_tables()
    assert error_of(excinfo) == ("UnrecognizedClientException", INVALID_TOKEN)
    # A token sent is checked after the signature, and that message has no period (dynalite's
    # source records both of DynamoDB's forms).
    with pytest.raises(ClientError) as excinfo:
        client(url, "temp", aws_session_token="session-token-2").list_tables()
    assert error_of(excinfo) == ("UnrecognizedClientException", INVALID_TOKEN.rstrip("."))
    with pytest.raises(ClientError) as excinfo:  # a long-term key with a token it does not have
        client(url, "admin", aws_session_token="session-token-1").list_tables()
    assert error_of(excinfo) == ("UnrecognizedClientException", INVALID_TOKEN.rstrip("."))
    with pytest.raises(ClientError) as excinfo:  # the signature is checked before the token
        client(url, "temp", secret="wrong", aws_session_token="session-token-2").list_tables()
    assert error_of(excinfo) == ("InvalidSignatureException", MISMATCH)


def _stamp(moment: datetime.datetime) -> str:
    return moment.strftime("%Y%m%dT%H%M%SZ")


@pytest.mark.parametrize("minutes", [-20, 20])
def test_a_skewed_clock(url: str, minutes: int, monkeypatch: pytest.MonkeyPatch) -> None:
    skewed = datetime.datetime.now(datetime.UTC).replace(microsecond=0) + datetime.timedelta(minutes=minutes)
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: skewed)
    with pytest.raises(ClientError) as excinfo:
        client(url, "admin").list_tables()
    code, message = error_of(excinfo)
    assert code == "InvalidSignatureException"
    stamp = r"(\d{8}T\d{6}Z)"
    if minutes < 0:
        found = re.fullmatch(rf"Signature expired: {stamp} is now earlier than {stamp} \({stamp} - 15 min\.\)", message)
    else:
        found = re.fullmatch(rf"Signature not yet current: {stamp} is still later than {stamp} \({stamp} \+ 15 min\.\)", message)
    assert found is not None, message
    signed, bound, now = (datetime.datetime.strptime(s, "%Y%m%dT%H%M%SZ") for s in found.groups())
    assert found.group(1) == _stamp(skewed)
    assert bound - now == datetime.timedelta(minutes=15 if minutes > 0 else -15)
    assert abs((now - skewed.replace(tzinfo=None)).total_seconds() + minutes * 60) < 60


def test_fourteen_minutes_off_is_accepted(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    skewed = datetime.datetime.now(datetime.UTC) - datetime.timedelta(minutes=14)
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: skewed)
    assert TABLE in client(url, "admin").list_tables()["TableNames"]


def test_the_scope_names_region_and_service(url: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        client(url, "admin", region="eu-west-1").list_tables()
    assert error_of(excinfo) == ("InvalidSignatureException", "Credential should be scoped to a valid region, not 'eu-west-1'. ")
    body = b"{}"
    headers = signed_headers(url, "admin", body, "DynamoDB_20120810.ListTables")
    headers["Authorization"] = headers["Authorization"].replace("/dynamodb/", "/s3/")
    status, answer = send(url, headers, body)
    assert (status, answer["message"]) == (400, "Credential should be scoped to correct service: 'dynamodb'. ")


def test_missing_and_incomplete_authorization(url: str) -> None:
    response = raw_request(url, "ListTables", {}, headers={"Authorization": None})
    assert response.status == 400
    assert response.json() == {
        "__type": "com.amazon.coral.service#MissingAuthenticationTokenException",
        "message": "Request is missing Authentication Token",
    }
    auth = "AWS4-HMAC-SHA256 Credential=AKIAADMIN/20260101/us-east-1/dynamodb/aws4_request"
    response = raw_request(url, "ListTables", {}, headers={"Authorization": auth})
    assert response.json()["__type"] == "com.amazon.coral.service#IncompleteSignatureException"
    assert response.json()["message"] == (
        "Authorization header requires 'Signature' parameter. Authorization header requires "
        f"'SignedHeaders' parameter. Authorization={auth}"
    )


def test_a_component_without_an_equal_sign_is_named(url: str) -> None:
    """Before the parameters are looked at, the first part that is no key=value pair (dynalite's record)."""
    signed = signed_headers(url, "admin", b"{}", "DynamoDB_20120810.ListTables")["Authorization"]
    for auth, part in (
        (signed.replace(", Signature=", ",0 Signature="), "0"),  # found by tests/test_auth_fuzz.py
        ("AWS4-HMAC-SHA256 Signature=b,    Credential,    SignedHeaders", "Credential"),
        (signed.replace("Credential=", "C redential="), "C"),
    ):
        response = raw_request(url, "ListTables", {}, headers={"Authorization": auth})
        assert response.status == 400
        assert response.json() == {
            "__type": "com.amazon.coral.service#IncompleteSignatureException",
            "message": f"'{part}' not a valid key=value pair (missing equal-sign) in Authorization header: '{auth}'.",
        }


def test_a_tampered_body_or_header_is_refused(url: str) -> None:
    body = json.dumps({"TableName": TABLE, "Key": {"pk": {"S": "a"}}}).encode()
    headers = signed_headers(url, "admin", body, "DynamoDB_20120810.GetItem")
    assert send(url, headers, body)[0] == 200
    tampered = body.replace(b'"a"', b'"b"')
    assert send(url, headers, tampered) == (400, {"__type": "com.amazon.coral.service#InvalidSignatureException", "message": MISMATCH})
    other = dict(headers, **{"X-Amz-Target": "DynamoDB_20120810.DeleteItem"})
    assert send(url, other, body)[1]["message"] == MISMATCH


def test_a_gzip_body_is_verified_as_sent(url: str) -> None:
    # Its own item: xdist may run this test on a worker (and server) where no other test wrote one.
    client(url, "admin").put_item(TableName=TABLE, Item={"pk": {"S": "gz"}})
    plain = json.dumps({"TableName": TABLE, "Key": {"pk": {"S": "gz"}}}).encode()
    packed = gzip.compress(plain)
    headers = signed_headers(url, "admin", packed, "DynamoDB_20120810.GetItem", extra={"Content-Encoding": "gzip"})
    status, answer = send(url, headers, packed)
    assert (status, answer) == (200, {"Item": {"pk": {"S": "gz"}}})
    # Signed over the inflated body but sent compressed: not what was signed.
    headers = signed_headers(url, "admin", plain, "DynamoDB_20120810.GetItem", extra={"Content-Encoding": "gzip"})
    assert send(url, headers, packed)[1]["message"] == MISMATCH


def test_streams_api_is_signed_too(url: str) -> None:
    assert "Streams" in client(url, "admin", service="dynamodbstreams").list_streams()
    with pytest.raises(ClientError) as excinfo:
        client(url, "admin", secret="wrong", service="dynamodbstreams").list_streams()
    assert error_of(excinfo)[0] == "InvalidSignatureException"


def test_admin_routes_need_a_signature_and_partita_admin(url: str) -> None:
    status, answer = send(url, {}, b"", path="/partita/v1/clock", method="GET")
    assert (status, answer["__type"]) == (400, "com.amazon.coral.service#MissingAuthenticationTokenException")
    headers = signed_headers(url, "admin", b"", None, path="/partita/v1/clock", method="GET")
    status, answer = send(url, headers, b"", path="/partita/v1/clock", method="GET")
    assert status == 200 and "now" in json.dumps(answer).lower()
    headers = signed_headers(url, "reader", b"", None, path="/partita/v1/clock", method="GET")
    status, answer = send(url, headers, b"", path="/partita/v1/clock", method="GET")
    assert (status, answer["message"]) == (
        400,
        "User: arn:aws:iam::000000000000:user/reader is not authorized to perform: partita:Admin on resource: * "
        "because no identity-based policy allows the partita:Admin action",
    )
    status, answer = send(url, {}, b"", path="/metrics", method="GET")
    assert answer["__type"].endswith("MissingAuthenticationTokenException")


def test_the_health_check_stays_open(url: str) -> None:
    status, answer = send(url, {}, b"", method="GET")
    assert status == 200 and answer.startswith(b"healthy: ")


def test_sighup_reloads_without_dropping_connections(tmp_path: Path) -> None:
    path = write_auth(tmp_path / "auth.json", user("first", *ALLOW_ALL["Statement"]))
    srv: Server = launch("--in-memory", "--auth", str(path))
    try:
        first = client(srv.url, "first")
        first.list_tables()
        body = b"{}"
        import http.client
        from urllib.parse import urlparse

        parsed = urlparse(srv.url)
        conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
        assert send(srv.url, signed_headers(srv.url, "first", body, "DynamoDB_20120810.ListTables"), body, conn=conn)[0] == 200
        write_auth(path, user("second", *ALLOW_ALL["Statement"]))
        srv.process.send_signal(signal.SIGHUP)
        _eventually(lambda: client(srv.url, "second").list_tables())
        status, answer = send(srv.url, signed_headers(srv.url, "first", body, "DynamoDB_20120810.ListTables"), body, conn=conn)
        assert (status, answer["__type"]) == (400, "com.amazon.coral.service#UnrecognizedClientException")
        conn.close()
        path.write_text("{not json")  # a broken file keeps the principals it replaces
        srv.process.send_signal(signal.SIGHUP)
        time.sleep(0.5)
        assert srv.process.poll() is None
        client(srv.url, "second").list_tables()
    finally:
        srv.stop()


def _eventually(call: Any) -> None:
    deadline = time.monotonic() + 10
    while True:
        try:
            call()
            return
        except ClientError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def test_uvicorn_verifies_the_same(auth_file: Path) -> None:
    srv = launch("--in-memory", "--http", "uvicorn", "--auth", str(auth_file))
    try:
        assert client(srv.url, "admin").list_tables()["TableNames"] == []
        with pytest.raises(ClientError) as excinfo:
            client(srv.url, "admin", secret="wrong").list_tables()
        assert error_of(excinfo) == ("InvalidSignatureException", MISMATCH)
        headers = signed_headers(srv.url, "admin", b"", None, path="/partita/v1/clock?x=1&a=b%20c", method="GET")
        assert send(srv.url, headers, b"", path="/partita/v1/clock?x=1&a=b%20c", method="GET")[0] == 200
    finally:
        srv.stop()


def test_a_bad_auth_file_stops_the_start(tmp_path: Path) -> None:
    path = tmp_path / "auth.json"
    path.write_text(json.dumps({"users": [{"name": "x", "access_key_id": "K", "secret_access_key": "hidden-secret",
                                           "policies": [{"Statement": [{"Effect": "Maybe", "Action": "*", "Resource": "*"}]}]}]}))
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "partita", "serve", "--port", "0", "--in-memory", "--auth", str(path)],
                          capture_output=True, text=True, timeout=60, env=dict(os.environ))
    assert done.returncode != 0
    assert "users[0].policies[0]: Effect must be Allow or Deny" in done.stderr
    assert "hidden-secret" not in done.stderr + done.stdout


def test_a_header_sent_twice_verifies_over_the_wire(url: str) -> None:
    """Both servers' HTTP layers keep a repeated header's values joined for SigV4."""
    import http.client
    from urllib.parse import urlparse

    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    parsed = urlparse(url)
    body = json.dumps({"TableName": TABLE, "Key": {"pk": {"S": "twice"}}}).encode()
    request = AWSRequest(method="POST", url=url.rstrip("/") + "/", data=body,
                         headers={"Content-Type": "application/x-amz-json-1.0",
                                  "X-Amz-Target": "DynamoDB_20120810.GetItem", "X-Custom": "one"})
    request.headers["X-Custom"] = "two"
    SigV4Auth(Credentials("AKIAADMIN", "admin-secret"), "dynamodb", "us-east-1").add_auth(request)

    def post(pairs: list[tuple[str, str]]) -> tuple[int, Any]:
        conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
        try:
            conn.putrequest("POST", "/", skip_accept_encoding=True)
            for name, value in pairs:
                conn.putheader(name, value)
            conn.putheader("Content-Length", str(len(body)))
            conn.endheaders(body)
            response = conn.getresponse()
            return response.status, json.loads(response.read())
        finally:
            conn.close()

    pairs = [(k, str(v)) for k, v in request.headers.items()]
    assert post(pairs) == (200, {})
    status, answer = post([(k, v) for k, v in pairs if (k, v) != ("X-Custom", "one")])
    assert (status, answer["__type"].rsplit("#", 1)[-1], answer["message"]) == (
        400, "InvalidSignatureException", MISMATCH)


def _with_authorization(url: str, change: Any, target: str = "DynamoDB_20120810.ListTables") -> tuple[int, Any]:
    body = b"{}"
    headers = signed_headers(url, "admin", body, target)
    headers["Authorization"] = change(headers["Authorization"])
    return send(url, headers, body)


def test_every_wrong_part_of_the_scope_is_named_in_one_message(url: str) -> None:
    day = datetime.datetime.now(datetime.UTC).strftime("%Y%m%d")
    status, answer = _with_authorization(
        url, lambda a: a.replace(f"/{day}/us-east-1/dynamodb/aws4_request", "/19990101/mars-1/s3/term"))
    stamp = answer["message"].rsplit("from '", 1)[-1].rstrip("'.")
    assert (status, answer["__type"]) == (400, "com.amazon.coral.service#InvalidSignatureException")
    assert answer["message"] == (
        "Credential should be scoped to a valid region, not 'mars-1'. "
        "Credential should be scoped to correct service: 'dynamodb'. "
        "Credential should be scoped with a valid terminator: 'aws4_request', not 'term'. "
        "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: "
        f"'19990101' != '{day}', from '{stamp}'."
    )


def test_header_checks_in_dynamodbs_order(url: str) -> None:
    """Host signed, then the algorithm, then the credential's parts (trailing slashes ignored),
    then the scope, then the key id: each refusal names the first check that fails."""
    status, answer = _with_authorization(url, lambda a: a.replace("SignedHeaders=", "SignedHeaders=x;").replace(
        ";host;", ";"))
    assert (status, answer["message"]) == (400, "'Host' must be a 'SignedHeader' in the AWS Authorization.")
    assert answer["__type"].endswith("#InvalidSignatureException")
    status, answer = _with_authorization(url, lambda a: a.replace("AWS4-HMAC-SHA256", "AWS4-HMAC-SHA25")
                                         .replace("/us-east-1/", "/mars-1/"))
    assert (status, answer["message"]) == (
        400, "Unsupported AWS 'algorithm': 'AWS4-HMAC-SHA25' (only AWS4-HMAC-SHA256 for now). ")
    assert answer["__type"].endswith("#IncompleteSignatureException")
    status, answer = _with_authorization(url, lambda a: a.replace("/aws4_request", ""))
    credential = re.search(r"Credential=([^,]*),", _last_authorization(url, lambda a: a.replace("/aws4_request", "")))
    assert credential is not None
    assert (status, answer["message"]) == (
        400, "Credential must have exactly 5 slash-delimited elements, e.g. keyid/date/region/service/term,"
        f" got '{credential.group(1)}'")
    # Trailing slashes are ignored: the scope is the one signed (the header itself is not).
    status, answer = _with_authorization(url, lambda a: a.replace("/aws4_request", "/aws4_request//"))
    assert status == 200 and "TableNames" in answer
    # The scope before the key id: an unknown key in the wrong region is told about the region.
    status, answer = _with_authorization(url, lambda a: a.replace("AKIAADMIN/", "AKIANOBODY/")
                                         .replace("/us-east-1/", "/eu-west-1/"))
    assert answer["message"] == "Credential should be scoped to a valid region, not 'eu-west-1'. "


def _last_authorization(url: str, change: Any) -> str:
    headers = signed_headers(url, "admin", b"{}", "DynamoDB_20120810.ListTables")
    return str(change(headers["Authorization"]))


def test_the_clock_is_checked_before_the_key(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    skewed = datetime.datetime.now(datetime.UTC) - datetime.timedelta(minutes=30)
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: skewed)
    with pytest.raises(ClientError) as excinfo:
        client(url, "nobody", region="eu-west-1").list_tables()
    code, message = error_of(excinfo)
    assert code == "InvalidSignatureException" and message.startswith("Signature expired: ")
