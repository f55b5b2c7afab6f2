"""The output report of a bulk put: which lines were not written, and why, under the output prefix.

Layout (NOT confirmed against DynamoDB's files: the developer guide's
"Output file layout" and "Manifest file" sections were not reachable when
this was written; the names follow the export layout's habits):
`<prefix>/AWSDynamoDB/<operation id>/errors/part-NNNNN.json` and
`.../condition-check-failures/part-NNNNN.json`, JSON lines, one part per job
step that had any (written before the step commits, so a replayed step
rewrites the same part), and `.../manifest-summary.json` once the operation
ends: the counts DescribeBulkOperation reports and the list of part files.
An error line: {"InputObject": "s3://bucket/key", "LineNumber": n,
"ErrorCode": ..., "ErrorMessage": ..., "Record": the line as read (cut at
64 KB)}. A condition-check failure: {"InputObject", "LineNumber", "Item": the
attempted item, "ExistingItem": the item in the table, when there is one}.
"""

from __future__ import annotations

from typing import Any

import orjson

from ..backups.objects import Objects, Placement

RECORD_CUT = 64 * 1024
KINDS = {"ERROR": "errors", "CONDITION_CHECK_FAILURE": "condition-check-failures"}


def base(doc: dict[str, Any]) -> tuple[str, str] | None:
    """(bucket, key prefix) of the operation's report; None without a bucket.

    StartBulkPutItems refuses a request without one, but an operation stored
    before it did must still finish: without this it failed every step for good.
    """
    out = doc["OutputS3Configuration"]
    bucket = out.get("S3Bucket")
    if not bucket:
        return None
    prefix = (out.get("S3KeyPrefix") or "").strip("/")
    op_id = doc["BulkOperationArn"].rsplit("/", 1)[1]
    return bucket, "/".join(p for p in (prefix, "AWSDynamoDB", op_id) if p)


def placement(doc: dict[str, Any]) -> Placement:
    out = doc["OutputS3Configuration"]
    return Placement(out.get("S3BucketOwner"), out.get("S3SseAlgorithm"), out.get("S3SseKmsKeyId"))


def write_part(
    objects: Objects, doc: dict[str, Any], kind: str, part: int, lines: list[dict[str, Any]]
) -> str | None:
    where = base(doc)
    if where is None:
        return None
    bucket, prefix = where
    key = f"{prefix}/{KINDS[kind]}/part-{part:05d}.json"
    objects.put(bucket, key, b"".join(orjson.dumps(line) + b"\n" for line in lines), placement(doc))
    return key


def write_summary(objects: Objects, doc: dict[str, Any], parts: dict[str, list[str]]) -> None:
    where = base(doc)
    if where is None:
        return
    bucket, prefix = where
    summary = {
        "version": "2026-01-01",
        "bulkOperationArn": doc["BulkOperationArn"],
        "tableArn": doc["_TableArn"],
        "status": doc["BulkOperationStatus"],
        "startTime": doc["StartTime"],
        "endTime": doc.get("EndTime"),
        "processedItemCount": doc.get("ProcessedItemCount", 0),
        "failedItemCount": doc.get("FailedItemCount", 0),
        "conditionCheckFailureCount": doc.get("_ConditionFailures", 0),
        "outputTypes": doc["OutputS3Configuration"].get("OutputType", []),
        "files": {KINDS[k]: v for k, v in parts.items()},
    }
    objects.put(bucket, f"{prefix}/manifest-summary.json", orjson.dumps(summary, option=orjson.OPT_INDENT_2),
                placement(doc))
