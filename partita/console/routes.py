"""Routing of `/console` requests to the page views; every failure becomes an error page, never a 500."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote

from ..engine.engine import Engine
from ..errors import DynamoDBError
from . import advice, collections, items, jobs, queries, replication, streams, tables, vectors
from .render import render
from .web import (
    AUTHORIZER,
    CALLER,
    FORM,
    GUARDED,
    Answer,
    ConsoleError,
    Request,
    html,
    parse_query,
    set_authorizer,
)

log = logging.getLogger("partita")

PREFIX = b"/console"
STATIC = Path(__file__).parent / "static"
_STATIC_TYPES = {".css": b"text/css; charset=utf-8", ".js": b"text/javascript; charset=utf-8"}
MAX_FORM_BYTES = 1024 * 1024

View = Callable[[Engine, Request, str], Answer]

#: (method, page below /console/tables/{name}) -> view.
_TABLE_VIEWS: dict[tuple[str, str], View] = {
    ("GET", ""): tables.table_page,
    ("POST", "delete"): tables.delete_table,
    ("GET", "query"): queries.query_page,
    ("GET", "collection"): collections.collection_page,
    ("GET", "item"): items.item_page,
    ("POST", "item"): items.save_item,
    ("POST", "item/delete"): items.delete_item,
    ("GET", "streams"): streams.streams_page,
    ("GET", "partitions"): tables.partitions_json,
    ("GET", "hot-keys"): tables.hot_keys_json,
    ("GET", "advice"): advice.advice_page,
    ("GET", "entities"): advice.entities_page,
    ("GET", "vectors"): vectors.vectors_page,
    ("POST", "vectors"): vectors.run_search,
}


def authorize(request: Request) -> Answer | None:
    """The single seam where a console request is authorised (see `web.set_authorizer`)."""
    return AUTHORIZER[0](request)


__all__ = ["PREFIX", "answer", "authorize", "routes", "set_authorizer"]


def is_console(path: bytes) -> bool:
    return path == PREFIX or path.startswith(PREFIX + b"/") or path.startswith(PREFIX + b"?")


def answer(engine: Engine, method: str, headers: dict[bytes, bytes], path: bytes, body: bytes) -> Answer:
    """Answer one request for a path under /console."""
    raw_path, _, raw_query = path.partition(b"?")
    try:
        request = _request(method, headers, raw_path, raw_query, body)
        denied = authorize(request)
        if denied is not None:
            return denied
        token = CALLER.set(request.caller)
        guarded = GUARDED.set(engine.schema_guard is not None)
        try:
            answer = _route(engine, request)
        finally:
            GUARDED.reset(guarded)
            CALLER.reset(token)
        if request.cookies:
            status, payload, kind, headers = answer
            answer = status, payload, kind, [*(headers or []), *request.cookies]
        return answer
    except ConsoleError as error:
        return html(render("error.html", status=error.status, message=error.message), error.status)
    except DynamoDBError as error:
        return html(render("error.html", status=error.status, message=f"{error.code}: {error.message}"), error.status)
    except Exception:
        log.exception("console: internal error")
        return html(render("error.html", status=500, message="Internal error (logged by the server)"), 500)


def _request(method: str, headers: dict[bytes, bytes], raw_path: bytes, raw_query: bytes, body: bytes) -> Request:
    form: dict[str, list[str]] = {}
    if method == "POST" and body:
        content_type = headers.get(b"content-type", b"").split(b";")[0].strip().lower()
        if content_type != FORM:
            raise ConsoleError(415, "console forms are sent as application/x-www-form-urlencoded")
        if len(body) > MAX_FORM_BYTES:
            raise ConsoleError(413, "the form is larger than 1 MB")
        form = parse_query(body.decode("utf-8", "replace"))
    rest = raw_path[len(PREFIX):].decode("latin-1")
    return Request(method, rest, parse_query(raw_query.decode("latin-1")), form, headers)


#: (method, page below /console) -> view, for the pages that name no table.
def _schema_page(engine: Engine, request: Request, table: str) -> Answer:
    from .schema_guard import schema_page  # only a server asked for this page loads it

    return schema_page(engine, request, table)


_PAGES: dict[tuple[str, str], View] = {
    ("GET", ""): tables.tables_page,
    ("GET", "jobs"): jobs.jobs_page,
    ("GET", "replication"): replication.replication_page,
    ("GET", "schema"): _schema_page,
    ("GET", "tables"): tables.tables_page,
    ("POST", "tables"): tables.create_table,
}


def routes() -> list[tuple[str, str]]:
    """Every (method, path) the console routes, `{table}` standing for a table's name (for tests
    that must meet every route, such as the cross-site ones, without a list of their own)."""
    out = [(method, "/console" + ("/" + page if page else "")) for method, page in _PAGES]
    out += [(method, "/console/tables/{table}" + ("/" + page if page else "")) for method, page in _TABLE_VIEWS]
    return out


def _route(engine: Engine, request: Request) -> Answer:
    parts = request.path.strip("/").split("/") if request.path.strip("/") else []
    method = "GET" if request.method == "HEAD" else request.method
    if parts and parts[0] == "static" and len(parts) == 2 and method == "GET":
        return _static(parts[1])
    if len(parts) <= 1:
        page = parts[0] if parts else ""
        view = _PAGES.get((method, page))
        if view is not None:
            return view(engine, request, "")
        if any(page == known for _, known in _PAGES):
            raise ConsoleError(405, _NOT_ALLOWED.get(page, f"{request.method} is not allowed here"))
        raise ConsoleError(404, "no console page here")
    if parts[0] != "tables":
        raise ConsoleError(404, "no console page here")
    name = unquote(parts[1], errors="replace")
    page = "/".join(parts[2:])
    view = _TABLE_VIEWS.get((method, page))
    if view is None:
        if any(page == known for _, known in _TABLE_VIEWS):
            raise ConsoleError(405, f"{request.method} is not allowed here")
        raise ConsoleError(404, "no console page here")
    return view(engine, request, name)


#: The 405 pages' words where they name the methods the page takes.
_NOT_ALLOWED = {"": "use GET for this page", "tables": "use GET or POST for this page"}


def _static(name: str) -> Answer:
    path = STATIC / name
    kind = _STATIC_TYPES.get(path.suffix)
    if kind is None or path.parent != STATIC or not path.is_file():
        raise ConsoleError(404, "no such asset")
    return 200, path.read_bytes(), kind, [(b"cache-control", b"max-age=300")]
