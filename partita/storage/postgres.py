"""PostgreSQL backend: the shared store of many Partita servers (`--backend postgresql://...`).

The same ordered bytes -> bytes contract as SQLite, over `partita_kv`
(pg_schema.py). Write transactions are SERIALIZABLE; PostgreSQL's
serialization failures and deadlocks become `Conflict`, which the API front
door answers by running the request again (or, for TransactWriteItems, as
DynamoDB's TransactionConflict; not when the serializable check's own cycle
of reads and writes failed it, `Unordered`, which may share no item with any
other writer: that is run again too). A lost connection becomes `Unavailable`,
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
statistics that follow it cost no statement. A batch's rows (`prefetch`:
BatchGetItem, BatchWriteItem, the transactions) and a loop turn's GetItems
(`read_ahead`, asked by the HTTP server) are sent together and waited for
once.

Duty lock: a session advisory lock on a dedicated connection; a server that
dies drops its connection and with it the lock.

Where things are: this module borrows connections and begins and ends
transactions; pg_views.py reads and writes rows in them; pg_statements.py
holds their SQL and pg_wire.py sends it; pg_keys.py maps row keys to the
distribution columns and the claims' locks.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any, TypeVar

import psycopg
from psycopg.pq import TransactionStatus
from psycopg_pool import ConnectionPool

from .base import (
    CatalogMoved,
    DutyLock,
    ReadView,
    Store,
    WriteTxn,
)
from .pg_schema import migrate
from .pg_statements import GENERATION
from .pg_views import CHANNEL, MAPPED, Reader, Writer
from .pg_wire import Wire

log = logging.getLogger("partita.postgres")
_T = TypeVar("_T")

#: pg_try_advisory_lock key of the background-duty leader ("PARTITAD").
DUTY_LOCK = 0x5041525449544144
#: Seconds between generation re-reads by the listener when no NOTIFY comes (a safety net).
POLL_SECONDS = 2.0

#: Seconds a request waits for a connection (the database restarting) before it is answered 503.
POOL_TIMEOUT = 3.0
#: Connections a store keeps out of its pool between requests (see PooledReads._borrow).
KEPT_CONNECTIONS = 2

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
    #: Healthy idle connections kept from the pool for the next request (see `_borrow`).
    _kept: list[psycopg.Connection]
    #: Rows `read_ahead` read (None: absent) and the thread they are for; None when there are none.
    _ahead: dict[bytes, tuple[bytes, int] | None] | None
    _ahead_thread: int

    reads_ahead = True

    def _open_pool(self, url: str, size: int) -> None:
        self._pool = open_pool(url, size)
        self._kept = []
        self._ahead = None
        self._ahead_thread = 0

    def _close_pool(self) -> None:
        kept, self._kept = self._kept, []
        for conn in kept:
            self._pool.putconn(conn)
        self._pool.close()

    def get(self, key: bytes) -> bytes | None:
        row = self.get_weighted(key)
        return None if row is None else row[0]

    def get_weighted(self, key: bytes) -> tuple[bytes, int] | None:
        ahead = self._ahead
        if ahead is not None and key in ahead and self._ahead_thread == threading.get_ident():
            return ahead[key]
        return self._read(lambda reader: reader.get_weighted(key))

    def read_ahead(self, keys: list[bytes]) -> None:
        """Read `keys` in one round trip, for this thread's point reads until a write or `forget_ahead`.

        A round trip per GetItem cost a served request about 60 us of CPU
        (the system calls and the wake-ups of both processes) where the
        statement's own work is a few: eight read together cost about 12 us
        each (bench/README, ninth pass). Only this thread is served from
        them: the loop's, whose requests were all received before this read.
        A failure reads nothing ahead; each request then meets it itself.
        """
        unique = list(dict.fromkeys(keys))  # a hot key read by many clients at once is read once
        try:
            found = self._read(lambda reader: reader.get_many(unique))
        except Exception:  # noqa: BLE001 -- a hint: the requests' own reads report what is wrong
            return
        self._ahead_thread = threading.get_ident()
        self._ahead = found

    def forget_ahead(self) -> None:
        self._ahead = None

    def range(
        self,
        start: bytes,
        end: bytes,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        return self._read(lambda reader: reader.range(start, end, reverse=reverse, limit=limit))

    def stats(self, start: bytes, end: bytes) -> tuple[int, int]:
        return self._read(lambda reader: reader.stats(start, end))

    def _read(self, read: Callable[[Reader], _T]) -> _T:
        """One read outside a transaction (each statement is its own), on a borrowed connection."""
        conn = self._borrow()
        healthy = False
        try:
            with MAPPED:
                wire = Wire(conn)
                try:
                    answer = read(Reader(wire))
                finally:
                    wire.close()
            healthy = True
            return answer
        finally:
            self._give_back(conn, healthy)

    def _borrow(self) -> psycopg.Connection:
        """A connection for one request: a kept one, else the pool's.

        psycopg_pool's checkout and return cost about 40 us of CPU together
        (bench: more than the SELECT a GetItem sends), so a connection that
        ends its request idle and unbroken is kept here, up to
        KEPT_CONNECTIONS, and the next request takes it without the pool.
        Anything else goes back to the pool as before, which discards a
        broken connection and rolls back an unfinished transaction. list.pop
        and append are atomic, so threads need no lock to share the list.
        Every borrowing ends in `_give_back` (plain calls, not a context
        manager: they run for every request).
        """
        try:
            return self._kept.pop()
        except IndexError:
            with MAPPED:
                return self._pool.getconn()

    def _give_back(self, conn: psycopg.Connection, healthy: bool) -> None:
        """`healthy`: the request's use of `conn` ended without an exception."""
        kept = self._kept
        if (
            healthy
            and len(kept) < KEPT_CONNECTIONS
            and not conn.closed
            and conn.info.transaction_status == TransactionStatus.IDLE
            and not self._pool.closed
        ):
            kept.append(conn)
        else:
            with MAPPED:
                self._pool.putconn(conn)

    @contextmanager
    def snapshot(self) -> Iterator[ReadView]:
        # REPEATABLE READ READ ONLY: consistent, and what a hot standby allows (not SERIALIZABLE).
        # In pipeline mode the BEGIN travels with the first read and the COMMIT alone.
        conn = self._borrow()
        healthy = False
        try:
            with MAPPED:
                wire = Wire(conn)
                try:
                    wire.send_plain(b"BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                    yield Reader(wire)
                    wire.send_plain(b"COMMIT")
                    wire.sync()
                except BaseException:
                    wire.abandon(b"ROLLBACK")
                    raise
                wire.close()
            healthy = True
        finally:
            self._give_back(conn, healthy)


class _Transaction:
    """One write transaction (`PostgresStore.write`): a class, as it wraps every write (see pg_views.Mapped).

    Entering borrows a connection and queues BEGIN; a clean exit checks the
    catalog generation (when nothing read it), commits and waits for the
    commit; any failure rolls back. Either way the connection goes back.
    """

    __slots__ = ("_store", "_transactional", "_exclusive", "_handed", "_conn", "_wire", "_writer")

    def __init__(self, store: PostgresStore, transactional: bool, exclusive: bool) -> None:
        self._store = store
        self._transactional = transactional
        self._exclusive = exclusive

    def __enter__(self) -> Writer:
        store = self._store
        store.forget_ahead()  # a read after this write must see it
        self._handed = getattr(store._handed, "value", store._generation)
        conn = self._conn = store._borrow()
        wire = None
        try:
            with MAPPED:
                wire = self._wire = Wire(conn)
                wire.send_plain(b"BEGIN ISOLATION LEVEL SERIALIZABLE")
                if self._exclusive:  # before the first read, so its snapshot sees no writer running
                    wire.send_plain(b"LOCK TABLE partita_kv IN SHARE ROW EXCLUSIVE MODE")
        except BaseException:
            if wire is not None:
                wire.abandon(b"ROLLBACK")
            store._give_back(conn, False)
            raise
        writer = self._writer = Writer(wire, self._transactional, self._check)
        return writer

    def _check(self, seen: int) -> None:
        if seen != self._handed:
            # The catalog moved under this process's cache: start again with the fresh one.
            store = self._store
            store._see(seen)
            store._handed.value = seen  # the retry decides on this one (or reads it again)
            raise CatalogMoved("the catalog changed")

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: Any) -> bool:
        store = self._store
        wire = self._wire
        if error is not None:
            wire.abandon(b"ROLLBACK")
            store._give_back(self._conn, False)
            return MAPPED.__exit__(kind, error, trace)
        try:
            with MAPPED:
                self._writer._ready()  # a transaction that read nothing still checks the catalog
                wire.send_plain(b"COMMIT")
                wire.sync()
        except BaseException:
            wire.abandon(b"ROLLBACK")
            store._give_back(self._conn, False)
            raise
        wire.close()
        store._give_back(self._conn, True)
        generation = self._writer.generation
        if generation is not None:
            store._see(generation)
        return False


class PostgresStore(PooledReads, Store):
    """A store in one PostgreSQL database, shared with every other Partita server on it."""

    def __init__(self, url: str, *, pool_size: int = 8, replica: Store | None = None) -> None:
        """`replica`: where eventually consistent reads go (pg_replica.ReplicaReads), else here."""
        self._url = url
        with MAPPED, psycopg.connect(url, autocommit=True) as conn:
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

    def forget_ahead(self) -> None:
        self._ahead = None
        if self._replica is not None:
            self._replica.forget_ahead()

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

    def write(self, transactional: bool = False, exclusive: bool = False) -> AbstractContextManager[WriteTxn]:
        return _Transaction(self, transactional, exclusive)

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
