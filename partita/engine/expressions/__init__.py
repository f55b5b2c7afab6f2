"""DynamoDB's expression language: parse once, check per request, evaluate per item.

Typical use by an operation::

    cond = parse_condition(req["ConditionExpression"])              # cached by text
    upd = parse_update(req["UpdateExpression"])
    check_placeholders([upd, cond], req.get("ExpressionAttributeNames"),
                       req.get("ExpressionAttributeValues"))
    if not bind(cond, names, values)(old_item or {}): ...

Parsing raises the errors that depend on the text only; `check_placeholders`
raises those that need the request's names and values (DynamoDB interleaves
the two kinds, and the parsed tree is shared across requests, so they cannot
be fused). Both raise `partita.errors.ValidationException` with DynamoDB's
messages. `evaluate`/`bind`/`project` assume the checks passed.
"""

from __future__ import annotations

from functools import lru_cache

from .ast import (
    AddAction,
    And,
    Arith,
    Between,
    Call,
    Compare,
    Condition,
    DeleteAction,
    In,
    Not,
    Or,
    Parsed,
    Path,
    Projection,
    RemoveAction,
    SetAction,
    Update,
    Value,
    path_str,
)
from .compare import compare, values_equal
from .evaluate import bind, bind_projection, evaluate, get_path, project, size_of
from .parser import parse_condition_text, parse_projection_text, parse_update_text
from .reserved import RESERVED_WORDS, is_reserved
from .validate import check_placeholders, resolve_path

__all__ = [
    "AddAction",
    "And",
    "Arith",
    "Between",
    "Call",
    "Compare",
    "Condition",
    "DeleteAction",
    "In",
    "Not",
    "Or",
    "Parsed",
    "Path",
    "Projection",
    "RESERVED_WORDS",
    "RemoveAction",
    "SetAction",
    "Update",
    "Value",
    "bind",
    "bind_projection",
    "check_placeholders",
    "compare",
    "evaluate",
    "get_path",
    "is_reserved",
    "parse_condition",
    "parse_projection",
    "parse_update",
    "path_str",
    "project",
    "resolve_path",
    "size_of",
    "values_equal",
]

_CACHE_SIZE = 4096


@lru_cache(maxsize=_CACHE_SIZE)
def _condition(kind: str, text: str) -> Condition:
    return parse_condition_text(text, kind)


def parse_condition(text: str, kind: str = "ConditionExpression") -> Condition:
    """Parse a ConditionExpression, FilterExpression or KeyConditionExpression.

    `kind` is the request parameter's name; DynamoDB puts it in every message.
    """
    return _condition(kind, text)


@lru_cache(maxsize=_CACHE_SIZE)
def parse_projection(text: str) -> Projection:
    """Parse a ProjectionExpression into its list of document paths."""
    return parse_projection_text(text)


@lru_cache(maxsize=_CACHE_SIZE)
def parse_update(text: str) -> Update:
    """Parse an UpdateExpression into its SET/REMOVE/ADD/DELETE actions, in text order."""
    return parse_update_text(text)
