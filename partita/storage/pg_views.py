"""The PostgreSQL store's views: reads and write transactions over one `Wire` (pg_wire.py).

`Reader` reads rows (outside a transaction or in a snapshot), `Writer` is a
write transaction's view; postgres.py borrows the connection, begins and
ends the transaction. Every statement runs under `MAPPED`, which turns
PostgreSQL's failures into the storage contract's exceptions. The round
trips and claims are explained in postgres.py's docstring.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg_pool import PoolTimeout

from .base import Conflict, ItemInTransaction, ReadView, Unavailable, Unordered, WriteTxn
from .pg_keys import group_of, item_lock, one_group
from .pg_statements import (
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

#: The channel a catalog commit NOTIFYs with its new generation (postgres.py listens).
CHANNEL = "partita_generation"

_CONFLICTS = (pg_errors.SerializationFailure, pg_errors.DeadlockDetected)


class Mapped:
    """PostgreSQL's failures as the storage contract's exceptions: `with MAPPED:`.

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
            # The serializable check's own failure: its detail ("Reason code: ...") is never translated.
            if (error.diag.message_detail or "").startswith("Reason code:"):
                raise Unordered(str(error)) from error
            raise Conflict(str(error)) from error
        if isinstance(error, (psycopg.OperationalError, PoolTimeout)):
            raise Unavailable(str(error)) from error
        return False


MAPPED = Mapped()


def _number(value: int | None) -> bytes | None:
    """An integer parameter (sent as text; PostgreSQL reads it as the column's type)."""
    return None if value is None else b"%d" % value


class Reader(ReadView):
    __slots__ = ("_wire", "_span", "_fetched")

    def __init__(self, wire: Wire) -> None:
        self._wire = wire
        #: The last range read: (lowest key, just past the highest key, its rows with their weights).
        self._span: tuple[bytes, bytes, list[tuple[bytes, bytes, int]]] | None = None
        #: Rows `prefetch` read (None: absent), served to the point reads that follow.
        self._fetched: dict[bytes, tuple[bytes, int] | None] | None = None

    def _ready(self) -> None:
        """Called between sending a read and waiting for it (a writer checks its generation there)."""

    def get(self, key: bytes) -> bytes | None:
        row = self.get_weighted(key)
        return None if row is None else row[0]

    def get_weighted(self, key: bytes) -> tuple[bytes, int] | None:
        fetched = self._fetched
        if fetched is not None and key in fetched:
            return fetched[key]
        tid, ph = group_of(key)
        wire = self._wire
        with MAPPED:
            sent = wire.send(S_GET, (b"%d" % tid, b"%d" % ph, key))
            self._ready()
            result = wire.rows(sent)
        if not result.ntuples:
            return None
        return result.get_value(0, 0), int8(result.get_value(0, 1))  # type: ignore[return-value, arg-type]

    def get_many(self, keys: list[bytes]) -> dict[bytes, tuple[bytes, int] | None]:
        """Several rows with their weights, in one round trip (the statements travel together)."""
        wire = self._wire
        with MAPPED:
            sent = []
            for key in keys:
                tid, ph = group_of(key)
                sent.append((key, wire.send(S_GET, (b"%d" % tid, b"%d" % ph, key))))
            self._ready()
            found: dict[bytes, tuple[bytes, int] | None] = {}
            for key, number in sent:
                result = wire.rows(number)
                found[key] = (result.get_value(0, 0), int8(result.get_value(0, 1))) if result.ntuples else None  # type: ignore[assignment, arg-type]
        return found

    def prefetch(self, keys: list[bytes]) -> None:
        """A batch's rows in one round trip rather than one each (BatchGetItem, BatchWriteItem, transactions)."""
        self._fetched = self.get_many(keys)

    def range(
        self,
        start: bytes,
        end: bytes,
        *,
        reverse: bool = False,
        limit: int | None = None,
    ) -> Iterator[tuple[bytes, bytes]]:
        order = "DESC" if reverse else "ASC"
        group = one_group(start, end)
        wire = self._wire
        with MAPPED:
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
        group = one_group(start, end)
        wire = self._wire
        with MAPPED:
            if group is not None:
                sent = wire.send(S_GROUP_STATS, (b"%d" % group[0], b"%d" % group[1], start, end))
            else:
                sent = wire.send(S_STATS, (start, end))
            self._ready()
            result = wire.rows(sent)
        return int8(result.get_value(0, 0)), int8(result.get_value(0, 1))  # type: ignore[arg-type]


class Writer(Reader, WriteTxn):
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
        with MAPPED:
            result = wire.rows(wire.send(S_GET_WITH_GENERATION, (b"%d" % tid, b"%d" % ph, key)))
        self._unchecked = False
        self._check(int8(result.get_value(0, 0)))  # type: ignore[arg-type]
        value = result.get_value(0, 1)
        return None if value is None else (value, int8(result.get_value(0, 2)))  # type: ignore[arg-type]

    def _claim(self, key: bytes) -> None:
        """Mark an item as this transaction's until it ends (TransactionConflict, DESIGN.md)."""
        lock = item_lock(key)
        if lock is None or lock in self._locked:
            return
        self._wire.send(S_CLAIM if self._transactional else S_TRY_CLAIM, (b"%d" % lock,))
        self._locked.add(lock)

    def put(self, key: bytes, value: bytes, weight: int = 0) -> None:
        tid, ph = group_of(key)
        self._span = None
        if self._fetched is not None:
            self._fetched.pop(key, None)  # read again: the transaction sees its own write
        lock = None if self._transactional else item_lock(key)
        with MAPPED:
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
        if self._fetched is not None:
            self._fetched.pop(key, None)
        with MAPPED:
            self._claim(key)
            self._wire.send(S_DELETE, (b"%d" % tid, b"%d" % ph, key))

    def delete_range(self, start: bytes, end: bytes) -> None:
        group = one_group(start, end)
        self._span = None
        self._fetched = None
        with MAPPED:
            if group is not None:
                self._wire.send(S_DELETE_GROUP_RANGE, (b"%d" % group[0], b"%d" % group[1], start, end))
            else:
                self._wire.send(S_DELETE_RANGE, (start, end))

    def bump_generation(self) -> None:
        if self.generation is not None:
            return
        wire = self._wire
        with MAPPED:
            self._ready()  # before the bump: the check compares the value other servers committed
            result = wire.rows(wire.send(S_BUMP))
            self.generation = int8(result.get_value(0, 0))  # type: ignore[arg-type]
            wire.send(S_NOTIFY, (CHANNEL.encode(), b"%d" % self.generation))
