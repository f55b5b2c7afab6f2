"""Lists of items as the pages show them: columns (keys first), cells, and where each key links.

A table with a sort key links each row's partition-key value to its item
collection and its sort-key value to the item: the partition-key cell reads
the same on every row of a collection, so it is the collection's link, and
the sort key is what tells one item from the next. A table with a partition
key only links that cell to the item (a collection of one item).
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote, urlencode

from ..engine.model.sizes import item_size
from .values import describe_value
from .web import table_url


def item_rows(table_name: str, key_names: list[str], items: list[dict[str, Any]]) -> dict[str, Any]:
    columns = list(key_names)
    for item in items:
        for name in item:
            if name not in columns:
                columns.append(name)
    item_column = len(key_names) - 1  # the sort key's, else the partition key's
    rows = []
    for item in items:
        key = {k: item[k] for k in key_names if k in item}
        links: dict[int, str] = {}
        if len(key) == len(key_names):
            links[item_column] = table_url(table_name, "item") + "?key=" + quote(
                json.dumps(key, separators=(",", ":")), safe="")
            if item_column > 0:
                links[0] = collection_url(table_name, key[key_names[0]])
        rows.append({
            "size": item_size(item),
            "cells": [{"text": describe_value(item[c]) if c in item else "", "link": links.get(i)}
                      for i, c in enumerate(columns)],
        })
    return {"columns": columns, "rows": rows}


def collection_url(table_name: str, value: dict[str, Any]) -> str:
    """The collection page of one partition-key value (its text: S as is, N digits, B base64)."""
    (text,) = value.values()
    return table_url(table_name, "collection") + "?" + urlencode({"pk": text})


def table_key_names(doc: dict[str, Any]) -> list[str]:
    return [k["AttributeName"] for k in doc["KeySchema"]]
