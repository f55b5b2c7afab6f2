"""A table's schema as the engine uses it: key attributes and row prefixes.

The full DescribeTable document is kept beside it (it is what the catalog
stores), but the hot paths only touch these few precomputed fields.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

from .keys import encode_partition, encode_sort, partition_hash, prefix_successor

ROW_SPACE = b"\x01"
TABLE_INDEX_ID = 0


@dataclass(frozen=True, slots=True)
class KeyAttribute:
    name: str
    type: str  # "S", "N" or "B"


@dataclass(slots=True)
class Table:
    """One table: its DescribeTable document and what key handling needs."""

    description: dict[str, Any]
    table_id: int
    hash_key: KeyAttribute
    range_key: KeyAttribute | None
    prefix: bytes = field(init=False)

    def __post_init__(self) -> None:
        self.prefix = ROW_SPACE + struct.pack(">IH", self.table_id, TABLE_INDEX_ID)

    @property
    def name(self) -> str:
        return self.description["TableName"]

    @property
    def key_names(self) -> tuple[str, ...]:
        if self.range_key is None:
            return (self.hash_key.name,)
        return (self.hash_key.name, self.range_key.name)

    def row_key(self, key: dict[str, dict[str, Any]]) -> bytes:
        """The stored row key of a validated key (or item): prefix|hash|pk|sk."""
        hk = self.hash_key
        pk_value = key[hk.name][hk.type]
        out = self.prefix + partition_hash(hk.type, pk_value) + encode_partition(hk.type, pk_value)
        rk = self.range_key
        if rk is not None:
            out += encode_sort(rk.type, key[rk.name][rk.type])
        return out

    def data_range(self) -> tuple[bytes, bytes]:
        """The first and past-the-last row keys of every row of this table."""
        end = prefix_successor(self.prefix)
        assert end is not None
        return self.prefix, end

    @classmethod
    def from_description(cls, description: dict[str, Any], table_id: int) -> Table:
        types = {d["AttributeName"]: d["AttributeType"] for d in description["AttributeDefinitions"]}
        hash_key = range_key = None
        for element in description["KeySchema"]:
            attr = KeyAttribute(element["AttributeName"], types[element["AttributeName"]])
            if element["KeyType"] == "HASH":
                hash_key = attr
            else:
                range_key = attr
        assert hash_key is not None
        return cls(description, table_id, hash_key, range_key)
