"""One HTTP/1.1 connection of Partita's own server: parsing, answering in order, closing.

Split from server.py, which holds the listener (the sweep, group commit,
shutdown) and explains what real and bad clients meet; this is the
per-connection protocol that httptools calls back.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from http import HTTPStatus
from typing import Any, Protocol, cast

import httptools

from .app import (
    HEAD_TOO_LARGE,
    MAX_HEADER_BYTES,
    MAX_REQUEST_BYTES,
    MAX_TARGET_BYTES,
    TOO_LARGE,
    Answer,
    Headers,
    header_bytes,
    response_head,
)

log = logging.getLogger("partita.http")

MAX_HEAD_BYTES = 1024 * 1024
"""Raw bytes received while in a request head, counted per read: a guard
for what the exact URL and header limits (16 KB, in the parser callbacks)
cannot see, such as one header line that never ends, which the parser
buffers. A read is at most 256 KB, so pipelined requests never reach it."""

LINGER_SECONDS = 2.0
LINGER_BYTES = 2 * MAX_REQUEST_BYTES
"""After answering with `Connection: close`, input is read and dropped (up to
these limits) until the client closes: closing a socket with unread input
makes the kernel send a reset, which can destroy the answer before the
client reads it (a 413 to a client still sending its 16 MB, say)."""

COALESCE_BYTES = 64 * 1024
"""A connection's answers held for the end of the loop turn (server.py) are
written at once when they pass this many bytes, unless a group commit is
open (then they wait for it, as durability requires): coalescing is for
small answers, and what a client pipelines in one read must not pile up."""

_STATUS_LINES = {
    status.value: b"HTTP/1.1 %d %s\r\n" % (status.value, status.phrase.encode("latin-1"))
    for status in HTTPStatus
}
_REQUEST_TIMEOUT: Answer = (408, b"", None, None)
_SERVER_FAULT: Answer = (500, b"", None, None)
_CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"
_CLOSE = b"connection: close\r\n"
_KEEP_ALIVE = b"connection: keep-alive\r\n"

# Items of a connection's backlog (requests parsed while writing is paused).
_REQUEST = 0  # (_REQUEST, method, headers, body, keep_alive, http10, url)
_INTERIM = 1  # (_INTERIM,): a 100 Continue owed to the next request
_FAIL = 2  # (_FAIL, answer): answer and close
_END = 3  # (_END,): close without an answer (the client asked to switch protocols)


class _Stop(Exception):
    """Raised from a parser callback to stop parsing: the connection is closing."""


class ServerState(Protocol):
    """What a connection reads and sets on its server (server.py's HttpServer) on every request.

    Named here as a protocol, not imported: server.py imports its connections.
    """

    app: Any
    connections: set[HttpConnection]
    closing: bool
    clock: float
    date_line: bytes
    stats: Any
    counted: list[RequestToken]
    holding: bool
    grouped: bool
    held: list[HttpConnection]
    answering: tuple[Any, ...] | None
    answering_connection: HttpConnection | None
    token: RequestToken | None

    def connection_gone(self) -> None: ...

    def hold_turn(self) -> None: ...

    def defer(self, connection: HttpConnection, request: tuple[Any, ...]) -> None: ...


class RequestToken:
    """Names one answered request to the store, so that a group commit can run it again.

    The store's optimistic writes (storage/sqlite_writers.py) are checked at
    the commit; one whose reads changed meanwhile is run again, under the
    lock, and its held answer (`index` in its connection's held output) is
    replaced before anything is sent.
    """

    __slots__ = ("connection", "request", "index", "close", "counts")

    def __init__(self, connection: HttpConnection | None, request: tuple[Any, ...] | None) -> None:
        self.connection = connection
        self.request = request
        self.index = -1  # where its answer is held (-1: not held, the connection is gone)
        self.close = False
        #: Its last run's metric counts (ProcessStats.unjournal), counted once the group commits.
        self.counts: list[tuple[Any, ...]] = []


class HttpConnection(asyncio.Protocol):
    """One client connection: parse, answer with the turn's other requests (server.py), write."""

    __slots__ = (
        "_server",
        "_app",
        "_parser",
        "_transport",
        "_headers",
        "_url",
        "_body",
        "_size",
        "_head_bytes",
        "_read_bytes",
        "_target_bytes",
        "_in_message",
        "_in_head",
        "_backlog",
        "_writing_paused",
        "_closed",
        "_discard_left",
        "_held",
        "_held_bytes",
        "_close_held",
        "lingering",
        "last_active",
        "request_started",
    )

    def __init__(self, server: ServerState) -> None:
        self._server = server
        self._app = server.app
        self._parser = httptools.HttpRequestParser(self)
        self._transport: asyncio.Transport | None = None
        self._headers: dict[bytes, bytes] = {}
        self._url = b""
        self._body: list[bytes] = []
        self._size = 0
        self._head_bytes = 0  # an upper bound of the current head's bytes
        self._read_bytes = 0  # the size of the read being parsed
        self._target_bytes = 0
        self._in_message = False  # a request has begun and is not yet answered
        self._in_head = True  # still reading a request line and headers
        # Requests parsed while writing is paused or while a request waits for
        # its answer (`answer_deferred`); None when nothing waits.
        self._backlog: deque[tuple[Any, ...]] | None = None
        self._writing_paused = False
        self._closed = False  # no more input is processed, close is under way
        self.lingering = False  # half-closed: dropping input until the client closes
        self._discard_left = LINGER_BYTES
        # Output held for the end of the turn or a group commit (HttpServer.holding),
        # its size, and whether the close that ends it waits with it.
        self._held: list[bytes] | None = None
        self._held_bytes = 0
        self._close_held = False
        self.last_active = server.clock
        # When the request being received began (server clock); None between requests.
        self.request_started: float | None = None

    # asyncio callbacks

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)
        if self._server.closing:
            self._closed = True
            transport.close()
            return
        self._server.connections.add(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self._closed = True
        self._transport = None
        self._backlog = None
        self._server.connections.discard(self)
        self._server.connection_gone()

    def data_received(self, data: bytes) -> None:
        if self._closed:
            # Dropped input does not keep a closing connection alive: the
            # linger ends LINGER_SECONDS after the last useful activity.
            if self.lingering:
                self._discard_left -= len(data)
                if self._discard_left < 0 and self._transport is not None:
                    self._transport.close()
            return
        self.last_active = self._server.clock
        if self.request_started is None:
            self.request_started = self.last_active  # even bytes before a request line count
        self._read_bytes = size = len(data)
        if self._in_head:
            self._head_bytes += size
            if self._head_bytes > MAX_HEAD_BYTES:
                self._fail(HEAD_TOO_LARGE)
                return
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            # We speak no other protocol; what was answered stands, the rest
            # of the stream cannot be parsed as HTTP/1.1. Requests still
            # waiting for their answers get them first.
            if self._backlog is None:
                self._finish()
            elif not self._closed:
                self._closed = True
                self._backlog.append((_END,))
        except httptools.HttpParserCallbackError as error:
            if isinstance(error.__context__, _Stop):
                return
            log.error("HTTP handling failed", exc_info=error.__context__ or error)
            self._fail(_SERVER_FAULT)
        except httptools.HttpParserError:
            self._fail((400, b"", None, None))

    def pause_writing(self) -> None:
        """The client reads slower than we answer: stop reading its requests."""
        self._writing_paused = True
        if self._backlog is None:
            self._backlog = deque()
        if self._transport is not None and not self._closed:
            self._transport.pause_reading()

    def resume_writing(self) -> None:
        """The buffer drained: answer what waited, in order, then read again."""
        self._writing_paused = False
        self.last_active = self._server.clock
        self._answer_backlog()
        if self._writing_paused or self._transport is None:
            return
        self._backlog = None
        if self.lingering:
            self._transport.resume_reading()  # to see the client's close
        elif self._closed:
            return
        elif self._server.closing and not self._in_message:
            self._transport.close()
        else:
            self._transport.resume_reading()

    # httptools callbacks

    def on_message_begin(self) -> None:
        self._headers = {}
        self._url = b""
        self._body = []
        self._size = 0
        self._in_message = True
        self._in_head = True
        # The head began somewhere in this read: all of it is the bound.
        self._head_bytes = self._read_bytes
        self._target_bytes = 0
        self.request_started = self._server.clock

    def on_url(self, url: bytes) -> None:
        self._target_bytes += len(url)
        if self._target_bytes > MAX_TARGET_BYTES:
            self._fail(HEAD_TOO_LARGE)
            raise _Stop
        self._url += url  # may arrive in pieces

    def on_header(self, name: bytes, value: bytes) -> None:
        # The first value of a repeated header counts, as on DynamoDB (app._headers).
        self._headers.setdefault(name.lower(), value)

    def on_headers_complete(self) -> None:
        self._in_head = False
        headers = self._headers
        # Exact only when the bound says it may be over: a typical request
        # arrives in one read far under the limit and is not measured.
        if self._head_bytes > MAX_HEADER_BYTES and header_bytes(headers.items()) > MAX_HEADER_BYTES:
            self._fail(HEAD_TOO_LARGE)
            raise _Stop
        self._head_bytes = 0
        length = headers.get(b"content-length")
        if length is not None and length.isdigit() and int(length) > MAX_REQUEST_BYTES:
            self._fail(TOO_LARGE)
            raise _Stop
        expect = headers.get(b"expect")
        if (
            expect is not None
            and expect.lower() == b"100-continue"
            and self._parser.get_http_version() == "1.1"
        ):
            if self._backlog is not None:
                self._backlog.append((_INTERIM,))
            else:
                self._send(_CONTINUE)

    def on_body(self, body: bytes) -> None:
        self._size += len(body)
        if self._size > MAX_REQUEST_BYTES:
            self._fail(TOO_LARGE)
            raise _Stop
        self._body.append(body)

    def on_message_complete(self) -> None:
        self._in_head = True
        self.request_started = None
        body = self._body
        parser = self._parser
        request = (
            _REQUEST,
            parser.get_method().decode("latin-1"),
            self._headers,
            body[0] if len(body) == 1 else b"".join(body),
            parser.should_keep_alive(),
            parser.get_http_version() == "1.0",
            self._url,
        )
        if self._backlog is not None:
            self._backlog.append(request)
            return
        # Answered once every read of this loop turn is parsed (server.py): what
        # this read holds after it waits behind it, in order.
        self._backlog = deque()
        self._server.defer(self, request)

    def answer_deferred(self, request: tuple[Any, ...]) -> None:
        """Answer a request `defer` kept for the end of the reads, then what was parsed behind it.

        Answered even if the client has gone meanwhile, as it would have
        been at once: a request received in full runs. A fault here is the
        server's own: logged, and the connection gets 500 and closes.
        """
        try:
            self._answer(request)
            self._answer_backlog()
        except Exception:
            log.exception("HTTP handling failed")
            self._backlog = None
            self._fail(_SERVER_FAULT)
            return
        if not self._writing_paused:
            self._backlog = None  # else resume_writing answers the rest, then reads again

    # answering

    def _answer_backlog(self) -> None:
        """Answer what waits in the backlog, in order, until it is empty or writing pauses."""
        while self._backlog and not self._writing_paused:
            self._run_backlog_item(self._backlog.popleft())

    def _run_backlog_item(self, item: tuple[Any, ...]) -> None:
        kind = item[0]
        if kind == _REQUEST:
            self._answer(item)
        elif kind == _INTERIM:
            self._send(_CONTINUE)
        elif kind == _END:
            self._finish()
        else:
            self._write_and_close(item[1])

    def _answer(self, request: tuple[Any, ...]) -> None:
        _, method, headers, body, keep_alive, http10, url = request
        self._in_message = False
        server = self._server
        server.answering = request  # names it to a group commit (server.RequestToken)
        server.answering_connection = self
        stats = server.stats
        if stats is not None:
            stats.journal()
        try:
            status, payload, content_type, extra = self._app.answer(method, headers, body, url)
        finally:
            server.answering = None
            counts = None if stats is None else stats.unjournal()
        close = not keep_alive or server.closing
        token = server.token
        if token is not None and token.request is request:
            held = self._held
            before = 0 if held is None else len(held)
            self._write(status, payload, content_type, extra, close, http10, method == "HEAD")
            held = self._held
            token.index = before if held is not None and len(held) > before else -1
            token.close = close
            if counts is not None:
                if token.index >= 0:  # it may run again: counted at the commit, its last run's
                    token.counts = counts
                    server.counted.append(token)
                elif counts:
                    stats.apply(counts)
        else:
            if counts:
                stats.apply(counts)
            self._write(status, payload, content_type, extra, close, http10, method == "HEAD")
        if close:
            self._finish()

    def rerun(self, token: RequestToken) -> None:
        """Answer a held request again (its write ran again at the group commit): the new answer replaces the old."""
        held = self._held
        request = token.request
        if held is None or request is None or token.index >= len(held):
            return
        _, method, headers, body, _keep_alive, http10, url = request
        server = self._server
        server.answering = request
        server.answering_connection = self
        stats = server.stats
        stats.journal()
        try:
            status, payload, content_type, extra = self._app.answer(method, headers, body, url)
        finally:
            server.answering = None
            token.counts = stats.unjournal()  # this run's counts replace the first run's
        held[token.index] = self._render(status, payload, content_type, extra, token.close, http10, method == "HEAD")

    def _write(
        self,
        status: int,
        payload: bytes,
        content_type: bytes | None,
        extra: Headers | None,
        close: bool,
        http10: bool = False,
        head_only: bool = False,
    ) -> None:
        transport = self._transport
        if transport is None:
            return
        self._hold(self._render(status, payload, content_type, extra, close, http10, head_only))

    def _render(
        self,
        status: int,
        payload: bytes,
        content_type: bytes | None,
        extra: Headers | None,
        close: bool,
        http10: bool,
        head_only: bool,
    ) -> bytes:
        parts = [
            _STATUS_LINES[status],
            response_head(payload, content_type, extra),
            self._server.date_line,
        ]
        if close:
            parts.append(_CLOSE)
        elif http10:
            parts.append(_KEEP_ALIVE)
        parts.append(b"\r\n")
        if not head_only:
            parts.append(payload)
        return b"".join(parts)

    def _send(self, data: bytes) -> None:
        if self._transport is not None:
            self._hold(data)

    def _hold(self, data: bytes) -> None:
        """Every answer leaves through here: held until the turn ends (server.py), or sooner when large."""
        server = self._server
        if not server.holding:
            server.hold_turn()
        held = self._held
        if held is None:
            self._held = [data]
            self._held_bytes = len(data)
            server.held.append(self)
        else:
            held.append(data)
            self._held_bytes += len(data)
        if self._held_bytes > COALESCE_BYTES and not server.grouped:
            self.release(True)

    def release(self, committed: bool) -> None:
        """The turn ended (its group committed, if one was open): send what was held, or abort if the commit failed."""
        held, self._held = self._held, None
        transport = self._transport
        if held is None or transport is None:
            return
        if not committed:
            # Some held answer may acknowledge a write the failed commit lost:
            # send none of them; clients see a reset and retry.
            self._closed = True
            transport.abort()
            return
        transport.write(b"".join(held))
        if self._close_held:
            self._close_held = False
            self._finish()
        elif self._server.closing and not self._in_message and self._backlog is None and not self._closed:
            self._closed = True  # shutdown() left it open for this answer
            transport.close()

    def _fail(self, answer: Answer) -> None:
        """Answer an unusable request (after those still waiting) and close."""
        if self._closed:
            return
        self._closed = True
        self._in_message = False
        self.request_started = None
        if self._backlog is not None:
            self._backlog.append((_FAIL, answer))
            return
        self._write_and_close(answer)

    def _write_and_close(self, answer: Answer) -> None:
        status, payload, content_type, extra = answer
        self._write(status, payload, content_type, extra, True)
        self._finish()

    def _finish(self) -> None:
        """After a `Connection: close` answer: half-close, linger, let the client close.

        write_eof() sends FIN once the buffer is flushed; input is dropped
        (LINGER_BYTES at most) and the transport closes when the client's
        FIN arrives (eof_received), or the sweep closes it after
        LINGER_SECONDS of silence.
        """
        self._closed = True
        self._backlog = None  # nothing after a close is answered
        if self._held is not None:
            self._close_held = True  # after the held answers, in release()
            return
        transport = self._transport
        if transport is None or self.lingering:
            return
        self.lingering = True
        if transport.can_write_eof():
            transport.write_eof()
            if not self._writing_paused:
                transport.resume_reading()
        else:  # pragma: no cover - TCP transports can
            transport.close()

    # called by the server

    def expire(self) -> None:
        """Idle past the keep-alive timeout, or stuck: close, dropping unsent answers."""
        if self._transport is None:
            return
        self._closed = True
        if self._writing_paused:
            self._transport.abort()  # the client is not reading; the buffer would never drain
        else:
            self._transport.close()

    def time_out(self) -> None:
        """The request has not arrived in full within the request timeout: 408, close."""
        if self._transport is None or self._closed:
            return
        if self._writing_paused:  # not reading our answers either
            self._closed = True
            self._transport.abort()
            return
        self._fail(_REQUEST_TIMEOUT)

    def shutdown(self) -> None:
        """Close if nothing is under way; otherwise the answer under way closes."""
        if self._transport is None:
            return
        if not self._in_message and self._backlog is None and not self.lingering and self._held is None:
            self._closed = True
            self._transport.close()

    def abort(self) -> None:
        if self._transport is not None:
            self._transport.abort()
