"""One item change as DynamoDB writes it to a Kinesis data stream.

The layout follows records the service delivered (an AWS Lambda sample of
2022 and Apache Pinot's and CrateDB's recorded payloads of 2024): member
order awsRegion, eventID (a UUID), eventName, userIdentity (null, or the TTL
service principal), recordFormat, tableName, dynamodb, eventSource; the
`dynamodb` block has ApproximateCreationDateTime in milliseconds (in
microseconds, followed by ApproximateCreationDateTimePrecision, when the
destination asks for MICROSECOND), Keys, NewImage and OldImage as the change
has them (a Kinesis destination always carries both images), SizeBytes
(keys plus images, DynamoDB's size rule).
"""

from __future__ import annotations

import hashlib
import uuid
from typing import Any

import orjson

from ..backups.changelog import Change
from ..model.keys import encode_partition, partition_hash
from ..model.sizes import item_size
from .state import State


def record(state: State, change: Change, precision: str | None) -> dict[str, Any]:
    subject = change.new if change.new is not None else change.old
    assert subject is not None
    keys = {name: subject[name] for name in state["key_names"] if name in subject}
    size = item_size(keys)
    dynamodb: dict[str, Any] = {}
    if precision == "MICROSECOND":
        dynamodb["ApproximateCreationDateTime"] = int(change.time * 1_000_000)
    else:
        dynamodb["ApproximateCreationDateTime"] = int(change.time * 1000)
    dynamodb["Keys"] = keys
    if change.new is not None:
        dynamodb["NewImage"] = change.new
        size += item_size(change.new)
    if change.old is not None:
        dynamodb["OldImage"] = change.old
        size += item_size(change.old)
    dynamodb["SizeBytes"] = size
    if precision == "MICROSECOND":
        dynamodb["ApproximateCreationDateTimePrecision"] = "MICROSECOND"
    identity = None
    if change.identity is not None:  # the Streams API's member names, in the spelling of Kinesis payloads
        identity = {"principalId": change.identity["PrincipalId"], "type": change.identity["Type"]}
    return {
        "awsRegion": state["region"],
        # The same change always gets the same id, so a consumer can drop the duplicates at-least-once
        # delivery may send (DynamoDB's own ids are random UUIDs: unconfirmed whether a resend keeps one).
        "eventID": str(uuid.UUID(bytes=hashlib.md5(b"%d/%d" % (state["table_id"], change.n)).digest(), version=4)),  # noqa: S324
        "eventName": "INSERT" if change.old is None else "REMOVE" if change.new is None else "MODIFY",
        "userIdentity": identity,
        "recordFormat": "application/json",
        "tableName": state["table"],
        "dynamodb": dynamodb,
        "eventSource": "aws:dynamodb",
    }


def partition_key(state: State, change: Change) -> str:
    """The Kinesis partition key: one per item collection, so a key's changes share a shard and keep their order.

    DynamoDB's are 32 hex digits too (unconfirmed how they are derived).
    """
    subject = change.new if change.new is not None else change.old
    assert subject is not None
    name, kind = state["hash_key"]
    value = subject[name][kind]
    return hashlib.md5(partition_hash(kind, value) + encode_partition(kind, value)).hexdigest().upper()  # noqa: S324


def encode(state: State, change: Change, precision: str | None) -> tuple[bytes, str]:
    return orjson.dumps(record(state, change, precision)), partition_key(state, change)
