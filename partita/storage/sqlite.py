"""SQLite backend: the embedded default store.

One table of (key, value, weight) rows in key order (WITHOUT ROWID, so the
primary key is the clustered index). WAL mode with synchronous=NORMAL: a
commit is in the WAL before the call returns, so a killed process loses
nothing it acknowledged (an OS crash may lose the last commits, which is the
documented trade-off of NORMAL). Write transactions use BEGIN IMMEDIATE,
which takes SQLite's single writer lock up front: every write transaction is
serializable, across threads and across worker processes sharing the file.

Group commit: the HTTP server answers one request at a time on its event-loop
thread, so writers cannot wait for each other inside the store. Instead the
server `attach`es to the store: a plain write made on its thread then runs
as a SAVEPOINT inside one transaction that stays open for the rest of the
event-loop turn, and the server holds every answer made meanwhile (reads
too: they may have seen the open transaction) until it calls
`commit_group`. One COMMIT then covers every write that arrived together,
and no answer leaves before the commit that makes it durable. A write that
fails rolls back to its own savepoint only.
"""

from __future__ import annotations

import fcntl
import mmap
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from .base import DutyLock, LockedStore, ReadView, Store, WriteTxn

GROUP_LIMIT = 256
"""Writes one group commit covers at most: it bounds how long other threads
(and other worker processes) wait for the store's lock."""

PAGE_SIZE = 2048
"""Page size of a new database (an existing one keeps its own). Item writes
land on random pages, and a commit copies every page it dirtied into the
WAL (and the checkpointer copies it again into the database): half of
SQLite's default 4 KB halves those bytes. Measured in-process on the
bench's BatchWriteItem (25 random ~130-byte rows a request), ~630 -> ~520 us
of CPU a request; point reads and PutItem were unchanged within noise."""

CHECKPOINT_SECONDS = 0.1
"""How often the checkpointer thread copies the WAL into the database."""

_PUT = "INSERT INTO kv (k, v, w) VALUES (?, ?, ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v, w = excluded.w"
"""An upsert, not INSERT OR REPLACE: REPLACE deletes the old row and inserts
the new one, and on a WITHOUT ROWID table the delete and the insert each
rebalance the leaf page, dirtying its siblings. Measured on the bench's
100-byte items in 10k rows, an upsert costs ~5 us of CPU where REPLACE cost
~14 us, nearly all of it in more pages written to the WAL at commit."""

_MAX_PREFETCH = 100  # a BatchWriteItem has at most 25 requests
_PREFETCH: dict[int, str] = {}  # the IN (...) statement by its number of keys

_SCHEMA = "CREATE TABLE IF NOT EXISTS kv (k BLOB PRIMARY KEY, v BLOB NOT NULL, w INTEGER NOT NULL) WITHOUT ROWID"


class _Reader(ReadView):
    __slots__ = ("_db",)

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def get(self, key: bytes) -> bytes | None:
        row = self._db.execute("SELECT v FROM kv WHERE k = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def get_weighted(self, key: bytes) -> tuple[bytes, int] | None:
        return self._db.execute("SELECT v, w FROM kv WHERE k = ?", (key,)).fetchone()

    def range(
        self,
        start: bytes,
        end: bytes,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        order = "DESC" if reverse else "ASC"
        cur = self._db.execute(
            f"SELECT k, v FROM kv WHERE k >= ? AND k < ? ORDER BY k {order} LIMIT ?",
            (start, end, -1 if limit is None else limit),
        )
        return iter(cur.fetchall())

    def stats(self, start: bytes, end: bytes) -> tuple[int, int]:
        count, weight = self._db.execute(
            "SELECT count(*), coalesce(sum(w), 0) FROM kv WHERE k >= ? AND k < ?", (start, end)
        ).fetchone()
        return count, weight


class _Writer(_Reader, WriteTxn):
    __slots__ = ("bumped",)

    def __init__(self, db: sqlite3.Connection) -> None:
        super().__init__(db)
        self.bumped = False

    def bump_generation(self) -> None:
        self.bumped = True

    def put(self, key: bytes, value: bytes, weight: int = 0) -> None:
        self._db.execute(_PUT, (key, value, weight))

    def delete(self, key: bytes) -> None:
        self._db.execute("DELETE FROM kv WHERE k = ?", (key,))

    def delete_range(self, start: bytes, end: bytes) -> None:
        self._db.execute("DELETE FROM kv WHERE k >= ? AND k < ?", (start, end))


class _GroupedWriter(_Writer):
    """One write inside the open group: its rows wait in `pending` until it ends.

    A write inside a group must be undoable on its own (a failed condition,
    a collection over its limit), which a SAVEPOINT gives at the price of
    two statements. Most writes change one row (a PutItem or UpdateItem of a
    table without indexes or stream): kept here until the write ends, that
    row goes down as one statement, atomic by itself, so such a write needs
    no savepoint; a failed write has written nothing to discard. A write of
    several rows stores them under a savepoint at its end. Reads through
    the writer see its pending rows; a range read, a range delete, or a read
    through the store while the write is open (`SQLiteStore._flush_active`)
    first stores them under the savepoint, so every read sees what SQLite
    would have shown.
    """

    __slots__ = ("pending", "savepoint", "outer", "fetched")

    def __init__(self, db: sqlite3.Connection, outer: _GroupedWriter | None) -> None:
        super().__init__(db)
        #: key -> (value, weight), or None for a deleted row; last write wins.
        self.pending: dict[bytes, tuple[bytes, int] | None] = {}
        self.savepoint = False
        #: The write this one is nested in (same thread, same group), restored when it ends.
        self.outer = outer
        #: Rows read ahead by `prefetch` (None: absent), as SQLite has them; pending rows win.
        self.fetched: dict[bytes, tuple[bytes, int] | None] | None = None

    def prefetch(self, keys: list[bytes]) -> None:
        """Read a batch's rows in one statement instead of one each (~25 statements fewer a BatchWriteItem)."""
        if len(keys) > _MAX_PREFETCH:
            return
        sql = _PREFETCH.get(len(keys))
        if sql is None:
            sql = _PREFETCH[len(keys)] = "SELECT k, v, w FROM kv WHERE k IN (" + ", ".join("?" * len(keys)) + ")"
        found = {k: (v, w) for k, v, w in self._db.execute(sql, keys)}
        self.fetched = {key: found.get(key) for key in keys}

    def get(self, key: bytes) -> bytes | None:
        stored = self.get_weighted(key)
        return None if stored is None else stored[0]

    def get_weighted(self, key: bytes) -> tuple[bytes, int] | None:
        pending = self.pending
        if key in pending:
            return pending[key]
        fetched = self.fetched
        if fetched is not None and key in fetched:
            return fetched[key]
        return self._db.execute("SELECT v, w FROM kv WHERE k = ?", (key,)).fetchone()

    def range(
        self,
        start: bytes,
        end: bytes,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        self.flush()
        return super().range(start, end, reverse=reverse, limit=limit)

    def stats(self, start: bytes, end: bytes) -> tuple[int, int]:
        self.flush()
        return super().stats(start, end)

    def put(self, key: bytes, value: bytes, weight: int = 0) -> None:
        self.pending[key] = (value, weight)

    def delete(self, key: bytes) -> None:
        self.pending[key] = None

    def delete_range(self, start: bytes, end: bytes) -> None:
        self.flush()
        self.fetched = None
        super().delete_range(start, end)

    def flush(self) -> None:
        """Store the pending rows under this write's savepoint (opened on first need)."""
        if not self.savepoint:
            self._db.execute("SAVEPOINT w")
            self.savepoint = True
        if self.pending:
            self._store_pending()

    def finish(self) -> None:
        """The write succeeded: store what is pending, in one statement or under the savepoint."""
        pending = self.pending
        if not self.savepoint and len(pending) == 1:
            key, entry = pending.popitem()
            if entry is None:
                self._db.execute("DELETE FROM kv WHERE k = ?", (key,))
            else:
                self._db.execute(_PUT, (key, *entry))
            return
        if pending:
            self.flush()
        if self.savepoint:
            self._db.execute("RELEASE w")

    def _store_pending(self) -> None:
        pending, self.pending = self.pending, {}
        self.fetched = None  # what was read ahead may be among the rows stored now
        puts = [(key, *entry) for key, entry in pending.items() if entry is not None]
        if len(puts) < len(pending):
            self._db.executemany(
                "DELETE FROM kv WHERE k = ?", [(key,) for key, entry in pending.items() if entry is None]
            )
        if puts:
            self._db.executemany(_PUT, puts)


class _GroupedWrite:
    """The context of one grouped write (a class, not a generator: it runs on every write)."""

    __slots__ = ("_store", "_writer")

    def __init__(self, store: SQLiteStore) -> None:
        self._store = store

    def __enter__(self) -> _GroupedWriter:
        store = self._store
        store._lock.acquire()
        try:
            if not store._group_open:
                store._open_group()
            outer = store._active
            if outer is not None:
                outer.flush()  # a write nested in a write (same thread): the outer one's rows go first
            self._writer = writer = _GroupedWriter(store._db, outer)
        except BaseException:
            store._lock.release()
            raise
        store._active = writer
        return writer

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: object) -> None:
        store = self._store
        writer = self._writer
        try:
            store._active = writer.outer
            store._end_grouped(writer, kind is None)
        finally:
            store._lock.release()


class _Generation:
    """A counter shared by every process that opens one store.

    Kept in a small memory-mapped file beside the database so reading it
    costs no SQL statement; incremented under a file lock so no increment is
    lost. In memory (one process) it is a plain integer.
    """

    def __init__(self, path: Path | None) -> None:
        self._value = 0
        self._file = None
        self._map: mmap.mmap | None = None
        if path is not None:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            if os.fstat(fd).st_size < 8:
                os.ftruncate(fd, 8)
            self._file = fd
            self._map = mmap.mmap(fd, 8)

    def read(self) -> int:
        if self._map is None:
            return self._value
        return int.from_bytes(self._map[:8], "little")

    def bump(self) -> None:
        if self._map is None or self._file is None:
            self._value += 1
            return
        fcntl.lockf(self._file, fcntl.LOCK_EX)
        try:
            self._map[:8] = (self.read() + 1).to_bytes(8, "little")
        finally:
            fcntl.lockf(self._file, fcntl.LOCK_UN)

    def close(self) -> None:
        if self._map is not None and self._file is not None:
            self._map.close()
            os.close(self._file)
            self._map = None


class _Checkpointer:
    """Copies the WAL into the database from its own thread and connection.

    SQLite's automatic checkpoint runs inside the COMMIT that crosses 1,000
    WAL pages and fsyncs twice (synchronous=NORMAL syncs at checkpoints
    only), so every few hundred commits one request stalled the event loop
    for milliseconds. A PASSIVE checkpoint from another connection never
    blocks writers (the GIL is released while SQLite works); the next writer
    after a complete checkpoint starts the WAL over, so it does not grow.
    Durability is unchanged: a commit is in the WAL before its answer leaves.
    """

    def __init__(self, path: Path) -> None:
        self._db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA busy_timeout=0")  # busy: another process is checkpointing
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="partita-checkpoint", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(CHECKPOINT_SECONDS):
            try:
                self._db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            except sqlite3.Error:
                continue

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self._db.close()


class SQLiteStore(LockedStore):
    """A store in one SQLite file (or in memory when path is None)."""

    def __init__(self, path: Path | None) -> None:
        target = ":memory:" if path is None else str(path)
        db = sqlite3.connect(target, isolation_level=None, check_same_thread=False)
        if path is not None:
            db.execute(f"PRAGMA page_size={PAGE_SIZE}")  # takes effect only on a new database
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA wal_autocheckpoint=0")  # _Checkpointer does it
        db.execute("PRAGMA busy_timeout=10000")
        db.execute(_SCHEMA)
        self._checkpointer = None if path is None else _Checkpointer(path)
        self._db = db
        self._reader = _Reader(db)
        # The server is single-threaded, but background duties and tests may
        # use the store from other threads; one connection needs one user.
        self._lock = threading.RLock()
        self._generation = _Generation(None if path is None else path.with_suffix(".generation"))
        self._turn_fd = None if path is None else os.open(path.with_suffix(".writelock"), os.O_RDWR | os.O_CREAT, 0o644)
        self._duty_path = None if path is None else path.with_suffix(".duties")
        self._duties = DutyLock()
        # Group commit (module docstring): the server's thread, what to tell
        # it when a group opens, and the state of the open group.
        self._group_thread: int | None = None
        self._on_group_open: Callable[[], None] | None = None
        self._group_open = False
        self._group_writes = 0
        self._group_lost = False
        #: The grouped write open on the server's thread (its rows may still be pending).
        self._active: _GroupedWriter | None = None

    def generation(self) -> int:
        return self._generation.read()

    # reads outside a transaction (LockedStore's, seeing a grouped write still open on this thread)

    def get(self, key: bytes) -> bytes | None:
        with self._lock:
            if self._active is not None:
                self._active.flush()
            return self._reader.get(key)

    def get_weighted(self, key: bytes) -> tuple[bytes, int] | None:
        with self._lock:
            if self._active is not None:
                self._active.flush()
            return self._reader.get_weighted(key)

    def range(
        self,
        start: bytes,
        end: bytes,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        with self._lock:
            self._flush_active()
            return self._reader.range(start, end, reverse=reverse, limit=limit)

    def stats(self, start: bytes, end: bytes) -> tuple[int, int]:
        with self._lock:
            self._flush_active()
            return self._reader.stats(start, end)

    # group commit

    def attach(self, on_open: Callable[[], None]) -> None:
        """Let plain writes made on the calling thread share commits.

        `on_open` is called, on that thread, when a group transaction opens:
        from then on the caller must hold every answer it makes and call
        `commit_group` soon (the server does at the next event-loop turn).
        """
        self._group_thread = threading.get_ident()
        self._on_group_open = on_open

    def detach(self) -> None:
        """Commit what is open and go back to one commit per write."""
        self.commit_group()
        self._group_thread = None
        self._on_group_open = None

    def commit_group(self) -> bool:
        """Commit the open group, if any. False when writes of this group were lost: answer none as done."""
        try:
            self._close_group()
        finally:
            lost, self._group_lost = self._group_lost, False
        return not lost

    def _open_group(self) -> None:
        self._lock.acquire()  # held until the commit: other threads wait for it
        try:
            self._take_turn()
            try:
                self._db.execute("BEGIN IMMEDIATE")
            except BaseException:
                self._release_turn()
                raise
        except BaseException:
            self._lock.release()
            raise
        self._group_open = True
        assert self._on_group_open is not None
        self._on_group_open()

    def _close_group(self) -> None:
        """Commit now (always safe: the answers still wait for the server's commit_group)."""
        if not self._group_open:
            return
        self._group_open = False
        self._group_writes = 0
        try:
            if self._db.in_transaction:
                try:
                    self._db.execute("COMMIT")
                except BaseException:
                    self._group_lost = True
                    if self._db.in_transaction:
                        self._db.execute("ROLLBACK")
                    raise
        finally:
            self._release_turn()
            self._lock.release()

    def _end_grouped(self, writer: _GroupedWriter, succeeded: bool) -> None:
        """Store a finished write's rows, or undo what it stored; then commit if it must."""
        if succeeded:
            try:
                writer.finish()
            except BaseException:
                self._undo(writer)
                raise
        else:
            self._undo(writer)
            return
        self._group_writes += 1
        if writer.bumped:
            # Other processes re-read the catalog when the generation moves,
            # so it may move only after the commit; and the next request here
            # must see the new catalog: commit now.
            self._close_group()
            self._generation.bump()
        elif self._group_writes >= GROUP_LIMIT:
            self._close_group()

    def _undo(self, writer: _GroupedWriter) -> None:
        """A failed write: roll back to its savepoint (without one it stored nothing)."""
        db = self._db
        if db.in_transaction:
            if writer.savepoint:
                db.execute("ROLLBACK TO w")
                db.execute("RELEASE w")
        else:  # SQLite rolled the whole group back (disk full, I/O error)
            self._group_lost = True
            self._close_group()

    def _flush_active(self) -> None:
        """A read through the store while a grouped write is open sees that write's rows."""
        active = self._active
        if active is not None:
            active.flush()

    # transactions

    @contextmanager
    def snapshot(self) -> Iterator[ReadView]:
        with self._lock:
            if self._group_open:
                # Only the server's thread gets here while a group is open (it
                # holds the lock); the open transaction already is one state,
                # and the answer waits for its commit.
                self._flush_active()
                yield self._reader
                return
            self._db.execute("BEGIN")
            try:
                yield _Reader(self._db)
            finally:
                self._db.execute("COMMIT")

    def write(
        self, transactional: bool = False, exclusive: bool = False
    ) -> AbstractContextManager[WriteTxn]:
        if (
            not transactional
            and not exclusive
            and self._group_thread is not None
            and self._group_thread == threading.get_ident()
        ):
            return _GroupedWrite(self)
        return self._own_write(transactional, exclusive)

    @contextmanager
    def _own_write(self, transactional: bool, exclusive: bool) -> Iterator[WriteTxn]:
        """A write in its own transaction (off the server's thread, a transaction, a backfill)."""
        with self._lock:
            if self._group_thread is not None and self._group_thread == threading.get_ident():
                self._flush_active()
                self._close_group()
            self._take_turn()
            try:
                self._db.execute("BEGIN IMMEDIATE")
                writer = _Writer(self._db)
                try:
                    yield writer
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
                self._db.execute("COMMIT")
            finally:
                self._release_turn()
            if writer.bumped:
                self._generation.bump()

    @contextmanager
    def duty_lock(self) -> Iterator[bool]:
        if self._duty_path is None:
            with self._duties.acquire_nowait() as got:
                yield got
            return
        fd = os.open(self._duty_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield False
                return
            yield True
        finally:
            os.close(fd)  # closing the descriptor releases the lock

    def _take_turn(self) -> None:
        """Queue writers of every process on a file lock before SQLite's own.

        SQLite makes a writer that finds the database locked sleep and retry
        (1, 2, 5, 10 ... ms), which with several worker processes turned
        write bursts into 100 ms tails. The kernel wakes a process waiting on
        a file lock the moment it is released, so writers take turns without
        sleeping; BEGIN IMMEDIATE then finds the database free.
        """
        if self._turn_fd is not None:
            fcntl.flock(self._turn_fd, fcntl.LOCK_EX)

    def _release_turn(self) -> None:
        if self._turn_fd is not None:
            fcntl.flock(self._turn_fd, fcntl.LOCK_UN)

    def close(self) -> None:
        with self._lock:
            if self._group_open and self._group_thread == threading.get_ident():
                self._close_group()
            if self._checkpointer is not None:
                self._checkpointer.close()
                self._checkpointer = None
            self._db.close()
            self._generation.close()
            if self._turn_fd is not None:
                os.close(self._turn_fd)
                self._turn_fd = None


def open_store(data_dir: Path | None) -> Store:
    """Open (creating if needed) the store kept in data_dir, or a memory store."""
    if data_dir is None:
        from .memory import MemoryStore

        return MemoryStore()
    data_dir.mkdir(parents=True, exist_ok=True)
    return SQLiteStore(data_dir / "partita.sqlite3")
