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

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .base import ReadView, Store, WriteTxn

_SCHEMA = "CREATE TABLE IF NOT EXISTS kv (k BLOB PRIMARY KEY, v BLOB NOT NULL, w INTEGER NOT NULL) WITHOUT ROWID"


class _Reader(ReadView):
    __slots__ = ("_db",)

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def get(self, key: bytes) -> bytes | None:
        row = self._db.execute("SELECT v FROM kv WHERE k = ?", (key,)).fetchone()
        return None if row is None else row[0]

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
    __slots__ = ()

    def put(self, key: bytes, value: bytes, weight: int = 0) -> None:
        self._db.execute("INSERT OR REPLACE INTO kv (k, v, w) VALUES (?, ?, ?)", (key, value, weight))

    def delete(self, key: bytes) -> None:
        self._db.execute("DELETE FROM kv WHERE k = ?", (key,))

    def delete_range(self, start: bytes, end: bytes) -> None:
        self._db.execute("DELETE FROM kv WHERE k >= ? AND k < ?", (start, end))


class SQLiteStore(_Reader, Store):
    """A store in one SQLite file (or in memory when path is None)."""

    def __init__(self, path: Path | None) -> None:
        target = ":memory:" if path is None else str(path)
        db = sqlite3.connect(target, isolation_level=None, check_same_thread=False)
        if path is not None:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA busy_timeout=10000")
        db.execute(_SCHEMA)
        super().__init__(db)
        # The server is single-threaded, but background duties and tests may
        # use the store from other threads; one connection needs one user.
        self._lock = threading.RLock()

    def get(self, key: bytes) -> bytes | None:
        with self._lock:
            return super().get(key)

    def range(
        self,
        start: bytes,
        end: bytes,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        with self._lock:
            return super().range(start, end, reverse=reverse, limit=limit)

    def stats(self, start: bytes, end: bytes) -> tuple[int, int]:
        with self._lock:
            return super().stats(start, end)

    @contextmanager
    def snapshot(self) -> Iterator[ReadView]:
        with self._lock:
            self._db.execute("BEGIN")
            try:
                yield _Reader(self._db)
            finally:
                self._db.execute("COMMIT")

    @contextmanager
    def write(self) -> Iterator[WriteTxn]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield _Writer(self._db)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            self._db.close()


def open_store(data_dir: Path | None) -> SQLiteStore:
    """Open (creating if needed) the store kept in data_dir, or in memory."""
    if data_dir is None:
        return SQLiteStore(None)
    data_dir.mkdir(parents=True, exist_ok=True)
    return SQLiteStore(data_dir / "partita.sqlite3")
