"""Compressed answers (Accept-Encoding) and compressed request bodies (Content-Encoding).

Expectations are those recorded against DynamoDB (ScyllaDB Alternator's
compression and CRC suites, run against the service): answers of 4 KB and
more are compressed when asked, CRC32 is over the bytes on the wire, and a
request body that cannot be decoded gets 500. Every test runs on both HTTP
servers.
"""

from __future__ import annotations

import gzip
import json
import time
import zlib
from typing import Any

import pytest
from conftest import client_for, create_table
from http_helpers import any_server, send

__all__ = ["any_server"]

THRESHOLD = 4096
CORAL = "com.amazon.coral.service#"
DYNAMO = "com.amazonaws.dynamodb.v20120810#"


@pytest.fixture(scope="module")
def table(any_server: str) -> str:
    name = "compression"
    ddb = client_for(any_server)
    if name not in ddb.list_tables()["TableNames"]:
        create_table(ddb, name)
    return name


def put(url: str, table: str, key: str, **values: str) -> None:
    item = {"pk": {"S": key}, **{name: {"S": value} for name, value in values.items()}}
    response = send(url, "PutItem", {"TableName": table, "Item": item})
    assert response.status == 200, response.body


def get(url: str, table: str, key: str, accept: str | None, projection: str | None = None) -> Any:
    body: dict[str, Any] = {"TableName": table, "Key": {"pk": {"S": key}}}
    if projection is not None:
        body["ProjectionExpression"] = projection
    headers = [] if accept is None else [("Accept-Encoding", accept)]
    return send(url, "GetItem", body, headers=headers)


def decoded(response: Any) -> Any:
    """The JSON of an answer, checking its framing and CRC32 over the wire bytes."""
    assert int(response.headers["content-length"]) == len(response.body)
    assert int(response.headers["x-amz-crc32"]) == zlib.crc32(response.body)
    coding = response.headers.get("content-encoding")
    if coding == "gzip":
        assert response.body[:2] == b"\x1f\x8b"
        return json.loads(gzip.decompress(response.body))
    if coding == "deflate":
        return json.loads(zlib.decompress(response.body))
    assert coding is None
    return json.loads(response.body)


@pytest.mark.parametrize("coding", ["gzip", "deflate"])
def test_large_answer_is_compressed_when_asked(any_server: str, table: str, coding: str) -> None:
    value = "x" * (THRESHOLD - 25)
    put(any_server, table, "large", x=value)
    plain = get(any_server, table, "large", None, "pk, x")
    assert "content-encoding" not in plain.headers
    assert decoded(plain)["Item"]["x"] == {"S": value}
    packed = get(any_server, table, "large", coding, "pk, x")
    assert packed.status == 200
    assert packed.headers["content-encoding"] == coding
    assert packed.headers["content-type"] == "application/x-amz-json-1.0"
    assert decoded(packed) == decoded(plain)
    assert len(packed.body) * 30 < len(plain.body)
    # The same item without its key is under 4 KB: not compressed although asked.
    small = get(any_server, table, "large", coding, "x")
    assert len(small.body) < THRESHOLD
    assert "content-encoding" not in small.headers
    assert decoded(small)["Item"] == {"x": {"S": value}}


def test_compression_threshold_is_4096_bytes(any_server: str, table: str) -> None:
    put(any_server, table, "edge", x="")
    overhead = len(get(any_server, table, "edge", None, "x").body)
    for size, compressed in ((THRESHOLD - 1, False), (THRESHOLD, True)):
        put(any_server, table, "edge", x="y" * (size - overhead))
        response = get(any_server, table, "edge", "gzip", "x")
        body = decoded(response)
        assert (response.headers.get("content-encoding") == "gzip") is compressed, size
        assert len(json.dumps(body, separators=(",", ":"))) == size


# Every Accept-Encoding value recorded against DynamoDB and the coding it answered with
# (Alternator's test_compressed_response.py, run against the service): 40 pairs.
NOT_COMPRESSED = [
    "identity", "", "br", "zstd", "compress", "x-gzip", "gzip ;q=0", "identity;q=0", "*;q=0",
    "br;q=0.8,identity;q=0.5,*;q=0", '"gzip"', "gzip br", "gzip:q=1", "gzip;q= 0;q=1", "gzip; q=0;q=1",
    "gzip;nq=0;q=1",
]
GZIP = [
    "gzip, deflate", "GZIP, identity", "dog, gzip ,, cat", "gzip;q=0.8, deflate;q=0.5", "*", "*, deflate;q=0.5",
    "*, identity", "*;q=0.5,identity", "gzip;q=0.5,identity;q=0.8", "deflate;q=0.5, gzip;q=31",
    "gzip;q=31,deflate;q=51", "deflate;q=0.5, gzip;q=1;q=0.2", "deflate;q=0.5,gzip;q=0.x",
    "deflate;q=0.5,gzip;q=0. x", "deflate;q=-0.5,gzip;q=0.2", "gzip;q =0;q=1", "gzip;q=0, gzip;q=1, gzip;q=0",
    "br,identity;q=0.5,gzip;q=0.0001",
]
DEFLATE = [
    "br, identity, deflate, gzip", "br, gzip;q=0, deflate; q = 0.5 , identity;q=0", "*, deflate",
    "*, gzip;q=0.5", "deflate;q=0.5, gzip;q=0.2", "deflate;q=0.5,gzip;q=0.",
]
RECORDED = [
    *((accept, None) for accept in NOT_COMPRESSED),
    *((accept, "gzip") for accept in GZIP),
    *((accept, "deflate") for accept in DEFLATE),
]


def test_the_table_is_the_recorded_one() -> None:
    assert len(RECORDED) == len({accept for accept, _ in RECORDED}) == 40


@pytest.mark.parametrize(("accept", "chosen"), RECORDED)
def test_accept_encoding_is_read_as_dynamodb_reads_it(
    any_server: str, table: str, accept: str, chosen: str | None
) -> None:
    put(any_server, table, "negotiate", x="z" * THRESHOLD)
    # "dog, gzip ,, cat" was recorded with the header's name in mixed case.
    name = "AcCePt-EnCoDiNg" if accept == "dog, gzip ,, cat" else "Accept-Encoding"
    body = {"TableName": table, "Key": {"pk": {"S": "negotiate"}}}
    response = send(any_server, "GetItem", body, headers=[(name, accept)])
    assert response.status == 200
    assert response.headers.get("content-encoding") == chosen
    assert decoded(response)["Item"]["x"] == {"S": "z" * THRESHOLD}


def test_only_the_first_accept_encoding_header_counts(any_server: str, table: str) -> None:
    # As recorded against DynamoDB (Alternator's test_multiple_accept_encoding_headers).
    put(any_server, table, "repeat", x="r" * THRESHOLD)
    body = {"TableName": table, "Key": {"pk": {"S": "repeat"}}}
    first = send(any_server, "GetItem", body, headers=[("Accept-Encoding", "gzip"), ("Accept-Encoding", "identity")])
    assert first.headers.get("content-encoding") == "gzip"
    last = send(any_server, "GetItem", body, headers=[("Accept-Encoding", "identity"), ("Accept-Encoding", "gzip")])
    assert "content-encoding" not in last.headers
    third = send(any_server, "GetItem", body, headers=[
        ("Accept-Encoding", "deflate"), ("Accept-Encoding", "identity"), ("Accept-Encoding", "gzip")])
    assert third.headers.get("content-encoding") == "deflate"
    assert decoded(first) == decoded(last) == decoded(third)


def test_large_error_answers_are_compressed_too(any_server: str, table: str) -> None:
    # A cancelled transaction that returns the (large) item it found.
    put(any_server, table, "cancel", x="c" * THRESHOLD)
    check = {
        "TableName": table,
        "Key": {"pk": {"S": "cancel"}},
        "ConditionExpression": "attribute_not_exists(pk)",
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    }
    body = {"TransactItems": [{"ConditionCheck": check}]}
    plain = send(any_server, "TransactWriteItems", body)
    packed = send(any_server, "TransactWriteItems", body, headers=[("Accept-Encoding", "gzip")])
    assert plain.status == packed.status == 400
    assert packed.headers["content-encoding"] == "gzip"
    assert decoded(packed) == decoded(plain)
    assert decoded(plain)["__type"] == DYNAMO + "TransactionCanceledException"


def test_boto3_answers_are_never_compressed(any_server: str, table: str) -> None:
    # botocore sends Accept-Encoding: identity; a large answer stays plain and its CRC checks.
    put(any_server, table, "boto", x="b" * 100_000)
    response = client_for(any_server).get_item(TableName=table, Key={"pk": {"S": "boto"}})
    assert response["Item"]["x"] == {"S": "b" * 100_000}
    assert "content-encoding" not in response["ResponseMetadata"]["HTTPHeaders"]


# Request bodies


def item_body(table: str, key: str, size: int = 0) -> bytes:
    item: dict[str, Any] = {"pk": {"S": key}, "v": {"S": "value"}}
    if size:
        item["pad"] = {"S": "p" * size}
    return json.dumps({"TableName": table, "Item": item}).encode()


def put_encoded(url: str, body: bytes, coding: str) -> Any:
    return send(url, "PutItem", body, headers=[("Content-Encoding", coding)])


def stored(url: str, table: str, key: str) -> Any:
    response = send(url, "GetItem", {"TableName": table, "Key": {"pk": {"S": key}}, "ConsistentRead": True})
    return json.loads(response.body).get("Item")


UNDECODABLE = {"__type": DYNAMO + "InternalServerError", "message": "Internal server error"}


def test_gzip_bodies_are_inflated(any_server: str, table: str) -> None:
    for coding in ("gzip", "GZIP", " gzip "):
        key = f"gzip-{coding.strip()}"
        response = put_encoded(any_server, gzip.compress(item_body(table, key)), coding)
        assert response.status == 200, (coding, response.body)
        assert stored(any_server, table, key)["v"] == {"S": "value"}
    # A large, poorly compressible body: several inflate steps.
    body = item_body(table, "gzip-large", 300_000)
    assert put_encoded(any_server, gzip.compress(body), "gzip").status == 200
    assert stored(any_server, table, "gzip-large")["pad"] == {"S": "p" * 300_000}


def test_concatenated_gzip_members_are_one_body(any_server: str, table: str) -> None:
    body = item_body(table, "members")
    parts = gzip.compress(body[:10]) + gzip.compress(body[10:40]) + gzip.compress(body[40:])
    response = put_encoded(any_server, parts, "gzip")
    assert response.status == 200, response.body
    assert stored(any_server, table, "members")["v"] == {"S": "value"}


def test_members_are_capped_so_empty_members_cost_nothing(any_server: str, table: str) -> None:
    body = item_body(table, "many")
    assert put_encoded(any_server, gzip.compress(b"") * 63 + gzip.compress(body), "gzip").status == 200
    # 800,000 empty members (16 MB): refused at once, not inflated one by one.
    started = time.monotonic()
    response = put_encoded(any_server, gzip.compress(b"") * 800_000 + gzip.compress(body), "gzip")
    assert time.monotonic() - started < 5
    assert response.status == 500
    assert response.json() == UNDECODABLE


def test_bytes_after_the_gzip_stream_are_ignored_as_on_dynamodb(any_server: str, table: str) -> None:
    # Alternator's suite records that the service accepts this (and calls it a bug).
    response = put_encoded(any_server, gzip.compress(item_body(table, "junk")) + b"junk", "gzip")
    assert response.status == 200, response.body
    assert stored(any_server, table, "junk") is not None


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda data: data[:-1], id="truncated"),
        pytest.param(lambda data: data[:-8], id="no-trailer"),
        pytest.param(lambda data: data[: len(data) // 2], id="half"),
        pytest.param(lambda data: data[:-8] + b"\0\0\0\0" + data[-4:], id="bad-crc"),
        pytest.param(lambda data: data[:-4] + b"\0\0\0\0", id="bad-length"),
        pytest.param(lambda data: data[:12] + b"\xff" * 8 + data[20:], id="corrupt-deflate"),
        pytest.param(lambda data: gzip.decompress(data), id="not-gzip"),
        pytest.param(lambda data: b"", id="empty"),
        pytest.param(lambda data: data + data[:-3], id="broken-second-member"),
    ],
)
def test_undecodable_gzip_gets_500_and_writes_nothing(any_server: str, table: str, damage: Any) -> None:
    key = "damaged"
    response = put_encoded(any_server, damage(gzip.compress(item_body(table, key, 100))), "gzip")
    assert response.status == 500
    assert response.json() == UNDECODABLE
    assert stored(any_server, table, key) is None


def test_deflate_bodies_are_zlib_streams(any_server: str, table: str) -> None:
    # RFC 9110's deflate: a zlib stream (RFC 1950), as DynamoDB reads it (Alternator's
    # test_deflate_request_valid, run against the service).
    for coding in ("deflate", "DEFLATE", " deflate "):
        key = f"deflate-{coding.strip()}"
        response = put_encoded(any_server, zlib.compress(item_body(table, key)), coding)
        assert (response.status, response.json()) == (200, {}), coding
        assert stored(any_server, table, key) == {"pk": {"S": key}, "v": {"S": "value"}}
    body = item_body(table, "deflate-large", 300_000)  # several 64 KB windows of input
    packed = zlib.compress(body + b" " * 1_000_000, 9)
    assert put_encoded(any_server, packed, "deflate").status == 200
    assert stored(any_server, table, "deflate-large")["pad"] == {"S": "p" * 300_000}


def test_a_second_zlib_stream_is_not_read(any_server: str, table: str) -> None:
    # DynamoDB does not accept a body split into two joined zlib streams (Alternator's
    # test_deflate_request_two_deflates fails against it). Partita reads the first stream
    # only, as the service's gzip reader stops after a member: here that is 10 bytes of JSON.
    body = item_body(table, "two-streams")
    response = put_encoded(any_server, zlib.compress(body[:10]) + zlib.compress(body[10:]), "deflate")
    assert (response.status, response.json()) == (400, {"__type": CORAL + "SerializationException"})
    assert stored(any_server, table, "two-streams") is None
    # What follows a complete stream is not read at all.
    response = put_encoded(any_server, zlib.compress(body) + b"junk", "deflate")
    assert response.status == 200
    assert stored(any_server, table, "two-streams") == {"pk": {"S": "two-streams"}, "v": {"S": "value"}}


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda data: b"", id="empty"),
        pytest.param(lambda data: zlib.decompress(data), id="not-deflate"),
        pytest.param(lambda data: data[2:-4], id="raw-deflate-rfc1951"),
        pytest.param(lambda data: gzip.compress(zlib.decompress(data)), id="gzip"),
        pytest.param(lambda data: data[:-1], id="truncated"),
        pytest.param(lambda data: data[:-4], id="no-adler32"),
        pytest.param(lambda data: data[:-4] + bytes(4), id="bad-adler32"),
        pytest.param(lambda data: b"\x78\x9d" + data[2:], id="bad-header-check"),
        pytest.param(lambda data: data[:2], id="header-only"),
    ],
)
def test_undecodable_deflate_gets_500_and_writes_nothing(any_server: str, table: str, damage: Any) -> None:
    # DynamoDB answers 500 to an empty body and to one that is not deflate data
    # (Alternator's test_deflate_request_empty / _not_deflated); broken streams alike.
    key = "damaged-deflate"
    response = put_encoded(any_server, damage(zlib.compress(item_body(table, key, 100))), "deflate")
    assert response.status == 500
    assert response.json() == UNDECODABLE
    assert stored(any_server, table, key) is None


def test_deflate_body_inflating_past_16_mb_gets_413(any_server: str, table: str) -> None:
    body = item_body(table, "deflate-bomb")
    limit = 16 * 1024 * 1024
    bomb = zlib.compress(body[:-1] + b" " * (limit - len(body) + 1) + body[-1:])
    response = put_encoded(any_server, bomb, "deflate")
    assert (response.status, response.body) == (413, b"")
    assert stored(any_server, table, "deflate-bomb") is None


@pytest.mark.parametrize("coding", ["garbage", "br", "compress", "x-gzip", "zlib", "gzip, identity", "deflate, gzip"])
def test_unknown_content_encoding_gets_500(any_server: str, table: str, coding: str) -> None:
    # DynamoDB decodes gzip and deflate only (Alternator's test_garbage_content_encoding).
    body = item_body(table, "unknown-coding")
    response = put_encoded(any_server, body, coding)
    assert response.status == 500
    assert response.json() == UNDECODABLE
    assert stored(any_server, table, "unknown-coding") is None


def test_identity_content_encoding_is_no_encoding(any_server: str, table: str) -> None:
    for coding in ("identity", ""):
        response = put_encoded(any_server, item_body(table, "identity"), coding)
        assert response.status == 200, (coding, response.body)


def test_body_inflating_past_16_mb_gets_413(any_server: str, table: str) -> None:
    body = item_body(table, "bomb")
    limit = 16 * 1024 * 1024
    bomb = gzip.compress(body[:-1] + b" " * (limit - len(body) + 1) + body[-1:])
    assert len(bomb) < 100_000
    response = put_encoded(any_server, bomb, "gzip")
    assert response.status == 413
    assert response.body == b""
    assert stored(any_server, table, "bomb") is None
    # Exactly 16 MB once inflated is still a request.
    exact = gzip.compress(body[:-1] + b" " * (limit - len(body)) + body[-1:])
    assert put_encoded(any_server, exact, "gzip").status == 200
    assert stored(any_server, table, "bomb") is not None


def test_decoding_comes_after_the_content_type_check(any_server: str) -> None:
    response = send(
        any_server, "ListTables", b"garbage", headers=[("Content-Type", "text/plain"), ("Content-Encoding", "gzip")]
    )
    assert response.status == 404
    assert response.body == b"<UnknownOperationException/>\n"
