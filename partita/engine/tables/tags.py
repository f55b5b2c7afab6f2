"""Table tags: TagResource, UntagResource, ListTagsOfResource, and CreateTable's `Tags`.

Tags live in the table's catalog document (CreateTable's `Tags` start
them), so they follow the table: deleted with it, seen by every process.

The messages are the service's as recorded in 2026 (ack-api-quirks,
DDB-TABLE-105/106/107/372/374/442 and DDB-BACKUP-013; ExtendDB PR 227 for
which part of a ResourceArn is checked first); see docs/decisions.md.
"""

from __future__ import annotations

import copy
import re
from collections import Counter
from typing import Any

from ...errors import AccessDeniedException, ResourceNotFoundException, ValidationException
from ...storage.base import Store
from ..control.arns import ACCOUNT_ID, invalid_resource_arn
from .catalog import Catalog
from .lifecycle import TableOps
from .schema import Table

MAX_TAGS = 50
MAX_KEY_LENGTH = 128
MAX_VALUE_LENGTH = 256
Tag = dict[str, str]
# AWS's tag character set: letters of any script, digits, white space and _ . : / = + - @.
# \w also admits "_" and Unicode digits; emoji and other punctuation are refused (observed).
_TAG_TEXT = re.compile(r"[\w\s.:/=+\-@]*")
_INVALID = "One or more parameter values were invalid: "
_TOO_MANY = "Number of Tags exceed the current limit for the provided ResourceArn"


def _not_found(arn: str) -> ResourceNotFoundException:
    return ResourceNotFoundException(f"Requested resource not found: ResourceArn: {arn} not found")


def _bad_key(key: str | None) -> ValidationException:
    return ValidationException(f"The Tag Key provided is invalid, Key: {'null' if key is None else key}")


def _bad_value(value: str | None) -> ValidationException:
    return ValidationException(f"The Tag Value provided is invalid, Value: {'null' if value is None else value}")


def _allowed(text: str) -> bool:
    return _TAG_TEXT.fullmatch(text) is not None


def _check_key(key: Any) -> str:
    """A tag key: 1..128 characters of the tag set, never prefixed with aws: (in any case)."""
    if not isinstance(key, str) or not 1 <= len(key) <= MAX_KEY_LENGTH or not _allowed(key):
        raise _bad_key(key if isinstance(key, str) else None)
    if key[:4].lower() == "aws:":
        raise ValidationException(f"Tag Key cannot be prefixed with aws:, Key: {key}")
    return key


def check_tags(tags: list[dict[str, Any]]) -> None:
    """The rules every tag list meets, in TagResource and in CreateTable.

    Lengths (key 1..128, value 0..256) and a missing Key or Value are the
    tag validator's, not the request-shape validator's: the service names
    the offending key or value ("... Key: null" when absent). Each tag is
    checked in order, its key before its value; then duplicates and the
    count.
    """
    for tag in tags:
        _check_key(tag.get("Key"))
        value = tag.get("Value")
        if not isinstance(value, str) or len(value) > MAX_VALUE_LENGTH or not _allowed(value):
            raise _bad_value(value if isinstance(value, str) else None)
    # Counted once, not with keys.count() per key: 40,000 tags took 10 s that way.
    counts = Counter(t["Key"] for t in tags)
    for tag in tags:
        if counts[tag["Key"]] > 1:
            raise ValidationException(f"Duplicate Tag Keys provided as input: Duplicate Tag Key found {tag['Key']}")
    if len(tags) > MAX_TAGS:
        raise ValidationException(_TOO_MANY)


def check_tag_keys(keys: list[Any]) -> None:
    """UntagResource's keys: the same key rules, and no more than a table can hold."""
    for key in keys:
        _check_key(key)
    if len(keys) > MAX_TAGS:
        raise ValidationException(_TOO_MANY)


class TagOps:
    def __init__(self, store: Store, catalog: Catalog, tables: TableOps) -> None:
        self._store = store
        self._catalog = catalog
        self._tables = tables

    def _table_name(self, arn: str, operation: str) -> str:
        """The table a ResourceArn names, checked part by part in the service's order.

        No ``arn:`` prefix, then not a DynamoDB ARN (AccessDenied), then not
        a table (a backup or other resource; an index), then another
        account (AccessDenied, before the region, so a foreign ARN reveals
        nothing), then another region. A well-formed ARN of this account
        and region whose table is missing is ResourceNotFoundException.
        """
        if not arn.startswith("arn:"):
            raise ValidationException(f"{_INVALID}ARNs must start with 'arn:': {arn}")
        parts = arn.split(":", 5)
        if len(parts) != 6 or parts[2] != "dynamodb":
            raise _access_denied(operation, arn)
        _, partition, _, region, account, resource = parts
        kind, _, rest = resource.partition("/")
        segments = rest.split("/") if kind == "table" else []
        if kind != "table" or len(segments) not in (1, 3) or (len(segments) == 3 and segments[1] not in ("index", "stream")):
            raise ValidationException(f"{_INVALID}Provided Arn is not a DynamoDB resource arn: {arn}")
        if len(segments) == 3 and segments[1] == "index":
            raise ValidationException(
                f"{_INVALID}Invalid resource arn provided, only table or stream is accepted. Provided resource arn: {arn}"
            )
        if account != ACCOUNT_ID:
            raise _access_denied(operation, arn)
        if region != self._tables.region or partition != "aws" or not segments[0] or len(segments) == 3:
            raise invalid_resource_arn(arn)
        return segments[0]

    def list(self, arn: str) -> list[Tag]:
        table = self._catalog.get(self._table_name(arn, "ListTagsOfResource"))
        if table is None:
            raise _not_found(arn)
        return list(table.description.get("_Tags", []))

    def tag(self, arn: str, tags: list[Tag]) -> None:
        name = self._table_name(arn, "TagResource")
        if not tags:
            raise ValidationException("Atleast one Tag needs to be provided as Input.")
        check_tags(tags)

        def merge(current: list[Tag]) -> list[Tag]:
            new = {t["Key"]: t["Value"] for t in current}
            new.update((t["Key"], t["Value"]) for t in tags)
            if len(new) > MAX_TAGS:
                raise ValidationException(_TOO_MANY)
            return [{"Key": k, "Value": v} for k, v in new.items()]

        self._change(name, arn, merge)

    def untag(self, arn: str, keys: list[str]) -> None:
        name = self._table_name(arn, "UntagResource")
        if not keys:
            raise ValidationException("Atleast one Tag Key needs to be provided as Input.")
        check_tag_keys(keys)
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


def _access_denied(operation: str, arn: str) -> AccessDeniedException:
    """Another account's or another service's ARN is refused as IAM refuses it.

    The exception is the service's (ExtendDB PR 227, verified against
    DynamoDB); its message names the caller, whom the engine does not know,
    so this wording is Partita's (unconfirmed).
    """
    return AccessDeniedException(f"User is not authorized to perform: dynamodb:{operation} on resource: {arn}")
