"""Not written yet."""

from __future__ import annotations

from typing import Any

from .web import ConsoleError


def query_page(*args: Any) -> Any:
    raise ConsoleError(404, "this page is not written yet")

