"""PostgreSQL backend: the shared store of many Partita servers (`--backend postgresql://...`).

The same ordered bytes -> bytes contract as SQLite, over `partita_kv`
(pg_schema.py). Write transactions are SERIALIZABLE; PostgreSQL's
serialization failures and deadlocks become `Conflict`, which the API front
door answers by running the request again (or, for TransactWriteItems, as
DynamoDB's TransactionConflict). A lost connection becomes `Unavailable`,
a retryable 503, and the pool reconnects by itself.

Catalog generation: a row of `partita_meta`, bumped in every catalog commit,
which also NOTIFYs `partita_generation`. A listener thread keeps the local
copy current, so `generation()` costs nothing; and every write transaction
re-reads the row first thing inside it: if it moved since this process last
looked, the transaction is abandoned as a Conflict and the request retried
against the fresh catalog. Under SERIALIZABLE that read also makes a catalog
change committed during the write a conflict. So no write ever lands on a
table another server has just deleted or changed, whatever NOTIFY's delay.

Duty lock: a session advisory lock on a dedicated connection; a server that
dies drops its connection and with it the lock.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from hashlib import blake2b
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg_pool import ConnectionPool, PoolTimeout

from .base import (
    CatalogMoved,
    Conflict,
    DutyLock,
    ItemInTransaction,
    ReadView,
    Store,
    Unavailable,
    WriteTxn,
)
from .pg_schema import migrate

log = logging.getLogger("partita.postgres")

#: Bytes of a row key: space (1) | table id (4) | index id (2) | partition hash (8) | ...
_GROUP = 15
_ROW_SPACE = 1
_TABLE_ROW = b"\x00\x00"  # index id 0: the table's own item rows
#: pg_try_advisory_lock key of the background-duty leader ("PARTITAD").
DUTY_LOCK = 0x5041525449544144
CHANNEL = "partita_generation"
#: Seconds between generation re-reads by the listener when no NOTIFY comes (a safety net).
POLL_SECONDS = 2.0

#: Seconds a request waits for a connection (the database restarting) before it is answered 503.
POOL_TIMEOUT = 3.0

_CONFLICTS = (pg_errors.SerializationFailure, pg_errors.DeadlockDetected)


def group_of(key: bytes) -> tuple[int, int]:
    """(table id, partition hash) of a row key: the distribution columns."""
    if len(key) >= _GROUP and key[0] == _ROW_SPACE:
        return int.from_bytes(key[1:5], "big"), int.from_bytes(key[7:15], "big", signed=True)
    return 0, key[0] if key else 0


def _item_lock(key: bytes) -> int | None:
    """The advisory-lock key of an item row (None for index, stream and system rows)."""
    if len(key) >= _GROUP and key[0] == _ROW_SPACE and key[5:7] == _TABLE_ROW:
        return int.from_bytes(blake2b(key, digest_size=8).digest(), "big", signed=True)
    return None


def _one_group(start: bytes, end: bytes) -> tuple[int, int] | None:
    """The group holding every key of [start, end) when there is one (a Query, an item collection)."""
    if len(start) < _GROUP or start[0] != _ROW_SPACE:
        return None
    head = start[:_GROUP]
    if end[:_GROUP] == head:
        return group_of(start)
    stripped = head.rstrip(b"\xff")
    if stripped and end == stripped[:-1] + bytes([stripped[-1] + 1]) and len(stripped) == _GROUP:
        return group_of(start)
    return None


@contextmanager
def _mapped() -> Iterator[None]:
    """PostgreSQL's failures as the storage contract's exceptions."""
    try:
        yield
    except _CONFLICTS as error:
        raise Conflict(str(error)) from error
    except (psycopg.OperationalError, PoolTimeout) as error:
        raise Unavailable(str(error)) from error


class _Reader(ReadView):
    __slots__ = ("_conn",)

    def __init__(self, conn: psycopg.Connection) -> None:
        self._conn = conn

    def get(self, key: bytes) -> bytes | None:
        row = self.get_weighted(key)
        return None if row is None else row[0]

    def get_weighted(self, key: bytes) -> tuple[bytes, int] | None:
        tid, ph = group_of(key)
        with _mapped():
            return self._conn.execute(
                "SELECT v, w FROM partita_kv WHERE tid = %s AND ph = %s AND k = %s", (tid, ph, key)
            ).fetchone()

    def range(
        self,
        start: bytes,
        end: bytes,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        order = "DESC" if reverse else "ASC"
        group = _one_group(start, end)
        with _mapped():
            if group is not None:
                rows = self._conn.execute(
                    "SELECT k, v FROM partita_kv WHERE tid = %s AND ph = %s AND k >= %s AND k < %s "
                    f"ORDER BY k {order} LIMIT %s",
                    (*group, start, end, limit),
                ).fetchall()
            else:  # across partitions: Scan, the system key spaces (docs/postgresql.md)
                rows = self._conn.execute(
                    f"SELECT k, v FROM partita_kv WHERE k >= %s AND k < %s ORDER BY k {order} LIMIT %s",
                    (start, end, limit),
                ).fetchall()
        return iter(rows)

    def stats(self, start: bytes, end: bytes) -> tuple[int, int]:
        group = _one_group(start, end)
        with _mapped():
            if group is not None:
                row = self._conn.execute(
                    "SELECT count(*), coalesce(sum(w), 0) FROM partita_kv "
                    "WHERE tid = %s AND ph = %s AND k >= %s AND k < %s",
                    (*group, start, end),
                ).fetchone()
            else:
                row = self._conn.execute(
                    "SELECT count(*), coalesce(sum(w), 0) FROM partita_kv WHERE k >= %s AND k < %s",
                    (start, end),
                ).fetchone()
        assert row is not None
        return int(row[0]), int(row[1])


class _Writer(_Reader, WriteTxn):
    __slots__ = ("_transactional", "_locked", "generation")

    def __init__(self, conn: psycopg.Connection, transactional: bool) -> None:
        super().__init__(conn)
        self._transactional = transactional
        self._locked: set[int] = set()
        self.generation: int | None = None

    def _claim(self, key: bytes) -> None:
        """Mark an item as this transaction's until it ends (TransactionConflict, DESIGN.md)."""
        lock = _item_lock(key)
        if lock is None or lock in self._locked:
            return
        if self._transactional:
            self._conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock,))
        else:
            row = self._conn.execute("SELECT pg_try_advisory_xact_lock_shared(%s)", (lock,)).fetchone()
            if not row or not row[0]:
                raise ItemInTransaction("the item is part of a running transaction")
        self._locked.add(lock)

    def put(self, key: bytes, value: bytes, weight: int = 0) -> None:
        tid, ph = group_of(key)
        with _mapped():
            self._claim(key)
            self._conn.execute(
                "INSERT INTO partita_kv (tid, ph, k, v, w) VALUES (%s, %s, %s, %s, %s) "
                "ON CONFLICT (tid, ph, k) DO UPDATE SET v = EXCLUDED.v, w = EXCLUDED.w",
                (tid, ph, key, value, weight),
            )

    def delete(self, key: bytes) -> None:
        tid, ph = group_of(key)
        with _mapped():
            self._claim(key)
            self._conn.execute(
                "DELETE FROM partita_kv WHERE tid = %s AND ph = %s AND k = %s", (tid, ph, key)
            )

    def delete_range(self, start: bytes, end: bytes) -> None:
        group = _one_group(start, end)
        with _mapped():
            if group is not None:
                self._conn.execute(
                    "DELETE FROM partita_kv WHERE tid = %s AND ph = %s AND k >= %s AND k < %s",
                    (*group, start, end),
                )
            else:
                self._conn.execute("DELETE FROM partita_kv WHERE k >= %s AND k < %s", (start, end))

    def bump_generation(self) -> None:
        if self.generation is not None:
            return
        with _mapped():
            row = self._conn.execute(
                "UPDATE partita_meta SET value = value + 1 WHERE name = 'generation' RETURNING value"
            ).fetchone()
            assert row is not None
            self.generation = int(row[0])
            self._conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, str(self.generation)))


class PooledReads:
    """Reads and read snapshots, each on a connection borrowed from `_pool` (the primary's or a replica's)."""

    _pool: ConnectionPool

    def get(self, key: bytes) -> bytes | None:
        row = self.get_weighted(key)
        return None if row is None else row[0]

    def get_weighted(self, key: bytes) -> tuple[bytes, int] | None:
        with self._connection() as conn:
            return _Reader(conn).get_weighted(key)

    def range(
        self,
        start: bytes,
        end: bytes,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        with self._connection() as conn:
            return _Reader(conn).range(start, end, reverse=reverse, limit=limit)

    def stats(self, start: bytes, end: bytes) -> tuple[int, int]:
        with self._connection() as conn:
            return _Reader(conn).stats(start, end)

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection]:
        with _mapped(), self._pool.connection() as conn:
            yield conn

    @contextmanager
    def snapshot(self) -> Iterator[ReadView]:
        # REPEATABLE READ READ ONLY: consistent, and what a hot standby allows (not SERIALIZABLE).
        with self._connection() as conn:
            with _mapped():
                conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            try:
                yield _Reader(conn)
            finally:
                _end(conn, "COMMIT")


class PostgresStore(PooledReads, Store):
    """A store in one PostgreSQL database, shared with every other Partita server on it."""

    def __init__(self, url: str, *, pool_size: int = 8, replica_url: str | None = None) -> None:
        self._url = url
        with _mapped(), psycopg.connect(url, autocommit=True) as conn:
            migrate(conn)
            self._generation = self._read_generation(conn)
        self._pool = ConnectionPool(
            url,
            min_size=1,
            max_size=pool_size,
            kwargs={"autocommit": True, "prepare_threshold": 0},
            timeout=POOL_TIMEOUT,
            open=True,
        )
        self._gen_lock = threading.Lock()
        self._handed = threading.local()
        self._closed = threading.Event()
        self._local_duties = DutyLock()
        self._duty_conn: psycopg.Connection | None = None
        self._listener = threading.Thread(target=self._listen, name="partita-pg-listen", daemon=True)
        self._listener.start()
        self._replica: Store | None = None
        if replica_url is not None:
            from .pg_replica import ReplicaReads

            self._replica = ReplicaReads(replica_url, pool_size=pool_size)

    @property
    def eventual(self) -> Store:
        return self if self._replica is None else self._replica

    # --- the generation counter ------------------------------------------------------

    @staticmethod
    def _read_generation(conn: psycopg.Connection) -> int:
        row = conn.execute("SELECT value FROM partita_meta WHERE name = 'generation'").fetchone()
        assert row is not None
        return int(row[0])

    def _see(self, generation: int) -> None:
        with self._gen_lock:
            if generation > self._generation:
                self._generation = generation

    def generation(self) -> int:
        # Remembered per thread: a write compares the database's value with the one this
        # thread's catalog was checked against, not with whatever NOTIFY brought since.
        value = self._generation
        self._handed.value = value
        return value

    def _listen(self) -> None:
        """Follow NOTIFYs of generation bumps (and re-read now and then, and after reconnecting)."""
        while not self._closed.is_set():
            try:
                with psycopg.connect(self._url, autocommit=True) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    while not self._closed.is_set():
                        self._see(self._read_generation(conn))
                        for note in conn.notifies(timeout=POLL_SECONDS):
                            self._see(int(note.payload))
                            if self._closed.is_set():
                                break
            except psycopg.Error:
                if not self._closed.is_set():
                    self._closed.wait(0.5)

    # --- transactions ---------------------------------------------------------------------

    @contextmanager
    def write(self, transactional: bool = False, exclusive: bool = False) -> Iterator[WriteTxn]:
        with self._connection() as conn:
            with _mapped():
                conn.execute("BEGIN ISOLATION LEVEL SERIALIZABLE")
                if exclusive:  # before the first read, so its snapshot sees no writer running
                    conn.execute("LOCK TABLE partita_kv IN SHARE ROW EXCLUSIVE MODE")
                seen = self._read_generation(conn)
            if seen != getattr(self._handed, "value", self._generation):
                # The catalog moved under this process's cache: start again with the fresh one.
                self._see(seen)
                self._handed.value = seen  # the retry decides on this one (or reads it again)
                _end(conn, "ROLLBACK")
                raise CatalogMoved("the catalog changed")
            writer = _Writer(conn, transactional)
            try:
                yield writer
            except BaseException:
                _end(conn, "ROLLBACK")
                raise
            with _mapped():
                try:
                    conn.execute("COMMIT")
                except BaseException:
                    _end(conn, "ROLLBACK")
                    raise
            if writer.generation is not None:
                self._see(writer.generation)

    # --- background duties -----------------------------------------------------------------

    @contextmanager
    def duty_lock(self) -> Iterator[bool]:
        with self._local_duties.acquire_nowait() as local:
            if not local:
                yield False
                return
            conn = self._duty_connection()
            got = False
            if conn is not None:
                try:
                    row = conn.execute("SELECT pg_try_advisory_lock(%s)", (DUTY_LOCK,)).fetchone()
                    got = bool(row and row[0])
                except psycopg.Error:
                    self._drop_duty_connection()
            try:
                yield got
            finally:
                if got:
                    try:
                        conn.execute("SELECT pg_advisory_unlock(%s)", (DUTY_LOCK,))  # type: ignore[union-attr]
                    except psycopg.Error:
                        self._drop_duty_connection()  # the session, and with it the lock, is gone

    def _duty_connection(self) -> psycopg.Connection | None:
        conn = self._duty_conn
        if conn is not None and not conn.closed and not conn.broken:
            return conn
        self._drop_duty_connection()
        try:
            self._duty_conn = psycopg.connect(self._url, autocommit=True)
        except psycopg.Error:
            return None
        return self._duty_conn

    def _drop_duty_connection(self) -> None:
        conn, self._duty_conn = self._duty_conn, None
        if conn is not None:
            try:
                conn.close()
            except psycopg.Error:
                pass

    def close(self) -> None:
        self._closed.set()
        self._pool.close()
        if self._replica is not None:
            self._replica.close()
        with self._local_duties.acquire_nowait():
            self._drop_duty_connection()


def _end(conn: psycopg.Connection, statement: str) -> None:
    """COMMIT or ROLLBACK; a rollback on a connection that is already gone is no error."""
    try:
        conn.execute(statement)
    except psycopg.Error as error:
        if statement == "COMMIT":
            with _mapped():
                raise error
        log.debug("rollback failed: %s", error)


def open_postgres(url: str, **options: Any) -> PostgresStore:
    return PostgresStore(url, **options)
