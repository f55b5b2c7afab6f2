"""Lists of items as the pages show them: columns (keys first), cells and each item's link."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from ..engine.model.sizes import item_size
from .values import describe_value
from .web import table_url


def item_rows(table_name: str, key_names: list[str], items: list[dict[str, Any]]) -> dict[str, Any]:
    columns = list(key_names)
    for item in items:
        for name in item:
            if name not in columns:
                columns.append(name)
    rows = []
    for item in items:
        key = {k: item[k] for k in key_names if k in item}
        link = None
        if len(key) == len(key_names):
            link = table_url(table_name, "item") + "?key=" + quote(json.dumps(key, separators=(",", ":")), safe="")
        rows.append({
            "link": link,
            "size": item_size(item),
            "cells": [describe_value(item[c]) if c in item else "" for c in columns],
        })
    return {"columns": columns, "rows": rows}


def table_key_names(doc: dict[str, Any]) -> list[str]:
    return [k["AttributeName"] for k in doc["KeySchema"]]
