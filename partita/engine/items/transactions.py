"""TransactWriteItems and TransactGetItems: all or nothing, in one store transaction.

A write transaction is one store write transaction (SQLite ``BEGIN
IMMEDIATE``: serializable across threads and worker processes). Inside it
every action is first *resolved* (its item read, its condition checked, an
update applied in memory) and each failure collected as its cancellation
reason; only when every action passed are they all stored, each through
``store_item`` so indexes stay exact. Any failure raises
TransactionCanceledException out of the store transaction, which rolls it
back: nothing of the transaction is written.

Because writers are serialized, two transactions never interleave, so the
conflicts DynamoDB reports as ``TransactionConflict`` (two transactions, or
a transaction and a plain write, touching one item at the same time) cannot
arise here: the second simply runs after the first and sees its result. See
docs/decisions.md.

ClientRequestToken idempotency is kept in the store, in the same commit as
the transaction's writes, so a token survives restarts, is shared by every
worker process, and is recorded exactly when the transaction committed.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import orjson

from ...errors import (
    ConditionalCheckFailedException,
    DynamoDBError,
    ItemCollectionSizeLimitExceededException,
    ValidationException,
)
from ...storage.base import CatalogMoved, Conflict, ReadView, Store, Unordered, WriteTxn
from ..capacity import Consumed, read_units
from ..capacity.charges import read_charge, write_charges
from ..capacity.meter import Charge, Meter
from ..capacity.throttle import ThrottlingException
from ..model.values import MSG_NESTING
from ..time.clock import Clock
from .actions import ItemAction
from .batch import BatchGetResult, KeyRead, read_keys
from .single import resolve, store, write_capacity
from .writes import WriteRules

if TYPE_CHECKING:
    from ..schema_guard.guard import SchemaGuard

Item = dict[str, dict[str, Any]]
Reason = dict[str, Any]

#: The aggregate size of a transaction's items (DynamoDB's limit for reads and writes).
MAX_TRANSACTION_BYTES = 4 * 1024 * 1024
TRANSACTION_TOO_LARGE = (
    "Collection size of items exceeded, which can also be caused by the aggregate size of the "
    "items in the transaction exceeding the 4MB limit"
)
#: A ClientRequestToken is remembered this long after its transaction completed.
TOKEN_WINDOW_MS = 10 * 60 * 1000
#: Expired tokens forgotten per committed token-bearing transaction (keeps the purge cheap).
_PURGE_BATCH = 64

TOKEN_SPACE = b"\x03"
TOKEN_EXPIRY_SPACE = b"\x04"

NO_REASON: Reason = {"Code": "None"}
#: The store cannot tell which item collided, so every action carries the reason.
TRANSACTION_CONFLICT: Reason = {"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"}
_CODES: tuple[tuple[type[DynamoDBError], str], ...] = (
    (ConditionalCheckFailedException, "ConditionalCheckFailed"),
    (ItemCollectionSizeLimitExceededException, "ItemCollectionSizeLimitExceeded"),
    (ValidationException, "ValidationError"),
)


class TransactionCanceledException(DynamoDBError):
    """The whole transaction was cancelled; one reason per action, in request order.

    The service spells the member ``Message`` (capital M) and adds
    ``CancellationReasons`` beside it.
    """

    code = "TransactionCanceledException"
    message_key = "Message"


class IdempotentParameterMismatchException(DynamoDBError):
    code = "IdempotentParameterMismatchException"
    message_key = "Message"


# The service's message is not on record anywhere we could find; this is the
# exception's own description from DynamoDB's API reference.
TOKEN_MISMATCH = (
    "DynamoDB rejected the request because you retried a request with a different payload but "
    "with an idempotent token that was already used."
)


#: The reason of an action whose item would be nested too deeply: the short sentence, not
#: the item-level message (recorded against DynamoDB in 2026; docs/decisions.md).
NESTING_REASON = "Nesting Levels have exceeded supported limits"


def reason_for(error: DynamoDBError) -> Reason:
    """The CancellationReason of one failed action (the Item only when ALL_OLD asked for it)."""
    for kind, code in _CODES:
        if isinstance(error, kind):
            message = NESTING_REASON if error.message == MSG_NESTING else error.message
            return {"Code": code, "Message": message, **error.extra}
    raise error


T = TypeVar("T")


def check_schemas(checks: Sequence[Callable[[], T]]) -> list[T]:
    """Run each action's checks against its table's schema, in order; the first failure cancels.

    DynamoDB answers a key of the wrong type or shape (of the table or of an
    index), or a key attribute missing from a Put's item, not with a plain
    ValidationException but by cancelling the transaction: that action's
    reason is ValidationError with the check's message, every other action's
    None. Only the first such action is reported, and no condition has been
    evaluated yet (ScyllaDB's Alternator suite and floci's, both checked
    against DynamoDB). What the request alone shows (shapes, expressions,
    values, sizes, empty key values, the table) was refused before, with a
    plain exception; one item twice is refused after.
    """
    done = []
    for index, check in enumerate(checks):
        try:
            done.append(check())
        except ValidationException as error:
            reasons = [NO_REASON] * len(checks)
            reasons[index] = reason_for(error)
            raise cancellation(reasons) from None
    return done


def cancellation(reasons: list[Reason]) -> TransactionCanceledException:
    codes = ", ".join(reason["Code"] for reason in reasons)
    return TransactionCanceledException(
        f"Transaction cancelled, please refer cancellation reasons for specific reasons [{codes}]",
        CancellationReasons=reasons,
    )


@dataclass(frozen=True, slots=True)
class ClientToken:
    """A ClientRequestToken and the digest of the request it came with."""

    value: str
    digest: str


@dataclass(slots=True)
class TransactWriteResult:
    """Per action: its capacity (before the transactional doubling) and item collection size.

    ``replayed`` marks the answer to a repeated token: nothing was written and
    the capacity is the read units of reading the items, as DynamoDB charges
    a repeat.
    """

    consumed: list[Consumed]
    collection_bytes: list[int | None]
    replayed: bool = False


class _Tokens:
    """Remembered ClientRequestTokens: rows in the store, expiring after the window.

    ``TOKEN_SPACE | token`` holds the request digest, the expiry and what the
    answer needs; ``TOKEN_EXPIRY_SPACE | expiry | token`` orders them by
    expiry so that old ones are purged a few at a time.
    """

    def __init__(self, window_ms: int, clock: Clock) -> None:
        self.window_ms = window_ms
        self._clock = clock

    @staticmethod
    def _row(token: str) -> bytes:
        return TOKEN_SPACE + token.encode()

    def lookup(self, view: ReadView, token: ClientToken) -> list[int | None] | None:
        """The item collection sizes of the first transaction with this token, if still remembered.

        Raises IdempotentParameterMismatchException when the token came with
        another request.
        """
        raw = view.get(self._row(token.value))
        if raw is None:
            return None
        record = orjson.loads(raw)
        if record["expires"] <= self._clock.now() * 1000:
            return None
        if record["digest"] != token.digest:
            raise IdempotentParameterMismatchException(TOKEN_MISMATCH)
        collection_bytes: list[int | None] = record["collections"]
        return collection_bytes

    def remember(self, txn: WriteTxn, token: ClientToken, collection_bytes: list[int | None]) -> None:
        now = int(self._clock.now() * 1000)
        self._purge(txn, now)
        expires = now + self.window_ms
        record = {"digest": token.digest, "expires": expires, "collections": collection_bytes}
        txn.put(self._row(token.value), orjson.dumps(record))
        txn.put(TOKEN_EXPIRY_SPACE + struct.pack(">Q", expires) + token.value.encode(), b"")

    def _purge(self, txn: WriteTxn, now: int) -> None:
        end = TOKEN_EXPIRY_SPACE + struct.pack(">Q", now + 1)
        for key, _ in list(txn.range(TOKEN_EXPIRY_SPACE, end, limit=_PURGE_BATCH)):
            token = key[len(TOKEN_EXPIRY_SPACE) + 8 :].decode()
            txn.delete(key)
            raw = txn.get(self._row(token))
            # A token re-used after expiry has a newer record: keep that one.
            if raw is not None and orjson.loads(raw)["expires"] <= now:
                txn.delete(self._row(token))


class TransactionOps:
    def __init__(
        self,
        store: Store,
        rules: WriteRules,
        clock: Clock,
        token_window_ms: int = TOKEN_WINDOW_MS,
        meter: Meter | None = None,
    ) -> None:
        self._store = store
        self._rules = rules
        self._tokens = _Tokens(token_window_ms, clock)
        self._meter = meter

    def _charge(self, owners: list[list[Charge]]) -> None:
        """Charge every action's units (doubled, as transactions cost) at once, or cancel.

        A throttled transaction is cancelled with ProvisionedThroughputExceeded
        (provisioned) or ThrottlingError (on-demand) as the reason of the
        action that met the limit, as DynamoDB's API reference lists them.
        """
        assert self._meter is not None
        charges = [charge for part in owners for charge in part]
        if not charges:
            return
        try:
            self._meter.charge(charges)
        except DynamoDBError as error:
            failed = getattr(error, "charge", None)
            code = "ThrottlingError" if isinstance(error, ThrottlingException) else "ProvisionedThroughputExceeded"
            reasons = [
                {"Code": code, "Message": error.message} if any(c is failed for c in part) else NO_REASON
                for part in owners
            ]
            raise cancellation(reasons) from None

    def write(self, actions: list[ItemAction], token: ClientToken | None = None) -> TransactWriteResult:
        """Run every action or none, in one store write transaction.

        A store that could not serialize it against a concurrent writer
        of its items (PostgreSQL) rolled it back: DynamoDB reports that as the
        transaction's cancellation with TransactionConflict reasons. A cycle
        through no item (`Unordered`) is not DynamoDB's conflict: the front
        door runs the request again, and cancels it so only if every run met one.
        """
        try:
            return self._write(actions, token)
        except CatalogMoved:
            raise  # not a collision: the front door runs the request again on the fresh catalog
        except Unordered as error:
            error.answer = cancellation([TRANSACTION_CONFLICT] * len(actions))
            raise
        except Conflict:
            raise cancellation([TRANSACTION_CONFLICT] * len(actions)) from None

    def _write(self, actions: list[ItemAction], token: ClientToken | None) -> TransactWriteResult:
        with self._store.write(transactional=True) as txn:
            if token is not None:
                remembered = self._tokens.lookup(txn, token)
                if remembered is not None:
                    return TransactWriteResult(_read_capacity(txn, actions), remembered, replayed=True)
            resolved = _resolve_all(txn, actions, self._rules.guard)
            meter = self._meter
            if meter is not None:
                self._charge([write_charges(meter, a, old, new, 2.0) for a, (old, new) in zip(actions, resolved, strict=True)])
            result = TransactWriteResult([], [])
            for index, (action, (old, new)) in enumerate(zip(actions, resolved, strict=True)):
                try:
                    effects = store(txn, action, old, new, self._rules)
                except ItemCollectionSizeLimitExceededException as error:
                    reasons = [NO_REASON] * len(actions)
                    reasons[index] = reason_for(error)
                    raise cancellation(reasons) from None
                result.consumed.append(write_capacity(action, old, new, effects))
                result.collection_bytes.append(effects.collection_bytes)
            if token is not None:
                self._tokens.remember(txn, token, result.collection_bytes)
        return result

    def get(self, reads: list[KeyRead]) -> BatchGetResult:
        """Every item in one snapshot, so the answer is one consistent state of all of them."""
        result = read_keys(self._store, reads)
        if result.size > MAX_TRANSACTION_BYTES:
            raise ValidationException(TRANSACTION_TOO_LARGE)
        meter = self._meter
        if meter is not None:
            self._charge([
                [read_charge(meter, read.table, None, read.table.row_key(read.key), 2 * consumed.total, read.key)]
                for read, consumed in zip(reads, result.consumed, strict=True)
            ])
        return result


def _resolve_all(
    view: ReadView, actions: list[ItemAction], guard: SchemaGuard | None
) -> list[tuple[Item | None, Item | None]]:
    """Resolve every action against the state before the transaction; cancel if any fails.

    No two actions touch one item, so resolving them one after the other in
    one snapshot is the same as resolving them all against the state before
    the transaction. Every action is resolved, so the reasons name every
    failure, not only the first.
    """
    resolved: list[tuple[Item | None, Item | None]] = []
    reasons: list[Reason] = []
    failed = False
    if len(actions) > 1:
        view.prefetch([action.row for action in actions])
    for action in actions:
        try:
            resolved.append(resolve(view, action, guard))
            reasons.append(NO_REASON)
        except (ConditionalCheckFailedException, ValidationException) as error:
            resolved.append((None, None))
            reasons.append(reason_for(error))
            failed = True
    if failed:
        raise cancellation(reasons)
    return resolved


def _read_capacity(view: ReadView, actions: list[ItemAction]) -> list[Consumed]:
    """What a repeated token costs: reading each item (strongly consistent), as DynamoDB documents."""
    out = []
    for action in actions:
        stored = view.get_weighted(action.row)
        size = 0 if stored is None else stored[1]
        out.append(Consumed(action.table.name, read_units(size, True)))
    return out

