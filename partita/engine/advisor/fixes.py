"""The concrete inputs a finding's fix proposes: UpdateTable, CreateTable, Query, UpdateTimeToLive.

Built from the table's own description (DescribeTable's document), so an
input can be sent as it is: a provisioned table's new index gets the
table's throughput, attribute definitions list exactly the key attributes
the request uses, and an index name is checked against the table's own.
"""

from __future__ import annotations

import re
from typing import Any

Doc = dict[str, Any]
_NAME_CHARS = re.compile(r"[^A-Za-z0-9_.-]")


def index_name(doc: Doc, *attributes: str) -> str:
    """`by_<attributes>` in DynamoDB's index-name characters, not already a name of the table's indexes."""
    base = "by_" + "_".join(_NAME_CHARS.sub("_", a) for a in attributes)
    base = base[:250] if len(base) >= 3 else base + "_ix"
    taken = {ix["IndexName"] for member in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes")
             for ix in doc.get(member) or []}
    name, n = base, 2
    while name in taken:
        name, n = f"{base}{n}", n + 1
    return name


def _throughput(doc: Doc) -> dict[str, int] | None:
    if (doc.get("BillingModeSummary") or {}).get("BillingMode", "PROVISIONED") == "PAY_PER_REQUEST":
        return None
    given = doc.get("ProvisionedThroughput") or {}
    return {"ReadCapacityUnits": int(given.get("ReadCapacityUnits") or 5),
            "WriteCapacityUnits": int(given.get("WriteCapacityUnits") or 5)}


def projection(attributes: list[str], keys: set[str]) -> dict[str, Any]:
    """INCLUDE the non-key attributes read, or ALL when the reads take whole items."""
    extra = [a for a in attributes if a not in keys]
    if not attributes:
        return {"ProjectionType": "ALL"}
    if not extra:
        return {"ProjectionType": "KEYS_ONLY"}
    return {"ProjectionType": "INCLUDE", "NonKeyAttributes": extra}


def create_gsi(doc: Doc, name: str, hash_key: tuple[str, str], range_key: tuple[str, str] | None,
               projected: dict[str, Any]) -> dict[str, Any]:
    """UpdateTable input adding one global secondary index."""
    schema = [{"AttributeName": hash_key[0], "KeyType": "HASH"}]
    definitions = {hash_key[0]: hash_key[1]}
    if range_key is not None:
        schema.append({"AttributeName": range_key[0], "KeyType": "RANGE"})
        definitions[range_key[0]] = range_key[1]
    create: dict[str, Any] = {"IndexName": name, "KeySchema": schema, "Projection": projected}
    throughput = _throughput(doc)
    if throughput is not None:
        create["ProvisionedThroughput"] = throughput
    return {
        "TableName": doc["TableName"],
        "AttributeDefinitions": [{"AttributeName": n, "AttributeType": t} for n, t in definitions.items()],
        "GlobalSecondaryIndexUpdates": [{"Create": create}],
    }


def query_input(table: str, index: str | None, conditions: list[tuple[str, str, str]]) -> dict[str, Any]:
    """A Query on `index` with one placeholder per (attribute, operator text, value placeholder)."""
    names = {f"#k{i}": attr for i, (attr, _, _) in enumerate(conditions)}
    parts = [f"#k{i} {op} {value}" if op != "begins_with" else f"begins_with(#k{i}, {value})"
             for i, (_, op, value) in enumerate(conditions)]
    out: dict[str, Any] = {"TableName": table}
    if index is not None:
        out["IndexName"] = index
    out["KeyConditionExpression"] = " AND ".join(parts)
    out["ExpressionAttributeNames"] = names
    return out


def recreate_with_global_indexes(doc: Doc) -> dict[str, Any]:
    """CreateTable input for a copy of the table whose local indexes become global ones (no 10 GB cap).

    Local indexes exist only from CreateTable, so dropping one means a new
    table (and copying the items: an export and import, or a scan and batch
    writes). The copy is named `<table>-v2`.
    """
    out: dict[str, Any] = {
        "TableName": doc["TableName"] + "-v2",
        "KeySchema": doc["KeySchema"],
        "AttributeDefinitions": doc["AttributeDefinitions"],
    }
    throughput = _throughput(doc)
    if throughput is None:
        out["BillingMode"] = "PAY_PER_REQUEST"
    else:
        out["ProvisionedThroughput"] = throughput
    indexes = []
    for member in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes"):
        for ix in doc.get(member) or []:
            entry: dict[str, Any] = {"IndexName": ix["IndexName"], "KeySchema": ix["KeySchema"],
                                     "Projection": ix["Projection"]}
            if throughput is not None:
                entry["ProvisionedThroughput"] = throughput
            indexes.append(entry)
    if indexes:
        out["GlobalSecondaryIndexes"] = indexes
    return out


def step(operation: str, input_: dict[str, Any], why: str) -> dict[str, Any]:
    return {"operation": operation, "input": input_, "why": why}
