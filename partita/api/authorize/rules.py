"""What DynamoDB authorizes for each operation: its action, the resources it is checked on, its keys.

One table, `RULES`, for every operation of the service model (botocore's
`dynamodb` and `dynamodbstreams`), implemented by Partita or not: a test
compares its names with the model's, so an operation the model gains fails
until it is listed here. The resources and condition keys are those of the
Service Authorization Reference ("Actions, resources, and condition keys for
Amazon DynamoDB"), as published in iann0036/iam-dataset's
`aws/iam_definition.json` (prefix `dynamodb`):

- every resource type an action requires (marked `*` there) is checked, in
  the order the reference lists them (backup before table, global-table
  before table, index before table); an optional type (`index` for Query,
  Scan and Contributor Insights, `table` for ListExports and ListImports)
  is the resource when the request names one, else the required one or `*`;
- an action with no resource type is checked on `*`;
- `keys` are the condition keys the action supports and Partita computes
  (`aws:ResourceTag/...` and `dynamodb:EnclosingOperation` are not computed).

Where the reference says nothing (the bulk operations of 2026, which it does
not list yet), the rule is Partita's reading, marked "unconfirmed".
"""

from __future__ import annotations

from dataclasses import dataclass

# Resource kinds: how the ARN of a check is found in the request (requirements.py reads them).
TABLE = "table"  # TableName
TABLE_OR_INDEX = "table|index"  # TableName, or its IndexName's ARN when the request names one
INDEX = "index"  # TableName + IndexName (required)
TABLE_ARN = "TableArn"  # ExportTableToPointInTime
TABLE_ARN_OR_ANY = "TableArn|*"  # ListExports, ListImports: the table when named, else *
SOURCE_TABLE = "source-table"  # SourceTableArn or SourceTableName
TARGET_TABLE = "target-table"  # TargetTableName
CREATED_TABLE = "created-table"  # ImportTable's TableCreationParameters.TableName
BACKUP = "BackupArn"
EXPORT = "ExportArn"
IMPORT = "ImportArn"
BULK = "BulkOperationArn"
RESOURCE = "ResourceArn"  # a table's or a stream's ARN (tags, resource policies)
STREAM = "StreamArn"
ITERATOR = "ShardIterator"  # the stream of a shard iterator
GLOBAL_TABLE = "global-table"  # arn:aws:dynamodb::{account}:global-table/{GlobalTableName}
REPLICA_TABLES = "replica-tables"  # the table GlobalTableName in each region the request names
ANY = "*"

# Per-item and per-statement operations, whose checks are made element by element.
BATCH = "batch"  # each table of RequestItems, with the operation's own action
TRANSACT = "transact"  # each element, with its item action (GetItem ... ConditionCheckItem)
PARTIQL = "partiql"  # each statement, with dynamodb:PartiQL{Select,Insert,Update,Delete}

# Condition keys (lower-case, as policies.py compares them).
ATTRIBUTES = "dynamodb:attributes"
LEADING_KEYS = "dynamodb:leadingkeys"
SELECT = "dynamodb:select"
RETURN_VALUES = "dynamodb:returnvalues"
RETURN_CONSUMED_CAPACITY = "dynamodb:returnconsumedcapacity"
FULL_TABLE_SCAN = "dynamodb:fulltablescan"

_NONE: frozenset[str] = frozenset()
_GET = frozenset({ATTRIBUTES, LEADING_KEYS, RETURN_CONSUMED_CAPACITY, SELECT})
_WRITE = frozenset({ATTRIBUTES, LEADING_KEYS, RETURN_CONSUMED_CAPACITY, RETURN_VALUES})


@dataclass(frozen=True, slots=True)
class Rule:
    resources: tuple[str, ...]  # resource kinds, checked in this order; (BATCH,) etc. for per-element rules
    keys: frozenset[str] = _NONE  # the condition keys of the action
    action: str = ""  # the IAM action when it is not the operation's name


def _table(keys: frozenset[str] = _NONE) -> Rule:
    return Rule((TABLE,), keys)


RULES: dict[str, Rule] = {
    # Items.
    "GetItem": _table(_GET),
    "PutItem": _table(_WRITE),
    "UpdateItem": _table(_WRITE),
    "DeleteItem": _table(_WRITE),
    "Query": Rule((TABLE_OR_INDEX,), _WRITE | _GET),
    "Scan": Rule((TABLE_OR_INDEX,), frozenset({ATTRIBUTES, RETURN_CONSUMED_CAPACITY, RETURN_VALUES, SELECT})),
    "BatchGetItem": Rule((BATCH,), _GET),
    "BatchWriteItem": Rule((BATCH,), frozenset({ATTRIBUTES, LEADING_KEYS, RETURN_CONSUMED_CAPACITY})),
    "TransactGetItems": Rule((TRANSACT,)),
    "TransactWriteItems": Rule((TRANSACT,)),
    "ExecuteStatement": Rule((PARTIQL,)),
    "BatchExecuteStatement": Rule((PARTIQL,)),
    "ExecuteTransaction": Rule((PARTIQL,)),
    # SearchVectors requires both its index and its table (both marked required).
    "SearchVectors": Rule((INDEX, TABLE)),
    # Tables.
    "CreateTable": _table(),
    "DescribeTable": _table(),
    "UpdateTable": _table(),
    "DeleteTable": _table(),
    "ListTables": Rule((ANY,)),
    "DescribeLimits": Rule((ANY,)),
    "DescribeEndpoints": Rule((ANY,)),
    "DescribeTimeToLive": _table(),
    "UpdateTimeToLive": _table(),
    "DescribeContinuousBackups": _table(),
    "UpdateContinuousBackups": _table(),
    "DescribeContributorInsights": Rule((TABLE_OR_INDEX,)),
    "UpdateContributorInsights": Rule((TABLE_OR_INDEX,)),
    "ListContributorInsights": Rule((ANY,)),
    "DescribeKinesisStreamingDestination": _table(),
    "EnableKinesisStreamingDestination": _table(),
    "DisableKinesisStreamingDestination": _table(),
    "UpdateKinesisStreamingDestination": _table(),
    "DescribeTableReplicaAutoScaling": _table(),
    "UpdateTableReplicaAutoScaling": _table(),
    # Tags and resource policies: the table or stream the ARN names.
    "TagResource": Rule((RESOURCE,)),
    "UntagResource": Rule((RESOURCE,)),
    "ListTagsOfResource": Rule((RESOURCE,)),
    "PutResourcePolicy": Rule((RESOURCE,)),
    "GetResourcePolicy": Rule((RESOURCE,)),
    "DeleteResourcePolicy": Rule((RESOURCE,)),
    # Backups and restores. RestoreTableFromBackup: the backup, then the table it creates.
    # RestoreTableToPointInTime lists one type, table: the source table (the developer guide
    # says the permission is needed there) and the table it creates, as for a backup.
    "CreateBackup": _table(),
    "DescribeBackup": Rule((BACKUP,)),
    "DeleteBackup": Rule((BACKUP,)),
    "ListBackups": Rule((ANY,)),
    "RestoreTableFromBackup": Rule((BACKUP, TARGET_TABLE)),
    "RestoreTableToPointInTime": Rule((SOURCE_TABLE, TARGET_TABLE)),
    # Exports and imports.
    "ExportTableToPointInTime": Rule((TABLE_ARN,)),
    "DescribeExport": Rule((EXPORT,)),
    "ListExports": Rule((TABLE_ARN_OR_ANY,)),
    "ImportTable": Rule((CREATED_TABLE,)),
    "DescribeImport": Rule((IMPORT,)),
    "ListImports": Rule((TABLE_ARN_OR_ANY,)),
    # Global tables (version 2017.11.29): the global table, then its tables.
    "CreateGlobalTable": Rule((GLOBAL_TABLE, REPLICA_TABLES)),
    "UpdateGlobalTable": Rule((GLOBAL_TABLE, REPLICA_TABLES)),
    "UpdateGlobalTableSettings": Rule((GLOBAL_TABLE, REPLICA_TABLES)),
    "DescribeGlobalTable": Rule((GLOBAL_TABLE,)),
    "DescribeGlobalTableSettings": Rule((GLOBAL_TABLE,)),
    "ListGlobalTables": Rule((ANY,)),
    # Bulk operations: not in the reference yet. Unconfirmed: the table written, the
    # operation's own ARN, and * for the listing, as for imports.
    "StartBulkPutItems": _table(),
    "DescribeBulkOperation": Rule((BULK,)),
    "CancelBulkOperation": Rule((BULK,)),
    "ListBulkOperations": Rule((ANY,)),
    # DynamoDB Streams (DynamoDBStreams_20120810.*): the stream.
    "DescribeStream": Rule((STREAM,)),
    "GetShardIterator": Rule((STREAM,)),
    "GetRecords": Rule((ITERATOR,)),
    "ListStreams": Rule((ANY,)),
}

#: The item actions of a transaction's elements, and the operation whose keys each one has.
TRANSACT_ACTIONS = {
    "Get": ("GetItem", "GetItem"),
    "Put": ("PutItem", "PutItem"),
    "Update": ("UpdateItem", "UpdateItem"),
    "Delete": ("DeleteItem", "DeleteItem"),
    "ConditionCheck": ("ConditionCheckItem", "DeleteItem"),
}
CONDITION_CHECK_KEYS = frozenset({ATTRIBUTES, LEADING_KEYS, RETURN_CONSUMED_CAPACITY, RETURN_VALUES})

#: PartiQL's actions and their keys (no dynamodb:ReturnConsumedCapacity among them).
PARTIQL_KEYS = {
    "PartiQLSelect": frozenset({ATTRIBUTES, FULL_TABLE_SCAN, LEADING_KEYS, SELECT}),
    "PartiQLInsert": frozenset({ATTRIBUTES, LEADING_KEYS}),
    "PartiQLUpdate": frozenset({ATTRIBUTES, LEADING_KEYS, RETURN_VALUES}),
    "PartiQLDelete": frozenset({ATTRIBUTES, LEADING_KEYS, RETURN_VALUES}),
}
