"""Partita's own HTTP/1.1 server, driven over raw sockets as good and bad clients do.

The boto3 and AWS CLI suites already go through this server (it is the
default); these tests cover what those clients never do: pipelining,
chunked bodies, 100-continue, HTTP/1.0, malformed requests, huge bodies,
clients that vanish or stop reading, and how the server stops.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import signal
import socket
import subprocess
import sys
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from conftest import FAKE_AUTH, Server, client_for, create_table

MAX = 16 * 1024 * 1024
CORAL = "com.amazon.coral.service#"


def address(url: str) -> tuple[str, int]:
    parsed = urlparse(url)
    assert parsed.hostname is not None and parsed.port is not None
    return parsed.hostname, parsed.port


def connect(url: str) -> socket.socket:
    sock = socket.create_connection(address(url), timeout=30)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def request(
    operation: str | None,
    body: bytes | dict[str, Any] = b"{}",
    *,
    method: str = "POST",
    version: str = "1.1",
    headers: dict[str, str] | None = None,
) -> bytes:
    """The bytes of one request with DynamoDB's headers and a Content-Length."""
    payload = json.dumps(body).encode() if isinstance(body, dict) else body
    sent = {
        "Host": "localhost",
        "Content-Type": "application/x-amz-json-1.0",
        "Authorization": FAKE_AUTH,
        "X-Amz-Date": "20260101T000000Z",
        "Content-Length": str(len(payload)),
    }
    if operation is not None:
        sent["X-Amz-Target"] = f"DynamoDB_20120810.{operation}"
    sent.update(headers or {})
    head = f"{method} / HTTP/{version}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in sent.items()) + "\r\n"
    return head.encode() + payload


class Reader:
    """Reads HTTP/1.1 responses (Content-Length framed) off a socket."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = b""

    def _fill(self) -> bool:
        data = self.sock.recv(1 << 20)
        self.buffer += data
        return bool(data)

    def response(self) -> tuple[int, dict[str, str], bytes]:
        while b"\r\n\r\n" not in self.buffer:
            if not self._fill():
                raise ConnectionError(f"closed before a response head: {self.buffer!r}")
        head, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0")) if status >= 200 else 0
        while len(self.buffer) < length:
            if not self._fill():
                raise ConnectionError("closed in a response body")
        body, self.buffer = self.buffer[:length], self.buffer[length:]
        return status, headers, body

    def closed(self) -> bool:
        """True when the server closes the connection with nothing more to say."""
        try:
            return not self._fill() and not self.buffer
        except ConnectionResetError:
            return True


def exchange(url: str, data: bytes) -> tuple[int, dict[str, str], bytes]:
    with connect(url) as sock:
        sock.sendall(data)
        return Reader(sock).response()


def test_keep_alive_serves_many_requests_on_one_connection(endpoint: str) -> None:
    with connect(endpoint) as sock:
        reader = Reader(sock)
        for _ in range(20):
            sock.sendall(request("ListTables"))
            status, headers, body = reader.response()
            assert status == 200
            assert "connection" not in headers
            assert int(headers["x-amz-crc32"]) == zlib.crc32(body)
            assert headers["content-type"] == "application/x-amz-json-1.0"
            assert len(headers["x-amzn-requestid"]) == 52
            assert headers["date"].endswith("GMT")


def test_pipelined_requests_are_answered_in_order(endpoint: str, ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name)
    item = {"pk": {"S": "a"}, "v": {"N": "1"}}
    batch = (
        request("PutItem", {"TableName": table_name, "Item": item})
        + request(None, b"", method="GET")
        + request("GetItem", {"TableName": table_name, "Key": {"pk": {"S": "a"}}})
        + request("FlyToTheMoon")
        + request("DeleteItem", {"TableName": table_name, "Key": {"pk": {"S": "a"}}})
        + request("GetItem", {"TableName": table_name, "Key": {"pk": {"S": "a"}}})
    )
    with connect(endpoint) as sock:
        sock.sendall(batch)
        reader = Reader(sock)
        answers = [reader.response() for _ in range(6)]
    assert [status for status, _, _ in answers] == [200, 200, 200, 400, 200, 200]
    assert answers[1][2].startswith(b"healthy")
    assert json.loads(answers[2][2]) == {"Item": item}
    assert json.loads(answers[3][2]) == {"__type": CORAL + "UnknownOperationException"}
    assert json.loads(answers[5][2]) == {}


def test_pipelined_requests_split_at_every_byte(endpoint: str) -> None:
    data = request("ListTables") + request(None, b"", method="GET")
    with connect(endpoint) as sock:
        for i in range(len(data)):
            sock.sendall(data[i : i + 1])
        reader = Reader(sock)
        assert reader.response()[0] == 200
        assert reader.response()[2].startswith(b"healthy")


def test_backpressure_when_the_client_does_not_read(endpoint: str, ddb: Any, table_name: str) -> None:
    """Answers far beyond the socket buffers wait until the client reads, in order."""
    create_table(ddb, table_name)
    ddb.put_item(TableName=table_name, Item={"pk": {"S": "big"}, "blob": {"S": "x" * 300_000}})
    count = 150  # ~45 MB of answers
    get = request("GetItem", {"TableName": table_name, "Key": {"pk": {"S": "big"}}})
    health = request(None, b"", method="GET")
    with connect(endpoint) as sock:
        sock.sendall((get + health) * count)
        time.sleep(0.5)  # the server fills its buffers and pauses
        reader = Reader(sock)
        for _ in range(count):
            status, _, body = reader.response()
            assert status == 200 and len(body) > 300_000
            status, _, body = reader.response()
            assert status == 200 and body.startswith(b"healthy")
        sock.sendall(health)
        assert reader.response()[0] == 200


def test_chunked_request_body(endpoint: str) -> None:
    payload = json.dumps({"Limit": 5}).encode()
    head = request("ListTables", b"", headers={"Transfer-Encoding": "chunked"}).replace(b"Content-Length: 0\r\n", b"")
    with connect(endpoint) as sock:
        sock.sendall(head)
        for i in range(0, len(payload), 3):
            piece = payload[i : i + 3]
            sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
            time.sleep(0.01)
        sock.sendall(b"0\r\n\r\n")
        status, _, body = Reader(sock).response()
    assert status == 200
    assert "TableNames" in json.loads(body)


def test_chunked_gzip_request_body(endpoint: str) -> None:
    packed = gzip.compress(b'{"Limit": 1}')
    head = request("ListTables", b"", headers={"Transfer-Encoding": "chunked", "Content-Encoding": "gzip"})
    head = head.replace(b"Content-Length: 0\r\n", b"")
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(packed[i : i + 7]), packed[i : i + 7]) for i in range(0, len(packed), 7))
    status, _, body = exchange(endpoint, head + chunks + b"0\r\n\r\n")
    assert status == 200
    assert "TableNames" in json.loads(body)


def test_expect_100_continue(endpoint: str) -> None:
    data = request("ListTables", {"Limit": 1}, headers={"Expect": "100-continue"})
    head, _, body = data.partition(b"\r\n\r\n")
    with connect(endpoint) as sock:
        sock.sendall(head + b"\r\n\r\n")
        reader = Reader(sock)
        status, _, _ = reader.response()
        assert status == 100
        sock.sendall(body)
        status, _, answer = reader.response()
    assert status == 200
    assert "TableNames" in json.loads(answer)


def test_expect_100_continue_with_a_body_over_the_limit(endpoint: str) -> None:
    data = request("PutItem", b"", headers={"Expect": "100-continue", "Content-Length": str(MAX + 1)})
    with connect(endpoint) as sock:
        sock.sendall(data)  # the head only: the body is never sent
        reader = Reader(sock)
        status, headers, _ = reader.response()
        assert status == 413
        assert headers["connection"] == "close"
        assert reader.closed()


def test_http_1_0_closes_unless_asked_to_keep_alive(endpoint: str) -> None:
    with connect(endpoint) as sock:
        sock.sendall(request("ListTables", version="1.0"))
        reader = Reader(sock)
        status, headers, _ = reader.response()
        assert status == 200
        assert headers["connection"] == "close"
        assert reader.closed()
    with connect(endpoint) as sock:
        reader = Reader(sock)
        for _ in range(3):
            sock.sendall(request("ListTables", version="1.0", headers={"Connection": "keep-alive"}))
            status, headers, _ = reader.response()
            assert status == 200
            assert headers["connection"] == "keep-alive"


def test_connection_close(endpoint: str) -> None:
    with connect(endpoint) as sock:
        # The second request comes after `Connection: close` and is never answered.
        sock.sendall(request("ListTables", headers={"Connection": "close"}) + request("ListTables"))
        reader = Reader(sock)
        status, headers, _ = reader.response()
        assert status == 200
        assert headers["connection"] == "close"
        assert reader.closed()


def test_headers_are_case_insensitive(endpoint: str) -> None:
    payload = b'{"Limit": 1}'
    data = (
        b"POST / HTTP/1.1\r\nhOsT: x\r\nCONTENT-type: application/x-amz-json-1.0\r\n"
        b"x-AMZ-TARGET: DynamoDB_20120810.ListTables\r\nauthorization: " + FAKE_AUTH.encode() + b"\r\n"
        b"X-AMZ-DATE: 20260101T000000Z\r\ncontent-LENGTH: %d\r\n\r\n%s" % (len(payload), payload)
    )
    status, _, body = exchange(endpoint, data)
    assert status == 200
    assert "TableNames" in json.loads(body)


@pytest.mark.parametrize(
    "data",
    [
        b"GARBAGE\r\n\r\n",
        b"POST / HTTP/9.9\r\nContent-Length: 0\r\n\r\n",
        b"POST / HTTP/1.1\r\nContent-Length: abc\r\n\r\n",
        b"POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        b"POST / HTTP/1.1\r\nBad Header\r\n\r\n",
    ],
)
def test_malformed_http_gets_400_and_close(endpoint: str, data: bytes) -> None:
    with connect(endpoint) as sock:
        sock.sendall(data)
        reader = Reader(sock)
        status, headers, _ = reader.response()
        assert status == 400
        assert headers["connection"] == "close"
        assert reader.closed()


def test_malformed_request_after_good_ones(endpoint: str) -> None:
    with connect(endpoint) as sock:
        sock.sendall(request("ListTables") + b"NOT HTTP AT ALL\r\n\r\n")
        reader = Reader(sock)
        assert reader.response()[0] == 200
        assert reader.response()[0] == 400
        assert reader.closed()


def test_an_oversized_request_read_with_a_good_one_is_refused_after_its_answer(endpoint: str) -> None:
    """Both arrive in one read: the good one's answer comes first, then the 413, then the close."""
    oversized = request("PutItem", b"", headers={"Content-Length": str(MAX + 1)})
    with connect(endpoint) as sock:
        sock.sendall(request("ListTables", {"Limit": 1}) + oversized)
        reader = Reader(sock)
        status, headers, body = reader.response()
        assert (status, "connection" in headers) == (200, False)
        assert "TableNames" in json.loads(body)
        status, headers, _ = reader.response()
        assert (status, headers["connection"]) == (413, "close")
        assert reader.closed()


def test_100_continue_read_with_an_earlier_request_comes_after_its_answer(endpoint: str) -> None:
    waiting = request("ListTables", {"Limit": 1}, headers={"Expect": "100-continue"})
    head, _, body = waiting.partition(b"\r\n\r\n")
    with connect(endpoint) as sock:
        sock.sendall(request("ListTables", {"Limit": 1}) + head + b"\r\n\r\n")
        reader = Reader(sock)
        assert reader.response()[0] == 200
        assert reader.response()[0] == 100
        sock.sendall(body)
        status, _, answer = reader.response()
    assert status == 200
    assert "TableNames" in json.loads(answer)


UPGRADE = {"Connection": "Upgrade", "Upgrade": "websocket"}


@pytest.mark.parametrize("earlier", [0, 1, 2])
def test_a_request_to_switch_protocols_is_answered_then_the_connection_closes(endpoint: str, earlier: int) -> None:
    """Partita speaks only HTTP/1.1: the request is answered as one, after those read with it, and nothing after it is."""
    data = request("ListTables", {"Limit": 1}) * earlier + request(None, b"", method="GET", headers=UPGRADE)
    with connect(endpoint) as sock:
        sock.sendall(data + request("ListTables", {"Limit": 1}))
        reader = Reader(sock)
        for _ in range(earlier):
            status, _, body = reader.response()
            assert status == 200
            assert "TableNames" in json.loads(body)
        status, _, body = reader.response()
        assert status == 200
        assert body.startswith(b"healthy")
        assert reader.closed()


def test_requests_of_many_connections_at_once_get_their_own_answers(endpoint: str, ddb: Any, table_name: str) -> None:
    """Sent before any is read, so that one loop turn may answer several: each answer goes to its asker."""
    create_table(ddb, table_name)
    count = 12
    for i in range(count):
        ddb.put_item(TableName=table_name, Item={"pk": {"S": f"k{i}"}, "v": {"N": str(i)}})
    socks = [connect(endpoint) for _ in range(count)]
    try:
        for i, sock in enumerate(socks):
            get = request("GetItem", {"TableName": table_name, "Key": {"pk": {"S": f"k{i}"}}})
            put = request("PutItem", {"TableName": table_name, "Item": {"pk": {"S": f"k{i}"}, "v": {"N": str(i + 100)}}})
            sock.sendall(get + put + get)
        for i, sock in enumerate(socks):
            reader = Reader(sock)
            answers = [reader.response() for _ in range(3)]
            assert [status for status, _, _ in answers] == [200, 200, 200]
            assert json.loads(answers[0][2]) == {"Item": {"pk": {"S": f"k{i}"}, "v": {"N": str(i)}}}
            assert json.loads(answers[1][2]) == {}
            assert json.loads(answers[2][2]) == {"Item": {"pk": {"S": f"k{i}"}, "v": {"N": str(i + 100)}}}
    finally:
        for sock in socks:
            sock.close()


def test_a_request_received_in_full_runs_though_its_client_has_gone(endpoint: str, ddb: Any, table_name: str) -> None:
    create_table(ddb, table_name)
    item = {"pk": {"S": "left"}, "v": {"N": "1"}}
    with connect(endpoint) as sock:
        sock.sendall(request("PutItem", {"TableName": table_name, "Item": item}))
    # The read may reach the server first on another connection; the write runs though its client left.
    for _ in range(100):
        if "Item" in ddb.get_item(TableName=table_name, Key={"pk": {"S": "left"}}):
            break
        time.sleep(0.01)
    assert ddb.get_item(TableName=table_name, Key={"pk": {"S": "left"}})["Item"] == item


def test_oversized_declared_body_is_refused_before_reading_it(endpoint: str) -> None:
    with connect(endpoint) as sock:
        sock.sendall(request("PutItem", b"", headers={"Content-Length": str(MAX + 1)}) + b"{" * 1000)
        reader = Reader(sock)
        status, headers, _ = reader.response()
        assert status == 413
        assert headers["connection"] == "close"
        assert reader.closed()


def test_oversized_chunked_body(endpoint: str) -> None:
    head = request("PutItem", b"", headers={"Transfer-Encoding": "chunked"}).replace(b"Content-Length: 0\r\n", b"")
    chunk = b"%x\r\n%s\r\n" % (1 << 20, b" " * (1 << 20))
    with connect(endpoint) as sock:
        sock.sendall(head)
        try:
            for _ in range(20):
                sock.sendall(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server stopped reading after 16 MB and closed
        status, _, _ = Reader(sock).response()
    assert status == 413


def test_body_of_exactly_the_limit_is_read(endpoint: str) -> None:
    body = b"{" + b" " * (MAX - 2) + b"}"
    status, _, answer = exchange(endpoint, request("ListTables", body))
    assert status == 200
    assert "TableNames" in json.loads(answer)


def test_client_disconnect_mid_body_then_new_connection_works(endpoint: str) -> None:
    for _ in range(5):
        with connect(endpoint) as sock:
            sock.sendall(request("ListTables", b'{"Limit": 1}', headers={"Content-Length": "1000"}))
        with connect(endpoint) as sock:
            sock.sendall(request("ListTables", b'{"Limit": 1}', headers={"Content-Length": "1000"}))
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")  # RST
    status, _, body = exchange(endpoint, request("ListTables", {"Limit": 1}))
    assert status == 200
    assert "TableNames" in json.loads(body)


def test_head_request_has_no_body(endpoint: str) -> None:
    with connect(endpoint) as sock:
        sock.sendall(request(None, b"", method="HEAD") + request(None, b"", method="GET"))
        reader = Reader(sock)
        head = reader.buffer
        while b"\r\n\r\n" not in head:
            reader._fill()
            head = reader.buffer
        first, _, rest = head.partition(b"\r\n\r\n")
        assert first.startswith(b"HTTP/1.1 404")
        reader.buffer = rest  # no body follows a HEAD answer
        status, _, body = reader.response()
        assert status == 200 and body.startswith(b"healthy")


def test_idle_connections_are_closed(start_server: Callable[..., Server]) -> None:
    server = start_server("--in-memory", "--keep-alive-timeout", "1")
    with connect(server.url) as sock:
        reader = Reader(sock)
        sock.sendall(request("ListTables"))
        assert reader.response()[0] == 200
        started = time.monotonic()
        assert reader.closed()
        assert 0.5 < time.monotonic() - started < 15
    with connect(server.url) as sock:  # half a request, then silence
        sock.sendall(request("ListTables")[:20])
        assert Reader(sock).closed()


def test_both_http_servers_answer_alike(start_server: Callable[..., Server]) -> None:
    endpoint = start_server("--in-memory").url
    uvicorn_server = start_server("--in-memory", "--http", "uvicorn")
    big = json.dumps({"Limit": 1, "ExclusiveStartTableName": "x"}).encode()
    cases = [
        request("ListTables"),
        request(None, b"", method="GET"),
        request(None, b"", method="GET", headers={"Host": "dynamodb.ap-south-1.amazonaws.com"}),
        request("ListTables", headers={"Content-Type": "text/plain"}),
        request("ListTables", b"{", headers={"Content-Type": "application/json"}),
        request("Nope"),
        request("ListTables", headers={"Authorization": "nothing"}),
        request("ListTables", headers={"Origin": "http://x"}),
        request(None, b"", method="OPTIONS", headers={"Origin": "o", "Access-Control-Request-Method": "POST"}),
        request("ListTables", zlib.compress(big), headers={"Content-Encoding": "deflate"}),
        request("ListTables", b"\x1f\x8b", headers={"Content-Encoding": "gzip"}),
        # An error quoting 5 KB of the Authorization header: over the compression threshold.
        request("ListTables", headers={"Authorization": "AWS4-" + "a" * 5000, "Accept-Encoding": "gzip"}),
        request("ListTables", headers={"X-Pad": "p" * 17000}),
    ]
    compared = ("x-amz-crc32", "content-length", "content-encoding", "server", "connection")
    for data in cases:
        ours, theirs = exchange(endpoint, data), exchange(uvicorn_server.url, data)
        assert ours[0] == theirs[0], data
        assert ours[2] == theirs[2], data
        assert ours[1].get("content-type") == theirs[1].get("content-type"), data
        for name in compared + tuple(h for h in ours[1] if h.startswith("access-control")):
            assert ours[1].get(name) == theirs[1].get(name), (name, data)
    ddb = client_for(uvicorn_server.url)
    ddb.list_tables()


def trickle(sock: socket.socket, data: bytes, pause: float, give_up: float) -> bytes:
    """Send `data` a byte at a time until the server answers or closes; what it said."""
    sock.settimeout(pause)
    started = time.monotonic()
    for byte in data:
        try:
            sock.sendall(bytes([byte]))
        except (BrokenPipeError, ConnectionResetError):
            break
        try:
            answer = sock.recv(65536)
        except TimeoutError:
            if time.monotonic() - started > give_up:
                raise AssertionError("still reading a trickled request") from None
            continue
        except ConnectionResetError:
            return b""
        sock.settimeout(5)
        with contextlib.suppress(OSError):
            while chunk := sock.recv(65536):
                answer += chunk
        return answer
    raise AssertionError("the whole request was read")


@pytest.mark.parametrize("part", ["request line", "headers", "body", "blank lines"])
def test_a_trickling_client_is_cut_off_at_the_request_timeout(start_server: Callable[..., Server], part: str) -> None:
    server = start_server("--in-memory", "--request-timeout", "1")
    data = request("ListTables", b'{"Limit": 1}' + b" " * 200)
    if part == "headers":
        head, _, rest = data.partition(b"\r\n")
        prefix, data = head + b"\r\n", rest
    elif part == "body":
        prefix, data = data[:-150], data[-150:]
    elif part == "blank lines":
        prefix, data = b"", b"\r\n" * 200
    else:
        prefix = b""
    with connect(server.url) as sock:
        sock.sendall(prefix)
        started = time.monotonic()
        answer = trickle(sock, data, pause=0.2, give_up=10)
        assert 0.8 < time.monotonic() - started < 6
    assert answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n"), answer
    assert b"connection: close\r\n" in answer


def test_the_request_timeout_spares_idle_and_prompt_clients(start_server: Callable[..., Server]) -> None:
    server = start_server("--in-memory", "--request-timeout", "1")
    with connect(server.url) as sock:
        reader = Reader(sock)
        sock.sendall(request("ListTables"))
        assert reader.response()[0] == 200
        time.sleep(2.5)  # idle between requests: only the keep-alive timeout applies
        data = request("ListTables")
        sock.sendall(data[:30])
        time.sleep(0.4)  # slow, but in full within the timeout
        sock.sendall(data[30:])
        assert reader.response()[0] == 200
        sock.sendall(request("ListTables"))
        assert reader.response()[0] == 200


def test_a_head_line_that_never_ends_is_refused(endpoint: str) -> None:
    with connect(endpoint) as sock:
        sock.sendall(b"POST / HTTP/1.1\r\nX-Endless: ")
        with contextlib.suppress(OSError):
            for _ in range(40):
                sock.sendall(b"e" * 65536)
        reader = Reader(sock)
        status, headers, body = reader.response()
        assert (status, body) == (400, b"")
        assert headers["connection"] == "close"


def test_a_lingering_close_ends_even_if_the_client_keeps_sending(endpoint: str) -> None:
    # After a closing answer, input is dropped for LINGER_SECONDS: a client
    # still trickling does not keep the connection alive.
    with connect(endpoint) as sock:
        sock.sendall(request("ListTables", headers={"Connection": "close"}))
        reader = Reader(sock)
        assert reader.response()[0] == 200
        started = time.monotonic()
        with contextlib.suppress(OSError):
            while time.monotonic() - started < 10:
                sock.sendall(b"x")
                time.sleep(0.2)
        assert time.monotonic() - started < 8


def test_sigterm_exits_0_and_keeps_the_data(start_server: Callable[..., Server], tmp_path: Path) -> None:
    data = str(tmp_path / "data")
    first = start_server("--data-dir", data)
    ddb = client_for(first.url)
    create_table(ddb, "kept")
    for i in range(20):
        ddb.put_item(TableName="kept", Item={"pk": {"S": str(i)}})
    first.process.send_signal(signal.SIGTERM)
    assert first.process.wait(10) == 0

    second = start_server("--data-dir", data)
    ddb = client_for(second.url)
    assert ddb.describe_table(TableName="kept")["Table"]["ItemCount"] == 20
    second.process.send_signal(signal.SIGINT)
    assert second.process.wait(10) == 0


def test_shutdown_finishes_the_request_under_way(start_server: Callable[..., Server], tmp_path: Path) -> None:
    server = start_server("--data-dir", str(tmp_path / "data"))
    with connect(server.url) as idle, connect(server.url) as busy:
        data = request("ListTables", {"Limit": 1})
        idle.sendall(data)
        assert Reader(idle).response()[0] == 200
        busy.sendall(data[:-5])
        time.sleep(0.2)
        server.process.send_signal(signal.SIGTERM)
        assert Reader(idle).closed()  # idle keep-alive connections close at once
        time.sleep(0.2)
        assert server.process.poll() is None  # still finishing the busy one
        busy.sendall(data[-5:])
        reader = Reader(busy)
        status, headers, _ = reader.response()
        assert status == 200
        assert headers["connection"] == "close"
        assert reader.closed()
    assert server.process.wait(10) == 0
    with pytest.raises(OSError):
        connect(server.url).close()


def _children(pid: int) -> set[int]:
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rpartition(")")[2].split()[1]) == pid:
                found.add(int(entry))
    return found


def test_workers_share_the_port_and_the_store(start_server: Callable[..., Server], tmp_path: Path) -> None:
    server = start_server("--data-dir", str(tmp_path / "data"), "--workers", "2")
    workers = set()
    for _ in range(50):
        workers = _children(server.process.pid)
        if len(workers) == 2:
            break
        time.sleep(0.1)
    assert len(workers) == 2
    ddb = client_for(server.url)
    create_table(ddb, "shared")
    for i in range(40):  # a fresh connection each: the kernel spreads them over both workers
        status, _, _ = exchange(
            server.url, request("PutItem", {"TableName": "shared", "Item": {"pk": {"S": str(i)}}})
        )
        assert status == 200
    for i in range(40):
        status, _, body = exchange(
            server.url, request("GetItem", {"TableName": "shared", "Key": {"pk": {"S": str(i)}}})
        )
        assert json.loads(body) == {"Item": {"pk": {"S": str(i)}}}
    assert ddb.describe_table(TableName="shared")["Table"]["ItemCount"] == 40
    server.process.send_signal(signal.SIGTERM)
    assert server.process.wait(15) == 0
    for pid in workers:
        assert not Path(f"/proc/{pid}").exists()


def test_in_memory_refuses_several_workers() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "partita", "serve", "--port", "0", "--in-memory", "--workers", "2"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode != 0
    assert "--in-memory cannot be used with --workers" in result.stderr
    assert result.stdout == ""
