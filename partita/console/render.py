"""The Jinja2 environment: templates from the package, autoescaped, loaded once per process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from markupsafe import Markup, escape

from .times import absolute, relative, when
from .values import describe_value, dynamodb_json, plain_json, type_label
from .web import CALLER, GUARDED, Caller

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
_ENV.filters["date"] = absolute
_ENV.globals["when"] = when
_ENV.globals["relative"] = relative


def _bytes(value: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if abs(value) < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"


def _size(value: float) -> str:
    """A size once, readable: "505 B", and "1.2 KB (1,234 B)" where the rounded unit hides the bytes."""
    shown = _bytes(value)
    return shown if abs(value) < 1024 else f"{shown} ({value:,.0f} B)"


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


def _guarded() -> bool:
    """Whether the server has a schema guard (`--schema`): the nav shows its page only then."""
    return GUARDED.get()


_ENV.globals["csrf_field"] = _csrf_field
_ENV.globals["caller"] = _caller
_ENV.globals["guarded"] = _guarded
_ENV.filters["bytes"] = _bytes
_ENV.filters["size"] = _size
_ENV.filters["units"] = _units


def render(template: str, **context: Any) -> str:
    return _ENV.get_template(template).render(**context)
