"""Answers the protocol layer renders specially (imported by it without any operation's module)."""

from __future__ import annotations

from typing import Any


class EmptyAnswer(dict[str, Any]):
    """An answer the protocol layer sends as a zero-length body, not ``{}``.

    DynamoDB answers a successful TagResource and UntagResource with HTTP 200
    and no body at all (observed); SDKs read both forms alike, raw HTTP
    clients and recorded-answer suites do not.
    """
