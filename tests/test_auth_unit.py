"""SigV4 verification in-process: the hot path agrees with botocore and caches what it may."""

from __future__ import annotations

import json
from operator import itemgetter
from pathlib import Path
from typing import Any

import pytest
from auth_helpers import ALLOW_ALL, user, write_auth
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from partita.protocol.auth import Authenticator, sigv4
from partita.protocol.auth.errors import InvalidSignatureException, UnrecognizedClientException

REGION = "us-east-1"
BODY = json.dumps({"TableName": "t", "Key": {"pk": {"S": "a"}}}).encode()


@pytest.fixture()
def auth(tmp_path: Path) -> Authenticator:
    return Authenticator(write_auth(tmp_path / "auth.json", user("admin", *ALLOW_ALL["Statement"]),
                                    user("temp", *ALLOW_ALL["Statement"], token="tok"),
                                    user("other", *ALLOW_ALL["Statement"])), REGION)


def signed(name: str, body: bytes, path: str = "/", extra: dict[str, str] | None = None,
           token: str | None = None, method: str = "POST") -> tuple[bytes, dict[bytes, bytes]]:
    """(path as sent, headers as the HTTP layer hands them over: names lower-cased, bytes)."""
    headers = {"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "DynamoDB_20120810.GetItem",
               **(extra or {})}
    request = AWSRequest(method=method, url="http://127.0.0.1:8000" + path, data=body, headers=headers)
    credentials = Credentials(f"AKIA{name.upper()}", f"{name}-secret", token)
    SigV4Auth(credentials, "dynamodb", REGION).add_auth(request)
    raw = {k.lower().encode(): str(v).encode() for k, v in request.headers.items()}
    raw.setdefault(b"host", b"127.0.0.1:8000")
    return path.encode(), raw


def test_the_signing_key_is_derived_once_per_secret_and_scope(auth: Authenticator,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    derived: list[tuple[str, ...]] = []
    original = sigv4.signing_key

    def counting(secret: str, date: str, region: str, service: str) -> bytes:
        derived.append((secret, date, region, service))
        return original(secret, date, region, service)

    monkeypatch.setattr(sigv4, "signing_key", counting)
    monkeypatch.setattr(sigv4, "_SIGNING_KEYS", {})
    for i in range(5):
        path, headers = signed("admin", BODY + b" " * i)
        assert auth.verify("POST", path, headers, BODY + b" " * i).name == "admin"
    assert [d[0] for d in derived] == ["admin-secret"]
    path, headers = signed("other", BODY)
    auth.verify("POST", path, headers, BODY)
    assert [d[0] for d in derived] == ["admin-secret", "other-secret"]


@pytest.mark.parametrize("path, extra", [
    ("/", {}),
    ("/some/path", {}),
    ("/a%20b/%7Ec", {}),
    ("/?b=2&a=1&a=0", {}),
    ("/?x=%25y&z", {}),
    ("/", {"X-Custom": "two  spaces   inside"}),
    ("/", {"X-Amz-Content-Sha256": __import__("hashlib").sha256(BODY).hexdigest()}),
])
def test_what_botocore_signs_verifies(auth: Authenticator, path: str, extra: dict[str, str]) -> None:
    sent, headers = signed("admin", BODY, path, extra)
    assert auth.verify("POST", sent, headers, BODY).name == "admin"
    # The body is always hashed: a changed body fails whatever X-Amz-Content-Sha256 says.
    with pytest.raises(InvalidSignatureException):
        auth.verify("POST", sent, headers, BODY + b" ")


def test_an_unsigned_payload_is_refused(auth: Authenticator) -> None:
    """botocore signs over X-Amz-Content-Sha256's value when sent; the server hashes the body
    itself, so only the true hash verifies (what DynamoDB answers for UNSIGNED-PAYLOAD is not
    on record: InvalidSignatureException is Partita's)."""
    sent, headers = signed("admin", BODY, extra={"X-Amz-Content-Sha256": "UNSIGNED-PAYLOAD"})
    with pytest.raises(InvalidSignatureException):
        auth.verify("POST", sent, headers, BODY)


def test_a_get_with_an_empty_body(auth: Authenticator) -> None:
    sent, headers = signed("admin", b"", "/partita/v1/clock", method="GET")
    assert auth.verify("GET", sent, headers, b"").name == "admin"
    with pytest.raises(InvalidSignatureException):
        auth.verify("POST", sent, headers, b"")


def test_session_tokens_on_the_hot_path(auth: Authenticator) -> None:
    sent, headers = signed("temp", BODY, token="tok")
    assert auth.verify("POST", sent, headers, BODY).name == "temp"
    sent, headers = signed("temp", BODY, token="not-tok")
    with pytest.raises(UnrecognizedClientException):
        auth.verify("POST", sent, headers, BODY)
    sent, headers = signed("temp", BODY)
    with pytest.raises(UnrecognizedClientException):
        auth.verify("POST", sent, headers, BODY)
    sent, headers = signed("admin", BODY, token="tok")  # a token the principal does not have
    with pytest.raises(UnrecognizedClientException):
        auth.verify("POST", sent, headers, BODY)


def test_a_key_id_outside_ascii_is_still_looked_up(tmp_path: Path) -> None:
    entry: dict[str, Any] = {**user("admin", *ALLOW_ALL["Statement"]), "access_key_id": "AKIAÉ"}
    auth = Authenticator(write_auth(tmp_path / "auth.json", entry), REGION)
    assert auth.principals.by_raw_key == {}
    assert auth.principals.by_key["AKIAÉ"].name == "admin"


def _twice_signed(name: str, body: bytes) -> tuple[list[tuple[str, str]], bytes]:
    """A request botocore signs with X-Custom sent twice (values 'a  b ' and ' c')."""
    request = AWSRequest(method="POST", url="http://127.0.0.1:8000/", data=body,
                         headers={"Content-Type": "application/x-amz-json-1.0",
                                  "X-Amz-Target": "DynamoDB_20120810.GetItem", "X-Custom": "a  b "})
    request.headers["X-Custom"] = " c"  # botocore's headers append: the header goes twice
    SigV4Auth(Credentials(f"AKIA{name.upper()}", f"{name}-secret"), "dynamodb", REGION).add_auth(request)
    assert "x-custom" in request.headers["Authorization"]
    return [(k, str(v)) for k, v in request.headers.items()] + [("Host", "127.0.0.1:8000")], body


def test_a_header_sent_twice_is_signed_over_its_values_joined(auth: Authenticator) -> None:
    """SigV4: the values of a repeated header, each trimmed, joined by commas ('a b,c')."""
    pairs, body = _twice_signed("admin", BODY)
    headers: dict[bytes, bytes] = {}
    for name, value in pairs:  # as the HTTP layer builds them
        key, raw = name.lower().encode(), value.strip().encode()
        previous = headers.get(key)
        headers[key] = raw
        if previous is not None:
            sigv4.note_repeated(headers, key, previous, raw)
    assert headers[b"x-custom"] == b"c" and headers[b"\x00x-custom"] == b"a b,c"
    assert auth.verify("POST", b"/", headers, body).name == "admin"
    # Signed over the last value alone, as before, it would not verify.
    last_only = {k: v for k, v in headers.items() if not k.startswith(b"\x00")}
    with pytest.raises(InvalidSignatureException):
        auth.verify("POST", b"/", last_only, body)


def _plan(auth: Authenticator, headers: dict[bytes, bytes]) -> sigv4.Plan:
    return auth._plans[headers[b"authorization"][:-64]]


def test_remembered_forms_hold_no_signature(auth: Authenticator) -> None:
    """What the signed values fix is remembered (sigv4.Form); each request is still hashed and HMAC'd."""
    sent, headers = signed("admin", BODY)
    for _ in range(3):  # the first request makes the form, the next ones use it
        assert auth.verify("POST", sent, headers, BODY).name == "admin"
    assert list(_plan(auth, headers).forms) == [itemgetter(*_plan(auth, headers).names)(headers)]
    with pytest.raises(InvalidSignatureException):
        auth.verify("POST", sent, headers, BODY + b" ")  # same signed headers, another body
    signature = headers[b"authorization"][-64:]
    flipped = b"%x" % ((int(signature[-1:], 16) + 1) % 16)
    tampered = {**headers, b"authorization": headers[b"authorization"][:-1] + flipped}
    with pytest.raises(InvalidSignatureException):
        auth.verify("POST", sent, tampered, BODY)
    other_body = json.dumps({"TableName": "t", "Key": {"pk": {"S": "b"}}}).encode()
    _, again = signed("admin", other_body)
    if again[b"x-amz-date"] == headers[b"x-amz-date"]:  # the same second: the form is shared
        assert auth.verify("POST", sent, again, other_body).name == "admin"
        with pytest.raises(InvalidSignatureException):
            auth.verify("POST", sent, {**again, b"authorization": headers[b"authorization"]}, other_body)


def test_a_remembered_form_expires(auth: Authenticator, monkeypatch: pytest.MonkeyPatch) -> None:
    """The form keeps X-Amz-Date's window, and every request is judged against the wall clock."""
    import partita.protocol.auth as auth_module

    sent, headers = signed("admin", BODY)
    assert auth.verify("POST", sent, headers, BODY).name == "admin"
    assert auth.verify("POST", sent, headers, BODY).name == "admin"
    now = auth_module.wall_now()
    monkeypatch.setattr(auth_module, "wall_now", lambda: now + 16 * 60)
    with pytest.raises(InvalidSignatureException, match="^Signature expired: "):
        auth.verify("POST", sent, headers, BODY)
    monkeypatch.setattr(auth_module, "wall_now", lambda: now - 16 * 60)
    with pytest.raises(InvalidSignatureException, match="^Signature not yet current: "):
        auth.verify("POST", sent, headers, BODY)


def test_one_client_on_two_paths(auth: Authenticator) -> None:
    """Forms are remembered for the first (method, path) of a header; another path is made each time."""
    first, headers = signed("admin", BODY)
    second, other = signed("admin", BODY, "/some/path")
    for _ in range(2):
        assert auth.verify("POST", first, headers, BODY).name == "admin"
        assert auth.verify("POST", second, other, BODY).name == "admin"
        with pytest.raises(InvalidSignatureException):
            auth.verify("POST", first, other, BODY)  # signed for the other path
        with pytest.raises(InvalidSignatureException):
            auth.verify("POST", second, other, BODY + b" ")


def test_forms_are_bounded(auth: Authenticator) -> None:
    plan = None
    for i in range(sigv4.MAX_FORMS * 2 + 5):
        sent, headers = signed("admin", BODY, extra={"X-Amz-Target": f"DynamoDB_20120810.Op{i}"})
        assert auth.verify("POST", sent, headers, BODY).name == "admin"
        plan = _plan(auth, headers)
    assert plan is not None and 0 < len(plan.forms) <= sigv4.MAX_FORMS


def test_only_a_verified_request_leaves_a_form(auth: Authenticator) -> None:
    """A plan needs a known key id but no signature: forms, which hold header values, need one."""
    sent, headers = signed("admin", BODY)
    with pytest.raises(InvalidSignatureException):
        auth.verify("POST", sent, headers, BODY + b" ")
    assert _plan(auth, headers).forms == {}
    assert auth.verify("POST", sent, headers, BODY).name == "admin"
    assert len(_plan(auth, headers).forms) == 1
