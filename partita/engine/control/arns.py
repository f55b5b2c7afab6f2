"""DynamoDB ARNs: a table's, an index's, a stream's, and a table ARN in place of TableName.

DynamoDB accepts a table's ARN wherever it takes `TableName`; it refuses an
index or stream ARN there, and refuses an index ARN for tagging. One parser
serves every caller so that they all agree on what an ARN names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...errors import ValidationException

ACCOUNT_ID = "000000000000"


@dataclass(frozen=True, slots=True)
class Arn:
    """What a DynamoDB ARN of this server names: `kind` is table, index or stream."""

    table: str
    kind: str
    child: str = ""


#: A DynamoDB stream ARN of any partition, region and account: what a StreamArn must look like
#: before any stream is looked up (the label is the stream's creation time on the service).
_STREAM_ARN = re.compile(r"arn:aws[a-z-]*:dynamodb:[a-z0-9-]+:\d{12}:table/[a-zA-Z0-9_.-]{3,255}/stream/[^/]+")


def is_stream_arn(value: str) -> bool:
    """Whether `value` has the form of a stream ARN (it may still name no stream)."""
    return _STREAM_ARN.fullmatch(value) is not None


def table_arn(region: str, name: str) -> str:
    return f"arn:aws:dynamodb:{region}:{ACCOUNT_ID}:table/{name}"


def invalid_resource_arn(arn: str) -> ValidationException:
    # The service's words for an index ARN given to ListTagsOfResource
    # (recorded against DynamoDB by ScyllaDB's Alternator test suite).
    return ValidationException(f"Invalid TableArn: Invalid ResourceArn provided as input {arn}")


def parse(arn: str, region: str) -> Arn | None:
    """The resource `arn` names on this server, or None for a foreign or malformed ARN."""
    prefix = table_arn(region, "")
    if not arn.startswith(prefix):
        return None
    name, _, rest = arn[len(prefix):].partition("/")
    if not name:
        return None
    if not rest:
        return Arn(name, "table")
    kind, _, child = rest.partition("/")
    if kind in ("index", "stream") and child and "/" not in child:
        return Arn(name, kind, child)
    return None


def table_name(value: str, region: str) -> str:
    """The table a `TableName` member names: a plain name, or this server's ARN of a table.

    Anything else that starts like an ARN (an index or stream ARN, another
    region's or account's ARN, garbage) is refused. DynamoDB's exact wording
    for this case could not be confirmed; the tagging message is reused.
    """
    if not value.startswith("arn:"):
        return value
    parsed = parse(value, region)
    if parsed is None or parsed.kind != "table":
        raise invalid_resource_arn(value)
    return parsed.table
