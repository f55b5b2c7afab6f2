"""Bulk put operations: StartBulkPutItems, DescribeBulkOperation, ListBulkOperations, CancelBulkOperation.

Inputs are objects under --s3-dir; the statuses, counters and rules follow the
API reference and the developer guide (partita/engine/bulk/operations.py);
the report's layout is Partita's own (not confirmed, see docs/decisions.md).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import boto3
import pytest
from backup_helpers import indexed_table, scan_all
from botocore.config import Config
from botocore.exceptions import ClientError
from bulk_helpers import finished, json_line, report_lines, server_now, start, write_object
from conftest import Server, client_for, create_table, error_of
from streams_helpers import advance


@pytest.fixture
def s3(start_server: Callable[..., Server], tmp_path: Path) -> tuple[Any, Path, Server]:
    server = start_server("--in-memory", "--s3-dir", str(tmp_path / "s3"))
    return client_for(server.url), tmp_path / "s3", server


def item(i: int, **extra: Any) -> dict[str, Any]:
    return {"pk": {"S": f"p{i}"}, "sk": {"N": str(i)}, **extra}


def test_a_clean_load_completes(s3: tuple[Any, Path, Server]) -> None:
    ddb, root, _ = s3
    indexed_table(ddb, "target")
    sizes = [write_object(root, "input", f"in/part-{n}.json", [
        json_line(item(i, g={"S": f"g{i % 3}"}, l={"B": "AQ=="}, v={"S": "x" * 10})) for i in range(n * 50, n * 50 + 50)])
        for n in range(3)]
    arn = start(ddb, "target")
    assert arn.startswith(ddb.describe_table(TableName="target")["Table"]["TableArn"] + "/bulk-operation/")
    doc = finished(ddb, arn)
    table_id = ddb.describe_table(TableName="target")["Table"]["TableId"]
    for member in ("StartTime", "EndTime", "ClientToken", "ResponseMetadata"):
        doc.pop(member, None)
    usage = doc.pop("BulkOperationUsage")
    assert doc == {
        "BulkOperationArn": arn, "BulkOperationStatus": "COMPLETED",
        "TableDetails": [{"TableName": "target", "TableId": table_id}],
        "InputS3Configuration": {"S3Bucket": "input", "S3KeyPrefix": "in/", "InputFormat": "DYNAMODB_JSON"},
        "OutputS3Configuration": {"S3Bucket": "output", "S3KeyPrefix": "reports",
                                  "OutputType": ["ERROR", "CONDITION_CHECK_FAILURE"]},
        "ProcessedItemCount": 150, "ProcessedInputBytes": sum(sizes), "TotalInputBytes": sum(sizes),
        "FailedItemCount": 0, "PerformanceTier": "STANDARD",
    }
    items = scan_all(ddb, "target")
    assert len(items) == 150 and items[0]["v"] == {"S": "x" * 10}
    # Bulk put bytes: each item in the table and its entry in each index it enters, which is what the
    # table and its indexes hold now (they were empty before).
    described = ddb.describe_table(TableName="target")["Table"]
    gsi = described["GlobalSecondaryIndexes"][0]["IndexSizeBytes"]
    lsi = described["LocalSecondaryIndexes"][0]["IndexSizeBytes"]
    assert 0 < lsi < gsi == described["TableSizeBytes"]
    assert usage == [{"TableName": "target", "BulkPutBytes": described["TableSizeBytes"] + gsi + lsi,
                      "Table": {"BulkPutBytes": described["TableSizeBytes"]},
                      "GlobalSecondaryIndexes": {"by-g": {"BulkPutBytes": gsi}},
                      "LocalSecondaryIndexes": {"by-l": {"BulkPutBytes": lsi}}}]
    assert report_lines(root, arn, "errors") == [] and report_lines(root, arn, "condition-check-failures") == []
    summary = json.loads((root / "output" / "reports" / "AWSDynamoDB" / arn.rsplit("/", 1)[1]
                          / "manifest-summary.json").read_text())
    assert {k: summary[k] for k in ("status", "processedItemCount", "failedItemCount", "conditionCheckFailureCount",
                                    "files")} == {
        "status": "COMPLETED", "processedItemCount": 150, "failedItemCount": 0, "conditionCheckFailureCount": 0,
        "files": {}}


def test_bad_lines_are_reported_and_good_ones_written(s3: tuple[Any, Path, Server]) -> None:
    ddb, root, _ = s3
    create_table(ddb, "target", range_key=("sk", "N"))
    big = json_line(item(99, big={"S": "x" * 410_000}))
    write_object(root, "input", "in/a.json", [
        json_line(item(1)),
        "this is not json",
        json_line({"pk": {"N": "5"}, "sk": {"N": "1"}}),  # a key of the wrong type
        json_line({"sk": {"N": "1"}}),  # no partition key
        big,  # a line over 400 KB
        "",  # blank: neither an item nor an error
        json.dumps({"NotItem": {}}),
        json_line(item(2)),
    ])
    arn = start(ddb, "target")
    doc = finished(ddb, arn)
    assert (doc["BulkOperationStatus"], doc["ProcessedItemCount"], doc["FailedItemCount"]) == (
        "COMPLETED_WITH_ERRORS", 7, 5)
    assert [it["pk"]["S"] for it in scan_all(ddb, "target")] == ["p1", "p2"]
    errors = report_lines(root, arn, "errors")
    assert [(e["InputObject"], e["LineNumber"], e["ErrorCode"]) for e in errors] == [
        ("s3://input/in/a.json", 2, "ParseError"), ("s3://input/in/a.json", 3, "ValidationError"),
        ("s3://input/in/a.json", 4, "ValidationError"), ("s3://input/in/a.json", 5, "ValidationError"),
        ("s3://input/in/a.json", 7, "ParseError")]
    assert [e["ErrorMessage"] for e in errors[1:4]] == [
        "One or more parameter values were invalid: Type mismatch for key pk expected: S actual: N",
        "One or more parameter values were invalid: Missing the key pk in the item",
        "Item size has exceeded the maximum allowed size",
    ]
    assert errors[0]["Record"] == "this is not json" and len(errors[3]["Record"]) == 64 * 1024
    assert errors[4]["ErrorMessage"] == "The input record has no Item"


def test_conditions_are_checked_per_line(s3: tuple[Any, Path, Server]) -> None:
    ddb, root, _ = s3
    create_table(ddb, "target", range_key=("sk", "N"))
    ddb.put_item(TableName="target", Item=item(1, v={"N": "1"}))
    write_object(root, "input", "in/a.json", [
        json_line(item(1, v={"N": "2"}), ConditionExpression="attribute_not_exists(pk)"),
        json_line(item(2, v={"N": "2"}), ConditionExpression="attribute_not_exists(pk)"),
        json_line(item(1, v={"N": "3"}), ConditionExpression="#v < :max",
                  ExpressionAttributeNames={"#v": "v"}, ExpressionAttributeValues={":max": {"N": "5"}}),
        json_line(item(3), ConditionExpression="#v < :max", ExpressionAttributeNames={"#v": "v"}),
    ])
    arn = start(ddb, "target")
    doc = finished(ddb, arn)
    # A failed condition is processed, not failed; an unusable expression is a validation error.
    assert (doc["BulkOperationStatus"], doc["ProcessedItemCount"], doc["FailedItemCount"]) == (
        "COMPLETED_WITH_ERRORS", 4, 1)
    assert [(it["pk"]["S"], it["v"]["N"]) for it in scan_all(ddb, "target")] == [("p1", "3"), ("p2", "2")]
    assert report_lines(root, arn, "condition-check-failures") == [
        {"InputObject": "s3://input/in/a.json", "LineNumber": 1, "Item": item(1, v={"N": "2"}),
         "ExistingItem": item(1, v={"N": "1"})}]
    (error,) = report_lines(root, arn, "errors")
    assert (error["LineNumber"], error["ErrorCode"], error["ErrorMessage"]) == (
        4, "ValidationError",
        "Invalid ConditionExpression: An expression attribute value used in expression is not defined; "
        "attribute value: :max")


def test_condition_failures_alone_complete_and_only_requested_reports_are_written(
        s3: tuple[Any, Path, Server]) -> None:
    ddb, root, _ = s3
    create_table(ddb, "target")
    ddb.put_item(TableName="target", Item={"pk": {"S": "a"}})
    write_object(root, "input", "in/a.json", [
        json_line({"pk": {"S": "a"}}, ConditionExpression="attribute_not_exists(pk)"),
        json_line({"pk": {"S": "b"}}, ConditionExpression="attribute_not_exists(pk)")])
    arn = start(ddb, "target", outputs=("ERROR",))
    doc = finished(ddb, arn)
    assert (doc["BulkOperationStatus"], doc["ProcessedItemCount"], doc["FailedItemCount"]) == ("COMPLETED", 2, 0)
    assert report_lines(root, arn, "condition-check-failures") == []


def test_ion_input_compressed_with_zstd(s3: tuple[Any, Path, Server]) -> None:
    ddb, root, _ = s3
    create_table(ddb, "target")
    write_object(root, "input", "in/a.ion.zst", [
        '$ion_1_0 {Item:{pk:"a",n:12.5,b:{{AQI=}},ss:$dynamodb_SS::["x","y"],m:{t:true,z:null}}}',
        '$ion_1_0 {Item:{pk:"b"},ConditionExpression:"attribute_not_exists(pk)"}',
    ], "ZSTD")
    arn = start(ddb, "target", fmt="ION", compression="ZSTD")
    doc = finished(ddb, arn)
    assert (doc["BulkOperationStatus"], doc["ProcessedItemCount"]) == ("COMPLETED", 2)
    got = ddb.get_item(TableName="target", Key={"pk": {"S": "a"}})["Item"]
    assert got == {"pk": {"S": "a"}, "n": {"N": "12.5"}, "b": {"B": b"\x01\x02"}, "ss": {"SS": ["x", "y"]},
                   "m": {"M": {"t": {"BOOL": True}, "z": {"NULL": True}}}}


def test_a_corrupt_object_does_not_stop_the_others(s3: tuple[Any, Path, Server]) -> None:
    ddb, root, _ = s3
    create_table(ddb, "target")
    write_object(root, "input", "in/a.json.gz", [json_line({"pk": {"S": "a"}})], "GZIP")
    (root / "input" / "in" / "b.json.gz").write_bytes(b"\x1f\x8b\x08\x00 this is not gzip at all")
    write_object(root, "input", "in/c.json.gz", [json_line({"pk": {"S": "c"}})], "GZIP")
    arn = start(ddb, "target", compression="GZIP")
    doc = finished(ddb, arn)
    assert (doc["BulkOperationStatus"], doc["ProcessedItemCount"], doc["FailedItemCount"]) == (
        "COMPLETED_WITH_ERRORS", 3, 1)
    assert sorted(it["pk"]["S"] for it in ddb.scan(TableName="target")["Items"]) == ["a", "c"]
    (error,) = report_lines(root, arn, "errors")
    assert (error["InputObject"], error["ErrorCode"]) == ("s3://input/in/b.json.gz", "InvalidObject")


def test_a_missing_bucket_fails_the_operation(s3: tuple[Any, Path, Server]) -> None:
    ddb, _, _ = s3
    create_table(ddb, "target")
    arn = start(ddb, "target")
    doc = finished(ddb, arn)
    assert (doc["BulkOperationStatus"], doc["FailureCode"], doc["FailureMessage"]) == (
        "FAILED", "S3NoSuchBucket", "The specified bucket does not exist")


def test_requests_dynamodb_refuses(s3: tuple[Any, Path, Server]) -> None:
    ddb, _, server = s3
    with pytest.raises(ClientError) as excinfo:
        start(ddb, "no-such-table")
    assert error_of(excinfo) == ("ResourceNotFoundException", "Requested resource not found: Table: no-such-table not found")
    create_table(ddb, "target")
    unchecked = boto3.client("dynamodb", endpoint_url=server.url, region_name="us-east-1",
                             config=Config(retries={"max_attempts": 1}, parameter_validation=False))
    with pytest.raises(ClientError) as excinfo:
        start(unchecked, "target", MaxWriteRequestUnits=1023)
    assert error_of(excinfo) == ("ValidationException", "1 validation error detected: Value '1023' at "
                                 "'maxWriteRequestUnits' failed to satisfy constraint: Member must have value "
                                 "greater than or equal to 1024")
    # The reference calls the report's bucket required (its model does not): refused before any job
    # exists (the framework's words, unconfirmed for this member).
    with pytest.raises(ClientError) as excinfo:
        ddb.start_bulk_put_items(TableName="target", InputS3Configuration={"S3Bucket": "input",
                                 "InputFormat": "DYNAMODB_JSON"}, OutputS3Configuration={"OutputType": ["ERROR"]})
    assert error_of(excinfo) == ("ValidationException", "1 validation error detected: Value null at "
                                 "'outputS3Configuration.s3Bucket' failed to satisfy constraint: Member must not be null")
    assert ddb.list_bulk_operations()["BulkOperationsSummaryList"] == []
    with pytest.raises(ClientError) as excinfo:
        unchecked.list_bulk_operations(MaxResults=26)
    assert error_of(excinfo) == ("ValidationException", "1 validation error detected: Value '26' at 'maxResults' "
                                 "failed to satisfy constraint: Member must have value less than or equal to 25")
    missing = "arn:aws:dynamodb:us-east-1:000000000000:table/target/bulk-operation/00000000000000-00000000"
    for call in (ddb.describe_bulk_operation, ddb.cancel_bulk_operation):
        with pytest.raises(ClientError) as excinfo:
            call(BulkOperationArn=missing)
        assert error_of(excinfo) == ("ResourceNotFoundException",
                                     f"Requested resource not found: Bulk operation {missing} not found")


def test_client_token_binds_for_eight_hours(s3: tuple[Any, Path, Server]) -> None:
    ddb, root, server = s3
    create_table(ddb, "target")
    write_object(root, "input", "in/a.json", [json_line({"pk": {"S": "a"}})])
    first = start(ddb, "target", ClientToken="token-1")
    assert start(ddb, "target", ClientToken="token-1") == first
    with pytest.raises(ClientError) as excinfo:
        start(ddb, "target", ClientToken="token-1", PerformanceTier="ACCELERATED")
    assert error_of(excinfo) == (
        "IdempotentParameterMismatchException",
        "DynamoDB rejected the request because you retried a request with a different payload but with an "
        "idempotent token that was already used.")
    assert finished(ddb, first)["ClientToken"] == "token-1"
    advance(server.url, 8 * 3600 + 1)
    second = start(ddb, "target", ClientToken="token-1", PerformanceTier="ACCELERATED")
    assert second != first
    assert finished(ddb, second)["PerformanceTier"] == "ACCELERATED"


def test_listing_is_newest_first_and_paged(s3: tuple[Any, Path, Server]) -> None:
    ddb, root, server = s3
    create_table(ddb, "target")
    write_object(root, "input", "in/a.json", [json_line({"pk": {"S": "a"}})])
    arns = []
    for _ in range(3):
        arns.append(start(ddb, "target"))
        advance(server.url, 1)
    for arn in arns:
        finished(ddb, arn)
    first = ddb.list_bulk_operations(MaxResults=2)
    assert [s["BulkOperationArn"] for s in first["BulkOperationsSummaryList"]] == [arns[2], arns[1]]
    assert set(first["BulkOperationsSummaryList"][0]) == {"BulkOperationArn", "BulkOperationStatus", "StartTime",
                                                          "EndTime"}
    rest = ddb.list_bulk_operations(MaxResults=2, NextToken=first["NextToken"])
    assert [s["BulkOperationArn"] for s in rest["BulkOperationsSummaryList"]] == [arns[0]]
    assert "NextToken" not in rest
    assert [s["BulkOperationArn"] for s in ddb.list_bulk_operations()["BulkOperationsSummaryList"]] == arns[::-1]
    advance(server.url, 91 * 86_400)  # 90 days: older operations are no longer listed
    assert ddb.list_bulk_operations()["BulkOperationsSummaryList"] == []


def test_pacing_and_cancel_keep_what_was_written(s3: tuple[Any, Path, Server]) -> None:
    ddb, root, server = s3
    create_table(ddb, "target")
    write_object(root, "input", "in/a.json", [json_line({"pk": {"S": f"k{i}"}}) for i in range(6000)])
    arn = start(ddb, "target", MaxWriteRequestUnits=1024)
    doc = ddb.describe_bulk_operation(BulkOperationArn=arn)["BulkOperationDescription"]
    assert doc["MaxWriteRequestUnits"] == 1024
    # At most 1024 one-unit items per second of the server clock (plus one second of burst and one line).
    seen = doc
    for _ in range(5):
        seen = ddb.describe_bulk_operation(BulkOperationArn=arn)["BulkOperationDescription"]
        elapsed = server_now(server.url) - seen["StartTime"].timestamp()
        assert seen["ProcessedItemCount"] <= 1024 * (elapsed + 1) + 1
    out = ddb.cancel_bulk_operation(BulkOperationArn=arn)
    out.pop("ResponseMetadata")
    assert out == {"BulkOperationArn": arn, "BulkOperationStatus": "CANCELLING"}
    doc = finished(ddb, arn)
    assert doc["BulkOperationStatus"] == "CANCELLED" and "FailureCode" not in doc
    written = len(scan_all_keys(ddb))
    assert written == doc["ProcessedItemCount"] < 6000
    # Cancelling a finished operation changes nothing.
    out = ddb.cancel_bulk_operation(BulkOperationArn=arn)
    assert out["BulkOperationStatus"] == "CANCELLED"


def scan_all_keys(ddb: Any) -> list[Any]:
    items: list[Any] = []
    kwargs: dict[str, Any] = {"TableName": "target"}
    while True:
        page = ddb.scan(**kwargs)
        items += page["Items"]
        if "LastEvaluatedKey" not in page:
            return items
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def test_pacing_follows_the_server_clock(s3: tuple[Any, Path, Server]) -> None:
    ddb, root, server = s3
    create_table(ddb, "target")
    write_object(root, "input", "in/a.json", [json_line({"pk": {"S": f"k{i}"}}) for i in range(3000)])
    arn = start(ddb, "target", MaxWriteRequestUnits=1024)
    advance(server.url, 10)  # ten seconds of the server clock refill more than the whole load needs
    assert finished(ddb, arn)["ProcessedItemCount"] == 3000
