"""`--auth` at the edges of HTTP: unknown keys, the Authorization header's separators, clock skew
before anything else, signed compressed bodies and signed repeated Accept-Encoding headers.

Each fact was observed on DynamoDB (docs/decisions.md, "Authentication and authorization");
every test runs on both HTTP servers.
"""

from __future__ import annotations

import datetime
import http.client
import json
import re
import uuid
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import boto3
import pytest
from auth_helpers import ALLOW_ALL, client, create, signed_headers, user, write_auth
from botocore.config import Config
from botocore.exceptions import ClientError
from conftest import error_of, launch

MISMATCH = (
    "The request signature we calculated does not match the signature you provided. "
    "Check your AWS Secret Access Key and signing method. Consult the service documentation for details."
)
INVALID_TOKEN = "The security token included in the request is invalid."
CORAL = "com.amazon.coral.service#"
TABLE = "edges"
BIG = "z" * 4096  # an item whose GetItem answer is over the compression threshold
# The observed request's header: components separated by single spaces, no commas.
BOGUS = ("AWS4-HMAC-SHA256 Credential=unknownkey/2/3/4/aws4_request SignedHeaders=x-amz-date;host "
         "Signature=123")


@pytest.fixture(scope="module", params=["partita", "uvicorn"])
def url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    path = write_auth(tmp_path_factory.mktemp("auth") / "auth.json", user("admin", *ALLOW_ALL["Statement"]))
    srv = launch("--in-memory", "--http", request.param, "--auth", str(path))
    admin = client(srv.url, "admin")
    create(admin, TABLE)
    admin.put_item(TableName=TABLE, Item={"pk": {"S": "big"}, "x": {"S": BIG}})
    yield srv.url
    srv.stop()


def stranger(url: str, service: str = "dynamodb") -> Any:
    """A client with a key id the server never issued, and a secret of its own."""
    return boto3.client(service, endpoint_url=url, region_name="us-east-1",
                        aws_access_key_id="AKIA" + uuid.uuid4().hex[:16].upper(),
                        aws_secret_access_key=uuid.uuid4().hex, config=Config(retries={"max_attempts": 1}))


def post(url: str, pairs: list[tuple[str, str]], body: bytes) -> tuple[int, dict[str, str], bytes]:
    """One POST with exactly these header lines (repeats kept, in order)."""
    parsed = urlparse(url)
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
    try:
        conn.putrequest("POST", "/", skip_host=any(n.lower() == "host" for n, _ in pairs), skip_accept_encoding=True)
        for name, value in pairs:
            conn.putheader(name, value)
        conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def refusal(answer: bytes) -> tuple[str, str]:
    parsed = json.loads(answer)
    return parsed["__type"].removeprefix(CORAL), parsed["message"]


# A1: keys the server never issued


@pytest.mark.parametrize("operation", ["describe_endpoints", "list_tables", "describe_limits"])
def test_an_unknown_key_is_unrecognized_whatever_its_secret(url: str, operation: str) -> None:
    for _ in range(2):  # two unknown key ids, each with its own secret
        with pytest.raises(ClientError) as excinfo:
            getattr(stranger(url), operation)()
        assert error_of(excinfo) == ("UnrecognizedClientException", INVALID_TOKEN)
        assert excinfo.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    with pytest.raises(ClientError) as excinfo:
        stranger(url).get_item(TableName=TABLE, Key={"pk": {"S": "big"}})
    assert error_of(excinfo) == ("UnrecognizedClientException", INVALID_TOKEN)
    with pytest.raises(ClientError) as excinfo:
        stranger(url, "dynamodbstreams").list_streams()
    assert error_of(excinfo) == ("UnrecognizedClientException", INVALID_TOKEN)


def test_a_known_key_with_a_wrong_secret_is_an_invalid_signature(url: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        client(url, "admin", secret="not-the-secret").describe_endpoints()
    assert error_of(excinfo) == ("InvalidSignatureException", MISMATCH)
    endpoints = client(url, "admin").describe_endpoints()["Endpoints"]
    assert endpoints == [{"Address": urlparse(url).netloc, "CachePeriodInMinutes": 1440}]


def test_without_auth_any_key_works(endpoint: str) -> None:
    assert stranger(endpoint).describe_endpoints()["Endpoints"][0]["CachePeriodInMinutes"] == 1440


# A2: components separated by whitespace alone


def _target(operation: str) -> str:
    return f"DynamoDB_20120810.{operation}"


@pytest.mark.parametrize("separator", [" ", ",", ", ", "  ", " , ", "\t"])
def test_authorization_components_may_be_separated_by_whitespace_or_commas(url: str, separator: str) -> None:
    body = json.dumps({"TableName": TABLE, "Key": {"pk": {"S": "absent"}}}).encode()
    headers = signed_headers(url, "admin", body, _target("GetItem"))
    algorithm, _, rest = headers["Authorization"].partition(" ")
    parts = [part.strip() for part in rest.split(",")]
    assert [part.split("=")[0] for part in parts] == ["Credential", "SignedHeaders", "Signature"]
    headers["Authorization"] = algorithm + " " + separator.join(parts)
    status, _, answer = post(url, list(headers.items()), body)
    assert (status, json.loads(answer)) == (200, {})


def test_the_observed_header_parses_into_its_three_components(url: str) -> None:
    # With a current date the scope is what is wrong (not IncompleteSignature: all three found).
    now = datetime.datetime.now(datetime.UTC)
    amz = now.strftime("%Y%m%dT%H%M%SZ")
    status, _, answer = post(url, _bogus_headers(amz), b"")
    assert status == 400
    assert refusal(answer) == ("InvalidSignatureException",
                               "Credential should be scoped to a valid region, not '3'. "
                               "Credential should be scoped to correct service: 'dynamodb'. "
                               "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date "
                               f"from HTTP: '2' != '{amz[:8]}', from '{amz}'.")


def test_without_auth_the_observed_header_is_well_formed(endpoint: str) -> None:
    # Only the header's form is checked without --auth: past it, an empty body is the next error.
    status, _, answer = post(endpoint, _bogus_headers("20170101T010101Z"), b"")
    assert (status, json.loads(answer)) == (400, {"__type": CORAL + "SerializationException"})
    status, _, answer = post(endpoint, _bogus_headers("20170101T010101Z"), b"{}")
    assert status == 200
    assert json.loads(answer)["Endpoints"][0]["CachePeriodInMinutes"] == 1440


def _bogus_headers(amz: str, authorization: str = BOGUS) -> list[tuple[str, str]]:
    return [("Content-Type", "application/x-amz-json-1.0"), ("X-Amz-Target", _target("DescribeEndpoints")),
            ("X-Amz-Date", amz), ("Authorization", authorization)]


# A3: the clock first


def _stamp(moment: datetime.datetime) -> str:
    return moment.strftime("%Y%m%dT%H%M%SZ")


def _skew_message(message: str, amz: str, expired: bool) -> datetime.datetime:
    """Check the message's form and bounds; the server's "now" in it."""
    stamp = r"(\d{8}T\d{6}Z)"
    if expired:
        found = re.fullmatch(rf"Signature expired: {amz} is now earlier than {stamp} \({stamp} - 15 min\.\)", message)
    else:
        found = re.fullmatch(rf"Signature not yet current: {amz} is still later than {stamp} \({stamp} \+ 15 min\.\)",
                             message)
    assert found is not None, message
    bound, now = (datetime.datetime.strptime(s, "%Y%m%dT%H%M%SZ").replace(tzinfo=datetime.UTC) for s in found.groups())
    assert bound - now == datetime.timedelta(minutes=-15 if expired else 15)
    return now


@pytest.mark.parametrize(("amz", "expired"), [("20170101T010101Z", True), ("30200101T010101Z", False)])
def test_a_date_outside_15_minutes_is_refused_before_key_and_signature(url: str, amz: str, expired: bool) -> None:
    before = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
    # The observed request: unknown key, bogus scope, garbage signature, no body.
    status, _, answer = post(url, _bogus_headers(amz), b"")
    after = datetime.datetime.now(datetime.UTC)
    assert status == 400
    code, message = refusal(answer)
    assert code == "InvalidSignatureException"
    assert before <= _skew_message(message, amz, expired) <= after
    # A known key with a garbage signature: the same.
    known = BOGUS.replace("unknownkey/2/3/4/", f"AKIAADMIN/{amz[:8]}/us-east-1/dynamodb/")
    status, _, answer = post(url, _bogus_headers(amz, known), b"")
    assert status == 400 and refusal(answer)[0] == "InvalidSignatureException"
    _skew_message(refusal(answer)[1], amz, expired)


def test_fifteen_minutes_is_the_window(url: str) -> None:
    # 16 minutes either way is refused for the date (the signature is garbage: inside the
    # window the next check speaks, here the scope's region).
    now = datetime.datetime.now(datetime.UTC)
    for minutes, expired in ((-16, True), (16, False)):
        amz = _stamp(now + datetime.timedelta(minutes=minutes))
        status, _, answer = post(url, _bogus_headers(amz), b"")
        _skew_message(refusal(answer)[1], amz, expired)
    amz = _stamp(now + datetime.timedelta(minutes=13))
    assert refusal(post(url, _bogus_headers(amz), b"")[2])[1].startswith(
        "Credential should be scoped to a valid region, not '3'. ")


# H1: a deflate body is verified as sent


def test_a_deflate_body_is_verified_over_its_compressed_bytes(url: str) -> None:
    item = {"pk": {"S": "deflated"}, "v": {"S": "value"}}
    packed = zlib.compress(json.dumps({"TableName": TABLE, "Item": item}).encode())
    # Content-Encoding added after signing, unsigned (as the service was observed).
    headers = signed_headers(url, "admin", packed, _target("PutItem"))
    status, _, answer = post(url, [*headers.items(), ("Content-Encoding", "deflate")], packed)
    assert (status, json.loads(answer)) == (200, {})
    got = client(url, "admin").get_item(TableName=TABLE, Key={"pk": {"S": "deflated"}}, ConsistentRead=True)
    assert got["Item"] == item
    # Signed over the inflated bytes but sent compressed: not what was signed.
    plain = json.dumps({"TableName": TABLE, "Item": {**item, "pk": {"S": "never"}}}).encode()
    headers = signed_headers(url, "admin", plain, _target("PutItem"), extra={"Content-Encoding": "deflate"})
    status, _, answer = post(url, list(headers.items()), zlib.compress(plain))
    assert (status, refusal(answer)) == (400, ("InvalidSignatureException", MISMATCH))
    assert "Item" not in client(url, "admin").get_item(TableName=TABLE, Key={"pk": {"S": "never"}})


# H3: repeated Accept-Encoding lines under a signature


def _get_big(url: str, signed_as: str, lines: list[str]) -> tuple[int, dict[str, str], bytes]:
    """GetItem of the big item, signed with Accept-Encoding `signed_as`, sent as these lines."""
    body = json.dumps({"TableName": TABLE, "Key": {"pk": {"S": "big"}}}).encode()
    headers = signed_headers(url, "admin", body, _target("GetItem"), extra={"Accept-Encoding": signed_as})
    assert "accept-encoding" in headers["Authorization"]
    pairs = [(name, value) for name, value in headers.items() if name.lower() != "accept-encoding"]
    return post(url, pairs + [("Accept-Encoding", line) for line in lines], body)


def test_repeated_accept_encoding_lines_are_signed_joined_and_the_first_counts(url: str) -> None:
    status, headers, answer = _get_big(url, "gzip,identity", ["gzip", "identity"])
    assert (status, headers.get("content-encoding")) == (200, "gzip")
    assert json.loads(zlib.decompress(answer, 31))["Item"]["x"] == {"S": BIG}
    status, headers, answer = _get_big(url, "identity,gzip", ["identity", "gzip"])
    assert (status, headers.get("content-encoding")) == (200, None)
    assert json.loads(answer)["Item"]["x"] == {"S": BIG}
    status, headers, answer = _get_big(url, "gzip", ["gzip"])  # a control: one line
    assert (status, headers.get("content-encoding")) == (200, "gzip")


def test_a_signed_accept_encoding_changed_after_signing_is_refused(url: str) -> None:
    for signed_as, lines in (("identity", ["gzip"]), ("gzip,identity", ["gzip"]), ("gzip,identity", ["identity", "gzip"])):
        status, _, answer = _get_big(url, signed_as, lines)
        assert (status, refusal(answer)) == (400, ("InvalidSignatureException", MISMATCH)), (signed_as, lines)


def test_a_file_naming_nobody_refuses_every_key(tmp_path: Path) -> None:
    path = write_auth(tmp_path / "auth.json")
    srv = launch("--in-memory", "--auth", str(path))
    try:
        with pytest.raises(ClientError) as excinfo:
            stranger(srv.url).describe_endpoints()
        assert error_of(excinfo) == ("UnrecognizedClientException", INVALID_TOKEN)
    finally:
        srv.stop()
