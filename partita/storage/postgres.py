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

Round trips: a write transaction runs in libpq's pipeline mode (pg_wire.py:
the request path's statements skip psycopg's cursors), so BEGIN,
the generation re-read and the transaction's first read travel together, and
writes (with their item claims) are only sent, not waited for: they travel
with the next read or with the COMMIT. A PutItem is two round trips (BEGIN,
generation, old item | claim, row, COMMIT), not six, and four statements: the
generation read is folded into the first item read, and a plain write's claim
into its INSERT. A claim that is only sent must fail its statement rather
than return false: it divides by the result of
`pg_try_advisory_xact_lock_shared`, and the division by zero becomes
`ItemInTransaction`. Snapshots queue their BEGIN with their first read the
same way, and a range read remembers its rows' weights, so the page's size
statistics that follow it cost no statement.

Duty lock: a session advisory lock on a dedicated connection; a server that
dies drops its connection and with it the lock.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from hashlib import blake2b
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg.pq import TransactionStatus
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
from .namespace import MARK, inner_key
from .pg_schema import migrate
from .pg_statements import (
    GENERATION,
    S_BUMP,
    S_CLAIM,
    S_DELETE,
    S_DELETE_GROUP_RANGE,
    S_DELETE_RANGE,
    S_GENERATION,
    S_GET,
    S_GET_WITH_GENERATION,
    S_GROUP_RANGE,
    S_GROUP_STATS,
    S_NOTIFY,
    S_PUT,
    S_PUT_CLAIMED,
    S_RANGE,
    S_STATS,
    S_TRY_CLAIM,
)
from .pg_wire import Wire, int8

log = logging.getLogger("partita.postgres")

#: Bytes of a row key: space (1) | table id (4) | index id (2) | partition hash (8) | ...
_GROUP = 15
_ROW_SPACE = 1
_TABLE_ROW = b"\x00\x00"  # index id 0: the table's own item rows
_NAMESPACED = bytes([MARK])
#: pg_try_advisory_lock key of the background-duty leader ("PARTITAD").
DUTY_LOCK = 0x5041525449544144
CHANNEL = "partita_generation"
#: Seconds between generation re-reads by the listener when no NOTIFY comes (a safety net).
POLL_SECONDS = 2.0

#: Seconds a request waits for a connection (the database restarting) before it is answered 503.
POOL_TIMEOUT = 3.0
#: Connections a store keeps out of its pool between requests (see PooledReads._connection).
KEPT_CONNECTIONS = 2

_CONFLICTS = (pg_errors.SerializationFailure, pg_errors.DeadlockDetected)


def group_of(key: bytes) -> tuple[int, int]:
    """(table id, partition hash) of a row key: the distribution columns.

    A row of another region's namespace (storage/namespace.py) is grouped
    as its key inside the namespace is: table ids are unique across regions.
    """
    if len(key) >= _GROUP and key[0] == _ROW_SPACE:
        return int.from_bytes(key[1:5], "big"), int.from_bytes(key[7:15], "big", signed=True)
    if key[:1] == _NAMESPACED:
        inner = inner_key(key)
        if inner is not key:
            return group_of(inner)
    return 0, key[0] if key else 0


def _item_lock(key: bytes) -> int | None:
    """The advisory-lock key of an item row (None for index, stream and system rows)."""
    inner = inner_key(key) if key[:1] == _NAMESPACED else key
    if len(inner) >= _GROUP and inner[0] == _ROW_SPACE and inner[5:7] == _TABLE_ROW:
        return int.from_bytes(blake2b(key, digest_size=8).digest(), "big", signed=True)
    return None


def _one_group(start: bytes, end: bytes) -> tuple[int, int] | None:
    """The group holding every key of [start, end) when there is one (a Query, an item collection)."""
    if start[:1] == _NAMESPACED:
        inner = inner_key(start)
        cut = len(start) - len(inner)
        if inner is start or end[:cut] != start[:cut]:
            return None
        return _one_group(inner, end[cut:])
    if len(start) < _GROUP or start[0] != _ROW_SPACE:
        return None
    head = start[:_GROUP]
    if end[:_GROUP] == head:
        return group_of(start)
    stripped = head.rstrip(b"\xff")
    if stripped and end == stripped[:-1] + bytes([stripped[-1] + 1]) and len(stripped) == _GROUP:
        return group_of(start)
    return None


class _Mapped:
    """PostgreSQL's failures as the storage contract's exceptions: `with _MAPPED:`.

    A class with one shared instance rather than a generator context manager:
    it wraps every statement of the request path, and contextlib's machinery
    cost more than the mapping.
    """

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: Any) -> bool:
        if error is None:
            return False
        if isinstance(error, pg_errors.DivisionByZero):  # only the claims divide: the item is a transaction's
            raise ItemInTransaction("the item is part of a running transaction") from error
        if isinstance(error, _CONFLICTS):
            raise Conflict(str(error)) from error
        if isinstance(error, (psycopg.OperationalError, PoolTimeout)):
            raise Unavailable(str(error)) from error
        return False


_MAPPED = _Mapped()


def _number(value: int | None) -> bytes | None:
    """An integer parameter (sent as text; PostgreSQL reads it as the column's type)."""
    return None if value is None else b"%d" % value


class _Reader(ReadView):
    __slots__ = ("_wire", "_span")

    def __init__(self, wire: Wire) -> None:
        self._wire = wire
        #: The last range read: (lowest key, just past the highest key, its rows with their weights).
        self._span: tuple[bytes, bytes, list[tuple[bytes, bytes, int]]] | None = None

    def _ready(self) -> None:
        """Called between sending a read and waiting for it (a writer checks its generation there)."""

    def get(self, key: bytes) -> bytes | None:
        row = self.get_weighted(key)
        return None if row is None else row[0]

    def get_weighted(self, key: bytes) -> tuple[bytes, int] | None:
        tid, ph = group_of(key)
        wire = self._wire
        with _MAPPED:
            sent = wire.send(S_GET, (b"%d" % tid, b"%d" % ph, key))
            self._ready()
            result = wire.rows(sent)
        if not result.ntuples:
            return None
        return result.get_value(0, 0), int8(result.get_value(0, 1))  # type: ignore[return-value, arg-type]

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
        wire = self._wire
        with _MAPPED:
            if group is not None:
                sent = wire.send(
                    S_GROUP_RANGE[order], (b"%d" % group[0], b"%d" % group[1], start, end, _number(limit))
                )
            else:
                sent = wire.send(S_RANGE[order], (start, end, _number(limit)))
            self._ready()
            result = wire.rows(sent)
        value = result.get_value
        rows: list[tuple[bytes, bytes, int]] = [
            (value(i, 0), value(i, 1), int8(value(i, 2)))  # type: ignore[misc, arg-type]
            for i in range(result.ntuples)
        ]
        if rows:
            low, high = (rows[-1][0], rows[0][0]) if reverse else (rows[0][0], rows[-1][0])
            self._span = (low, high + b"\x00", rows)
        return iter([(row[0], row[1]) for row in rows])

    def stats(self, start: bytes, end: bytes) -> tuple[int, int]:
        span = self._span
        if span is not None and span[0] == start and span[1] == end:
            # Exactly the rows the last range read returned, in the same view: no key lies
            # between two adjacent rows of one ordered read, nor between a key and key + 0x00.
            rows = span[2]
            return len(rows), sum(row[2] for row in rows)
        group = _one_group(start, end)
        wire = self._wire
        with _MAPPED:
            if group is not None:
                sent = wire.send(S_GROUP_STATS, (b"%d" % group[0], b"%d" % group[1], start, end))
            else:
                sent = wire.send(S_STATS, (start, end))
            self._ready()
            result = wire.rows(sent)
        return int8(result.get_value(0, 0)), int8(result.get_value(0, 1))  # type: ignore[arg-type]


class _Writer(_Reader, WriteTxn):
    """A transaction in pipeline mode: writes are sent without waiting; reads wait for everything before them."""

    __slots__ = ("_transactional", "_locked", "generation", "_unchecked", "_check")

    def __init__(self, wire: Wire, transactional: bool, check: Callable[[int], None]) -> None:
        super().__init__(wire)
        self._transactional = transactional
        self._locked: set[int] = set()
        self.generation: int | None = None
        #: Whether the catalog generation is still to be read in this transaction (and checked).
        self._unchecked = True
        self._check = check

    def _ready(self) -> None:
        if self._unchecked:
            self._unchecked = False
            wire = self._wire
            result = wire.rows(wire.send(S_GENERATION))
            self._check(int8(result.get_value(0, 0)))  # type: ignore[arg-type]

    def get_weighted(self, key: bytes) -> tuple[bytes, int] | None:
        if not self._unchecked:
            return super().get_weighted(key)
        # The transaction's first read (an item write's old item) carries the generation read.
        tid, ph = group_of(key)
        wire = self._wire
        with _MAPPED:
            result = wire.rows(wire.send(S_GET_WITH_GENERATION, (b"%d" % tid, b"%d" % ph, key)))
        self._unchecked = False
        self._check(int8(result.get_value(0, 0)))  # type: ignore[arg-type]
        value = result.get_value(0, 1)
        return None if value is None else (value, int8(result.get_value(0, 2)))  # type: ignore[arg-type]

    def _claim(self, key: bytes) -> None:
        """Mark an item as this transaction's until it ends (TransactionConflict, DESIGN.md)."""
        lock = _item_lock(key)
        if lock is None or lock in self._locked:
            return
        self._wire.send(S_CLAIM if self._transactional else S_TRY_CLAIM, (b"%d" % lock,))
        self._locked.add(lock)

    def put(self, key: bytes, value: bytes, weight: int = 0) -> None:
        tid, ph = group_of(key)
        self._span = None
        lock = None if self._transactional else _item_lock(key)
        with _MAPPED:
            if lock is not None and lock not in self._locked:
                # A plain write's claim rides in its row's statement: one statement, not two.
                self._wire.send(
                    S_PUT_CLAIMED, (b"%d" % tid, b"%d" % ph, key, value, b"%d" % weight, b"%d" % lock)
                )
                self._locked.add(lock)
                return
            self._claim(key)
            self._wire.send(S_PUT, (b"%d" % tid, b"%d" % ph, key, value, b"%d" % weight))

    def delete(self, key: bytes) -> None:
        tid, ph = group_of(key)
        self._span = None
        with _MAPPED:
            self._claim(key)
            self._wire.send(S_DELETE, (b"%d" % tid, b"%d" % ph, key))

    def delete_range(self, start: bytes, end: bytes) -> None:
        group = _one_group(start, end)
        self._span = None
        with _MAPPED:
            if group is not None:
                self._wire.send(S_DELETE_GROUP_RANGE, (b"%d" % group[0], b"%d" % group[1], start, end))
            else:
                self._wire.send(S_DELETE_RANGE, (start, end))

    def bump_generation(self) -> None:
        if self.generation is not None:
            return
        wire = self._wire
        with _MAPPED:
            self._ready()  # before the bump: the check compares the value other servers committed
            result = wire.rows(wire.send(S_BUMP))
            self.generation = int8(result.get_value(0, 0))  # type: ignore[arg-type]
            wire.send(S_NOTIFY, (CHANNEL.encode(), b"%d" % self.generation))


def open_pool(url: str, size: int) -> ConnectionPool:
    """The connections of a primary or a replica: autocommit (transactions say BEGIN themselves),
    statements prepared from their first use."""
    return ConnectionPool(
        url,
        min_size=1,
        max_size=size,
        kwargs={"autocommit": True, "prepare_threshold": 0},
        timeout=POOL_TIMEOUT,
        open=True,
    )


class PooledReads:
    """Reads and read snapshots, each on a connection borrowed from `_pool` (the primary's or a replica's)."""

    _pool: ConnectionPool
    #: Healthy idle connections kept from the pool for the next request (see `_connection`).
    _kept: list[psycopg.Connection]

    def _open_pool(self, url: str, size: int) -> None:
        self._pool = open_pool(url, size)
        self._kept = []

    def _close_pool(self) -> None:
        kept, self._kept = self._kept, []
        for conn in kept:
            self._pool.putconn(conn)
        self._pool.close()

    def get(self, key: bytes) -> bytes | None:
        row = self.get_weighted(key)
        return None if row is None else row[0]

    def get_weighted(self, key: bytes) -> tuple[bytes, int] | None:
        with self._reader() as reader:
            return reader.get_weighted(key)

    def range(
        self,
        start: bytes,
        end: bytes,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        with self._reader() as reader:
            return reader.range(start, end, reverse=reverse, limit=limit)

    def stats(self, start: bytes, end: bytes) -> tuple[int, int]:
        with self._reader() as reader:
            return reader.stats(start, end)

    @contextmanager
    def _reader(self) -> Iterator[_Reader]:
        """One read outside a transaction (each statement is its own)."""
        with self._connection() as conn:
            wire = Wire(conn)
            try:
                yield _Reader(wire)
            finally:
                wire.close()

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection]:
        """A connection for one request: a kept one, else the pool's.

        psycopg_pool's checkout and return cost about 40 us of CPU together
        (bench: more than the SELECT a GetItem sends), so a connection that
        ends its request idle and unbroken is kept here, up to
        KEPT_CONNECTIONS, and the next request takes it without the pool.
        Anything else goes back to the pool as before, which discards a
        broken connection and rolls back an unfinished transaction. list.pop
        and append are atomic, so threads need no lock to share the list.
        """
        kept = self._kept
        with _MAPPED:
            try:
                conn = kept.pop()
            except IndexError:
                conn = self._pool.getconn()
            healthy = False
            try:
                yield conn
                healthy = True
            finally:
                if (
                    healthy
                    and len(kept) < KEPT_CONNECTIONS
                    and not conn.closed
                    and conn.info.transaction_status == TransactionStatus.IDLE
                    and not self._pool.closed
                ):
                    kept.append(conn)
                else:
                    self._pool.putconn(conn)

    @contextmanager
    def snapshot(self) -> Iterator[ReadView]:
        # REPEATABLE READ READ ONLY: consistent, and what a hot standby allows (not SERIALIZABLE).
        # In pipeline mode the BEGIN travels with the first read and the COMMIT alone.
        with self._connection() as conn:
            wire = Wire(conn)
            try:
                with _MAPPED:
                    wire.send_plain(b"BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                    yield _Reader(wire)
                    wire.send_plain(b"COMMIT")
                    wire.sync()
            except BaseException:
                wire.abandon(b"ROLLBACK")
                raise
            wire.close()


class PostgresStore(PooledReads, Store):
    """A store in one PostgreSQL database, shared with every other Partita server on it."""

    def __init__(self, url: str, *, pool_size: int = 8, replica: Store | None = None) -> None:
        """`replica`: where eventually consistent reads go (pg_replica.ReplicaReads), else here."""
        self._url = url
        with _MAPPED, psycopg.connect(url, autocommit=True) as conn:
            migrate(conn)
            self._generation = self._read_generation(conn)
        self._open_pool(url, pool_size)
        self._gen_lock = threading.Lock()
        self._handed = threading.local()
        self._closed = threading.Event()
        self._local_duties = DutyLock()
        self._duty_conn: psycopg.Connection | None = None
        self._listener = threading.Thread(target=self._listen, name="partita-pg-listen", daemon=True)
        self._listener.start()
        self._replica = replica

    @property
    def eventual(self) -> Store:
        return self if self._replica is None else self._replica

    # --- the generation counter ------------------------------------------------------

    @staticmethod
    def _read_generation(conn: psycopg.Connection) -> int:
        row = conn.execute(GENERATION).fetchone()
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
        handed = getattr(self._handed, "value", self._generation)

        def check(seen: int) -> None:
            if seen != handed:
                # The catalog moved under this process's cache: start again with the fresh one.
                self._see(seen)
                self._handed.value = seen  # the retry decides on this one (or reads it again)
                raise CatalogMoved("the catalog changed")

        with self._connection() as conn:
            wire = Wire(conn)
            try:
                with _MAPPED:
                    wire.send_plain(b"BEGIN ISOLATION LEVEL SERIALIZABLE")
                    if exclusive:  # before the first read, so its snapshot sees no writer running
                        wire.send_plain(b"LOCK TABLE partita_kv IN SHARE ROW EXCLUSIVE MODE")
                    writer = _Writer(wire, transactional, check)
                    yield writer
                    writer._ready()  # a transaction that read nothing still checks the catalog
                    wire.send_plain(b"COMMIT")
                    wire.sync()
            except BaseException:
                wire.abandon(b"ROLLBACK")
                raise
            wire.close()
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
        self._close_pool()
        if self._replica is not None:
            self._replica.close()
        with self._local_duties.acquire_nowait():
            self._drop_duty_connection()


def open_postgres(url: str, **options: Any) -> PostgresStore:
    return PostgresStore(url, **options)
