"""Running a request again when the store could not serialize it (PostgreSQL; SQLite's optimistic writes).

A `Conflict` means the store rolled the request's transaction back and
wrote nothing, so the request can run again from the start: it re-reads the
catalog and the items and decides anew. DynamoDB never shows such internal
races to the caller, so neither does Partita: a plain write is retried here
with a short jittered backoff. What DynamoDB does show is kept:
TransactWriteItems turns a conflict over its items into TransactionCanceledException
(engine/items/transactions.py; a cycle through no item, `Unordered`, is run
again here, and its cancellation is the answer only when every run met one),
and a plain write that meets an item a running transaction holds fails with
TransactionConflictException.

BatchWriteItem is not atomic on DynamoDB, so its batch transaction (one
commit for up to 25 items: what makes a batch fast) is only the first try.
When it keeps failing to serialize, or meets an item a transaction holds,
each item is written in a transaction of its own, and an item that still
cannot be written goes back in UnprocessedItems (`write_batch`).

Every request runs on the server's event-loop thread (protocol/server.py
answers synchronously), so a backoff pause holds every connection of the
worker: each pause is at most `_MAX_BACKOFF` and one request's pauses
together at most `_BUDGET`.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..engine.capacity import Consumed
from ..errors import DynamoDBError, ServiceUnavailable, TransactionConflictException
from ..storage.base import CatalogMoved, Conflict, ItemInTransaction, Stale, Unavailable

if TYPE_CHECKING:  # BatchWriteItem's (api/batch.py imports them): not every request's
    from ..engine.items.actions import ItemAction
    from ..engine.items.batch import BatchOps, WriteOutcome

#: Runs of one request before its conflict is reported (each a rolled-back transaction).
ATTEMPTS = 16
#: Runs of a BatchWriteItem's whole batch transaction before its items are written one by one.
BATCH_ATTEMPTS = 3
#: Runs of one item's own transaction (once another item of the batch is written) before it is unprocessed.
ITEM_ATTEMPTS = 4
#: The backoff's first and largest bound, and the most one request sleeps in all, in seconds.
_FIRST_BACKOFF = 0.001
_MAX_BACKOFF = 0.01
_BUDGET = 0.1

#: DynamoDB's message for both the exception and the TransactionConflict reason (the API
#: reference lists "Transaction is ongoing for the item." with a full stop; SDK users and
#: emulators record the wire text without it).
ONGOING = "Transaction is ongoing for the item"
UNAVAILABLE = "DynamoDB is currently unavailable. (This should be a temporary state.)"


class StillConflicting(TransactionConflictException):
    """Why a batch's item is unprocessed when its own transaction kept failing to serialize.

    An internal processing failure, in the BatchWriteItem reference's terms:
    such items come back in UnprocessedItems even when no item of the batch
    was processed, since only throughput (or, here, an item a transaction
    holds, as a PutItem of it would) fails a batch as a whole.
    """


class Backoff:
    """Jittered, doubling pauses of one request, bounded each and in total (they block the event loop)."""

    __slots__ = ("_bound", "_left")

    def __init__(self) -> None:
        self._bound = _FIRST_BACKOFF
        self._left = _BUDGET

    def pause(self) -> bool:
        """Sleep a little before the next run; False (and no sleep) once the request's budget is spent."""
        if self._left <= 0:
            return False
        pause = min(random.uniform(0, self._bound), self._left)
        self._left -= pause
        self._bound = min(self._bound * 2, _MAX_BACKOFF)
        time.sleep(pause)
        return True


def run(handler: Callable[[Any, dict[str, Any]], dict[str, Any]], engine: Any, request: dict[str, Any]) -> dict[str, Any]:
    backoff = None  # made by the first conflict: most requests never meet one
    stats = engine.stats
    for attempt in range(ATTEMPTS):
        kept = stats.kept()  # a rolled-back run's metric counts (stream records) are dropped
        try:
            return handler(engine, request)
        except ItemInTransaction:
            raise TransactionConflictException(ONGOING) from None
        except Stale:
            stats.forget(kept)
            if attempt == ATTEMPTS - 1:
                raise TransactionConflictException(ONGOING) from None
        except Conflict as error:
            stats.forget(kept)
            if attempt == ATTEMPTS - 1:
                raise (error.answer or TransactionConflictException(ONGOING)) from None
            if backoff is None:
                backoff = Backoff()
            backoff.pause()
        except Unavailable:
            raise ServiceUnavailable(UNAVAILABLE) from None
    raise AssertionError("unreachable")


def write_batch(batch: BatchOps, actions: list[ItemAction]) -> list[WriteOutcome]:
    """BatchWriteItem's writes: the whole batch in one transaction, else item by item.

    An outcome whose `throttled` is set was not written (UnprocessedItems).
    CatalogMoved before anything is written goes up to `run`, which runs the
    request again against the fresh catalog; the actions, prepared against
    the old one, are never retried once it moved.
    """
    backoff = Backoff()
    for attempt in range(BATCH_ATTEMPTS):
        try:
            return batch.write(actions)
        except ItemInTransaction:
            break  # held until that transaction ends: the other items need not wait for it
        except CatalogMoved:
            raise
        except Stale:
            continue  # now under the lock: it cannot go stale again
        except Conflict:
            if attempt < BATCH_ATTEMPTS - 1:
                backoff.pause()
    return _one_by_one(batch, actions, backoff, BATCH_ATTEMPTS)


def _one_by_one(batch: BatchOps, actions: list[ItemAction], backoff: Backoff, runs: int) -> list[WriteOutcome]:
    """Each item in its own transaction (its index entries and stream record with it).

    While nothing is written yet the current item may use the request's
    remaining runs (up to ATTEMPTS, as a plain write), so a batch fails as a
    whole no more often than a PutItem would; once something is written an
    item gets ITEM_ATTEMPTS and is then left unprocessed: the client's
    retry of UnprocessedItems waits off this server's event loop.
    """
    outcomes: list[WriteOutcome] = []
    written = False
    for position, action in enumerate(actions):
        tries = 0
        outcome: WriteOutcome | None = None
        while outcome is None:
            tries += 1
            runs += 1
            try:
                outcome = batch.write([action])[0]
            except ItemInTransaction:
                outcome = _unprocessed(action, TransactionConflictException(ONGOING))
            except (CatalogMoved, Unavailable):
                if not written:
                    raise
                # Written items stay written; the rest is decided anew when the client sends it again.
                outcomes.extend(_unprocessed(rest, TransactionConflictException(ONGOING)) for rest in actions[position:])
                return outcomes
            except Conflict:
                spent = runs >= ATTEMPTS if not written else tries >= ITEM_ATTEMPTS
                if spent or (not backoff.pause() and written):
                    outcome = _unprocessed(action, StillConflicting(ONGOING))
            except DynamoDBError as error:
                if not written:
                    raise  # nothing written: the request fails as it would have in one transaction
                outcome = _unprocessed(action, error)  # never an error answer after a partial write
        written = written or outcome.throttled is None
        outcomes.append(outcome)
    return outcomes


def _unprocessed(action: ItemAction, why: DynamoDBError) -> WriteOutcome:
    from ..engine.items.batch import WriteOutcome

    return WriteOutcome(action, Consumed(action.table.name), None, why)
