"""The admin API's error: an HTTP status and a message, answered as {"error": message}."""

from __future__ import annotations


class AdminError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
