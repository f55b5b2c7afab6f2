"""The Jinja2 environment: templates from the package, autoescaped, loaded once per process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from markupsafe import Markup, escape

from .values import describe_value, dynamodb_json, plain_json, type_label
from .web import CALLER, Caller

_ENV = Environment(
    loader=FileSystemLoader(Path(__file__).parent / "templates"),
    # Every template is HTML: escape everything that is not marked safe,
    # whatever a table name, attribute name or value contains.
    autoescape=select_autoescape(default=True, default_for_string=True),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
_ENV.filters["ddb_json"] = dynamodb_json
_ENV.filters["plain_json"] = plain_json
_ENV.filters["describe"] = describe_value
_ENV.filters["type_label"] = type_label


def _bytes(value: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if abs(value) < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"


def _units(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:g}"


def _csrf_field() -> Markup:
    """The hidden CSRF field every POST form carries (empty without `--auth`: no session to protect)."""
    caller = CALLER.get()
    if caller is None:
        return Markup("")
    return Markup('<input type="hidden" name="csrf" value="%s">') % escape(caller.csrf)


def _caller() -> Caller | None:
    return CALLER.get()


_ENV.globals["csrf_field"] = _csrf_field
_ENV.globals["caller"] = _caller
_ENV.filters["bytes"] = _bytes
_ENV.filters["units"] = _units


def render(template: str, **context: Any) -> str:
    return _ENV.get_template(template).render(**context)
