"""Partita's web console under `/console`: tables, partitions, item collections, the cost of requests.

Server-rendered pages (Jinja2, autoescaped) with a little plain JavaScript,
served by the same app on the same port as the DynamoDB API. Every page
reads through the engine: DynamoDB operations go through
`partita.api.dispatch.handle` (so validation, capacity and errors are the
real ones) and partitions and hot keys through the introspection functions
behind `/partita/v1/tables/...`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["PREFIX", "answer", "authorize"]


def __getattr__(name: str) -> Any:
    """`PREFIX`, `answer` and `authorize` from `routes`, imported on first use: importing a
    console module (the protocol layer's `web.PEER`) must not load every view and Jinja2."""
    if name in __all__:
        from . import routes

        return getattr(routes, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
