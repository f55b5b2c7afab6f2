"""A store inside a store: every key under one prefix, for one of several namespaces.

One server may serve several AWS regions (`--regions`), each a separate set
of tables, streams and backups (DESIGN.md, "Regions and global tables").
Rather than teach every part of the engine a region, each extra region's
engine runs over a `Namespaced` view of the one store: its keys live under
`MARK | name | 0x00`, so the region sees only its own rows, and the home
region keeps the keys it always had (an existing data directory or database
stays as it was). A few rows are shared by all namespaces and pass through
unprefixed: the caller names them (the server clock, the id sequences), so
ids stay unique across regions and every region reads one clock.

Atomicity is the underlying store's: a `Namespaced` write transaction is the
store's own transaction seen through the prefix, and `within` gives another
namespace's view of a transaction already open, so one commit can span
regions (multi-Region strong consistency writes all replicas at once).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from .base import ReadView, Store, WriteTxn

#: First byte of every namespaced key: above every space the home region uses.
MARK = 0xFE
_MARK = bytes([MARK])


def prefix_of(name: str) -> bytes:
    """The key prefix of namespace `name` (a region name: no NUL byte)."""
    return _MARK + name.encode() + b"\x00"


def inner_key(key: bytes) -> bytes:
    """The key as its namespace sees it (the key itself outside any namespace).

    The PostgreSQL store distributes rows by the table and partition their
    key names; a namespaced key is distributed as its inner key is.
    """
    if key[:1] == _MARK:
        end = key.find(b"\x00", 1)
        if end > 0:
            return key[end + 1:]
    return key


class _View(ReadView):
    __slots__ = ("_base", "_prefix", "_cut", "_shared")

    def __init__(self, base: ReadView, prefix: bytes, shared: frozenset[bytes]) -> None:
        self._base = base
        self._prefix = prefix
        self._cut = len(prefix)
        self._shared = shared

    def _key(self, key: bytes) -> bytes:
        return key if key in self._shared else self._prefix + key

    def get(self, key: bytes) -> bytes | None:
        return self._base.get(self._key(key))

    def get_weighted(self, key: bytes) -> tuple[bytes, int] | None:
        return self._base.get_weighted(self._key(key))

    def range(
        self, start: bytes, end: bytes, *, reverse: bool = False, limit: int | None = None
    ) -> Iterator[tuple[bytes, bytes]]:
        cut = self._cut
        rows = self._base.range(self._prefix + start, self._prefix + end, reverse=reverse, limit=limit)
        return ((key[cut:], value) for key, value in rows)

    def stats(self, start: bytes, end: bytes) -> tuple[int, int]:
        return self._base.stats(self._prefix + start, self._prefix + end)

    def prefetch(self, keys: list[bytes]) -> None:
        self._base.prefetch([self._key(key) for key in keys])


class _Txn(_View, WriteTxn):
    __slots__ = ()
    _base: WriteTxn

    def put(self, key: bytes, value: bytes, weight: int = 0) -> None:
        self._base.put(self._key(key), value, weight)

    def delete(self, key: bytes) -> None:
        self._base.delete(self._key(key))

    def delete_range(self, start: bytes, end: bytes) -> None:
        self._base.delete_range(self._prefix + start, self._prefix + end)

    def bump_generation(self) -> None:
        self._base.bump_generation()


class Namespaced(Store):
    """The rows of one namespace of `base`; `shared` keys are the base's own, seen by every namespace."""

    def __init__(self, base: Store, name: str, shared: frozenset[bytes] = frozenset()) -> None:
        self.base = base
        self.name = name
        self._prefix = prefix_of(name)
        self._shared = shared
        self._view = _View(base, self._prefix, shared)
        self._eventual: Store | None = None

    def get(self, key: bytes) -> bytes | None:
        return self._view.get(key)

    def get_weighted(self, key: bytes) -> tuple[bytes, int] | None:
        return self._view.get_weighted(key)

    def range(
        self, start: bytes, end: bytes, *, reverse: bool = False, limit: int | None = None
    ) -> Iterator[tuple[bytes, bytes]]:
        return self._view.range(start, end, reverse=reverse, limit=limit)

    def stats(self, start: bytes, end: bytes) -> tuple[int, int]:
        return self._view.stats(start, end)

    @property
    def eventual(self) -> Store:
        base = self.base.eventual
        if base is self.base:
            return self
        if self._eventual is None:
            self._eventual = Namespaced(base, self.name, self._shared)
        return self._eventual

    @contextmanager
    def _snapshot(self) -> Iterator[ReadView]:
        with self.base.snapshot() as view:
            yield _View(view, self._prefix, self._shared)

    def snapshot(self) -> AbstractContextManager[ReadView]:
        return self._snapshot()

    @contextmanager
    def _write(self, transactional: bool, exclusive: bool) -> Iterator[WriteTxn]:
        with self.base.write(transactional, exclusive) as txn:
            yield _Txn(txn, self._prefix, self._shared)

    def write(self, transactional: bool = False, exclusive: bool = False) -> AbstractContextManager[WriteTxn]:
        return self._write(transactional, exclusive)

    def within(self, txn: WriteTxn) -> WriteTxn:
        """This namespace's view of a transaction of the base store (or of any namespace of it)."""
        if isinstance(txn, _Txn):
            txn = txn._base
        return _Txn(txn, self._prefix, self._shared)

    def generation(self) -> int:
        return self.base.generation()

    def serialized(self) -> AbstractContextManager[Any]:
        return self.base.serialized()

    def duty_lock(self) -> AbstractContextManager[bool]:
        return self.base.duty_lock()

    def close(self) -> None:
        """The base store belongs to the home region's engine, which closes it."""


def within(store: Store, txn: WriteTxn) -> WriteTxn:
    """`store`'s view of a transaction opened on any namespace of the same base store."""
    if isinstance(store, Namespaced):
        return store.within(txn)
    return txn._base if isinstance(txn, _Txn) else txn
