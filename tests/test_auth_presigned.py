"""Presigned (query-string) SigV4 requests: accepted and verified as DynamoDB verifies them.

The requests are signed by botocore's own query signer (SigV4QueryAuth),
less its habit of moving a form body into the query (DynamoDB's body is
JSON and stays the body), and sent over plain HTTP.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import botocore.auth
import pytest
from auth_helpers import ALLOW_ALL, send, user, write_auth
from botocore.auth import SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from conftest import Server, launch

TARGET = "DynamoDB_20120810."
JSON = "application/x-amz-json-1.0"


class _KeepBody(SigV4QueryAuth):
    """botocore's query signer, with the JSON body left where DynamoDB reads it (and signed)."""

    def _modify_request_before_signing(self, request: Any) -> None:
        data, request.data = request.data, b""
        super()._modify_request_before_signing(request)
        request.data = data


def presigned(url: str, operation: str, body: dict[str, Any], key: str = "AKIAADMIN", secret: str = "admin-secret",
              token: str | None = None, expires: int = 300) -> tuple[str, dict[str, str], bytes]:
    """(path with the signature in its query, headers, body) of one request."""
    raw = json.dumps(body).encode()
    request = AWSRequest(method="POST", url=url.rstrip("/") + "/", data=raw,
                         headers={"Content-Type": JSON, "X-Amz-Target": TARGET + operation})
    _KeepBody(Credentials(key, secret, token), "dynamodb", "us-east-1", expires=expires).add_auth(request)
    parsed = urlparse(request.url)
    headers = {k: v for k, v in request.headers.items() if k.lower() != "authorization"}
    return parsed.path + "?" + parsed.query, headers, raw


def _send(url: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, Any]:
    return send(url, headers, body, path=path)


@pytest.fixture(scope="module")
def auth_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    path: Path = write_auth(
        tmp_path_factory.mktemp("auth") / "auth.json",
        user("admin", *ALLOW_ALL["Statement"]),
        user("temp", *ALLOW_ALL["Statement"], token="the-token"),
        user("lister", {"Effect": "Allow", "Action": "dynamodb:ListTables", "Resource": "*"}),
    )
    srv: Server = launch("--in-memory", "--auth", str(path))
    yield srv.url
    srv.stop()


@pytest.fixture(scope="module")
def open_url() -> Iterator[str]:
    srv: Server = launch("--in-memory")
    yield srv.url
    srv.stop()


def _error(status_body: tuple[int, Any]) -> tuple[int, str, str]:
    status, body = status_body
    return status, body["__type"].rpartition("#")[2], body.get("message", "")


def test_a_presigned_request_is_verified_and_answered(auth_url: str) -> None:
    assert _send(auth_url, *presigned(auth_url, "ListTables", {})) == (200, {"TableNames": []})
    path, headers, body = presigned(auth_url, "CreateTable", {
        "TableName": "signed", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}], "BillingMode": "PAY_PER_REQUEST"})
    status, answer = _send(auth_url, path, headers, body)
    assert status == 200 and answer["TableDescription"]["TableName"] == "signed"
    assert _send(auth_url, *presigned(auth_url, "ListTables", {}, key="AKIATEMP", secret="temp-secret",
                                      token="the-token")) == (200, {"TableNames": ["signed"]})


def test_a_presigned_request_that_does_not_verify(auth_url: str) -> None:
    mismatch = ("The request signature we calculated does not match the signature you provided. Check your AWS "
                "Secret Access Key and signing method. Consult the service documentation for details.")
    path, headers, body = presigned(auth_url, "ListTables", {}, secret="wrong")
    assert _error(_send(auth_url, path, headers, body)) == (400, "InvalidSignatureException", mismatch)
    path, headers, body = presigned(auth_url, "ListTables", {"Limit": 1})
    assert _error(_send(auth_url, path, headers, b'{"Limit": 2}')) == (400, "InvalidSignatureException", mismatch)
    assert _error(_send(auth_url, path.replace("X-Amz-Expires=300", "X-Amz-Expires=30"), headers, body)) == (
        400, "InvalidSignatureException", mismatch)
    path, headers, body = presigned(auth_url, "ListTables", {}, key="AKIANOBODY")
    assert _error(_send(auth_url, path, headers, body)) == (
        400, "UnrecognizedClientException", "The security token included in the request is invalid.")
    # A temporary key needs its token, in the query or as the header.
    path, headers, body = presigned(auth_url, "ListTables", {}, key="AKIATEMP", secret="temp-secret")
    assert _error(_send(auth_url, path, headers, body)) == (
        400, "UnrecognizedClientException", "The security token included in the request is invalid.")


def test_a_presigned_request_is_authorized(auth_url: str) -> None:
    assert _send(auth_url, *presigned(auth_url, "ListTables", {}, key="AKIALISTER", secret="lister-secret"))[0] == 200
    path, headers, body = presigned(auth_url, "DescribeTable", {"TableName": "signed"}, key="AKIALISTER",
                                    secret="lister-secret")
    assert _error(_send(auth_url, path, headers, body)) == (
        400, "AccessDeniedException",
        "User: arn:aws:iam::000000000000:user/lister is not authorized to perform: dynamodb:DescribeTable on resource: "
        "arn:aws:dynamodb:us-east-1:000000000000:table/signed because no identity-based policy allows the "
        "dynamodb:DescribeTable action")


def test_expiry(auth_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past its X-Amz-Expires, or signed more than 15 minutes ago, a presigned request is refused."""
    real = botocore.auth.get_current_datetime
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: real() - datetime.timedelta(seconds=120))
    path, headers, body = presigned(auth_url, "ListTables", {}, expires=60)
    status, kind, message = _error(_send(auth_url, path, headers, body))
    assert (status, kind) == (400, "InvalidSignatureException")
    assert message.startswith("Signature expired: ") and message.endswith(" - 60 sec.)")
    path, headers, body = presigned(auth_url, "ListTables", {}, expires=300)
    assert _send(auth_url, path, headers, body)[0] == 200
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: real() - datetime.timedelta(minutes=20))
    path, headers, body = presigned(auth_url, "ListTables", {}, expires=3600)
    status, kind, message = _error(_send(auth_url, path, headers, body))
    assert (status, kind) == (400, "InvalidSignatureException")
    assert message.startswith("Signature expired: ") and message.endswith(" - 15 min.)")


@pytest.mark.parametrize("which", ["auth", "open"])
def test_the_form_of_the_query_parameters(auth_url: str, open_url: str, which: str) -> None:
    url = auth_url if which == "auth" else open_url
    headers = {"Content-Type": JSON, "X-Amz-Target": TARGET + "ListTables"}
    # dynalite's record of the service: every missing or empty one named, in this order.
    assert _error(_send(url, "/?X-Amz-Algorithm", headers, b"{}")) == (400, "IncompleteSignatureException", (
        "AWS query-string parameters must include 'X-Amz-Algorithm'. "
        "AWS query-string parameters must include 'X-Amz-Credential'. "
        "AWS query-string parameters must include 'X-Amz-Signature'. "
        "AWS query-string parameters must include 'X-Amz-SignedHeaders'. "
        "AWS query-string parameters must include 'X-Amz-Date'. "
        "Re-examine the query-string parameters."))
    path, signed_headers, body = presigned(url, "ListTables", {})
    both = {**signed_headers, "Authorization": "AWS4-HMAC-SHA256 Credential=a/b/c/d/e, SignedHeaders=host, Signature=f"}
    assert _error(_send(url, path, both, body)) == (
        400, "InvalidSignatureException",
        "Found both 'X-Amz-Algorithm' as a query-string param and 'Authorization' as HTTP header.")


def test_without_auth_any_presigned_credentials_work(open_url: str) -> None:
    assert _send(open_url, *presigned(open_url, "ListTables", {}, key="AKIAANYONE", secret="whatever"))[0] == 200
