"""Partita's own HTTP/1.1 server: httptools' parser on an asyncio protocol.

Why not uvicorn: every Partita request is answered synchronously (the engine
is synchronous SQLite, `PartitaApp.answer` takes ~20 us), so ASGI's machinery
-- a task per request, receive/send message dicts, awaiting each of them --
is most of the cost. Measured on the project's 2-core machines, a trivial
ASGI app under uvicorn answers ~22k requests/s while a bare protocol does
~70k. Here `on_message_complete` hands the request to `defer`, the app's
answer is held and written with one `transport.write`: no task, no future, no
message dict.

`PartitaApp` stays a plain ASGI app (it still runs under any ASGI server, and
`partita serve --http uvicorn` uses uvicorn); both paths share
`PartitaApp.answer` and the headers of `response_headers` (formatted by
`response_head`), so they answer the same bytes.

What real and bad clients do, and what happens here:

- keep-alive by default on HTTP/1.1, `Connection: close` honoured, HTTP/1.0
  closes unless it asked for keep-alive (httptools' `should_keep_alive`);
- pipelined requests are answered in order (a connection's requests wait
  behind the one being answered, so order is the parse order);
- a loop turn's requests are answered together: each complete request is
  kept (`defer`), and once every read of the turn is parsed they are
  answered one after another (`answer_pending`, the next loop callback),
  before the turn's answers are written. Answering them back to back,
  rather than between the reads' system calls and parsing, keeps the
  engine's code and data in the CPU's caches: about a tenth more requests
  a second on the project's 2-core machines (docs/decisions.md);
- on a store whose reads are round trips (PostgreSQL: `Store.reads_ahead`),
  the GetItems among a turn's kept requests are read ahead in one round trip
  before the first is answered (`_read_ahead`; docs/decisions.md, "On
  PostgreSQL, a loop turn's GetItems are read in one round trip"); what was
  read serves only this turn, until the store's next write;
- answers of one event-loop turn leave together: the first answer of a
  turn starts holding, and what the turn's requests answered is written at
  its end, one write per connection (the next loop callback, after every
  request read in the turn was answered). On a machine where waking the
  client's thread is dear (a virtual machine: each write to a sleeping
  reader is a wake-up between CPUs), a write per answer made that wake-up
  most of a small request's cost; measured in docs/decisions.md. Without a
  group commit open, a connection's held bytes are written as soon as they
  pass COALESCE_BYTES (connection.py), so what one client pipelines cannot
  pile up;
- group commit: on a store that offers it (SQLite's `attach`), the first
  write of an event-loop turn begins a group that the following requests'
  writes join; from then on every answer is held (reads too: they may have
  seen the group's writes) until the commit, which runs as the next loop
  callback, after everything read in this turn was answered. The store may
  run a request again at the commit (its optimistic write read a row that
  another process changed): its held answer is replaced (`RequestToken`).
  An answer therefore never leaves before its write is durable, answers on
  one connection keep their order, and a failed commit aborts the
  connections whose answers were held (nothing is acknowledged);
- chunked request bodies are de-chunked by the parser;
- `Expect: 100-continue` gets `100 Continue`, or the 413 at once when the
  declared length is over the limit;
- a body over MAX_REQUEST_BYTES (declared or, when chunked, counted) gets 413
  and the connection closes without reading the rest; a request line
  (URL) or headers over 16 KB get 400, as on DynamoDB; malformed HTTP gets
  400; all of these close;
- backpressure: when the transport's write buffer passes its high-water
  mark, reading pauses, requests already parsed wait in a queue (bounded by
  the bytes already read) and are answered in order once it drains;
- connections idle longer than the keep-alive timeout are closed by one
  sweep a second, not a timer per request; the same sweep answers 408 and
  closes a connection whose request has not arrived in full within the
  request timeout (a client trickling a byte a second would otherwise hold
  it forever); the same tick refreshes the cached Date header;
- graceful shutdown: stop accepting, close idle connections, let a request
  that has started arriving finish (answered with `Connection: close`),
  abort what is left after a grace period.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import socket
import ssl
from collections.abc import Callable
from time import gmtime, time
from typing import Any

from .app import PartitaApp
from .connection import LINGER_SECONDS, HttpConnection, RequestToken

log = logging.getLogger("partita.http")

_TICK = 1.0  # seconds between sweeps of idle connections (and Date refreshes)


_DAYS = (b"Mon", b"Tue", b"Wed", b"Thu", b"Fri", b"Sat", b"Sun")
_MONTHS = (b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec")


def _date_line() -> bytes:
    """The Date header, HTTP's IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110 5.6.7).

    Formatted here rather than by email.utils, whose package costs start-up
    more than the rest of this module.
    """
    now = gmtime(time())
    return b"date: %s, %02d %s %04d %02d:%02d:%02d GMT\r\n" % (
        _DAYS[now.tm_wday], now.tm_mday, _MONTHS[now.tm_mon - 1], now.tm_year, now.tm_hour, now.tm_min, now.tm_sec)


class HttpServer:
    """Connections of one process, their sweep, and shutdown."""

    def __init__(
        self,
        app: PartitaApp,
        *,
        keep_alive_timeout: float = 60.0,
        request_timeout: float = 60.0,
        shutdown_timeout: float = 10.0,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.app = app
        self.ssl_context = ssl_context
        self.keep_alive_timeout = keep_alive_timeout
        self.request_timeout = request_timeout
        self.shutdown_timeout = shutdown_timeout
        self.connections: set[HttpConnection] = set()
        self.closing = False
        # A coarse clock (loop.time() at the last tick) that connections stamp
        # on activity: reading an attribute costs less than calling a clock.
        self.clock = 0.0
        self.date_line = _date_line()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._tick_handle: asyncio.TimerHandle | None = None
        self._done: asyncio.Future[None] | None = None
        # Group commit: the store's (None when it has none), whether answers are
        # held for an open group, and the connections holding some.
        store = getattr(getattr(app, "engine", None), "store", None)
        self._group: Any = store if hasattr(store, "attach") else None
        # With a group store, each request's metric counts are journaled, and those of a
        # request that may run again wait for the commit (`counted`): a rerun counts once.
        self.stats: Any = app.engine.stats if self._group is not None else None
        # A store whose reads are round trips (PostgreSQL) reads a turn's GetItems ahead, in one.
        self._reads_ahead = bool(getattr(store, "reads_ahead", False)) and getattr(app, "regions", None) is None
        self.counted: list[RequestToken] = []
        self.holding = False
        # Whether the store's group is open: its held answers wait for the commit.
        self.grouped = False
        self.held: list[HttpConnection] = []
        # Complete requests of this loop turn, waiting for `answer_pending`.
        self.pending: list[tuple[HttpConnection, tuple[Any, ...]]] = []
        # The request being answered and its connection (set around every
        # answer), and the token of the last request that wrote in a group.
        self.answering: tuple[Any, ...] | None = None
        self.answering_connection: HttpConnection | None = None
        self.token: RequestToken | None = None

    async def start(self, sock: socket.socket) -> None:
        """Serve on an already bound, listening socket (the CLI binds it)."""
        self._loop = loop = asyncio.get_running_loop()
        self._done = loop.create_future()
        self.clock = loop.time()
        # With --auth a repeated header is also kept joined, as SigV4 signs it.
        connection: type[HttpConnection] = HttpConnection
        if getattr(self.app, "auth", None) is not None:
            from .signing import SigningConnection  # --auth's: a server without it never loads it

            connection = SigningConnection
        self._server = await loop.create_server(
            lambda: connection(self), sock=sock, backlog=2048, ssl=self.ssl_context
        )
        self._tick_handle = loop.call_later(_TICK, self._tick)
        if self._group is not None:
            self._group.attach(self._group_opened, self._token, self._rerun)

    async def wait_closed(self) -> None:
        """Return once shutdown() has run and every connection is gone."""
        assert self._done is not None
        await self._done
        self.end_turn()
        if self._group is not None:
            self._group.detach()

    def defer(self, connection: HttpConnection, request: tuple[Any, ...]) -> None:
        """Keep a complete request to answer with the turn's others, once its reads are parsed."""
        pending = self.pending
        pending.append((connection, request))
        if len(pending) == 1:
            assert self._loop is not None
            self._loop.call_soon(self.answer_pending)

    def answer_pending(self) -> None:
        """Answer the turn's requests in the order they came, then end the turn (commit, write).

        Answers are held while they run, as `hold_turn` would hold them; the
        turn ends here, unless an earlier `hold_turn` has already scheduled
        its end.
        """
        pending, self.pending = self.pending, []
        scheduled = self.holding
        self.holding = True
        ahead = self._reads_ahead and len(pending) > 1 and self._read_ahead(pending)
        try:
            for connection, request in pending:
                connection.answer_deferred(request)
        finally:
            if ahead:
                self.app.end_read_ahead()
        if not scheduled:
            self.end_turn()

    def _read_ahead(self, pending: list[tuple[HttpConnection, tuple[Any, ...]]]) -> bool:
        """Hint the store at the turn's GetItems; whether it read any ahead (then `end_read_ahead`).

        A fault here is logged and the turn answered without: a hint must not
        cost a request its answer.
        """
        try:
            # request: (kind, method, headers, body, keep-alive, HTTP/1.0, path), connection.py's
            return self.app.read_ahead(
                [(request[2], request[3]) for _, request in pending if request[1] == "POST" and request[6] == b"/"])
        except Exception:
            log.exception("reading a turn's GetItems ahead failed")
            self.app.end_read_ahead()
            return False

    def hold_turn(self) -> None:
        """Hold answers until this loop turn ends (connections call it with their turn's first answer)."""
        assert self._loop is not None
        self.holding = True
        self._loop.call_soon(self.end_turn)

    def _group_opened(self) -> None:
        """The store opened a group transaction: answers are held until it commits, at the turn's end."""
        self.grouped = True
        if not self.holding:
            self.hold_turn()

    def _token(self) -> RequestToken | None:
        """The request being answered (None between requests: such a write runs under the lock)."""
        request = self.answering
        if request is None:
            return None
        token = self.token
        if token is None or token.request is not request:
            token = self.token = RequestToken(self.answering_connection, request)
        return token

    def _rerun(self, token: object) -> None:
        assert isinstance(token, RequestToken)
        if token.index >= 0 and token.connection is not None:
            token.connection.rerun(token)

    def end_turn(self) -> None:
        """Commit the open group if any, then send what was held (or abort, if the commit failed)."""
        committed = True
        if self.grouped:
            self.grouped = False
            try:
                committed = self._group.commit_group()
            except Exception:
                log.exception("group commit failed; aborting the connections waiting for it")
                committed = False
        self.holding = False
        self.token = None
        counted, self.counted = self.counted, []
        if committed:
            for token in counted:
                self.stats.apply(token.counts)
        held, self.held = self.held, []
        for connection in held:
            connection.release(committed)

    def _tick(self) -> None:
        """Once a second: refresh the clock and Date, close idle and overdue connections.

        The clock is the event loop's monotonic one: these are connection
        timeouts, not DynamoDB time rules, so they must not follow a clock
        that tests move.
        """
        assert self._loop is not None
        self.clock = now = self._loop.time()
        self.date_line = _date_line()
        # Stamps lag activity by up to one tick: add it, so that no
        # connection is closed before it has really been idle that long.
        limit, linger = self.keep_alive_timeout + _TICK, LINGER_SECONDS + _TICK
        deadline = self.request_timeout + _TICK
        expired = []
        overdue = []
        for c in self.connections:
            if now - c.last_active > (linger if c.lingering else limit):
                expired.append(c)
            elif c.request_started is not None and now - c.request_started > deadline:
                overdue.append(c)
        for connection in expired:
            connection.expire()
        for connection in overdue:
            connection.time_out()
        self._tick_handle = self._loop.call_later(_TICK, self._tick)

    def shutdown(self) -> None:
        """Stop accepting, finish requests under way, close everything (idempotent)."""
        if self.closing or self._loop is None:
            return
        self.closing = True
        assert self._server is not None
        self._server.close()
        for connection in list(self.connections):
            connection.shutdown()
        self._loop.call_later(self.shutdown_timeout, self._abort_rest)
        self.connection_gone()

    def _abort_rest(self) -> None:
        for connection in list(self.connections):
            connection.abort()
        self.connections.clear()
        self.connection_gone()

    def connection_gone(self) -> None:
        if (
            self.closing
            and not self.connections
            and self._done is not None
            and not self._done.done()
        ):
            if self._tick_handle is not None:
                self._tick_handle.cancel()
            self._done.set_result(None)


async def serve(
    app: PartitaApp,
    sock: socket.socket,
    *,
    keep_alive_timeout: float = 60.0,
    request_timeout: float = 60.0,
    shutdown_timeout: float = 10.0,
    ssl_context: ssl.SSLContext | None = None,
    on_hangup: Callable[[], object] | None = None,
) -> None:
    """Serve on `sock` until SIGTERM or SIGINT, then shut down gracefully.

    SIGHUP calls `on_hangup` (the `--auth` reload) between two requests;
    connections stay open.
    """
    loop = asyncio.get_running_loop()
    server = HttpServer(
        app,
        keep_alive_timeout=keep_alive_timeout,
        request_timeout=request_timeout,
        shutdown_timeout=shutdown_timeout,
        ssl_context=ssl_context,
    )
    await server.start(sock)
    handled = [signal.SIGTERM, signal.SIGINT]
    for signum in handled:
        loop.add_signal_handler(signum, server.shutdown)
    if on_hangup is not None:
        loop.add_signal_handler(signal.SIGHUP, on_hangup)
        handled.append(signal.SIGHUP)
    try:
        await server.wait_closed()
    finally:
        for signum in handled:
            loop.remove_signal_handler(signum)


def run(
    app: PartitaApp,
    sock: socket.socket,
    *,
    keep_alive_timeout: float = 60.0,
    request_timeout: float = 60.0,
    ssl_context: ssl.SSLContext | None = None,
    on_hangup: Callable[[], object] | None = None,
) -> None:
    """Run the server on uvloop in this process until it is told to stop."""
    import uvloop

    uvloop.run(
        serve(
            app,
            sock,
            keep_alive_timeout=keep_alive_timeout,
            request_timeout=request_timeout,
            ssl_context=ssl_context,
            on_hangup=on_hangup,
        )
    )
