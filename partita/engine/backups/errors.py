"""The exceptions of backups, restores, exports and imports.

Messages recorded against DynamoDB by moto's and localstack's tests:
"Backup not found: <arn>", "Table already exists: <name>", "Table not found:
<name>", "Source table not found: <name>". The others are NOT confirmed
against the service (marked where raised); they follow the service model's
descriptions of the exceptions.
"""

from __future__ import annotations

from ...errors import DynamoDBError


class BackupNotFoundException(DynamoDBError):
    code = "BackupNotFoundException"


class BackupInUseException(DynamoDBError):
    code = "BackupInUseException"


class TableAlreadyExistsException(DynamoDBError):
    code = "TableAlreadyExistsException"


class TableInUseException(DynamoDBError):
    code = "TableInUseException"


class TableNotFoundException(DynamoDBError):
    code = "TableNotFoundException"


class SourceTableNotFoundException(DynamoDBError):
    code = "SourceTableNotFoundException"


class PointInTimeRecoveryUnavailableException(DynamoDBError):
    code = "PointInTimeRecoveryUnavailableException"


class InvalidRestoreTimeException(DynamoDBError):
    code = "InvalidRestoreTimeException"


class InvalidExportTimeException(DynamoDBError):
    code = "InvalidExportTimeException"


class ExportNotFoundException(DynamoDBError):
    code = "ExportNotFoundException"


class ExportConflictException(DynamoDBError):
    code = "ExportConflictException"


class ImportNotFoundException(DynamoDBError):
    code = "ImportNotFoundException"


class ImportConflictException(DynamoDBError):
    code = "ImportConflictException"


def instant(value: object) -> float:
    """A timestamp member as epoch seconds: SDKs send numbers; a string may be a number or ISO 8601.

    The shape validator lets strings through (DynamoDB's texts for them are
    unrecorded); one that is neither form gets a SerializationException
    (NOT confirmed against DynamoDB).
    """
    from datetime import datetime

    from ...errors import SerializationException

    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            pass
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            pass
    raise SerializationException("Value cannot be converted to Date")
