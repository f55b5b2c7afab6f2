"""PartiQL for DynamoDB: lexer, parser to an AST, compiler into the JSON operations' requests.

A statement is parsed once per text (cached) and compiled per request into
the same request dict the JSON operation it stands for takes (Query, Scan,
GetItem, PutItem, UpdateItem, DeleteItem, TransactWriteItems,
TransactGetItems), with generated expression attribute names and values, so
every rule of those operations (validation, conditions, capacity, indexes,
throttling) applies unchanged. `partita/api/partiql.py` runs them.
"""

from __future__ import annotations

from .errors import NOT_WELL_FORMED, malformed
from .parser import parse

__all__ = ["NOT_WELL_FORMED", "malformed", "parse"]
