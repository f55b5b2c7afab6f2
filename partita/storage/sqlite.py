"""SQLite backend: the embedded default store.

One table of (key, value, weight) rows in key order (WITHOUT ROWID, so the
primary key is the clustered index). WAL mode with synchronous=NORMAL by
default: a commit is in the WAL before the call returns, so a killed process
loses nothing it acknowledged, but the WAL is synced to disk only at
checkpoints, so an OS crash or power loss may lose the last acknowledged
commits (never the file's consistency: SQLite's documented trade-off of
NORMAL). `sync="full"` (`partita serve --sync full`) syncs the WAL at every
commit before the answer leaves: what was acknowledged survives an OS crash
too; one group commit pays one sync for every write of its turn. Write transactions use BEGIN IMMEDIATE,
which takes SQLite's single writer lock up front: every write transaction is
serializable, across threads and across worker processes sharing the file.

Group commit: the HTTP server answers one request at a time on its event-loop
thread, so writers cannot wait for each other inside the store. Instead the
server `attach`es to the store: the plain writes made on its thread during
one event-loop turn form a group, and the server holds every answer made
meanwhile (reads too: they may have seen the group's writes) until it calls
`commit_group`. One COMMIT then covers every write that arrived together,
and no answer leaves before the commit that makes it durable. The writes
run optimistically, without the write lock, and are checked at the commit
(a request whose reads changed runs again); what cannot be checked moves
the turn into a group transaction that holds the lock, each write in it
undoable on its own (sqlite_writers.py describes both).
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from .base import DutyLock, LockedStore, ReadView, Stale, Store, WriteTxn
from .sqlite_cache import Entry, RowCache
from .sqlite_files import WAL_CEILING_FACTOR, WAL_LIMIT_FRAMES, Checkpointer, CommitSeq, Generation
from .sqlite_writers import (
    GroupedWrite,
    GroupedWriter,
    OptimisticWrite,
    OptimisticWriter,
    Reader,
    Unit,
    Writer,
    store_rows,
    unchanged,
)

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

_SCHEMA = "CREATE TABLE IF NOT EXISTS kv (k BLOB PRIMARY KEY, v BLOB NOT NULL, w INTEGER NOT NULL) WITHOUT ROWID"


SYNC_MODES = ("normal", "full")
"""SQLite's synchronous levels Partita offers (module docstring: what each promises)."""


def _no_token() -> object | None:
    return None


class SQLiteStore(LockedStore):
    """A store in one SQLite file (or in memory when path is None)."""

    def __init__(self, path: Path | None, wal_limit_frames: int = WAL_LIMIT_FRAMES, sync: str = "normal") -> None:
        if sync not in SYNC_MODES:
            raise ValueError(f"sync must be one of {', '.join(SYNC_MODES)}")
        target = ":memory:" if path is None else str(path)
        db = sqlite3.connect(target, isolation_level=None, check_same_thread=False)
        if path is not None:
            db.execute(f"PRAGMA page_size={PAGE_SIZE}")  # takes effect only on a new database
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(f"PRAGMA synchronous={sync.upper()}")
            # The Checkpointer does it; the writer's own is the backstop (WAL_CEILING_FACTOR).
            db.execute(f"PRAGMA wal_autocheckpoint={wal_limit_frames * WAL_CEILING_FACTOR}")
        db.execute("PRAGMA busy_timeout=10000")
        db.execute(_SCHEMA)
        self._checkpointer = None if path is None else Checkpointer(path, wal_limit_frames)
        self._db = db
        self._reader = Reader(db)
        # The server is single-threaded, but background duties and tests may
        # use the store from other threads; one connection needs one user.
        self._lock = threading.RLock()
        self._generation = Generation(None if path is None else path.with_suffix(".generation"))
        self._turn_fd = None if path is None else os.open(path.with_suffix(".writelock"), os.O_RDWR | os.O_CREAT, 0o644)
        self._seq = CommitSeq(self._turn_fd)
        self._duty_path = None if path is None else path.with_suffix(".duties")
        self._duties = DutyLock()
        # Group commit (module docstring): the server's thread and callbacks,
        # and the state of the turn's group.
        self._group_thread: int | None = None
        self._on_group_open: Callable[[], None] | None = None
        self._token: Callable[[], object | None] = _no_token
        self._rerun: Callable[[object], None] | None = None
        self._announced = False  # the server was told to hold answers and commit
        self._committing = False  # commit_group is running (its reruns write under the lock)
        self._group_open = False  # the group transaction is open (this process holds the write lock)
        self._reading = False  # the optimistic reads' transaction is open
        self._group_writes = 0
        self._group_lost = False
        #: The turn's optimistic writes not yet checked and stored, by request, and their rows merged.
        self._units: list[Unit] = []
        self._overlay: dict[bytes, Entry] = {}
        #: Committed rows the optimistic writes read or stored, while no other commit moved them.
        self._cache = RowCache()
        #: The commit sequence before the turn's first optimistic read (None: no optimistic write yet).
        self._seq_start: int | None = None
        #: Requests whose reads changed: run again under the lock before the commit.
        self._reruns: list[object] = []
        #: The write open on the server's thread (its rows may still be pending).
        self._active: GroupedWriter | OptimisticWriter | None = None

    def generation(self) -> int:
        return self._generation.read()

    # reads outside a transaction (seeing the writes this process made in the turn)

    def get(self, key: bytes) -> bytes | None:
        with self._lock:
            return self._point_view().get(key)

    def get_weighted(self, key: bytes) -> tuple[bytes, int] | None:
        with self._lock:
            return self._point_view().get_weighted(key)

    # The optimistic reads' transaction is open only while writes of the turn
    # wait (`_units`): the server's thread settles them before reading
    # outside a write; another thread ends it and reads the committed state.

    def range(
        self,
        start: bytes,
        end: bytes,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        with self._lock:
            self._settle_for_read()
            return self._reader.range(start, end, reverse=reverse, limit=limit)

    def stats(self, start: bytes, end: bytes) -> tuple[int, int]:
        with self._lock:
            self._settle_for_read()
            return self._reader.stats(start, end)

    def _point_view(self) -> ReadView:
        active = self._active
        if active is not None:
            if type(active) is OptimisticWriter:
                return active  # a read through the store inside a write: recorded like the write's own
            active.flush()
        elif self._units:
            if threading.get_ident() == self._group_thread:
                self._settle(self._current_unit())
            else:
                self._end_reading()
        return self._reader

    def _settle_for_read(self) -> None:
        """A read on the server's thread sees its writes of the turn: they go into the group transaction.

        Other threads (background duties) read the committed state: the
        turn's writes are not committed yet, and only the server's thread
        may take the group's lock (it holds it until its commit).
        """
        active = self._active
        if type(active) is OptimisticWriter:
            active.lock_in()
        self._flush_active()
        if self._units:
            if threading.get_ident() == self._group_thread:
                self._settle(self._current_unit())
            else:
                self._end_reading()

    # group commit

    def attach(
        self,
        on_open: Callable[[], None],
        token: Callable[[], object | None] = lambda: None,
        rerun: Callable[[object], None] | None = None,
    ) -> None:
        """Let plain writes made on the calling thread share commits.

        `on_open` is called, on that thread, when a group begins: from then
        on the caller must hold every answer it makes and call
        `commit_group` soon (the server does at the next event-loop turn).
        `token` names the request being answered (None outside one) and
        `rerun(token)` runs it again, inside `commit_group`, replacing its
        held answer: with both, writes run optimistically (module
        docstring of sqlite_writers); without, under the lock.
        """
        self._group_thread = threading.get_ident()
        self._on_group_open = on_open
        self._token = token if rerun is not None else _no_token
        self._rerun = rerun

    def detach(self) -> None:
        """Commit what is open and go back to one commit per write."""
        self.commit_group()
        self._group_thread = None
        self._on_group_open = None
        self._token = _no_token
        self._rerun = None

    def commit_group(self) -> bool:
        """Check, store and commit the turn's writes. False when writes of this group were lost: answer none as done."""
        with self._lock:
            self._committing = True
            try:
                if self._units:
                    self._settle(None)
                while self._reruns:
                    tokens, self._reruns = self._reruns, []
                    assert self._rerun is not None
                    for token in tokens:
                        self._rerun(token)  # under the lock: its writes join the group transaction
                self._close_group()
            except BaseException:
                self._abort_group()
                raise
            finally:
                self._end_reading()
                self._committing = False
                self._announced = False
                self._units = []
                self._overlay = {}
                self._seq_start = None
                self._reruns = []
                lost, self._group_lost = self._group_lost, False
        return not lost

    def _announce(self) -> None:
        if not self._announced and not self._committing:
            self._announced = True
            assert self._on_group_open is not None
            self._on_group_open()

    def _current_unit(self) -> Unit | None:
        """The optimistic writes of the request being answered, if it made some."""
        units = self._units
        if units:
            token = self._token()
            if token is not None and units[-1].token is token:
                return units[-1]
        return None

    def _optimistic_writer(self, token: object) -> OptimisticWriter:
        units = self._units
        if units and units[-1].token is token:
            return OptimisticWriter(self, units[-1])  # the request's earlier writes made its unit
        if len(units) >= GROUP_LIMIT:
            self._settle(None)
            self._close_group()
        if self._seq_start is None:
            self._seq_start = start = self._seq.read()  # before the turn's first read
            self._cache.begin_turn(start)
        if not self._announced:
            self._announce()
        unit = Unit(token)
        self._units.append(unit)
        return OptimisticWriter(self, unit)

    def _begin_reading(self) -> None:
        """One read transaction for the turn's optimistic reads (a statement alone opens and ends one each)."""
        self._db.execute("BEGIN")
        self._reading = True

    def _end_reading(self) -> None:
        """End the optimistic reads' transaction before anything else uses the connection."""
        if self._reading:
            self._reading = False
            if self._db.in_transaction:
                self._db.execute("COMMIT")

    def _settle(self, current: Unit | None) -> None:
        """Take the write lock and bring the turn's optimistic writes into the group transaction.

        Each request's reads are checked against the state the requests
        before it leave; one whose reads changed stores nothing and is run
        again before the commit, except `current` (the request running now),
        which raises Stale so that it runs again at once, under the lock.
        The rows go down in one statement (`applied` stands in for SQLite
        while the checks run).
        """
        opened = not self._group_open
        if opened:
            self._open_group()
        units, self._units = self._units, []
        self._overlay = {}
        start, self._seq_start = self._seq_start, None
        fresh = start is not None and self._seq.unchanged_since(start)
        db = self._db
        applied: dict[bytes, Entry] = {}
        stale = False
        for unit in units:
            if fresh or unchanged(db, unit.reads, applied):
                applied.update(unit.rows)
            elif unit is current:
                stale = True
            else:
                self._reruns.append(unit.token)
        if applied:
            store_rows(db, applied)
        # The cache may follow this commit only if it holds nothing but these checked rows.
        self._cache.pending = applied if opened and fresh else None
        if stale:
            raise Stale()

    def _lock_in(self, writer: OptimisticWriter) -> GroupedWriter:
        """Move an optimistic write under the lock: the turn's writes, then its own, into the group transaction."""
        unit = writer.unit
        self._settle(unit)  # stores its request's finished writes too
        direct = GroupedWriter(self._db, None)
        direct.pending = writer.pending
        self._active = direct
        return direct

    def _open_group(self) -> None:
        self._lock.acquire()  # held until the commit: other threads wait for it
        try:
            self._end_reading()
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
        self._cache.pending = None  # until _settle says what the group holds
        self._announce()

    def _close_group(self) -> None:
        """Commit now (always safe: the answers still wait for the server's end of turn, HttpServer.end_turn)."""
        if not self._group_open:
            return
        self._group_open = False
        self._group_writes = 0
        try:
            if self._db.in_transaction:
                self._seq.begin()
                try:
                    self._db.execute("COMMIT")
                except BaseException:
                    self._group_lost = True
                    self._cache.clear()
                    if self._db.in_transaction:
                        self._db.execute("ROLLBACK")
                    raise
                self._seq.end()
                self._cache.committed(self._seq.read())
            else:
                self._cache.clear()  # SQLite rolled the group back
        finally:
            self._release_turn()
            self._lock.release()

    def _abort_group(self) -> None:
        """Something failed mid-commit: roll back what is open; no held answer may go out."""
        self._group_lost = True
        self._cache.clear()
        if not self._group_open:
            return
        self._group_open = False
        self._group_writes = 0
        try:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
        finally:
            self._release_turn()
            self._lock.release()

    def _end_grouped(self, writer: GroupedWriter, succeeded: bool) -> None:
        """Store a finished write's rows, or undo what it stored; then commit if it must."""
        self._cache.pending = None  # the group holds more than a turn's checked rows
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

    def _undo(self, writer: GroupedWriter) -> None:
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
            active.flush()  # type: ignore[union-attr]  # an optimistic one was locked in first

    # transactions

    @contextmanager
    def snapshot(self) -> Iterator[ReadView]:
        with self._lock:
            self._settle_for_read()
            if self._group_open:
                # Only the server's thread gets here while a group is open (it
                # holds the lock); the open transaction already is one state,
                # and the answer waits for its commit.
                yield self._reader
                return
            self._end_reading()
            self._db.execute("BEGIN")
            try:
                yield Reader(self._db)
            finally:
                self._db.execute("COMMIT")

    def write(
        self, transactional: bool = False, exclusive: bool = False
    ) -> AbstractContextManager[WriteTxn]:
        if not transactional and not exclusive and self._group_thread == threading.get_ident():
            active = self._active
            if not self._group_open and not self._committing and active is None:
                token = self._token()
                if token is not None:
                    return OptimisticWrite(self, token)
            elif type(active) is OptimisticWriter:
                active.lock_in()  # a write nested in a write runs under the lock
            return GroupedWrite(self)
        return self._own_write(transactional, exclusive)

    @contextmanager
    def _own_write(self, transactional: bool, exclusive: bool) -> Iterator[WriteTxn]:
        """A write in its own transaction (off the server's thread, a transaction, a backfill)."""
        with self._lock:
            if self._group_thread is not None and self._group_thread == threading.get_ident():
                self._settle_for_read()
                self._close_group()
            self._end_reading()
            self._take_turn()
            try:
                self._db.execute("BEGIN IMMEDIATE")
                writer = Writer(self._db)
                try:
                    yield writer
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
                self._seq.begin()
                self._db.execute("COMMIT")
                self._seq.end()
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
            self._end_reading()
            if self._checkpointer is not None:
                self._checkpointer.close()
                self._checkpointer = None
            self._db.close()
            self._generation.close()
            self._seq.close()
            if self._turn_fd is not None:
                os.close(self._turn_fd)
                self._turn_fd = None


def open_store(data_dir: Path | None, sync: str = "normal") -> Store:
    """Open (creating if needed) the store kept in data_dir, or a memory store."""
    if data_dir is None:
        from .memory import MemoryStore

        return MemoryStore()
    data_dir.mkdir(parents=True, exist_ok=True)
    return SQLiteStore(data_dir / "partita.sqlite3", sync=sync)
