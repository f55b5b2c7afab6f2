"""Table tags: TagResource, UntagResource, ListTagsOfResource, and CreateTable's `Tags`.

Tags live in the table's catalog document (CreateTable's `Tags` start
them), so they follow the table: deleted with it, seen by every process.
"""

from __future__ import annotations

import copy
import re
from collections import Counter
from typing import Any

from ...errors import ResourceNotFoundException, ValidationException
from ...storage.base import Store
from ..control.arns import invalid_resource_arn, parse
from .catalog import Catalog
from .lifecycle import TableOps
from .schema import Table

MAX_TAGS = 50
Tag = dict[str, str]
# AWS's tag character set: Unicode letters, digits, white space and _ . : / = + - @
_TAG_TEXT = re.compile(r"[\w\s.:/=+\-@]*")


def _not_found(arn: str) -> ResourceNotFoundException:
    # "ResourcArn" is the service's own spelling.
    return ResourceNotFoundException(f"Requested resource not found: ResourcArn: {arn} not found")


def check_tags(tags: list[Tag]) -> None:
    """The rules every tag list meets, in TagResource and in CreateTable.

    Lengths (key 1..128, value 0..256) are shape rules checked from the
    service model. The wording for characters outside AWS's tag set could
    not be confirmed against the service.
    """
    # Counted once, not with keys.count() per key: 40,000 tags took 10 s that way.
    counts = Counter(t["Key"] for t in tags)
    for tag in tags:
        key = tag["Key"]
        if counts[key] > 1:
            raise ValidationException(f"Duplicate Tag Keys provided as input: Duplicate Tag Key found {key}")
        if key.startswith("aws:"):
            raise ValidationException(f"Tag Key cannot be prefixed with aws:, Key: {key}")
        for member in ("Key", "Value"):
            if not _allowed(tag[member]):
                raise ValidationException(
                    f"Invalid Tag {member} provided as input: {tag[member]}. Tags can only contain letters, "
                    "numbers, spaces, and the following special characters: _ . : / = + - @"
                )
    if len(tags) > MAX_TAGS:
        raise ValidationException("Number of Tags exceed the current limit for the provided ResourceArn")


def _allowed(text: str) -> bool:
    # \w also admits "_" and Unicode letters/digits, which is the set AWS allows.
    return _TAG_TEXT.fullmatch(text) is not None


class TagOps:
    def __init__(self, store: Store, catalog: Catalog, tables: TableOps) -> None:
        self._store = store
        self._catalog = catalog
        self._tables = tables

    def _table_name(self, arn: str) -> str:
        """The table an ARN names; an index, foreign or malformed ARN is refused as DynamoDB refuses it."""
        parsed = parse(arn, self._tables.region)
        if parsed is not None and parsed.kind == "table":
            return parsed.table
        if parsed is not None or not arn.startswith("arn:"):
            raise invalid_resource_arn(arn)
        raise _not_found(arn)

    def list(self, arn: str) -> list[Tag]:
        table = self._catalog.get(self._table_name(arn))
        if table is None:
            raise _not_found(arn)
        return list(table.description.get("_Tags", []))

    def tag(self, arn: str, tags: list[Tag]) -> None:
        name = self._table_name(arn)
        if not tags:
            raise ValidationException("Atleast one Tag needs to be provided as Input.")
        check_tags(tags)

        def merge(current: list[Tag]) -> list[Tag]:
            new = {t["Key"]: t["Value"] for t in current}
            new.update((t["Key"], t["Value"]) for t in tags)
            if len(new) > MAX_TAGS:
                raise ValidationException("Number of Tags exceed the current limit for the provided ResourceArn")
            return [{"Key": k, "Value": v} for k, v in new.items()]

        self._change(name, arn, merge)

    def untag(self, arn: str, keys: list[str]) -> None:
        name = self._table_name(arn)
        if not keys:
            raise ValidationException("Atleast one Tag Key needs to be provided as Input.")
        self._change(name, arn, lambda current: [t for t in current if t["Key"] not in keys])

    def _change(self, name: str, arn: str, change: Any) -> None:
        with self._store.write() as txn:
            table = self._catalog.get(name, txn)
            if table is None:
                raise _not_found(arn)
            description = copy.deepcopy(table.description)
            tags = change(description.get("_Tags", []))
            if tags:
                description["_Tags"] = tags
            else:
                description.pop("_Tags", None)
            self._catalog.put(txn, Table.from_description(description, table.table_id))
