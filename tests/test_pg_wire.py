"""The PostgreSQL store's statements on libpq's pipeline (storage/pg_wire.py), on a real cluster.

The whole suite's PostgreSQL pass runs every request through `Wire`; these
pin what that pass would only meet by chance: a statement prepared once per
connection even when one pipeline uses it twice, a preparation lost with an
aborted pipeline made again, bytes and integers unchanged by the trip, and a
connection handed back to psycopg usable after a failure.
"""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
from conftest import fresh_database, needs_postgres
from hypothesis import given, settings
from hypothesis import strategies as st

from partita.storage.pg_wire import Statement, Wire, int8

pytestmark = needs_postgres()

_ECHO = Statement("SELECT $1::bytea, $2::bigint", binary=(1,))
_DIVIDE = Statement("SELECT 1 / $1::int")
_LATER = Statement("SELECT $1::bigint + 1")


@pytest.fixture(scope="module")
def conn() -> Iterator[psycopg.Connection]:
    with psycopg.connect(fresh_database(), autocommit=True) as connection:
        yield connection


@settings(max_examples=60, deadline=None)
@given(value=st.binary(max_size=300), number=st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_bytes_and_integers_come_back_unchanged(conn: psycopg.Connection, value: bytes, number: int) -> None:
    wire = Wire(conn)
    try:
        result = wire.rows(wire.send(_ECHO, (value, b"%d" % number)))
        assert result.get_value(0, 0) == value
        assert int8(result.get_value(0, 1)) == number  # type: ignore[arg-type]
    finally:
        wire.close()


def test_a_statement_used_twice_in_one_pipeline_is_prepared_once(conn: psycopg.Connection) -> None:
    fresh = Statement("SELECT $1::bigint * 2")
    wire = Wire(conn)
    try:
        first = wire.send(fresh, (b"3",))
        second = wire.send(fresh, (b"4",))
        assert int8(wire.rows(first).get_value(0, 0)) == 6  # type: ignore[arg-type]
        assert int8(wire.rows(second).get_value(0, 0)) == 8  # type: ignore[arg-type]
    finally:
        wire.close()


def test_a_preparation_aborted_with_its_pipeline_is_made_again(conn: psycopg.Connection) -> None:
    wire = Wire(conn)
    wire.send_plain(b"BEGIN")
    wire.send(_DIVIDE, (b"0",))
    wire.send(_LATER, (b"1",))  # its first use: prepared behind the failure, so never prepared
    with pytest.raises(psycopg.errors.DivisionByZero):
        wire.sync()
    wire.abandon(b"ROLLBACK")
    assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
    assert conn.pgconn.pipeline_status == psycopg.pq.PipelineStatus.OFF

    wire = Wire(conn)
    try:
        assert int8(wire.rows(wire.send(_LATER, (b"41",))).get_value(0, 0)) == 42  # type: ignore[arg-type]
    finally:
        wire.close()
    assert conn.execute("SELECT 'psycopg again'").fetchone() == ("psycopg again",)


def test_a_failed_read_leaves_the_connection_to_psycopg(conn: psycopg.Connection) -> None:
    wire = Wire(conn)
    with pytest.raises(psycopg.errors.DivisionByZero):
        wire.rows(wire.send(_DIVIDE, (b"0",)))
    wire.close()
    assert conn.pgconn.pipeline_status == psycopg.pq.PipelineStatus.OFF
    assert conn.execute("SELECT 2").fetchone() == (2,)
