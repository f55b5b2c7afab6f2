"""Not written yet."""

from __future__ import annotations

from typing import Any

from .web import ConsoleError


def item_page(*args: Any) -> Any:
    raise ConsoleError(404, "this page is not written yet")


def save_item(*args: Any) -> Any:
    raise ConsoleError(404, "this page is not written yet")


def delete_item(*args: Any) -> Any:
    raise ConsoleError(404, "this page is not written yet")

