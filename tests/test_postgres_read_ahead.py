"""A loop turn's GetItems read together on PostgreSQL (`Store.read_ahead`), as clients see them.

The server reads the rows of a turn's GetItems in one round trip before
answering them (protocol/server.py, `answer_pending`). What that must never
change: each request gets the answer it would get alone; a read sees every
write answered before it was sent, in this process or another; nothing read
ahead outlives its turn. Requests are sent on several connections before any
answer is read, so that one turn holds several (tests/test_http_server.py's
helpers); a turn that happens to hold one request takes the plain path.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from conftest import Server, client_for, create_table, fresh_database, needs_postgres
from hypothesis import HealthCheck, given, settings
from test_fuzz import HASH_TABLE, _bodies, _ensure_tables, encode
from test_http_server import Reader, connect, request

pytestmark = [needs_postgres(), pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")]

ROUNDS = 20


def at_once(url: str, payloads: list[bytes]) -> list[tuple[int, Any]]:
    """Send each payload on its own connection before reading any answer; (status, JSON) of each."""
    socks = [connect(url) for _ in payloads]
    try:
        for sock, payload in zip(socks, payloads, strict=True):
            sock.sendall(payload)
        answers = []
        for sock in socks:
            status, _, body = Reader(sock).response()
            try:
                answers.append((status, json.loads(body)))
            except ValueError:
                answers.append((status, body))
        return answers
    finally:
        for sock in socks:
            sock.close()


def get(table: str, key: str, **extra: Any) -> bytes:
    return request("GetItem", {"TableName": table, "Key": {"pk": {"S": key}}, **extra})


def test_a_turn_of_mixed_getitems_answers_each_as_alone(start_server: Callable[..., Server]) -> None:
    server = start_server("--backend", fresh_database("ahead"))
    ddb = client_for(server.url)
    create_table(ddb, "ahead")
    for i in range(4):
        ddb.put_item(TableName="ahead", Item={"pk": {"S": f"k{i}"}, "n": {"N": str(i)}, "s": {"S": "x" * i}})
    payloads = [
        get("ahead", "k0"),
        get("ahead", "k1", ConsistentRead=True, ReturnConsumedCapacity="TOTAL"),
        get("ahead", "k2", ProjectionExpression="n"),
        get("ahead", "missing"),
        get("ahead", "k3", ConsistentRead=False),
        get("ahead", "k0"),  # the same row twice in one turn
        get("no-such-table", "k0"),
        request("GetItem", {"TableName": "ahead", "Key": {"pk": {"N": "1"}}}),  # the key's type is S
        request("GetItem", b'{"TableName": "ahead", "Key": '),  # not JSON
        request("GetItem", {"TableName": "ahead", "Key": {"pk": {"S": "k1"}, "extra": {"S": "no"}}}),
    ]
    alone = [at_once(server.url, [payload])[0] for payload in payloads]
    assert alone[0] == (200, {"Item": {"pk": {"S": "k0"}, "n": {"N": "0"}, "s": {"S": ""}}})
    assert alone[1] == (200, {"Item": {"pk": {"S": "k1"}, "n": {"N": "1"}, "s": {"S": "x"}},
                              "ConsumedCapacity": {"TableName": "ahead", "CapacityUnits": 1.0}})
    assert alone[2] == (200, {"Item": {"n": {"N": "2"}}})
    assert alone[3] == (200, {})
    assert alone[6][0] == 400 and alone[6][1]["__type"].endswith("#ResourceNotFoundException")
    assert alone[7] == (400, {"__type": "com.amazonaws.dynamodb.v20120810#ValidationException",
                              "message": "The provided key element does not match the schema"})
    assert alone[8][0] == 400 and alone[8][1]["__type"].endswith("#SerializationException")
    for _ in range(ROUNDS):
        assert at_once(server.url, payloads) == alone


def test_a_read_sees_the_write_before_it_on_its_connection(start_server: Callable[..., Server]) -> None:
    """A write in a turn drops what was read ahead: the read pipelined behind it sees the write."""
    server = start_server("--backend", fresh_database("ahead"))
    ddb = client_for(server.url)
    create_table(ddb, "ahead")
    for i in range(4):
        ddb.put_item(TableName="ahead", Item={"pk": {"S": f"k{i}"}, "v": {"N": "0"}})
    for round_ in range(1, ROUNDS + 1):
        # Three connections read k0 (read ahead together); the fourth writes it, then reads it.
        put = request("PutItem", {"TableName": "ahead", "Item": {"pk": {"S": "k0"}, "v": {"N": str(round_)}}})
        socks = [connect(server.url) for _ in range(4)]
        try:
            for sock in socks[:3]:
                sock.sendall(get("ahead", "k0"))
            socks[3].sendall(put + get("ahead", "k0", ConsistentRead=True))
            for sock in socks[:3]:
                status, _, body = Reader(sock).response()
                assert status == 200
                assert json.loads(body)["Item"]["v"]["N"] in (str(round_ - 1), str(round_))
            reader = Reader(socks[3])
            assert reader.response()[0] == 200
            status, _, body = reader.response()
            assert (status, json.loads(body)) == (200, {"Item": {"pk": {"S": "k0"}, "v": {"N": str(round_)}}})
        finally:
            for sock in socks:
                sock.close()


def test_nothing_read_ahead_outlives_its_turn(start_server: Callable[..., Server]) -> None:
    """Another server's write, answered before the next read is sent, is seen by that read."""
    url = fresh_database("ahead")
    reader_server, writer_server = start_server("--backend", url), start_server("--backend", url)
    ddb, other = client_for(reader_server.url), client_for(writer_server.url)
    create_table(ddb, "ahead")
    keys = [f"k{i}" for i in range(4)]
    for key in keys:
        ddb.put_item(TableName="ahead", Item={"pk": {"S": key}, "v": {"N": "0"}})
    for round_ in range(1, ROUNDS + 1):
        before = at_once(reader_server.url, [get("ahead", key) for key in keys])
        assert before == [(200, {"Item": {"pk": {"S": key}, "v": {"N": str(round_ - 1)}}}) for key in keys]
        for key in keys:
            other.put_item(TableName="ahead", Item={"pk": {"S": key}, "v": {"N": str(round_)}})
        for key in keys:
            assert ddb.get_item(TableName="ahead", Key={"pk": {"S": key}})["Item"]["v"] == {"N": str(round_)}


def test_any_getitem_body_in_a_turn_is_answered_as_alone(start_server: Callable[..., Server]) -> None:
    """test_fuzz's GetItem bodies (broken at any depth), each sent with good GetItems in one turn."""
    server = start_server("--backend", fresh_database("ahead"))
    ddb = client_for(server.url)
    _ensure_tables(ddb)
    for key in ("a", "b"):
        ddb.put_item(TableName=HASH_TABLE, Item={"pk": {"S": key}, "v": {"S": key * 3}})
    good = [get(HASH_TABLE, "a"), get(HASH_TABLE, "b", ConsistentRead=True)]
    expected = [(200, {"Item": {"pk": {"S": key}, "v": {"S": key * 3}}}) for key in ("a", "b")]

    @settings(max_examples=60, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(body=_bodies("GetItem"))
    def check(body: Any) -> None:
        payload = request("GetItem", encode(body).encode())
        alone = at_once(server.url, [payload])
        assert at_once(server.url, [good[0], payload, good[1], payload]) == [expected[0], *alone, expected[1], *alone]

    check()
