"""Declaring vector indexes: CreateTable's VectorIndexes, UpdateTable's VectorIndexUpdates.

The shape validator has already applied the service model (required
members, IndexName pattern and length, DistanceFunction and
SearchSchemaElementType enums, Dimensions >= 1, SearchSchema non-empty).
These are the semantic rules, in the order DynamoDB checks them as far as
recorded. Messages marked "unconfirmed" were not found verbatim in AWS's
documentation or in a recording of the service; they follow the wording
of the neighbouring GSI rules (see docs/decisions.md, "Vector indexes").
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...errors import (
    LimitExceededException,
    ResourceInUseException,
    ResourceNotFoundException,
    ValidationException,
)
from ..tables.definitions import check_new_vector_attribute
from ..tables.index_phases import IndexTiming, allocating, begin_create, begin_delete
from ..tables.projections import check_projection
from .model import MAX_DIMENSIONS, MAX_VECTOR_INDEXES

INVALID = "One or more parameter values were invalid: "
#: Documented limits (developer guide, vector index quotas).
MAX_HASH_ELEMENTS = 1
MAX_INLINE_FILTERS = 18
ONE_ONLINE_INDEX = "Subscriber limit exceeded: Only 1 online index can be created or deleted simultaneously per table"


def _invalid(message: str) -> ValidationException:
    return ValidationException(INVALID + message)


def check_vector_index(spec: dict[str, Any], definitions: dict[str, str] | None) -> None:
    """One index's own rules; `definitions` maps the request's AttributeDefinitions (None: absent)."""
    if spec["Dimensions"] > MAX_DIMENSIONS:
        # Recorded wording (conformance suites' captures of the service).
        raise _invalid(f"Number of dimensions must be between 1 and {MAX_DIMENSIONS} inclusive.")
    schema = spec.get("SearchSchema") or []
    for element in schema:
        if definitions is None or element["AttributeName"] not in definitions:
            # Verbatim in the developer guide's troubleshooting page.
            raise _invalid("One element in SearchSchema is not defined in attribute definitions")
    names = [e["AttributeName"] for e in schema]
    if len(set(names)) != len(names):
        duplicate = next(n for n in names if names.count(n) > 1)
        raise _invalid(f"Duplicate attribute in SearchSchema: {duplicate}")  # unconfirmed
    hashes = [e for e in schema if e["SearchSchemaElementType"] == "HASH"]
    if len(hashes) > MAX_HASH_ELEMENTS:
        raise _invalid(f"SearchSchema can have at most {MAX_HASH_ELEMENTS} HASH element")  # unconfirmed
    if len(schema) - len(hashes) > MAX_INLINE_FILTERS:
        raise _invalid(f"SearchSchema can have at most {MAX_INLINE_FILTERS} INLINE_FILTER elements")  # unconfirmed
    vector = spec["VectorAttribute"]["AttributeName"]
    if vector in names:
        # unconfirmed: a vector (a list) can never be a search-schema key (S, N or B).
        raise _invalid(f"VectorAttribute {vector} cannot be part of the SearchSchema of index: {spec['IndexName']}")
    check_projection(spec["Projection"])


def check_dimensions_agree(specs: Iterable[dict[str, Any]]) -> None:
    """Indexes over one vector attribute must declare one dimension count (documented rule)."""
    seen: dict[str, int] = {}
    for spec in specs:
        attribute = spec["VectorAttribute"]["AttributeName"]
        dims = spec["Dimensions"]
        if seen.setdefault(attribute, dims) != dims:
            # Recorded wording (conformance suites' captures of the service).
            raise _invalid(
                f"Conflicting attribute definition for '{attribute}'. All VectorIndexes on the same vector "
                "attribute must use the same dimensions."
            )


def check_billing(billing: str) -> None:
    if billing != "PAY_PER_REQUEST":
        # Documented restriction (on-demand only); wording from conformance captures, unconfirmed.
        raise _invalid("Vector indexes are only supported for PAY_PER_REQUEST tables")


def projected_count(spec: dict[str, Any]) -> int:
    """What one vector index adds to the table's projected-attribute total (documented counting)."""
    filters = [e for e in spec.get("SearchSchema") or [] if e["SearchSchemaElementType"] == "INLINE_FILTER"]
    return 1 + len(filters) + len(spec["Projection"].get("NonKeyAttributes") or [])


def schema_attributes(specs: Iterable[dict[str, Any]]) -> set[str]:
    return {e["AttributeName"] for spec in specs for e in spec.get("SearchSchema") or []}


def validate_create(request: dict[str, Any], seen_names: set[str]) -> None:
    """CreateTable's VectorIndexes; `seen_names` holds the GSI/LSI names already declared."""
    specs = request.get("VectorIndexes")
    if specs is None:
        return
    if not specs:
        raise _invalid("List of VectorIndexes is empty")  # unconfirmed (the GSI/LSI wording)
    if len(specs) > MAX_VECTOR_INDEXES:
        raise _invalid(f"VectorIndex count exceeds the per-table limit of {MAX_VECTOR_INDEXES}")
    check_billing(request.get("BillingMode", "PROVISIONED"))
    definitions = {d["AttributeName"]: d["AttributeType"] for d in request["AttributeDefinitions"]}
    for spec in specs:
        check_vector_index(spec, definitions)
        name = spec["IndexName"]
        if name in seen_names:
            raise _invalid(f"Duplicate index name: {name}")
        seen_names.add(name)
    check_dimensions_agree(specs)


def vector_document(spec: dict[str, Any], table_arn: str, status: str) -> dict[str, Any]:
    """A vector index as DescribeTable reports it (counts are filled in live)."""
    doc: dict[str, Any] = {
        "IndexName": spec["IndexName"],
        "VectorAttribute": {"AttributeName": spec["VectorAttribute"]["AttributeName"]},
        "Dimensions": spec["Dimensions"],
        "DistanceFunction": spec["DistanceFunction"],
        "Projection": spec["Projection"],
    }
    if spec.get("SearchSchema"):
        doc["SearchSchema"] = spec["SearchSchema"]
    doc["IndexStatus"] = status
    if status == "CREATING":
        doc["Backfilling"] = True
    doc.update(IndexSizeBytes=0, ItemCount=0, IndexArn=f"{table_arn}/index/{spec['IndexName']}")
    return doc


def _new_id(description: dict[str, Any], name: str) -> None:
    next_id = description.get("_NextIndexId", 1)
    description.setdefault("_IndexIds", {})[name] = next_id
    description["_NextIndexId"] = next_id + 1


def describe_create(request: dict[str, Any], description: dict[str, Any]) -> None:
    """CreateTable: vector indexes are ACTIVE at once (an empty table has nothing to backfill)."""
    specs = request.get("VectorIndexes")
    if not specs:
        return
    description["VectorIndexes"] = [vector_document(s, description["TableArn"], "ACTIVE") for s in specs]
    for spec in specs:
        _new_id(description, spec["IndexName"])


# -- UpdateTable ---------------------------------------------------------------------------


def validate_update_request(request: dict[str, Any]) -> None:
    """Request-level rules of VectorIndexUpdates (before the table is read)."""
    for update in request.get("VectorIndexUpdates") or []:
        actions = [a for a in ("Create", "Delete") if a in update]
        if not actions:
            # unconfirmed: the GlobalSecondaryIndexUpdate wording.
            raise _invalid("One of VectorIndexUpdate.Create, VectorIndexUpdate.Delete must not be null")
        if len(actions) > 1:
            raise _invalid("Only one vector index action is allowed per VectorIndexUpdate object")  # unconfirmed


def busy(description: dict[str, Any]) -> bool:
    """Whether an online index change (GSI or vector) is under way on the table."""
    return any(
        d.get("IndexStatus") in ("CREATING", "DELETING")
        for kind in ("GlobalSecondaryIndexes", "VectorIndexes")
        for d in description.get(kind, [])
    )


def check_deletable(description: dict[str, Any]) -> None:
    """Refuse DeleteTable while a vector index is being built or dropped.

    Recorded on the service with the table ACTIVE and a vector index CREATING (backfilling)
    (nubo-db/dynamodb-conformance, updateLifecycle, eu-west-2, 2026-08-21). The same answer
    during resource allocation (table UPDATING) and for a DELETING index is our reading of
    the message; GSIs are left as they were (no recording of theirs here).
    """
    if any(d.get("IndexStatus") in ("CREATING", "DELETING") for d in description.get("VectorIndexes", [])):
        raise ResourceInUseException(
            "Attempt to change a resource which is still in use: "
            "Cannot delete table while indexes are being created, updated, or deleted."
        )


def check_update(description: dict[str, Any], request: dict[str, Any], billing: str, gsi_online: int) -> None:
    """Table-dependent rules of VectorIndexUpdates; nothing has changed yet."""
    updates = request.get("VectorIndexUpdates") or []
    if not updates:
        return
    current = description.get("VectorIndexes", [])
    # One online index operation per table, shared with GSI creation (documented and recorded).
    if len(updates) + gsi_online > 1 or (busy(description) and not _cancels_backfill(description, updates[0])):
        raise LimitExceededException(ONE_ONLINE_INDEX)
    names = {d["IndexName"] for kind in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes", "VectorIndexes")
             for d in description.get(kind, [])}
    for update in updates:
        if "Delete" in update:
            name = update["Delete"]["IndexName"]
            if not any(d["IndexName"] == name for d in current):
                raise ResourceNotFoundException(f"Requested resource not found: Index: {name} not found")
            continue
        spec = update["Create"]
        if spec["IndexName"] in names:
            raise ValidationException("Attempting to create an index which already exists")
        definitions = request.get("AttributeDefinitions")
        # Recorded: the SearchSchema is checked against this request's AttributeDefinitions,
        # not merged with the table's.
        check_vector_index(spec, None if definitions is None else
                           {d["AttributeName"]: d["AttributeType"] for d in definitions})
        check_new_vector_attribute(description, spec)
        check_billing(billing)
        if len(current) >= MAX_VECTOR_INDEXES:
            raise LimitExceededException(f"{INVALID}VectorIndex count exceeds the per-table limit of {MAX_VECTOR_INDEXES}")
        check_dimensions_agree([*current, spec])


def _cancels_backfill(description: dict[str, Any], update: dict[str, Any]) -> bool:
    """Whether `update` deletes a vector index still CREATING, which the service takes once it backfills.

    Recorded on the service (nubo-db/dynamodb-conformance, updateLifecycle, eu-west-2,
    2026-08-23): a Delete during resource allocation is refused with the phase's
    ResourceInUseException (the GSI's wording, bare table and index names), and the same
    Delete is accepted once Backfilling turns true; neither answers the online-index limit.
    """
    if "Delete" not in update:
        return False
    name = update["Delete"]["IndexName"]
    doc = next((d for d in description.get("VectorIndexes", []) if d["IndexName"] == name), None)
    if doc is None or doc.get("IndexStatus") != "CREATING":
        return False
    if allocating(doc):
        raise ResourceInUseException(
            "Attempt to change a resource which is still in use: Index creation is in resource "
            "allocation phase. Retry deletion during backfilling phase or when the index is active. "
            f"Table: {description['TableName']} Index: {name}"
        )
    return True


def apply_update(description: dict[str, Any], request: dict[str, Any], now: float, timing: IndexTiming) -> None:
    """Mark the change: a new index CREATING (backfilled by index_jobs), a deleted one DELETING.

    Its phases are timed as a GSI's (`index_phases`): no record of a vector
    index's own phases was found, so they follow the GSI's (unconfirmed).
    """
    for update in request.get("VectorIndexUpdates") or []:
        if "Create" in update:
            spec = update["Create"]
            doc = vector_document(spec, description["TableArn"], "CREATING")
            doc["Backfilling"] = begin_create(description, spec["IndexName"], now, timing)
            description.setdefault("VectorIndexes", []).append(doc)
            _new_id(description, spec["IndexName"])
        else:
            for doc in description.get("VectorIndexes", []):
                if doc["IndexName"] == update["Delete"]["IndexName"]:
                    doc["IndexStatus"] = "DELETING"
                    doc.pop("Backfilling", None)
                    begin_delete(description, doc["IndexName"], now, timing)
