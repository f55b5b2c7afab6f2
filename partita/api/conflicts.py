"""Running a request again when the store could not serialize it (PostgreSQL only).

A `Conflict` means the store rolled the request's transaction back and
wrote nothing, so the request can run again from the start: it re-reads the
catalog and the items and decides anew. DynamoDB never shows such internal
races to the caller, so neither does Partita: a plain write is retried here
with a short jittered backoff. What DynamoDB does show is kept:
TransactWriteItems turns its own conflicts into TransactionCanceledException
(engine/transactions.py), and a plain write that meets an item a running
transaction holds fails with TransactionConflictException.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

from ..errors import ServiceUnavailable, TransactionConflictException
from ..storage.base import Conflict, ItemInTransaction, Unavailable

#: Runs of one request before its conflict is reported (each a rolled-back transaction).
ATTEMPTS = 16
#: The backoff's first and largest bound, in seconds.
_FIRST_BACKOFF = 0.001
_MAX_BACKOFF = 0.05

#: DynamoDB's message for both the exception and the TransactionConflict reason (the API
#: reference lists "Transaction is ongoing for the item." with a full stop; SDK users and
#: emulators record the wire text without it).
ONGOING = "Transaction is ongoing for the item"
UNAVAILABLE = "DynamoDB is currently unavailable. (This should be a temporary state.)"


def run(handler: Callable[[Any, dict[str, Any]], dict[str, Any]], engine: Any, request: dict[str, Any]) -> dict[str, Any]:
    bound = _FIRST_BACKOFF
    for attempt in range(ATTEMPTS):
        try:
            return handler(engine, request)
        except ItemInTransaction:
            raise TransactionConflictException(ONGOING) from None
        except Conflict:
            if attempt == ATTEMPTS - 1:
                raise TransactionConflictException(ONGOING) from None
            time.sleep(random.uniform(0, bound))
            bound = min(bound * 2, _MAX_BACKOFF)
        except Unavailable:
            raise ServiceUnavailable(UNAVAILABLE) from None
    raise AssertionError("unreachable")
