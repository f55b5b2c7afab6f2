"""Routing of `/partita/v1/...` requests; one small handler per resource."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import orjson

from ..engine.engine import Engine
from ..engine.tables.reset import reset
from .advice import PATH as ADVICE
from .advice import advice
from .capacity import TABLE_PAGES, TABLES, table_route
from .errors import AdminError
from .replication import replication

PREFIX = b"/partita/"
JSON = b"application/json"

Answer = tuple[int, bytes, bytes | None]




def _clock_doc(engine: Engine) -> dict[str, Any]:
    offset = engine.clock.offset()
    return {"now": engine.clock.now(), "offset_seconds": offset}


def _read_clock(engine: Engine, body: Any) -> dict[str, Any]:
    return _clock_doc(engine)


def _advance_clock(engine: Engine, body: Any) -> dict[str, Any]:
    seconds = body.get("advance_seconds") if isinstance(body, dict) else None
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not math.isfinite(seconds):
        raise AdminError(400, 'expected {"advance_seconds": N} with N a number of seconds')
    if seconds < 0:
        raise AdminError(400, "the clock only moves forward: advance_seconds must not be negative")
    engine.clock.advance(float(seconds))
    # Let due TTL deletions and stream trimming happen now rather than at the next tick.
    engine.duties.wake()
    return _clock_doc(engine)


def _reset(engine: Engine, body: Any) -> dict[str, Any]:
    """Drop every table (partita.testing's isolation between tests of a subprocess server)."""
    keep_clock = body.get("keep_clock", False) if isinstance(body, dict) else False
    if body is not None and (not isinstance(body, dict) or not isinstance(keep_clock, bool)):
        raise AdminError(400, 'expected no body or {"keep_clock": true|false}')
    dropped = reset(engine, keep_clock=keep_clock)
    return {"dropped_tables": dropped, **_clock_doc(engine)}


CLOCK = b"/partita/v1/clock"
RESET = b"/partita/v1/reset"
REPLICATION = b"/partita/v1/replication"

#: (method, path) -> handler of the JSON body (None when there is none).
ROUTES: dict[tuple[str, bytes], Callable[[Engine, Any], dict[str, Any]]] = {
    ("GET", CLOCK): _read_clock,
    ("POST", CLOCK): _advance_clock,
    ("POST", RESET): _reset,
    ("GET", REPLICATION): lambda engine, body: replication(engine, "GET", body),
    ("POST", REPLICATION): lambda engine, body: replication(engine, "POST", body),
}
#: What a path answers to a method it does not take (405).
_METHODS = {
    CLOCK: "use GET to read the clock, POST to advance it",
    RESET: "use POST to reset the server",
    REPLICATION: "use GET to read replication, POST to hold, release or settle it",
}


def routes() -> list[tuple[str, str]]:
    """Every (method, path) the admin API routes, `{table}` standing for a table's name (for tests
    that must meet every route without a list of their own)."""
    out = [(method, path.decode()) for method, path in ROUTES]
    out += [("GET", TABLES.decode() + "{table}/" + page) for page in TABLE_PAGES]
    out.append(("GET", ADVICE.decode()))
    return out


def answer(engine: Engine, method: str, path: bytes, body: bytes) -> Answer:
    """Answer one admin request: (status, JSON payload, content type)."""
    bare = path.split(b"?", 1)[0].rstrip(b"/")
    route = ROUTES.get((method, bare))
    try:
        if bare == ADVICE:
            return 200, orjson.dumps(advice(engine, method, path)), JSON
        if route is None and path.startswith(TABLES):
            return 200, orjson.dumps(table_route(engine, method, path)), JSON
        if route is None and path.startswith(b"/partita/v1/schema"):
            from .schema_guard import schema_route  # only servers asked about a schema load it

            return 200, orjson.dumps(schema_route(engine, method, path)), JSON
        if route is None:
            if bare in _METHODS:
                raise AdminError(405, _METHODS[bare])
            raise AdminError(404, f"no admin resource at {path.decode('latin-1')}")
        request: Any = None
        if body:
            try:
                request = orjson.loads(body)
            except orjson.JSONDecodeError:
                raise AdminError(400, "the body is not JSON") from None
        return 200, orjson.dumps(route(engine, request)), JSON
    except AdminError as error:
        return error.status, orjson.dumps({"error": error.message}), JSON
