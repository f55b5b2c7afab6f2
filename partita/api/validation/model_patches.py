"""Where Partita's request-shape validation departs from botocore's published model, and why.

Each departure is recorded behaviour of the real service that the model does
not state. DynamoDB's own model and the DynamoDB Streams model (compiled by
the same code) have their own lists.
"""

from __future__ import annotations

from typing import Any

# Constraints the real service enforces that the published model lacks.
# KeySchema: "Member must have length less than or equal to 2" is recorded from
# the service (dynalite createTable tests, and again in 2026 for a table's
# keySchema); botocore's model only has min 1. A GSI's KeySchema may hold up to
# 4 HASH + 4 RANGE elements (multi-attribute keys, 2025-11), so the GSI shapes
# get an unbounded copy and validation/tables.py words those limits.
# CreateTableInput: the 2026 model lists only TableName as required, but the
# service still answers a missing KeySchema or AttributeDefinitions with
# "Value null at 'keySchema' failed to satisfy constraint: Member must not be
# null" (ack-api-quirks DDB-TABLE-042, verified 2026-10-08).
SHAPE_PATCHES: dict[str, dict[str, Any]] = {
    "KeySchema": {"max": 2},
    "GlobalSecondaryIndexKeySchema": {"type": "list", "member": {"shape": "KeySchemaElement"}, "min": 1},
    "CreateTableInput": {"required": ["TableName", "KeySchema", "AttributeDefinitions"]},
    # A tag's Key and Value are checked by the tag validator, not by the shape
    # check: a missing one is "The Tag Key provided is invalid, Key: null" and a
    # 129-character key "The Tag Key provided is invalid, Key: kkk..." (ack-api-quirks
    # DDB-TABLE-107 and -457, verified 2026-10-08/09); engine/tags.py words them.
    "Tag": {"required": []},
}

# Shapes replaced whole: the tag strings lose their length limits (see "Tag" above).
SHAPE_REPLACEMENTS: dict[str, dict[str, Any]] = {
    "TagKeyString": {"type": "string"},
    "TagValueString": {"type": "string"},
}

# Single-table data-plane operations check TableName with the model's own
# TableArn constraint (length 1..1024) first: observed on the service in 2026
# ("Value '' at 'tableName' ... greater than or equal to 1" on PutItem), where
# control-plane operations apply the TableName rules at once (3..255 and the
# pattern; see leaves.table_arn_leaf). A data-plane name that passes and is
# not an ARN then meets the TableName rules too (leaves.data_plane_table_leaf:
# "bad!table!name" is the pattern clause, before any lookup, issue 26 N1).
_DATA_PLANE_INPUTS = ("GetItemInput", "PutItemInput", "UpdateItemInput", "DeleteItemInput", "QueryInput", "ScanInput")

# The service's newer "validation framework" words some constraints without
# echoing the value and names the member as sent (PascalCase): "1 validation
# error detected: Value at 'Limit' failed to satisfy constraint: Member must
# have value greater than or equal to 1". Rolled out member by member and region
# by region in 2026; these are the members a 2026 conformance suite records in
# that form in its pinned region (eu-west-2): Query's Limit, Scan's Limit and
# Segment, BatchGetItem's RequestItems (empty) and a table's Keys (empty or
# over 100), and BatchWriteItem's RequestItems (empty: the same suite records
# eu-west-2 moving from "The requestItems parameter is required for
# BatchWriteItem" to the framework's clause in September 2026, and accepts
# only those two answers; Partita had coral's "Value '{}' at 'requestItems'",
# which is neither). Everything else keeps coral's form. See docs/decisions.md.
#: (structure, member) of scalar members worded by the framework.
FRAMEWORK_MEMBERS: frozenset[tuple[str, str]] = frozenset({
    ("QueryInput", "Limit"), ("ScanInput", "Limit"), ("ScanInput", "Segment"),
})
#: List and map shapes whose length the framework words.
FRAMEWORK_LENGTHS: frozenset[str] = frozenset({"BatchGetRequestMap", "BatchWriteItemRequestMap", "KeyList"})
#: Maps whose key clause echoes the map as JSON ("Value '{"bad!name":{"Keys":[...]}}' at
#: 'requestItems' ... Map keys must satisfy constraint: [...]", BatchGetItem, captured in
#: us-east-1 and eu-west-2 on 2026-10-09); BatchWriteItem's echo is still Java's rendering.
JSON_ECHO_MAPS: frozenset[str] = frozenset({"BatchGetRequestMap"})

#: Operations that refuse a missing member with their own sentence before any
#: constraint is checked: CreateTable without TableName is "The parameter
#: 'TableName' is required but was not present in the request" (dynalite's
#: recordings, old and new; listed among the 2026 observations Partita's notes
#: collect), where a missing KeySchema is coral's clause (ack-api-quirks, 2026).
REQUIRED_FIRST: dict[str, str] = {"CreateTable": "TableName"}

#: Operations whose clauses about one member are a later phase: stated only when
#: no other member fails. BatchWriteItem with a malformed table name and an
#: unknown ReturnConsumedCapacity is the enum clause alone, where BatchGetItem
#: states both (a 2026 conformance suite, us-east-1 and eu-west-2, 2026-10-09).
#: The map's value clause (27 requests) is assumed to share its key clause's
#: phase, as the two are one check of the map here (not on record).
LATER_MEMBERS: dict[str, str] = {"BatchWriteItem": "requestItems"}

#: New shapes that start as copies of a model shape.
ALIASES = {"DataPlaneTableArn": "TableArn"}

#: (structure, member) -> the shape that member is checked against instead of the model's.
MEMBER_SHAPES: dict[tuple[str, str], str] = {
    **{(name, "TableName"): "DataPlaneTableArn" for name in _DATA_PLANE_INPUTS},
    ("GlobalSecondaryIndex", "KeySchema"): "GlobalSecondaryIndexKeySchema",
    ("CreateGlobalSecondaryIndexAction", "KeySchema"): "GlobalSecondaryIndexKeySchema",
}


# DynamoDB Streams.
# ShardFilter: the model marks both members optional, but DescribeStream with a
# ShardFilter that lacks Type, or lacks ShardId, is a ValidationException
# (observed on the service, 2026). Which words it uses is not recorded; the
# model's own "Member must not be null" clause is used (unconfirmed).
# StreamArn: the model says min length 37, but the service answered a
# DescribeStream with StreamArn 'fake-stream' (11 characters) with
# ValidationException "Invalid StreamArn" (the AWS SDK for JavaScript's
# integration tests), not the length clause: the service parses the ARN
# (api/streams.py) instead of checking its length. The maximum (1024) stays.
STREAMS_SHAPE_PATCHES: dict[str, dict[str, Any]] = {"ShardFilter": {"required": ["Type", "ShardId"]}}
#: Shapes of the Streams model replaced whole.
STREAMS_SHAPES: dict[str, dict[str, Any]] = {"StreamArn": {"type": "string", "max": 1024}}


def patched_shapes(shapes: dict[str, Any]) -> dict[str, Any]:
    """A copy of a model's shapes with the departures above applied (the model itself is untouched)."""
    out = dict(shapes)
    if "CreateTableInput" not in out:  # DynamoDB Streams' model
        for name, patch in STREAMS_SHAPE_PATCHES.items():
            out[name] = {**out.get(name, {}), **patch}
        return {**out, **STREAMS_SHAPES}
    for name, patch in SHAPE_PATCHES.items():
        out[name] = {**out.get(name, {}), **patch}
    out.update(SHAPE_REPLACEMENTS)
    for alias, source in ALIASES.items():
        out[alias] = out[source]
    for (owner, member), shape in MEMBER_SHAPES.items():
        members = dict(out[owner]["members"])
        members[member] = {**members[member], "shape": shape}
        out[owner] = {**out[owner], "members": members}
    return out
