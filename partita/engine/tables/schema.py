"""A table's schema as the engine uses it: key attributes, indexes, row prefixes.

The full DescribeTable document is kept beside it (it is what the catalog
stores), but the hot paths only touch these few precomputed fields.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

from ..model.keys import (
    encode_partition,
    encode_sort,
    encode_tuple,
    partition_hash,
    prefix_successor,
    tuple_hash,
)
from ..vector.model import VectorIndex, vector_indexes_of

ROW_SPACE = b"\x01"
TABLE_INDEX_ID = 0
#: Catalog markers of a table whose changes go to the change log (engine/backups/changelog.py):
#: point-in-time recovery, a snapshot being taken, a live Kinesis streaming destination.
CHANGE_LOG_MARKERS = ("_PointInTimeRecovery", "_Capture", "_KinesisLive")

Item = dict[str, dict[str, Any]]


@dataclass(frozen=True, slots=True)
class KeyAttribute:
    name: str
    type: str  # "S", "N" or "B"


def _prefix(table_id: int, index_id: int) -> bytes:
    return ROW_SPACE + struct.pack(">IH", table_id, index_id)


def _key_attributes(
    key_schema: list[dict[str, str]], types: dict[str, str]
) -> tuple[tuple[KeyAttribute, ...], tuple[KeyAttribute, ...]]:
    """(HASH attributes, RANGE attributes) in schema order: one or two for a table or LSI, up to 4 + 4 for a GSI."""
    hash_keys: list[KeyAttribute] = []
    range_keys: list[KeyAttribute] = []
    for element in key_schema:
        attr = KeyAttribute(element["AttributeName"], types[element["AttributeName"]])
        (hash_keys if element["KeyType"] == "HASH" else range_keys).append(attr)
    assert hash_keys
    return tuple(hash_keys), tuple(range_keys)


@dataclass(slots=True)
class Index:
    """A secondary index: its key, its projection, and where its rows live.

    An index row is `prefix | hash(index pk) | pk | index sk | table key`: the
    table key makes entries unique when many items share an index key, and
    the index sort key is written prefix-free so the table key can follow it
    without disturbing the order.

    A GSI's key may have several HASH and RANGE attributes (multi-attribute
    keys): then pk and sk are the tuple encodings of those attributes
    (``keys.encode_tuple``) and the hash is ``keys.tuple_hash``. With one of
    each, both are byte for byte the single-attribute forms; ``multi`` only
    picks the general code paths, so single-attribute indexes keep the fast ones.
    """

    name: str
    is_global: bool
    index_id: int
    hash_keys: tuple[KeyAttribute, ...]
    range_keys: tuple[KeyAttribute, ...]
    projection: str  # ALL, KEYS_ONLY or INCLUDE
    non_key: frozenset[str]
    prefix: bytes = field(init=False)
    #: Every key attribute, HASH ones first, in schema order.
    key_attributes: tuple[KeyAttribute, ...] = field(init=False)
    key_names: tuple[str, ...] = field(init=False)
    #: More than one HASH or more than one RANGE attribute.
    multi: bool = field(init=False)
    #: The first HASH and RANGE attributes: the whole key of a single-attribute
    #: index (plain fields, not properties: the write and Query paths read them).
    hash_key: KeyAttribute = field(init=False)
    range_key: KeyAttribute | None = field(init=False)

    def __post_init__(self) -> None:
        self.prefix = b""
        self.key_attributes = self.hash_keys + self.range_keys
        self.key_names = tuple(a.name for a in self.key_attributes)
        self.multi = len(self.hash_keys) > 1 or len(self.range_keys) > 1
        self.hash_key = self.hash_keys[0]
        self.range_key = self.range_keys[0] if self.range_keys else None

    def covers(self, item: Item) -> bool:
        """Sparse indexes: an item without every index key attribute is not in the index.

        Writes reject a wrongly typed or empty index key before they get here;
        a backfill meets items written before the index existed, and skips
        those (as DynamoDB reports them as index key violations).
        """
        for attr in self.key_attributes:
            value = item.get(attr.name)
            if value is None or value.get(attr.type, "") == "":
                return False
        return True

    def project(self, item: Item, table_keys: tuple[str, ...]) -> Item:
        if self.projection == "ALL":
            return item
        keep = set(table_keys) | set(self.key_names)
        if self.projection == "INCLUDE":
            keep |= self.non_key
        return {name: value for name, value in item.items() if name in keep}


@dataclass(slots=True)
class Table:
    """One table: its DescribeTable document and what key handling needs."""

    description: dict[str, Any]
    table_id: int
    hash_key: KeyAttribute
    range_key: KeyAttribute | None
    indexes: list[Index] = field(default_factory=list)
    #: Vector indexes (engine/vector); empty for almost every table.
    vector_indexes: list[VectorIndex] = field(default_factory=list)
    prefix: bytes = field(init=False)
    #: Contributor Insights is on for the table or an index (capacity/partitions.py INSIGHTS):
    #: the meter ranks its keys exactly instead of by a sample (capacity/resources.py).
    insights: bool = field(init=False)
    #: Its changes go to the change log (CHANGE_LOG_MARKERS): judged once per parsed table, so
    #: the write path of a table with none of them pays one attribute read.
    logs_changes: bool = field(init=False)
    #: The global table this table is a replica of (engine/regions/group.py), else None: the
    #: one check the write path makes for tables of no global table.
    replication: dict[str, Any] | None = field(init=False)
    #: The indexes in the order an item's index key values are checked: global ones first,
    #: then local ones, each as declared. A value that breaks several indexes names the first:
    #: recorded on AWS in 2026 naming a GSI over an LSI on the same attribute.
    checked_indexes: list[Index] = field(init=False)

    def __post_init__(self) -> None:
        self.prefix = _prefix(self.table_id, TABLE_INDEX_ID)
        self.insights = "_ContributorInsights" in self.description
        self.logs_changes = any(marker in self.description for marker in CHANGE_LOG_MARKERS)
        self.replication = self.description.get("_Replication")
        self.checked_indexes = [i for i in self.indexes if i.is_global] + [i for i in self.indexes if not i.is_global]
        for index in self.indexes:
            index.prefix = _prefix(self.table_id, index.index_id)

    @property
    def name(self) -> str:
        return self.description["TableName"]

    @property
    def key_names(self) -> tuple[str, ...]:
        if self.range_key is None:
            return (self.hash_key.name,)
        return (self.hash_key.name, self.range_key.name)

    def index(self, name: str) -> Index | None:
        for index in self.indexes:
            if index.name == name:
                return index
        return None

    def table_key_bytes(self, key: Item) -> bytes:
        """pk (prefix-free) followed by sk: the part of a row key after the hash."""
        hk = self.hash_key
        out = encode_partition(hk.type, key[hk.name][hk.type])
        rk = self.range_key
        if rk is not None:
            out += encode_sort(rk.type, key[rk.name][rk.type])
        return out

    def row_key(self, key: Item) -> bytes:
        """The stored row key of a validated key (or item): prefix|hash|pk|sk."""
        hk = self.hash_key
        return self.prefix + partition_hash(hk.type, key[hk.name][hk.type]) + self.table_key_bytes(key)

    def index_row_key(self, index: Index, item: Item) -> bytes:
        if index.multi:
            hash_parts = tuple((a.type, item[a.name][a.type]) for a in index.hash_keys)
            range_parts = tuple((a.type, item[a.name][a.type]) for a in index.range_keys)
            return (
                index.prefix
                + tuple_hash(hash_parts)
                + encode_tuple(hash_parts)
                + encode_tuple(range_parts)
                + self.table_key_bytes(item)
            )
        hk, rk = index.hash_key, index.range_key
        pk_value = item[hk.name][hk.type]
        out = index.prefix + partition_hash(hk.type, pk_value) + encode_partition(hk.type, pk_value)
        if rk is not None:
            out += encode_partition(rk.type, item[rk.name][rk.type])
        return out + self.table_key_bytes(item)

    def data_range(self) -> tuple[bytes, bytes]:
        """The first and past-the-last row keys of every row of this table (not its indexes)."""
        end = prefix_successor(self.prefix)
        assert end is not None
        return self.prefix, end

    def all_rows_range(self) -> tuple[bytes, bytes]:
        """Every row of the table and of all its indexes, present or past."""
        start = _prefix(self.table_id, 0)
        end = prefix_successor(ROW_SPACE + struct.pack(">I", self.table_id))
        assert end is not None
        return start, end

    @classmethod
    def from_description(cls, description: dict[str, Any], table_id: int) -> Table:
        types = {d["AttributeName"]: d["AttributeType"] for d in description["AttributeDefinitions"]}
        hash_keys, range_keys = _key_attributes(description["KeySchema"], types)
        ids = description.get("_IndexIds", {})
        indexes = []
        for kind, is_global in (("LocalSecondaryIndexes", False), ("GlobalSecondaryIndexes", True)):
            for spec in description.get(kind, []):
                ihash, irange = _key_attributes(spec["KeySchema"], types)
                projection = spec["Projection"]
                indexes.append(
                    Index(
                        spec["IndexName"],
                        is_global,
                        ids[spec["IndexName"]],
                        ihash,
                        irange,
                        projection["ProjectionType"],
                        frozenset(projection.get("NonKeyAttributes", ())),
                    )
                )
        return cls(
            description, table_id, hash_keys[0], range_keys[0] if range_keys else None, indexes,
            vector_indexes_of(description, types, table_id),
        )
