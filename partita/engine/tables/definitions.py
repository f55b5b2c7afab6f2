"""A table's AttributeDefinitions after CreateTable: what UpdateTable may add, and what it must refuse.

DynamoDB keeps AttributeDefinitions equal to the attributes some key uses
(the table's, an LSI's, a GSI's, a vector index's search schema). UpdateTable
reads its AttributeDefinitions only for the key attributes of an index it
creates: other entries, even ones that contradict a stored type, are
ignored, and an attribute no key uses any more leaves the list when its
index is gone (recorded on the service in 2026, docs/decisions.md). A new
index may not give an attribute that is already a key a different type:
"Attributes cannot be redefined".
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...errors import ValidationException

INVALID = "One or more parameter values were invalid: "
_REDEFINED = (
    "Attributes cannot be redefined. Please check that your attribute has the same type as previously defined. "
)


def _key_schemas(description: dict[str, Any]) -> Iterator[list[dict[str, str]]]:
    yield description["KeySchema"]
    for kind in ("LocalSecondaryIndexes", "GlobalSecondaryIndexes"):
        for doc in description.get(kind, ()):
            yield doc["KeySchema"]


def used_attributes(description: dict[str, Any]) -> set[str]:
    """Every attribute a key of the table, or a vector index's search schema, uses."""
    used = {element["AttributeName"] for schema in _key_schemas(description) for element in schema}
    for doc in description.get("VectorIndexes", ()):
        used.update(element["AttributeName"] for element in doc.get("SearchSchema") or ())
    return used


def prune_definitions(description: dict[str, Any]) -> None:
    """Drop the definitions no key uses any more (an index is gone)."""
    used = used_attributes(description)
    description["AttributeDefinitions"] = [
        d for d in description["AttributeDefinitions"] if d["AttributeName"] in used
    ]


def add_definitions(description: dict[str, Any], request: dict[str, Any], names: set[str]) -> None:
    """Store the request's definitions of `names` (a new index's key attributes) not stored yet."""
    known = {d["AttributeName"] for d in description["AttributeDefinitions"]}
    for definition in request.get("AttributeDefinitions") or ():
        name = definition["AttributeName"]
        if name in names and name not in known:
            description["AttributeDefinitions"].append(definition)
            known.add(name)


def _existing_element(description: dict[str, Any], name: str) -> str | None:
    """How the schema that already keys on `name` shows it in "Existing schema: ...", or None.

    The table's key comes first, then the local and global indexes, then the
    vector indexes. Which schema DynamoDB names when several use the attribute
    is not on record (unconfirmed).
    """
    types = {d["AttributeName"]: d["AttributeType"] for d in description["AttributeDefinitions"]}
    for schema in _key_schemas(description):
        for element in schema:
            if element["AttributeName"] == name:
                return f"Schema:[SchemaElement: key{{{name}:{types[name]}:{element['KeyType']}}}]"
    for doc in description.get("VectorIndexes", ()):
        if doc["VectorAttribute"]["AttributeName"] == name:
            return f"VectorIndexSchema:[VectorAttribute: key{{{name}:L:{doc['Dimensions']}}}]"
    return None


def _existing_type(description: dict[str, Any], name: str) -> str | None:
    for definition in description["AttributeDefinitions"]:
        if definition["AttributeName"] == name:
            return definition["AttributeType"]
    if any(doc["VectorAttribute"]["AttributeName"] == name for doc in description.get("VectorIndexes", ())):
        return "L"
    return None


def _redefined(existing: str, new: str) -> ValidationException:
    # Recorded wording (ScyllaDB Alternator's test_gsi_updatetable.py quotes DynamoDB's answer for
    # a GSI over a GSI key; dynoxide and ExtendDB captured the vector forms in August 2026). Each
    # schema shows the one conflicting element: a record of a composite schema is not known.
    return ValidationException(f"{INVALID}{_REDEFINED}Existing schema: {existing} New schema: {new}")


def check_new_gsi_keys(description: dict[str, Any], create: dict[str, Any], requested: dict[str, str]) -> None:
    """A GSI created by UpdateTable may not retype an attribute some key already uses.

    `requested` maps the request's AttributeDefinitions; every key attribute
    of `create` is in it (checked before).
    """
    for element in create["KeySchema"]:
        name = element["AttributeName"]
        stored = _existing_type(description, name)
        if stored is None or stored == requested[name]:
            continue
        existing = _existing_element(description, name)
        if existing is None:  # a search-schema attribute: the stored type wins, as for unused definitions
            continue
        new = f"Schema:[SchemaElement: key{{{name}:{requested[name]}:{element['KeyType']}}}]"
        raise _redefined(existing, new)


def check_new_vector_attribute(description: dict[str, Any], spec: dict[str, Any]) -> None:
    """A vector index added by UpdateTable may not take an attribute some key uses as its vector."""
    name = spec["VectorAttribute"]["AttributeName"]
    existing = _existing_element(description, name)
    if existing is None or existing.startswith("VectorIndexSchema"):
        return  # another vector index over the attribute: the dimensions rule judges it
    raise _redefined(existing, f"VectorIndexSchema:[VectorAttribute: key{{{name}:L:{spec['Dimensions']}}}]")
