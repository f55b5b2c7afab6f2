"""The PostgreSQL store's statements on libpq's pipeline, without psycopg's cursors.

Why a layer below psycopg: every item request runs a few statements, and a
psycopg `execute` costs 30-40 µs of Python apiece (cursor, query conversion,
adaptation, pipeline bookkeeping), more than PostgreSQL spends running it.
Measured on the same connection: a PutItem's transaction (BEGIN, the old
item with the generation, the claimed INSERT, COMMIT) cost 127-140 µs of CPU
through psycopg and 26-29 µs through libpq's own calls (`psycopg.pq`), which
is also what psycopg calls underneath. On a machine whose cores PostgreSQL
shares, that CPU is the throughput.

So the request path (`pg_views.Reader` and `Writer`, postgres.py's
transactions) queues statements here: each prepared once per connection,
parameters as text (numbers) or binary (keys and values), results in binary
(bytea comes back as the bytes themselves, bigint as 8 bytes). A result is
waited for only when it is read: everything queued before it travels in the
same round trip. psycopg still opens, pools, checks and migrates the
connections, and runs everything off the request path (schema, listener,
duty lock); between two uses of `Wire` the connection is psycopg's again
(out of pipeline mode, nothing pending).

An error comes back as psycopg's own exception (`error_from_result`), so
`pg_views.MAPPED` turns it into the storage contract's exceptions as before;
a lost connection raises psycopg's OperationalError from libpq's calls.
"""

from __future__ import annotations

import select
from collections.abc import Sequence
from itertools import count
from weakref import WeakKeyDictionary

import psycopg
from psycopg import pq
from psycopg.errors import error_from_result

_TEXT = 0
_BINARY = 1
_SYNC = pq.ExecStatus.PIPELINE_SYNC
_FAILED = (pq.ExecStatus.FATAL_ERROR, pq.ExecStatus.BAD_RESPONSE)
_ABORTED = pq.ExecStatus.PIPELINE_ABORTED
_PREPARED = pq.ExecStatus.COMMAND_OK
_PREPARE = -1  # a queued result that is a statement's preparation, not a statement's rows
_names = count(1)

#: The statements prepared on each connection (a connection the pool replaces starts empty).
_prepared: WeakKeyDictionary[psycopg.Connection, set[bytes]] = WeakKeyDictionary()


class Statement:
    """A statement of the request path: its SQL ($n parameters) and which parameters are bytes."""

    __slots__ = ("name", "sql", "formats")

    def __init__(self, sql: str, binary: Sequence[int] = ()) -> None:
        """`binary`: the 1-based numbers of the parameters sent as raw bytes (bytea); the rest are text."""
        self.sql = sql.encode()
        self.name = b"partita_%d" % next(_names)
        params = sql.count("$")
        self.formats = [_BINARY if n in binary else _TEXT for n in range(1, params + 1)] or None


def int8(value: bytes) -> int:
    """A bigint result column (binary format)."""
    return int.from_bytes(value, "big", signed=True)


class Wire:
    """One connection in pipeline mode for one transaction or read: statements queue, reads wait."""

    __slots__ = ("_conn", "_pg", "_prepared", "_expected", "_results", "_sent")

    def __init__(self, conn: psycopg.Connection) -> None:
        self._conn = conn
        self._pg = conn.pgconn
        prepared = _prepared.get(conn)
        if prepared is None:
            prepared = _prepared[conn] = set()
        self._prepared = prepared
        #: What each queued result is, in order: a statement's number, (_PREPARE, its name),
        #: or None (a plain statement, whose result nobody reads).
        self._expected: list[int | tuple[int, bytes] | None] = []
        self._results: dict[int, pq.abc.PGresult] = {}
        self._sent = 0
        self._pg.enter_pipeline_mode()

    def send(self, statement: Statement, params: Sequence[bytes | None] | None = None) -> int:
        """Queue `statement`; the number to read its result by (`rows`)."""
        pg = self._pg
        name = statement.name
        if name not in self._prepared:
            # Counted as prepared from now on (a second use in this pipeline must not prepare
            # it again); `sync` forgets it if the pipeline failed before it was prepared.
            pg.send_prepare(name, statement.sql)
            self._prepared.add(name)
            self._expected.append((_PREPARE, name))
        pg.send_query_prepared(name, params, param_formats=statement.formats, result_format=_BINARY)
        number = self._sent
        self._sent += 1
        self._expected.append(number)
        return number

    def send_plain(self, sql: bytes) -> None:
        """Queue a statement that cannot be prepared (BEGIN, COMMIT, LOCK TABLE); its result is not read."""
        self._pg.send_query_params(sql, None)
        self._expected.append(None)

    def rows(self, number: int) -> pq.abc.PGresult:
        """The result of statement `number`, waiting for it (and everything queued before it)."""
        result = self._results.pop(number, None)
        if result is None:
            self.sync()
            result = self._results.pop(number)
        return result

    def sync(self) -> None:
        """Send what is queued and wait for every result; raise the first statement's error."""
        pg = self._pg
        pg.pipeline_sync()
        while pg.flush() == 1:  # a non-blocking connection sends in pieces
            select.select([pg.socket], [pg.socket], [])
            pg.consume_input()
        expected = self._expected
        results = self._results
        error: pq.abc.PGresult | None = None
        index = 0
        while True:
            while pg.is_busy():
                select.select([pg.socket], [], [])
                pg.consume_input()
            result = pg.get_result()
            if result is None:
                continue  # the end of one statement's results
            status = result.status
            if status == _SYNC:
                break
            what = expected[index]
            index += 1
            if what is None:
                pass
            elif what.__class__ is tuple:
                if status != _PREPARED:
                    self._prepared.discard(what[1])  # type: ignore[index]
            elif status != _ABORTED:
                results[what] = result  # type: ignore[index]
            if error is None and status in _FAILED:
                error = result
        del expected[:]
        if error is not None:
            results.clear()
            raise error_from_result(error)

    def close(self) -> None:
        """Leave pipeline mode: the connection is psycopg's again.

        What is still queued (a read abandoned by an exception) is waited for
        first. A connection that cannot leave pipeline mode is closed, so the
        pool replaces it rather than hand psycopg a connection it cannot use.
        """
        try:
            if self._expected:
                try:
                    self.sync()
                except psycopg.DatabaseError:
                    pass
            self._pg.exit_pipeline_mode()
        except psycopg.Error:
            self._conn.close()

    def abandon(self, sql: bytes) -> None:
        """After a failure: drop what is pending, run `sql` (ROLLBACK) and leave pipeline mode.

        A connection that is gone raises nothing here: the pool discards it.
        """
        try:
            if self._expected:
                try:
                    self.sync()
                except psycopg.DatabaseError:
                    pass
            self.send_plain(sql)
            try:
                self.sync()
            except psycopg.DatabaseError:
                pass
        except psycopg.Error:
            pass
        self.close()
