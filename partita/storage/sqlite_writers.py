"""The SQLite store's transactions: plain readers and writers, and the two kinds of grouped write.

Group commit (see storage/sqlite.py) has two modes on the server's thread.
Optimistic, the default: a write runs with no lock at all, reading the
committed state (WAL readers take no lock; one read transaction serves the
turn's writes, as a statement outside one would open and close its own) and
keeping its rows in Python (`OptimisticWriter`); it records every row it
read and what it saw. At the
end of the event-loop turn the store takes the write lock, checks that
every row the turn's writes read is still what they saw, stores their rows
and commits: the lock is held for that SQLite work only, so a second worker
process parses, validates and answers its own requests meanwhile instead of
waiting for the whole turn of the first. A write whose reads changed is run
again by the server under the lock (its answer, still held, is replaced).
Locked: once the turn's group transaction is open (a read needed the turn's
writes, a range read inside a write, a catalog change, a transaction), the
rest of the turn's writes run inside it (`GroupedWriter`), each undoable on
its own, as they always did.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from typing import Protocol

from .base import ReadView, WriteTxn
from .sqlite_cache import Entry, RowCache


class WriterHost(Protocol):
    """What the writers use of the store that runs them (SQLiteStore): its connection, lock and group state.

    Named here as a protocol, not imported: the store imports its writers, so
    the writers spell out the part of the store they share with it instead.
    """

    _db: sqlite3.Connection
    _lock: threading.RLock
    _group_open: bool
    _reading: bool
    _overlay: dict[bytes, Entry]
    _cache: RowCache
    _active: GroupedWriter | OptimisticWriter | None

    def _open_group(self) -> None: ...

    def _end_grouped(self, writer: GroupedWriter, succeeded: bool) -> None: ...

    def _begin_reading(self) -> None: ...

    def _lock_in(self, writer: OptimisticWriter) -> GroupedWriter: ...

    def _optimistic_writer(self, token: object) -> OptimisticWriter: ...

GET = "SELECT v, w FROM kv WHERE k = ?"
DELETE = "DELETE FROM kv WHERE k = ?"

PUT = "INSERT INTO kv (k, v, w) VALUES (?, ?, ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v, w = excluded.w"
"""An upsert, not INSERT OR REPLACE: REPLACE deletes the old row and inserts
the new one, and on a WITHOUT ROWID table the delete and the insert each
rebalance the leaf page, dirtying its siblings. Measured on the bench's
100-byte items in 10k rows, an upsert costs ~5 us of CPU where REPLACE cost
~14 us, nearly all of it in more pages written to the WAL at commit."""

MAX_PREFETCH = 100  # a BatchWriteItem has at most 25 requests
PREFETCH: dict[int, str] = {}  # the IN (...) statement by its number of keys

class Reader(ReadView):
    __slots__ = ("_db",)

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def get(self, key: bytes) -> bytes | None:
        row = self._db.execute("SELECT v FROM kv WHERE k = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def get_weighted(self, key: bytes) -> tuple[bytes, int] | None:
        return self._db.execute(GET, (key,)).fetchone()

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


class Writer(Reader, WriteTxn):
    __slots__ = ("bumped",)

    def __init__(self, db: sqlite3.Connection) -> None:
        super().__init__(db)
        self.bumped = False

    def bump_generation(self) -> None:
        self.bumped = True

    def put(self, key: bytes, value: bytes, weight: int = 0) -> None:
        self._db.execute(PUT, (key, value, weight))

    def delete(self, key: bytes) -> None:
        self._db.execute("DELETE FROM kv WHERE k = ?", (key,))

    def delete_range(self, start: bytes, end: bytes) -> None:
        self._db.execute("DELETE FROM kv WHERE k >= ? AND k < ?", (start, end))


class GroupedWriter(Writer):
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

    def __init__(self, db: sqlite3.Connection, outer: GroupedWriter | None) -> None:
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
        if len(keys) > MAX_PREFETCH:
            return
        found = {k: (v, w) for k, v, w in self._db.execute(prefetch_sql(len(keys)), keys)}
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
        return self._db.execute(GET, (key,)).fetchone()

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
                self._db.execute(PUT, (key, *entry))
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
            self._db.executemany(PUT, puts)


class GroupedWrite:
    """The context of one grouped write (a class, not a generator: it runs on every write)."""

    __slots__ = ("_store", "_writer")

    def __init__(self, store: WriterHost) -> None:
        self._store = store

    def __enter__(self) -> GroupedWriter:
        store = self._store
        store._lock.acquire()
        try:
            if not store._group_open:
                store._open_group()
            outer = store._active
            if outer is not None:
                outer.flush()  # a write nested in a write (same thread): the outer one's rows go first
            self._writer = writer = GroupedWriter(store._db, outer)
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


def prefetch_sql(count: int) -> str:
    sql = PREFETCH.get(count)
    if sql is None:
        sql = PREFETCH[count] = "SELECT k, v, w FROM kv WHERE k IN (" + ", ".join("?" * count) + ")"
    return sql


def store_rows(db: sqlite3.Connection, rows: dict[bytes, Entry]) -> None:
    """Write rows (None: delete) with as few statements as possible."""
    if len(rows) == 1:
        for key, entry in rows.items():
            if entry is None:
                db.execute(DELETE, (key,))
            else:
                db.execute(PUT, (key, *entry))
        return
    puts = [(key, *entry) for key, entry in rows.items() if entry is not None]
    if len(puts) < len(rows):
        db.executemany(DELETE, [(key,) for key, entry in rows.items() if entry is None])
    if puts:
        db.executemany(PUT, puts)


def unchanged(db: sqlite3.Connection, reads: dict[bytes, Entry], applied: dict[bytes, Entry]) -> bool:
    """Whether every row read still holds what was seen (`applied`: rows of this commit not yet stored)."""
    missing: list[bytes] = []
    for key, seen in reads.items():
        if key in applied:
            if applied[key] != seen:
                return False
        else:
            missing.append(key)
    if not missing:
        return True
    if len(missing) == 1:
        key = missing[0]
        return db.execute(GET, (key,)).fetchone() == reads[key]
    for at in range(0, len(missing), MAX_PREFETCH):
        chunk = missing[at:at + MAX_PREFETCH]
        found = {k: (v, w) for k, v, w in db.execute(prefetch_sql(len(chunk)), chunk)}
        for key in chunk:
            if found.get(key) != reads[key]:
                return False
    return True


class Unit:
    """The optimistic writes of one request: the rows they read (and what they saw) and the rows they leave.

    `token` names the request to the server, which runs it again if a row
    it read changed before the commit.
    """

    __slots__ = ("token", "reads", "rows")

    def __init__(self, token: object) -> None:
        self.token = token
        #: What the request saw of each row it read from outside its own writes.
        self.reads: dict[bytes, Entry] = {}
        #: What its finished writes leave (last write wins).
        self.rows: dict[bytes, Entry] = {}


class OptimisticWriter(WriteTxn):
    """One write run without the lock: reads the committed state (and the turn's earlier writes), keeps its rows.

    Point reads are recorded in the request's `Unit` and checked at commit;
    a row the cache holds (sqlite_cache.py) is read from it, not from SQLite.
    What cannot be checked that way (a range read or range delete, a
    catalog change) moves the write under the lock first (`lock_in`): the
    store brings the turn's writes into the group transaction and checks
    this one's reads, and from then on the write goes straight to SQLite
    through a `GroupedWriter`.
    """

    __slots__ = ("_store", "_db", "unit", "pending", "fetched", "direct")

    def __init__(self, store: WriterHost, unit: Unit) -> None:
        self._store = store
        self._db = store._db
        self.unit = unit
        self.pending: dict[bytes, Entry] = {}
        #: Rows read ahead by `prefetch` (committed state; the turn's rows win).
        self.fetched: dict[bytes, Entry] | None = None
        #: Set once the write runs under the lock: every call goes there.
        self.direct: GroupedWriter | None = None

    def lock_in(self) -> GroupedWriter:
        direct = self.direct
        if direct is None:
            direct = self.direct = self._store._lock_in(self)
        return direct

    def prefetch(self, keys: list[bytes]) -> None:
        if self.direct is not None:
            self.direct.prefetch(keys)
            return
        if len(keys) > MAX_PREFETCH:
            return
        store = self._store
        cached = store._cache.rows
        keys = [key for key in keys if key not in cached]
        if not keys:
            return
        if not store._reading:
            store._begin_reading()
        found = {k: (v, w) for k, v, w in self._db.execute(prefetch_sql(len(keys)), keys)}
        self.fetched = {key: found.get(key) for key in keys}

    def get(self, key: bytes) -> bytes | None:
        stored = self.get_weighted(key)
        return None if stored is None else stored[0]

    def get_weighted(self, key: bytes) -> tuple[bytes, int] | None:
        if self.direct is not None:
            return self.direct.get_weighted(key)
        pending = self.pending
        if key in pending:
            return pending[key]
        unit = self.unit
        if key in unit.rows:
            return unit.rows[key]
        reads = unit.reads
        if key in reads:
            return reads[key]
        store = self._store
        overlay = store._overlay
        if key in overlay:
            seen = overlay[key]
        else:
            cache = store._cache
            cached = cache.rows
            if key in cached:
                seen = cached[key]
            else:
                fetched = self.fetched
                if fetched is not None and key in fetched:
                    seen = fetched[key]
                else:
                    if not store._reading:
                        store._begin_reading()
                    seen = self._db.execute(GET, (key,)).fetchone()
                cache.remember(key, seen)
        reads[key] = seen
        return seen

    def range(
        self,
        start: bytes,
        end: bytes,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        return self.lock_in().range(start, end, reverse=reverse, limit=limit)

    def stats(self, start: bytes, end: bytes) -> tuple[int, int]:
        return self.lock_in().stats(start, end)

    def put(self, key: bytes, value: bytes, weight: int = 0) -> None:
        if self.direct is not None:
            self.direct.put(key, value, weight)
        else:
            self.pending[key] = (value, weight)

    def delete(self, key: bytes) -> None:
        if self.direct is not None:
            self.direct.delete(key)
        else:
            self.pending[key] = None

    def delete_range(self, start: bytes, end: bytes) -> None:
        self.lock_in().delete_range(start, end)

    def bump_generation(self) -> None:
        # Other processes re-read the catalog when the generation moves after
        # the commit: the change must be in the group transaction by then.
        self.lock_in().bump_generation()


class OptimisticWrite:
    """The context of one optimistic write (a class, not a generator: it runs on every write)."""

    __slots__ = ("_store", "_token", "_writer")

    def __init__(self, store: WriterHost, token: object) -> None:
        self._store = store
        self._token = token

    def __enter__(self) -> OptimisticWriter:
        store = self._store
        store._lock.acquire()
        try:
            self._writer = writer = store._optimistic_writer(self._token)
        except BaseException:
            store._lock.release()
            raise
        store._active = writer
        return writer

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: object) -> None:
        store = self._store
        writer = self._writer
        try:
            store._active = None
            if writer.direct is not None:
                store._end_grouped(writer.direct, kind is None)
            elif kind is None and writer.pending:
                # Finished: its rows join its request's and the turn's. A failed
                # write leaves none, but its reads stay checked (its answer used them).
                writer.unit.rows.update(writer.pending)
                store._overlay.update(writer.pending)
        finally:
            store._lock.release()
