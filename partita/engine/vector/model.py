"""A vector index as the write path and SearchVectors use it.

Built from the table's DescribeTable document (`VectorIndexes`), like
`schema.Index` is for GSIs/LSIs. Entry rows live under the index's own row
prefix (`ROW_SPACE | table id | index id`, the layout of `schema._prefix`)
so DeleteTable's range delete and DescribeTable's `stats` cover them; each
index also has one version row under the reserved index id 0xFFFF that every
change to the index bumps in the same commit, which is how a cached search
matrix (in this process or another worker) learns it is stale.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

from ..model.sizes import value_size

ROW_SPACE = b"\x01"
#: Index id whose rows are the per-index version counters (never a real index).
VERSION_SPACE = 0xFFFF
#: Index id whose rows are the per-index change logs (`entries.bump_version`).
LOG_SPACE = 0xFFFE
MAX_VECTOR_INDEXES = 5
MAX_DIMENSIONS = 4096
MAX_TOP_K = 100
#: Floor of a vector request's bytes (VectorSearchRequestBytes, VectorWriteRequestBytes):
#: every request to an index is metered at least 1 KB.
MIN_REQUEST_BYTES = 1024


def write_request_bytes(written: dict[str, int]) -> dict[str, float]:
    """VectorWriteRequestBytes per index from the entry bytes one item write sent to it."""
    return {name: float(max(MIN_REQUEST_BYTES, size)) for name, size in written.items()}


def billed_size(indexes: list[VectorIndex], item: dict[str, Any], size: int) -> int:
    """The size a write is billed at: `size` with each indexed vector counted 4 bytes a dimension.

    Recorded on the service (paritysuite/dynamodb-conformance, consumedCapacity, eu-west-2 and
    us-east-1, 2026-10-09): an attribute a vector index reads is billed on a write at its name
    plus 4 bytes per dimension, whatever numbers it holds, while reads and the 400 KB limit
    size it as the list of numbers it is. A value that is not a vector of the index's length
    (an item a backfill left out) is billed as stored.
    """
    seen: set[str] = set()
    for index in indexes:
        value = item.get(index.attribute)
        if index.attribute in seen or not isinstance(value, dict):
            continue
        elements = value.get("L")
        if (isinstance(elements, list) and len(elements) == index.dimensions
                and all(isinstance(e, dict) and "N" in e for e in elements)):
            seen.add(index.attribute)
            size += 4 * index.dimensions - value_size(value)
    return size


def _prefix(table_id: int, index_id: int) -> bytes:
    return ROW_SPACE + struct.pack(">IH", table_id, index_id)


@dataclass(slots=True)
class VectorIndex:
    name: str
    index_id: int
    table_id: int
    attribute: str
    dimensions: int
    distance: str  # COSINE, EUCLIDEAN or DOT_PRODUCT
    #: The search schema's HASH attribute (name, type), if any.
    hash_key: tuple[str, str] | None
    #: INLINE_FILTER attributes (name, type), in schema order.
    filters: tuple[tuple[str, str], ...]
    projection: str  # ALL, KEYS_ONLY or INCLUDE
    non_key: frozenset[str]
    status: str  # CREATING, ACTIVE or DELETING
    prefix: bytes = field(init=False)
    version_key: bytes = field(init=False)
    #: Prefix of the index's change-log rows (`log_prefix | version (8 bytes)`).
    log_prefix: bytes = field(init=False)
    #: Every search-schema attribute (name, type), HASH first.
    schema: tuple[tuple[str, str], ...] = field(init=False)

    def __post_init__(self) -> None:
        self.prefix = _prefix(self.table_id, self.index_id)
        self.version_key = _prefix(self.table_id, VERSION_SPACE) + struct.pack(">H", self.index_id)
        self.log_prefix = _prefix(self.table_id, LOG_SPACE) + struct.pack(">H", self.index_id)
        self.schema = ((self.hash_key,) if self.hash_key else ()) + self.filters


    def log_key(self, number: int) -> bytes:
        return self.log_prefix + struct.pack(">Q", number)


def vector_indexes_of(description: dict[str, Any], types: dict[str, str], table_id: int) -> list[VectorIndex]:
    """The table's vector indexes from its description (empty for almost every table)."""
    docs = description.get("VectorIndexes")
    if not docs:
        return []
    ids = description.get("_IndexIds", {})
    out = []
    for doc in docs:
        hash_key = None
        filters = []
        for element in doc.get("SearchSchema") or ():
            name = element["AttributeName"]
            pair = (name, types.get(name, "S"))
            if element["SearchSchemaElementType"] == "HASH":
                hash_key = pair
            else:
                filters.append(pair)
        projection = doc["Projection"]
        out.append(
            VectorIndex(
                doc["IndexName"],
                ids[doc["IndexName"]],
                table_id,
                doc["VectorAttribute"]["AttributeName"],
                int(doc["Dimensions"]),
                doc["DistanceFunction"],
                hash_key,
                tuple(filters),
                projection.get("ProjectionType", "ALL"),
                frozenset(projection.get("NonKeyAttributes", ())),
                doc.get("IndexStatus", "ACTIVE"),
            )
        )
    return out
