"""Routing of `/partita/v1/...` requests; one small handler per resource."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import orjson

from ..engine.engine import Engine
from ..engine.tables.reset import reset
from .capacity import TABLES, table_route
from .errors import AdminError

PREFIX = b"/partita/"
JSON = b"application/json"

Answer = tuple[int, bytes, bytes | None]




def _clock_doc(engine: Engine) -> dict[str, Any]:
    offset = engine.clock.offset()
    return {"now": engine.clock.now(), "offset_seconds": offset}


def _clock(engine: Engine, method: str, body: Any) -> dict[str, Any]:
    if method == "GET":
        return _clock_doc(engine)
    if method != "POST":
        raise AdminError(405, "use GET to read the clock, POST to advance it")
    seconds = body.get("advance_seconds") if isinstance(body, dict) else None
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not math.isfinite(seconds):
        raise AdminError(400, 'expected {"advance_seconds": N} with N a number of seconds')
    if seconds < 0:
        raise AdminError(400, "the clock only moves forward: advance_seconds must not be negative")
    engine.clock.advance(float(seconds))
    # Let due TTL deletions and stream trimming happen now rather than at the next tick.
    engine.duties.wake()
    return _clock_doc(engine)


def _reset(engine: Engine, method: str, body: Any) -> dict[str, Any]:
    """Drop every table (partita.testing's isolation between tests of a subprocess server)."""
    if method != "POST":
        raise AdminError(405, "use POST to reset the server")
    keep_clock = body.get("keep_clock", False) if isinstance(body, dict) else False
    if body is not None and (not isinstance(body, dict) or not isinstance(keep_clock, bool)):
        raise AdminError(400, 'expected no body or {"keep_clock": true|false}')
    dropped = reset(engine, keep_clock=keep_clock)
    return {"dropped_tables": dropped, **_clock_doc(engine)}


_ROUTES: dict[bytes, Callable[[Engine, str, Any], dict[str, Any]]] = {
    b"/partita/v1/clock": _clock,
    b"/partita/v1/reset": _reset,
}


def answer(engine: Engine, method: str, path: bytes, body: bytes) -> Answer:
    """Answer one admin request: (status, JSON payload, content type)."""
    route = _ROUTES.get(path.split(b"?", 1)[0].rstrip(b"/"))
    try:
        if route is None and path.startswith(TABLES):
            return 200, orjson.dumps(table_route(engine, method, path)), JSON
        if route is None:
            raise AdminError(404, f"no admin resource at {path.decode('latin-1')}")
        request: Any = None
        if body:
            try:
                request = orjson.loads(body)
            except orjson.JSONDecodeError:
                raise AdminError(400, "the body is not JSON") from None
        return 200, orjson.dumps(route(engine, method, request)), JSON
    except AdminError as error:
        return error.status, orjson.dumps({"error": error.message}), JSON
