"""DynamoDB's exceptions, shared by every layer.

Each layer raises these; only the protocol layer turns them into HTTP. They
live outside the layer folders because the engine and the api both raise
them and no layer may import from the one above it.
"""

from __future__ import annotations

from typing import Any

DYNAMODB = "com.amazonaws.dynamodb.v20120810"
CORAL_VALIDATE = "com.amazon.coral.validate"
CORAL_SERVICE = "com.amazon.coral.service"


#: Longest piece of the request a message echoes, and longest message sent.
#: DynamoDB's own cut-offs are unknown; these keep an error's size bounded by
#: the limits rather than by the attacker's input (docs/decisions.md, "Robustness").
MAX_ECHO_CHARS = 8192
MAX_MESSAGE_CHARS = 65536
ELLIPSIS = "..."


def shown(text: str) -> str:
    """``text`` as a message may echo it: whole up to MAX_ECHO_CHARS, then cut with an ellipsis."""
    return text if len(text) <= MAX_ECHO_CHARS else text[:MAX_ECHO_CHARS] + ELLIPSIS


class DynamoDBError(Exception):
    """An error DynamoDB would answer with; `code` and `message` go on the wire."""

    code = "InternalServerError"
    prefix = DYNAMODB
    status = 400
    message_key = "message"

    def __init__(self, message: str | None = None, **extra: Any) -> None:
        super().__init__(message)
        self.message = message
        # Extra top-level members of the error body (Item, CancellationReasons ...).
        self.extra = extra

    def body(self) -> dict[str, Any]:
        out: dict[str, Any] = {"__type": f"{self.prefix}#{self.code}"}
        message = self.message
        if message is not None:
            if len(message) > MAX_MESSAGE_CHARS:
                # The last line of defence; messages that echo input cut it with shown().
                message = message[:MAX_MESSAGE_CHARS] + ELLIPSIS
            out[self.message_key] = message
        out.update(self.extra)
        return out


class ValidationException(DynamoDBError):
    code = "ValidationException"


class ShapeValidationException(ValidationException):
    """Request-shape errors carry coral's validate prefix, as on the real service."""

    prefix = CORAL_VALIDATE


#: What the current validation layer puts before a request-validation fault (docs/decisions.md, "Query and Scan").
ENVELOPE = "1 validation error detected: "


class RequestFault(ValidationException):
    """A fault in the request's own parameters (ExpressionAttributeNames/Values without or beside
    their expressions, an empty expression, ReturnValues, a malformed Expected).

    Raised with the wording every operation shares; PutItem, UpdateItem and
    DeleteItem report it inside ENVELOPE (2026 records), the other operations bare.
    """


class ValueFault(ValidationException):
    """A bad number or a set with a repeated member, worded by the layer that checks it.

    `message` is the older layer's text (BatchWriteItem, transactions, Scan);
    `current` the current layer's (PutItem, UpdateItem, DeleteItem enveloped,
    GetItem and Query bare), as a 2026 conformance suite recorded on AWS.
    """

    def __init__(self, message: str, current: str | None = None) -> None:
        super().__init__(message)
        self.current = message if current is None else current


class SerializationException(DynamoDBError):
    code = "SerializationException"
    prefix = CORAL_SERVICE
    message_key = "Message"  # the real service capitalises it for this family


class UnknownOperationException(DynamoDBError):
    code = "UnknownOperationException"
    prefix = CORAL_SERVICE


class MissingAuthenticationTokenException(DynamoDBError):
    code = "MissingAuthenticationTokenException"
    prefix = CORAL_SERVICE


class AccessDeniedException(DynamoDBError):
    """A request its signer's policies do not allow (`partita serve --auth`)."""

    code = "AccessDeniedException"
    prefix = CORAL_SERVICE


class ResourceNotFoundException(DynamoDBError):
    code = "ResourceNotFoundException"


class ResourceInUseException(DynamoDBError):
    code = "ResourceInUseException"


class ConditionalCheckFailedException(DynamoDBError):
    code = "ConditionalCheckFailedException"


class LimitExceededException(DynamoDBError):
    code = "LimitExceededException"


class ProvisionedThroughputExceededException(DynamoDBError):
    code = "ProvisionedThroughputExceededException"


class ItemCollectionSizeLimitExceededException(DynamoDBError):
    code = "ItemCollectionSizeLimitExceededException"


class TransactionConflictException(DynamoDBError):
    code = "TransactionConflictException"


class RequestEntityTooLarge(DynamoDBError):
    code = "RequestEntityTooLarge"
    prefix = CORAL_SERVICE
    status = 413


class InternalServerError(DynamoDBError):
    code = "InternalServerError"
    status = 500


class ServiceUnavailable(DynamoDBError):
    """The store cannot be reached for now (a restarting database): HTTP 503, retried by every SDK.

    The code and the message are the error-handling guide's table entry for
    HTTP 503; the exact body the real service sends was not found on record.
    """

    code = "ServiceUnavailable"
    status = 503
