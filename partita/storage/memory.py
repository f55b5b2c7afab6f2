"""In-memory backend for `--in-memory`: a sorted dict, no SQL.

`--in-memory` keeps nothing and serves one process, so it needs none of
SQLite's machinery (statements, pages, a lock file); a sorted dictionary
gives point reads at dict speed and ordered ranges at O(log n). Write
transactions hold the store's lock and keep an undo log, so a transaction
that raises leaves no trace, as the storage contract requires. Range
statistics (counts and weights) walk the range: they serve DescribeTable and
the page-size arithmetic of Query and Scan, which read small ranges or are
rare.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager
from itertools import islice

from sortedcontainers import SortedDict

from .base import DutyLock, LockedStore, ReadView, WriteTxn

_Entry = tuple[bytes, int]


class _Reader(ReadView):
    __slots__ = ("_rows",)

    def __init__(self, rows: SortedDict) -> None:
        self._rows = rows

    def get(self, key: bytes) -> bytes | None:
        entry = self._rows.get(key)
        return None if entry is None else entry[0]

    def get_weighted(self, key: bytes) -> _Entry | None:
        return self._rows.get(key)

    def range(
        self,
        start: bytes,
        end: bytes,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        rows = self._rows
        keys = rows.irange(start, end, inclusive=(True, False), reverse=reverse)
        if limit is not None:
            keys = islice(keys, limit)
        return iter([(key, rows[key][0]) for key in keys])

    def stats(self, start: bytes, end: bytes) -> tuple[int, int]:
        rows = self._rows
        count = weight = 0
        for key in rows.irange(start, end, inclusive=(True, False)):
            count += 1
            weight += rows[key][1]
        return count, weight


class _Writer(_Reader, WriteTxn):
    __slots__ = ("_undo", "bumped")

    def __init__(self, rows: SortedDict) -> None:
        super().__init__(rows)
        self._undo: list[tuple[bytes, _Entry | None]] = []
        self.bumped = False

    def put(self, key: bytes, value: bytes, weight: int = 0) -> None:
        rows = self._rows
        self._undo.append((key, rows.get(key)))
        # A fresh, exactly sized copy: serializers hand back bytes inside a
        # larger allocation (orjson's is 4 KB), which would stay held for as
        # long as the row lives.
        rows[key] = (memoryview(value).tobytes(), weight)

    def delete(self, key: bytes) -> None:
        old = self._rows.pop(key, None)
        if old is not None:
            self._undo.append((key, old))

    def delete_range(self, start: bytes, end: bytes) -> None:
        for key in list(self._rows.irange(start, end, inclusive=(True, False))):
            self.delete(key)

    def bump_generation(self) -> None:
        self.bumped = True

    def rollback(self) -> None:
        rows = self._rows
        for key, old in reversed(self._undo):
            if old is None:
                rows.pop(key, None)
            else:
                rows[key] = old


class _Snapshot:
    """A read view under the store's lock (a class, not a generator: it is on every Query's path)."""

    __slots__ = ("_store",)

    def __init__(self, store: MemoryStore) -> None:
        self._store = store

    def __enter__(self) -> ReadView:
        self._store._lock.acquire()
        return _Reader(self._store._rows)

    def __exit__(self, *exc: object) -> None:
        self._store._lock.release()


class _WriteScope:
    """One write transaction under the store's lock: undone on any exception.

    A class rather than a @contextmanager generator: it is on every write's
    path, where the generator's frames cost more than the write itself.
    """

    __slots__ = ("_store", "_writer")

    def __init__(self, store: MemoryStore) -> None:
        self._store = store

    def __enter__(self) -> WriteTxn:
        store = self._store
        store._lock.acquire()
        self._writer = _Writer(store._rows)
        return self._writer

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        try:
            if kind is not None:
                self._writer.rollback()
            elif self._writer.bumped:
                self._store._generation += 1
        finally:
            self._store._lock.release()


class MemoryStore(LockedStore):
    """A store that lives and dies with the process."""

    def __init__(self) -> None:
        self._rows = SortedDict()
        self._reader = _Reader(self._rows)
        self._lock = threading.RLock()
        self._generation = 0
        self._duties = DutyLock()

    def generation(self) -> int:
        return self._generation

    def duty_lock(self) -> AbstractContextManager[bool]:
        return self._duties.acquire_nowait()

    def snapshot(self) -> AbstractContextManager[ReadView]:
        return _Snapshot(self)

    def write(self, transactional: bool = False, exclusive: bool = False) -> AbstractContextManager[WriteTxn]:
        return _WriteScope(self)

    def close(self) -> None:
        with self._lock:
            self._rows.clear()
