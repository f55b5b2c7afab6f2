"""Servers started with a schema guard (`partita serve --schema FILE`), on the store under test."""

from __future__ import annotations

import json
import urllib.request
import uuid
from pathlib import Path
from typing import Any

from conftest import PG_URL, STORE, Server, fresh_database, launch

#: The reject message's fixed part (Partita's own wording: no DynamoDB counterpart).
REJECTED = "Schema guard: the item does not match schema {entity}: {error}"


def store_args(folder: Path) -> list[str]:
    if STORE == "postgres" and PG_URL:
        return ["--backend", fresh_database("guard")]
    if STORE == "sqlite":
        return ["--data-dir", str(folder)]
    return ["--in-memory"]


def guard_server(folder: Path, document: dict[str, Any], *extra: str) -> Server:
    """A server whose --schema is `document` (written as JSON into `folder`)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"schema-{uuid.uuid4().hex[:6]}.json"
    path.write_text(json.dumps(document))
    return launch(*store_args(folder / "store"), "--schema", str(path), *extra)


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.loads(response.read())


def keyed_table(ddb: Any, name: str, sort: tuple[str, str] | None = ("sk", "S"),
                hash_key: tuple[str, str] = ("pk", "S")) -> None:
    schema = [{"AttributeName": hash_key[0], "KeyType": "HASH"}]
    definitions = [{"AttributeName": hash_key[0], "AttributeType": hash_key[1]}]
    if sort is not None:
        schema.append({"AttributeName": sort[0], "KeyType": "RANGE"})
        definitions.append({"AttributeName": sort[0], "AttributeType": sort[1]})
    ddb.create_table(TableName=name, KeySchema=schema, AttributeDefinitions=definitions,
                     BillingMode="PAY_PER_REQUEST")
