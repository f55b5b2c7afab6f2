"""The exceptions of signature verification, as DynamoDB names them.

All are coral service errors answered with 400, as DynamoDB answers them.
AccessDeniedException lives in `partita.errors`: the api layer's
authorization raises it too.
"""

from __future__ import annotations

from ...errors import CORAL_SERVICE, DynamoDBError, MissingAuthenticationTokenException

__all__ = [
    "IncompleteSignatureException",
    "InvalidSignatureException",
    "MissingAuthenticationTokenException",
    "UnrecognizedClientException",
]


class IncompleteSignatureException(DynamoDBError):
    code = "IncompleteSignatureException"
    prefix = CORAL_SERVICE


class InvalidSignatureException(DynamoDBError):
    code = "InvalidSignatureException"
    prefix = CORAL_SERVICE


class UnrecognizedClientException(DynamoDBError):
    code = "UnrecognizedClientException"
    prefix = CORAL_SERVICE


INVALID_TOKEN = "The security token included in the request is invalid."
