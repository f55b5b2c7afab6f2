"""PartiQL's error messages, as the service words them.

Sources: test suites whose expectations were recorded against DynamoDB in
2026 (the "wasn't well formed" envelope and its details, aliasing, DELETE's
RETURNING rule, the key-equality rule, the read/write mix of a
transaction, the parameter count) and DynamoDB Local's own strings where no
recording of the service exists (marked where used). The service reports no
position in a syntax error: the recorded messages carry only a detail.
"""

from __future__ import annotations

from ..errors import DynamoDBError, ValidationException

NOT_WELL_FORMED = "Statement wasn't well formed, can't be processed: "
LEFTOVER = "Unexpected token after expression"
UNEXPECTED_TERM = "Unexpected term"
UNEXPECTED_KEYWORD = "Unexpected keyword"
UNEXPECTED_OPERATOR = "Unexpected operator"
MISSING_RHS = "Missing right-hand side expression of infix operator"
EXPECTED_DML = "Expected data manipulation"
EXPECTED_SIMPLE_PATH = "Expected identifier for simple path"
ALIASING = "Aliasing is not supported"
KEY_EQUALITY = "Where clause does not contain a mandatory equality on all key attributes"
PARAMETER_COUNT = "Number of parameters in request and statement don't match."
DUPLICATE_ITEM = "Duplicate primary key exists in table"
TRANSACTION_MIX = "ExecuteTransaction API does not support both read and write operations in the same request."
# DynamoDB Local's wording (its PartiQL translator); not seen in a recording of the service.
INSERT_RETURNING = "RETURNING is not supported in INSERT"
RETURNING_WILDCARD = "Expected '*' after ( MODIFIED | ALL ) ( NEW | OLD ) in RETURNING clause"


def malformed(detail: str = "") -> ValidationException:
    """The service's syntax-error envelope; some failures carry no detail after the colon."""
    return ValidationException(NOT_WELL_FORMED + detail)


class DuplicateItemException(DynamoDBError):
    """An INSERT whose key exists: INSERT is not an upsert."""

    code = "DuplicateItemException"
