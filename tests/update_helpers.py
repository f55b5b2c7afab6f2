"""Helpers shared by the UpdateItem tests: wire values, an update call, its error, get and put."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import error_of

KEY = {"pk": {"S": "k"}}


def N(n: int | str) -> dict[str, str]:  # noqa: N802 - reads like the wire type
    return {"N": str(n)}


def S(s: str) -> dict[str, str]:  # noqa: N802
    return {"S": s}


def L(*values: dict[str, Any]) -> dict[str, Any]:  # noqa: N802
    return {"L": list(values)}


def update(
    ddb: Any,
    table: str,
    expression: str | None,
    values: dict[str, Any] | None = None,
    names: dict[str, str] | None = None,
    key: dict[str, Any] = KEY,
    **extra: Any,
) -> dict[str, Any]:
    params: dict[str, Any] = {"TableName": table, "Key": key, **extra}
    if expression is not None:
        params["UpdateExpression"] = expression
    if values:
        params["ExpressionAttributeValues"] = values
    if names:
        params["ExpressionAttributeNames"] = names
    return ddb.update_item(**params)


def failure(ddb: Any, table: str, expression: str | None, values: dict[str, Any] | None = None,
            names: dict[str, str] | None = None, **extra: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        update(ddb, table, expression, values, names, **extra)
    return error_of(excinfo)


def get(ddb: Any, table: str, key: dict[str, Any] = KEY) -> dict[str, Any] | None:
    return ddb.get_item(TableName=table, Key=key, ConsistentRead=True).get("Item")


def put(ddb: Any, table: str, **attributes: dict[str, Any]) -> dict[str, Any]:
    item = {**KEY, **attributes}
    ddb.put_item(TableName=table, Item=item)
    return item
