"""SQLite backend: the embedded default store.

One table of (key, value, weight) rows in key order (WITHOUT ROWID, so the
primary key is the clustered index). WAL mode with synchronous=NORMAL: a
commit is in the WAL before the call returns, so a killed process loses
nothing it acknowledged (an OS crash may lose the last commits, which is the
documented trade-off of NORMAL). Write transactions use BEGIN IMMEDIATE,
which takes SQLite's single writer lock up front: every write transaction is
serializable, across threads and across worker processes sharing the file.
"""

from __future__ import annotations

import fcntl
import mmap
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .base import DutyLock, LockedStore, ReadView, Store, WriteTxn

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
        self._db.execute("INSERT OR REPLACE INTO kv (k, v, w) VALUES (?, ?, ?)", (key, value, weight))

    def delete(self, key: bytes) -> None:
        self._db.execute("DELETE FROM kv WHERE k = ?", (key,))

    def delete_range(self, start: bytes, end: bytes) -> None:
        self._db.execute("DELETE FROM kv WHERE k >= ? AND k < ?", (start, end))


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


class SQLiteStore(LockedStore):
    """A store in one SQLite file (or in memory when path is None)."""

    def __init__(self, path: Path | None) -> None:
        target = ":memory:" if path is None else str(path)
        db = sqlite3.connect(target, isolation_level=None, check_same_thread=False)
        if path is not None:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA busy_timeout=10000")
        db.execute(_SCHEMA)
        self._db = db
        self._reader = _Reader(db)
        # The server is single-threaded, but background duties and tests may
        # use the store from other threads; one connection needs one user.
        self._lock = threading.RLock()
        self._generation = _Generation(None if path is None else path.with_suffix(".generation"))
        self._turn_fd = None if path is None else os.open(path.with_suffix(".writelock"), os.O_RDWR | os.O_CREAT, 0o644)
        self._duty_path = None if path is None else path.with_suffix(".duties")
        self._duties = DutyLock()

    def generation(self) -> int:
        return self._generation.read()

    @contextmanager
    def snapshot(self) -> Iterator[ReadView]:
        with self._lock:
            self._db.execute("BEGIN")
            try:
                yield _Reader(self._db)
            finally:
                self._db.execute("COMMIT")

    @contextmanager
    def write(self, transactional: bool = False, exclusive: bool = False) -> Iterator[WriteTxn]:
        with self._lock, self._writer_turn():
            self._db.execute("BEGIN IMMEDIATE")
            writer = _Writer(self._db)
            try:
                yield writer
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
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

    @contextmanager
    def _writer_turn(self) -> Iterator[None]:
        """Queue writers of every process on a file lock before SQLite's own.

        SQLite makes a writer that finds the database locked sleep and retry
        (1, 2, 5, 10 ... ms), which with several worker processes turned
        write bursts into 100 ms tails. The kernel wakes a process waiting on
        a file lock the moment it is released, so writers take turns without
        sleeping; BEGIN IMMEDIATE then finds the database free.
        """
        fd = self._turn_fd
        if fd is None:
            yield
            return
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)

    def close(self) -> None:
        with self._lock:
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
