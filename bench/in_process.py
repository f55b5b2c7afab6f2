"""Stand-ins for the event loop and a transport, for benches that drive Partita's HTTP server in process.

`HttpConnection.data_received` keeps each complete request for the end of
the loop turn (`HttpServer.defer`), and answers are written when the turn
ends: a driver feeds a turn's reads, then runs what the server scheduled
(`Loop.run_turn`), as the server's loop would.
"""

from __future__ import annotations

from typing import Any


class Transport:
    """Enough of an asyncio transport for HttpConnection: answers are counted, not sent."""

    def __init__(self, only_ok: bool = False) -> None:
        self.answers = 0
        self._only_ok = only_ok  # every write must be a 200 answer

    def write(self, data: bytes) -> None:
        self.answers += 1
        if self._only_ok:
            assert data.startswith(b"HTTP/1.1 200"), data

    def get_write_buffer_size(self) -> int:
        return 0

    def is_closing(self) -> bool:
        return False

    def get_extra_info(self, name: str, default: object = None) -> object:
        return default


class Loop:
    """Collects what the server schedules; the driver runs it at the end of each turn."""

    def __init__(self) -> None:
        self.soon: list[Any] = []

    def call_soon(self, callback: Any, *args: Any) -> None:
        self.soon.append((callback, args))

    def run_turn(self) -> None:
        """Run what was scheduled, and what that schedules, as the loop would before its next poll."""
        while self.soon:
            soon, self.soon = self.soon, []
            for callback, args in soon:
                callback(*args)
