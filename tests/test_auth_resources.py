"""Every operation of the service model is authorized on the resources DynamoDB's reference lists for it.

Two principals meet each operation: `scoped` may do anything (`dynamodb:*`)
on `table/Orders` and everything under it (its indexes, streams, backups,
exports, imports); `fenced` may do anything anywhere except on those. An
operation on Orders' resources is allowed to the first and refused to the
second, naming the resource refused; one checked on `*` (ListTables ...) is
the other way round; one on a global table is refused to `scoped` (the
global table is not under Orders) and to `fenced` on its table.

The expected resources here are written from the Service Authorization
Reference (see partita/api/authorize/rules.py), independently of the code's
table; the list must name every operation botocore's model has, so an
operation the model gains fails here until it is decided.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import botocore.session
import pytest
from auth_helpers import ALLOW_ALL, client, user, write_auth
from botocore import xform_name
from botocore.exceptions import ClientError
from conftest import launch

from partita.api.authorize.rules import RULES

ACCOUNT = "000000000000"
HEAD = f"arn:aws:dynamodb:us-east-1:{ACCOUNT}:"
NAME = "Orders"
TABLE = HEAD + "table/Orders"
BACKUP = TABLE + "/backup/01700000000000-abcdef12"
EXPORT = TABLE + "/export/01700000000000-abcdef12"
IMPORT = TABLE + "/import/01700000000000-abcdef12"
STREAM = TABLE + "/stream/2026-01-01T00:00:00.000"
BULK = TABLE + "/bulk-operation/01700000000000-abcdef12"
GLOBAL = f"arn:aws:dynamodb::{ACCOUNT}:global-table/Orders"
KEY = {"pk": {"S": "a"}}
SCHEMA = {
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
    "BillingMode": "PAY_PER_REQUEST",
}
SELECT = "SELECT * FROM \"Orders\" WHERE pk = 'a'"
S3_IN = {"S3Bucket": "bucket", "InputFormat": "DYNAMODB_JSON"}

# operation -> (request, action, what `scoped` meets, what `fenced` meets): None is "allowed",
# an ARN (or "*") the resource named in the refusal.
ON_ORDERS = (None, TABLE)
ANYWHERE = ("*", None)
CASES: dict[str, tuple[dict[str, Any], str, str | None, str | None]] = {
    "GetItem": ({"TableName": NAME, "Key": KEY}, "GetItem", *ON_ORDERS),
    "PutItem": ({"TableName": NAME, "Item": KEY}, "PutItem", *ON_ORDERS),
    "UpdateItem": ({"TableName": NAME, "Key": KEY, "UpdateExpression": "SET v = :v",
                    "ExpressionAttributeValues": {":v": {"N": "1"}}}, "UpdateItem", *ON_ORDERS),
    "DeleteItem": ({"TableName": NAME, "Key": KEY}, "DeleteItem", *ON_ORDERS),
    "Query": ({"TableName": NAME, "KeyConditionExpression": "pk = :p",
               "ExpressionAttributeValues": {":p": {"S": "a"}}}, "Query", *ON_ORDERS),
    "Scan": ({"TableName": NAME}, "Scan", *ON_ORDERS),
    "BatchGetItem": ({"RequestItems": {NAME: {"Keys": [KEY]}}}, "BatchGetItem", *ON_ORDERS),
    "BatchWriteItem": ({"RequestItems": {NAME: [{"PutRequest": {"Item": KEY}}]}}, "BatchWriteItem", *ON_ORDERS),
    "TransactGetItems": ({"TransactItems": [{"Get": {"TableName": NAME, "Key": KEY}}]}, "GetItem", *ON_ORDERS),
    "TransactWriteItems": ({"TransactItems": [{"Put": {"TableName": NAME, "Item": KEY}}]}, "PutItem", *ON_ORDERS),
    "ExecuteStatement": ({"Statement": SELECT}, "PartiQLSelect", *ON_ORDERS),
    "BatchExecuteStatement": ({"Statements": [{"Statement": SELECT}]}, "PartiQLSelect", *ON_ORDERS),
    "ExecuteTransaction": ({"TransactStatements": [{"Statement": SELECT}]}, "PartiQLSelect", *ON_ORDERS),
    "SearchVectors": ({"TableName": NAME, "IndexName": "vec", "SearchVector": [{"N": "1"}], "TopK": 1},
                      "SearchVectors", None, TABLE + "/index/vec"),
    "CreateTable": ({"TableName": NAME, **SCHEMA}, "CreateTable", *ON_ORDERS),
    "DescribeTable": ({"TableName": NAME}, "DescribeTable", *ON_ORDERS),
    "UpdateTable": ({"TableName": NAME, "BillingMode": "PAY_PER_REQUEST"}, "UpdateTable", *ON_ORDERS),
    "DeleteTable": ({"TableName": NAME}, "DeleteTable", *ON_ORDERS),
    "ListTables": ({}, "ListTables", *ANYWHERE),
    "DescribeLimits": ({}, "DescribeLimits", *ANYWHERE),
    "DescribeEndpoints": ({}, "DescribeEndpoints", *ANYWHERE),
    "DescribeTimeToLive": ({"TableName": NAME}, "DescribeTimeToLive", *ON_ORDERS),
    "UpdateTimeToLive": ({"TableName": NAME, "TimeToLiveSpecification": {"Enabled": True, "AttributeName": "ttl"}},
                         "UpdateTimeToLive", *ON_ORDERS),
    "DescribeContinuousBackups": ({"TableName": NAME}, "DescribeContinuousBackups", *ON_ORDERS),
    "UpdateContinuousBackups": ({"TableName": NAME, "PointInTimeRecoverySpecification": {
        "PointInTimeRecoveryEnabled": True}}, "UpdateContinuousBackups", *ON_ORDERS),
    "DescribeContributorInsights": ({"TableName": NAME}, "DescribeContributorInsights", *ON_ORDERS),
    "UpdateContributorInsights": ({"TableName": NAME, "ContributorInsightsAction": "ENABLE"},
                                  "UpdateContributorInsights", *ON_ORDERS),
    "ListContributorInsights": ({}, "ListContributorInsights", *ANYWHERE),
    "DescribeKinesisStreamingDestination": ({"TableName": NAME}, "DescribeKinesisStreamingDestination", *ON_ORDERS),
    "EnableKinesisStreamingDestination": ({"TableName": NAME, "StreamArn": "arn:aws:kinesis:us-east-1:000000000000:stream/s"},
                                          "EnableKinesisStreamingDestination", *ON_ORDERS),
    "DisableKinesisStreamingDestination": ({"TableName": NAME, "StreamArn": "arn:aws:kinesis:us-east-1:000000000000:stream/s"},
                                           "DisableKinesisStreamingDestination", *ON_ORDERS),
    "UpdateKinesisStreamingDestination": ({"TableName": NAME, "StreamArn": "arn:aws:kinesis:us-east-1:000000000000:stream/s"},
                                          "UpdateKinesisStreamingDestination", *ON_ORDERS),
    "DescribeTableReplicaAutoScaling": ({"TableName": NAME}, "DescribeTableReplicaAutoScaling", *ON_ORDERS),
    "UpdateTableReplicaAutoScaling": ({"TableName": NAME}, "UpdateTableReplicaAutoScaling", *ON_ORDERS),
    "TagResource": ({"ResourceArn": TABLE, "Tags": [{"Key": "k", "Value": "v"}]}, "TagResource", *ON_ORDERS),
    "UntagResource": ({"ResourceArn": TABLE, "TagKeys": ["k"]}, "UntagResource", *ON_ORDERS),
    "ListTagsOfResource": ({"ResourceArn": TABLE}, "ListTagsOfResource", *ON_ORDERS),
    "PutResourcePolicy": ({"ResourceArn": TABLE, "Policy": "{}"}, "PutResourcePolicy", *ON_ORDERS),
    "GetResourcePolicy": ({"ResourceArn": TABLE}, "GetResourcePolicy", *ON_ORDERS),
    "DeleteResourcePolicy": ({"ResourceArn": TABLE}, "DeleteResourcePolicy", *ON_ORDERS),
    "CreateBackup": ({"TableName": NAME, "BackupName": "nightly"}, "CreateBackup", *ON_ORDERS),
    "DescribeBackup": ({"BackupArn": BACKUP}, "DescribeBackup", None, BACKUP),
    "DeleteBackup": ({"BackupArn": BACKUP}, "DeleteBackup", None, BACKUP),
    "ListBackups": ({}, "ListBackups", *ANYWHERE),
    "RestoreTableFromBackup": ({"TargetTableName": NAME, "BackupArn": BACKUP}, "RestoreTableFromBackup", None, BACKUP),
    "RestoreTableToPointInTime": ({"SourceTableName": NAME, "TargetTableName": NAME}, "RestoreTableToPointInTime",
                                  *ON_ORDERS),
    "ExportTableToPointInTime": ({"TableArn": TABLE, "S3Bucket": "bucket"}, "ExportTableToPointInTime", *ON_ORDERS),
    "DescribeExport": ({"ExportArn": EXPORT}, "DescribeExport", None, EXPORT),
    "ListExports": ({"TableArn": TABLE}, "ListExports", *ON_ORDERS),
    "ImportTable": ({"S3BucketSource": {"S3Bucket": "bucket"}, "InputFormat": "DYNAMODB_JSON",
                     "TableCreationParameters": {"TableName": NAME, **SCHEMA}}, "ImportTable", *ON_ORDERS),
    "DescribeImport": ({"ImportArn": IMPORT}, "DescribeImport", None, IMPORT),
    "ListImports": ({"TableArn": TABLE}, "ListImports", *ON_ORDERS),
    "CreateGlobalTable": ({"GlobalTableName": NAME, "ReplicationGroup": [{"RegionName": "us-east-1"}]},
                          "CreateGlobalTable", GLOBAL, TABLE),
    "UpdateGlobalTable": ({"GlobalTableName": NAME, "ReplicaUpdates": [{"Create": {"RegionName": "us-east-1"}}]},
                          "UpdateGlobalTable", GLOBAL, TABLE),
    "UpdateGlobalTableSettings": ({"GlobalTableName": NAME}, "UpdateGlobalTableSettings", GLOBAL, TABLE),
    "DescribeGlobalTable": ({"GlobalTableName": NAME}, "DescribeGlobalTable", GLOBAL, None),
    "DescribeGlobalTableSettings": ({"GlobalTableName": NAME}, "DescribeGlobalTableSettings", GLOBAL, None),
    "ListGlobalTables": ({}, "ListGlobalTables", *ANYWHERE),
    "StartBulkPutItems": ({"TableName": NAME, "InputS3Configuration": S3_IN,
                           "OutputS3Configuration": {"S3Bucket": "out", "OutputType": ["ERROR"]}}, "StartBulkPutItems", *ON_ORDERS),
    "DescribeBulkOperation": ({"BulkOperationArn": BULK}, "DescribeBulkOperation", None, BULK),
    "CancelBulkOperation": ({"BulkOperationArn": BULK}, "CancelBulkOperation", None, BULK),
    "ListBulkOperations": ({}, "ListBulkOperations", *ANYWHERE),
}
STREAM_CASES: dict[str, tuple[dict[str, Any], str, str | None, str | None]] = {
    "DescribeStream": ({"StreamArn": STREAM}, "DescribeStream", None, STREAM),
    "GetShardIterator": ({"StreamArn": STREAM, "ShardId": "shardId-00000001700000000000-abcdef12",
                          "ShardIteratorType": "TRIM_HORIZON"}, "GetShardIterator", None, STREAM),
    "GetRecords": ({"ShardIterator": STREAM + "|1|AAAAAAAAAAAAAAAA"}, "GetRecords", None, STREAM),
    "ListStreams": ({}, "ListStreams", *ANYWHERE),
}
#: The same operations with their optional resource left out: checked on `*`.
UNSCOPED: dict[str, tuple[dict[str, Any], str, str | None, str | None]] = {
    "ListExports": ({}, "ListExports", *ANYWHERE),
    "ListImports": ({}, "ListImports", *ANYWHERE),
}


def _model(service: str) -> set[str]:
    return set(botocore.session.get_session().get_service_model(service).operation_names)


def test_every_operation_of_the_model_is_decided() -> None:
    assert set(CASES) == _model("dynamodb")
    assert set(STREAM_CASES) == _model("dynamodbstreams")
    assert set(RULES) == set(CASES) | set(STREAM_CASES)


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    orders = [TABLE, TABLE + "/*"]
    path: Path = write_auth(
        tmp_path_factory.mktemp("auth") / "auth.json",
        user("admin", *ALLOW_ALL["Statement"]),
        user("scoped", {"Effect": "Allow", "Action": "dynamodb:*", "Resource": orders}),
        user("fenced", {"Effect": "Allow", "Action": "*", "Resource": "*"},
             {"Effect": "Deny", "Action": "dynamodb:*", "Resource": orders}),
    )
    srv = launch("--in-memory", "--auth", str(path))
    yield srv.url
    srv.stop()


def _ensure_orders(url: str) -> None:
    """Orders exists (an allowed DeleteTable of an earlier case may have dropped it)."""
    admin = client(url, "admin")
    try:
        admin.describe_table(TableName=NAME)
    except ClientError:
        admin.create_table(TableName=NAME, **SCHEMA)


def _outcome(url: str, name: str, service: str, operation: str, request: dict[str, Any]) -> tuple[str, str] | None:
    method = getattr(client(url, name, service=service), xform_name(operation))
    try:
        method(**request)
    except ClientError as error:
        return error.response["Error"]["Code"], error.response["Error"].get("Message", "")
    return None


def _expect(who: str, outcome: tuple[str, str] | None, action: str, refused: str | None, explicit: bool) -> None:
    if refused is None:
        assert outcome is None or outcome[0] != "AccessDeniedException", outcome
        return
    head = f"User: arn:aws:iam::{ACCOUNT}:user/{who} is not authorized to perform: dynamodb:{action} on resource: {refused} "
    tail = ("with an explicit deny in an identity-based policy" if explicit
            else f"because no identity-based policy allows the dynamodb:{action} action")
    assert outcome == ("AccessDeniedException", head + tail)


def _all_cases() -> list[Any]:
    out = [pytest.param("dynamodb", op, *case, id=op) for op, case in CASES.items()]
    out += [pytest.param("dynamodbstreams", op, *case, id=op) for op, case in STREAM_CASES.items()]
    out += [pytest.param("dynamodb", op, *case, id=op + "-unscoped") for op, case in UNSCOPED.items()]
    return out


@pytest.mark.parametrize(("service", "operation", "request_", "action", "scoped", "fenced"), _all_cases())
def test_a_table_scoped_grant_allows_and_a_table_scoped_deny_refuses(
    url: str, service: str, operation: str, request_: dict[str, Any], action: str, scoped: str | None,
    fenced: str | None,
) -> None:
    _ensure_orders(url)
    _expect("fenced", _outcome(url, "fenced", service, operation, request_), action, fenced, explicit=True)
    _expect("scoped", _outcome(url, "scoped", service, operation, request_), action, scoped, explicit=False)


# -- the findings of issue 32 ---------------------------------------------------------------


@pytest.fixture(scope="module")
def secret_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    secret = HEAD + "table/Secret"
    path: Path = write_auth(
        tmp_path_factory.mktemp("auth") / "auth.json",
        user("admin", *ALLOW_ALL["Statement"]),
        # Everything, except the Secret table (and, for `walled`, all that is under it too).
        user("mallory", {"Effect": "Allow", "Action": "*", "Resource": "*"},
             {"Effect": "Deny", "Action": "dynamodb:*", "Resource": secret}),
        user("walled", {"Effect": "Allow", "Action": "*", "Resource": "*"},
             {"Effect": "Deny", "Action": "dynamodb:*", "Resource": [secret, secret + "/*"]}),
        user("archivist", {"Effect": "Allow", "Action": ["dynamodb:CreateBackup", "dynamodb:DescribeBackup"],
                           "Resource": [TABLE, TABLE + "/backup/*"]}),
    )
    srv = launch("--in-memory", "--auth", str(path))
    admin = client(srv.url, "admin")
    for name in ("Secret", NAME):
        admin.create_table(TableName=name, **SCHEMA)
    admin.put_item(TableName="Secret", Item={"pk": {"S": "s"}, "v": {"S": "classified"}})
    admin.update_continuous_backups(TableName="Secret",
                                    PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})
    yield srv.url
    srv.stop()


def _denied(who: str, action: str, resource: str) -> tuple[str, str]:
    return ("AccessDeniedException", f"User: arn:aws:iam::{ACCOUNT}:user/{who} is not authorized to perform: "
            f"dynamodb:{action} on resource: {resource} with an explicit deny in an identity-based policy")


def _refusal(call: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        call()
    error = excinfo.value.response["Error"]
    return error["Code"], error.get("Message", "")


def test_a_deny_on_a_table_covers_its_backups_restores_and_exports(secret_url: str) -> None:
    mallory = client(secret_url, "mallory")
    secret = HEAD + "table/Secret"
    assert _refusal(lambda: mallory.restore_table_to_point_in_time(
        SourceTableName="Secret", TargetTableName="Copy", UseLatestRestorableTime=True,
    )) == _denied("mallory", "RestoreTableToPointInTime", secret)
    assert _refusal(lambda: mallory.restore_table_to_point_in_time(
        SourceTableArn=secret, TargetTableName="Copy", UseLatestRestorableTime=True,
    )) == _denied("mallory", "RestoreTableToPointInTime", secret)
    assert _refusal(lambda: mallory.create_backup(TableName="Secret", BackupName="mine")) == _denied(
        "mallory", "CreateBackup", secret)
    assert _refusal(lambda: mallory.export_table_to_point_in_time(TableArn=secret, S3Bucket="bucket")) == _denied(
        "mallory", "ExportTableToPointInTime", secret)
    assert _refusal(lambda: mallory.update_contributor_insights(
        TableName="Secret", ContributorInsightsAction="ENABLE")) == _denied("mallory", "UpdateContributorInsights", secret)
    # Nothing was made of the table.
    assert client(secret_url, "admin").list_tables()["TableNames"] == [NAME, "Secret"]
    assert client(secret_url, "admin").list_backups(TableName="Secret")["BackupSummaries"] == []


def test_a_backup_is_its_own_resource_as_in_iam(secret_url: str) -> None:
    """A Deny on exactly table/Secret does not match table/Secret/backup/...: IAM compares whole
    ARNs. Denying table/Secret/* as well fences the table's backups (and exports, streams, indexes)."""
    admin = client(secret_url, "admin")
    arn = admin.create_backup(TableName="Secret", BackupName="by-admin")["BackupDetails"]["BackupArn"]
    assert client(secret_url, "mallory").describe_backup(BackupArn=arn)["BackupDescription"]["BackupDetails"][
        "BackupArn"] == arn
    walled = client(secret_url, "walled")
    assert _refusal(lambda: walled.describe_backup(BackupArn=arn)) == _denied("walled", "DescribeBackup", arn)
    assert _refusal(lambda: walled.restore_table_from_backup(TargetTableName="Copy", BackupArn=arn)) == _denied(
        "walled", "RestoreTableFromBackup", arn)
    assert _refusal(lambda: walled.delete_backup(BackupArn=arn)) == _denied("walled", "DeleteBackup", arn)
    assert "Copy" not in admin.list_tables()["TableNames"]
    admin.delete_backup(BackupArn=arn)


def test_a_table_scoped_backup_grant_works(secret_url: str) -> None:
    archivist = client(secret_url, "archivist")
    details = archivist.create_backup(TableName=NAME, BackupName="orders-nightly")["BackupDetails"]
    assert details["BackupName"] == "orders-nightly"
    assert details["BackupArn"].startswith(TABLE + "/backup/")
    described = archivist.describe_backup(BackupArn=details["BackupArn"])["BackupDescription"]
    assert described["SourceTableDetails"]["TableName"] == NAME
    head = f"User: arn:aws:iam::{ACCOUNT}:user/archivist is not authorized to perform: dynamodb:CreateBackup on resource: "
    assert _refusal(lambda: archivist.create_backup(TableName="Secret", BackupName="nope")) == (
        "AccessDeniedException",
        head + HEAD + "table/Secret because no identity-based policy allows the dynamodb:CreateBackup action",
    )
