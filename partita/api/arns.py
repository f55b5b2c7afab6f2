"""A table ARN wherever DynamoDB accepts one in place of a table name.

Every `TableName` member (and BatchGetItem/BatchWriteItem's table keys and
each transaction action's table) is resolved once, before the operation
runs, so the engine, its messages and its answers all see the plain name.
"""

from __future__ import annotations

from typing import Any

from ..engine.control.arns import table_name
from ..errors import ValidationException

_BATCH_OPERATIONS = frozenset({"BatchGetItem", "BatchWriteItem"})
_TRANSACT_OPERATIONS = frozenset({"TransactGetItems", "TransactWriteItems"})


def resolve_table_arns(operation: str, request: dict[str, Any], region: str) -> None:
    """Replace table ARNs by table names in `request`, in place; cheap when there are none."""
    name = request.get("TableName")
    if isinstance(name, str) and name.startswith("arn:"):
        request["TableName"] = table_name(name, region)
    if operation in _BATCH_OPERATIONS:
        items = request.get("RequestItems")
        if isinstance(items, dict) and any(key.startswith("arn:") for key in items):
            resolved = {table_name(key, region): value for key, value in items.items()}
            if len(resolved) != len(items):
                # Partita's wording: one table named twice (by name and by ARN).
                raise ValidationException("The RequestItems name the same table more than once")
            request["RequestItems"] = resolved
    elif operation in _TRANSACT_OPERATIONS:
        for action in request.get("TransactItems") or ():
            if not isinstance(action, dict):
                continue
            for body in action.values():
                inner = body.get("TableName") if isinstance(body, dict) else None
                if isinstance(inner, str) and inner.startswith("arn:"):
                    body["TableName"] = table_name(inner, region)
