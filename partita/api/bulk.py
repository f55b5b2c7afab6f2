"""StartBulkPutItems, DescribeBulkOperation, ListBulkOperations, CancelBulkOperation (shapes checked by the model)."""

from __future__ import annotations

from typing import Any

from ..engine.engine import Engine
from ..errors import ENVELOPE, ShapeValidationException

#: The model lets OutputS3Configuration omit S3Bucket, but the API reference says "The S3Bucket
#: and OutputType fields are required" (OutputS3Configuration), and a report needs a place.
#: The framework's words for a missing member; NOT confirmed for this member on the service.
NO_OUTPUT_BUCKET = (
    ENVELOPE + "Value null at 'outputS3Configuration.s3Bucket' failed to satisfy constraint: Member must not be null"
)


def start_bulk_put_items(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    if not request["OutputS3Configuration"].get("S3Bucket"):
        raise ShapeValidationException(NO_OUTPUT_BUCKET)
    return {"BulkOperationDescription": engine.bulk.start(request)}


def describe_bulk_operation(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    return {"BulkOperationDescription": engine.bulk.describe(request["BulkOperationArn"])}


def list_bulk_operations(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    return engine.bulk.list(request)


def cancel_bulk_operation(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    return engine.bulk.cancel(request["BulkOperationArn"])
