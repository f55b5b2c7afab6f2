"""The storage contract: an ordered, transactional bytes -> bytes store.

Storage knows nothing of DynamoDB. The engine encodes keys so that byte order
is DynamoDB's order, and asks only for point reads, ordered range reads and
atomic write sets. Each row also carries an integer `weight` (the engine puts
the item's DynamoDB size there) so that counts and sizes of a key range can be
aggregated by the backend instead of by reading every row.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any


class Conflict(Exception):
    """The backend could not serialize this transaction against a concurrent one; nothing was written.

    Only a backend with real concurrency (PostgreSQL) raises it. The whole
    request is safe to run again: the API front door retries it.
    """

    #: What the front door answers when every run of the request met a conflict (None:
    #: TransactionConflictException); a TransactWriteItems sets its cancellation here.
    answer: Exception | None = None


class Unordered(Conflict):
    """PostgreSQL's serializable check found a cycle of reads and writes among concurrent transactions.

    Its predicate locks cover index pages and whole ranges, so the
    transactions may share no item (a request and a background index job,
    two tables' writes): not a conflict DynamoDB would show. Even a
    TransactWriteItems is run again for it, where a conflict over an item
    (two writers updating one row, a deadlock) cancels it.
    """


class Stale(Conflict):
    """A row this request read changed before its write could commit; nothing was written.

    Raised by the SQLite store's optimistic writes, which are then under the
    write lock: the request can run again at once, without a pause.
    """


class CatalogMoved(Conflict):
    """Another server changed the catalog since this one cached it: run the request again, as it is."""


class ItemInTransaction(Conflict):
    """A plain write met an item that a running TransactWriteItems holds (DynamoDB's TransactionConflictException)."""


class Unavailable(Exception):
    """The backend cannot be reached (a restarting database); the request may be retried later."""


class ReadView(ABC):
    """Point and range reads; inside a transaction they see one snapshot."""

    @abstractmethod
    def get(self, key: bytes) -> bytes | None: ...

    @abstractmethod
    def get_weighted(self, key: bytes) -> tuple[bytes, int] | None:
        """The value and the weight stored with it (callers keep sizes there to avoid recomputing them)."""

    @abstractmethod
    def range(
        self,
        start: bytes,
        end: bytes,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        """Rows with start <= key < end, ascending (or descending if reverse)."""

    @abstractmethod
    def stats(self, start: bytes, end: bytes) -> tuple[int, int]:
        """(row count, sum of weights) of the rows with start <= key < end."""

    def prefetch(self, keys: list[bytes]) -> None:  # noqa: B027 -- a hint: doing nothing is a right answer
        """A hint: these rows are about to be read (a batch). A backend may read them in one go."""


class WriteTxn(ReadView):
    """A serializable read-write transaction; commits when its block exits cleanly."""

    @abstractmethod
    def put(self, key: bytes, value: bytes, weight: int = 0) -> None: ...

    @abstractmethod
    def delete(self, key: bytes) -> None: ...

    @abstractmethod
    def delete_range(self, start: bytes, end: bytes) -> None: ...

    @abstractmethod
    def bump_generation(self) -> None:
        """Make `Store.generation()` change for every process once this transaction commits."""


class Store(ReadView):
    """A backend. Reads outside a transaction see the latest committed state."""

    @abstractmethod
    def snapshot(self) -> AbstractContextManager[ReadView]:
        """A read-only transaction: several reads that see one state."""

    @property
    def eventual(self) -> Store:
        """Where eventually consistent reads may go (point, range and snapshot reads only).

        The store itself, except for a PostgreSQL store given a streaming
        replica (`--read-replica`): GetItem, Query and Scan without
        ConsistentRead, and every GSI read, are served there; a replica may
        lag the primary, which is what DynamoDB's eventual consistency allows.
        """
        return self

    #: Whether `read_ahead` does anything: the server reads a loop turn's GetItems ahead only then.
    reads_ahead = False

    def read_ahead(self, keys: list[bytes]) -> None:
        """A hint: these rows are about to be read, each by its own request, before any write.

        A store whose every read is a round trip (PostgreSQL) reads them in
        one and serves the point reads that follow from what it read, until
        its next write or `forget_ahead`: a request received before the read
        ahead may be answered as of that moment. The others need nothing.
        """

    def forget_ahead(self) -> None:
        """The rows `read_ahead` read are no longer to be served (the loop turn is over)."""

    @abstractmethod
    def write(self, transactional: bool = False, exclusive: bool = False) -> AbstractContextManager[WriteTxn]:
        """A read-write transaction, serializable against every other writer.

        `transactional` marks a TransactWriteItems: a backend with real
        concurrency makes a plain write that meets one of its items fail
        with ItemInTransaction instead of waiting. `exclusive` marks a
        background batch that reads a wide range (an index backfill): such a
        backend holds other writers off for its length, so that request
        traffic on the range cannot starve it of commits.
        """

    @abstractmethod
    def generation(self) -> int:
        """A number that changes after every commit that called `bump_generation`.

        Cheap enough to read on every request: callers cache what rarely
        changes (the table catalog) and re-read only when it moves.
        """

    def serialized(self) -> AbstractContextManager[Any]:
        """The calling thread's turn at the store, for a run of operations that takes a lock of its own.

        A store shared by threads through one lock (LockedStore) may hold
        it for the server's thread between requests: SQLite's group commit
        keeps it from a write until the event loop's next turn. So a lock
        that the server's thread and a background thread both take around
        store operations (the replicator's turn) must come after the
        store's, on every thread: `with store.serialized(), my_lock:`.
        Taken the other way round, a duty holding its lock waited for the
        store while the server's thread, holding the store, waited for the
        duty's lock. Nothing to take for a store without such a lock.
        """
        return nullcontext()

    @abstractmethod
    def duty_lock(self) -> AbstractContextManager[bool]:
        """Try to become the one process running background duties; yields whether it did.

        Never blocks: a process that does not get it leaves the duty to the
        one that has it.
        """

    @abstractmethod
    def close(self) -> None: ...


class DutyLock:
    """The background-duty lock of a store that only one process uses."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    @contextmanager
    def acquire_nowait(self) -> Iterator[bool]:
        got = self._lock.acquire(blocking=False)
        try:
            yield got
        finally:
            if got:
                self._lock.release()


class LockedStore(Store):
    """A store over one connection (or one dict), shared by threads through one lock.

    The server answers requests on one thread, but background duties (index
    backfills) and tests use the store from others. Point and range reads
    outside a transaction go through `_reader` under the lock; transactions
    take the same lock in the backends' `snapshot` and `write`.
    """

    _lock: threading.RLock
    _reader: ReadView

    def serialized(self) -> AbstractContextManager[Any]:
        return self._lock

    def get(self, key: bytes) -> bytes | None:
        with self._lock:
            return self._reader.get(key)

    def get_weighted(self, key: bytes) -> tuple[bytes, int] | None:
        with self._lock:
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
            return self._reader.range(start, end, reverse=reverse, limit=limit)

    def stats(self, start: bytes, end: bytes) -> tuple[int, int]:
        with self._lock:
            return self._reader.stats(start, end)
