"""ClientToken idempotency of ExportTableToPointInTime and ImportTable.

A token row (`TOKEN_ROW | kind | token`) remembers the ARN the token
started and the request's other parameters (canonical JSON), written in the
same transaction as the export or import itself, so a retry after a lost
answer or a crash finds it. The same token with the same parameters answers
the same export/import; with other parameters it is refused. DynamoDB keeps a
token 8 hours; so do we, on the server clock.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from ...storage.base import WriteTxn
from .keys import TOKEN_ROW

#: How long a token binds (DynamoDB's documented idempotency window).
WINDOW_SECONDS = 8 * 3600.0


def _key(kind: bytes, token: str) -> bytes:
    return TOKEN_ROW + kind + token.encode()


Select = Callable[[dict[str, Any]], dict[str, Any]]


def _all(request: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in request.items() if k != "ClientToken"}


def _params(request: dict[str, Any], select: Select | None) -> str:
    return orjson.dumps((select or _all)(request), option=orjson.OPT_SORT_KEYS).decode()


def earlier(txn: WriteTxn, kind: bytes, request: dict[str, Any], now: float,
            conflict: type[Exception], message: str, select: Select | None = None) -> str | None:
    """The ARN an earlier identical request with this token started (None: a new request).

    Raises `conflict(message)` when the token came with other parameters inside the window;
    `select` picks the parameters that count (all of them by default).
    """
    token = request.get("ClientToken")
    if not token:
        return None
    raw = txn.get(_key(kind, token))
    if raw is None:
        return None
    seen = orjson.loads(raw)
    if now - seen["at"] > WINDOW_SECONDS:
        return None
    if seen["params"] != _params(request, select):
        raise conflict(message)
    arn: str = seen["arn"]
    return arn


def remember(txn: WriteTxn, kind: bytes, request: dict[str, Any], arn: str, now: float,
             select: Select | None = None) -> None:
    token = request.get("ClientToken")
    if token:
        txn.put(_key(kind, token), orjson.dumps({"arn": arn, "params": _params(request, select), "at": now}))
