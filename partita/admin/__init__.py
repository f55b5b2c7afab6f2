"""Partita's own admin and introspection API under `/partita/v1/`, beside the DynamoDB API.

DynamoDB only ever answers `POST /`, so these paths can never clash with
it. Answers are plain JSON; errors are `{"error": message}` with an HTTP
status, not DynamoDB's envelope, because no DynamoDB client calls them.
"""

from __future__ import annotations

from typing import Any

__all__ = ["PREFIX", "answer"]


def __getattr__(name: str) -> Any:
    """`PREFIX` and `answer` from `routes`, imported on first use (the protocol layer routes
    `/partita/` itself, and loads the admin API with its first request)."""
    if name in __all__:
        from . import routes

        return getattr(routes, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
