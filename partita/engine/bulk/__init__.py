"""Bulk put operations: StartBulkPutItems and friends load S3 objects into an existing table."""
