"""The connection of a server with `--auth`: HttpConnection, plus what signature checks need of the head.

Apart from connection.py so that a server without `--auth` never loads it
(HttpServer.start picks the class).
"""

from __future__ import annotations

from .connection import HttpConnection


class SigningConnection(HttpConnection):
    """A connection of a server with `--auth`: a header sent twice is also kept joined.

    SigV4 signs a repeated header over its values joined by commas; the rest
    of Partita reads the first value. Only `--auth` servers pay the lookup.
    A `/console` request also gets the client's address (console.web.PEER), which
    the sign-in throttle counts by.
    """

    __slots__ = ()

    def on_header(self, name: bytes, value: bytes) -> None:
        key = name.lower()
        headers = self._headers
        if key in headers:  # an operator, not a method call: this runs for every header
            from .auth.sigv4 import note_repeated  # --auth's (loaded with it): no start-up cost

            note_repeated(headers, key, headers[key], value)  # the first value stays
        else:
            headers[key] = value

    def on_headers_complete(self) -> None:
        if self._url.startswith(b"/console") and self._transport is not None:
            # The console is loaded by its first request, not at start-up.
            from ..console.web import PEER

            peer = self._transport.get_extra_info("peername")
            self._headers[PEER] = str(peer[0] if isinstance(peer, tuple) else peer or "").encode("latin-1", "replace")
        HttpConnection.on_headers_complete(self)  # not super(): no proxy object per request
