"""PartiQL's error messages, as the service words them.

Sources: test suites whose expectations were recorded against DynamoDB in
2026 (the "wasn't well formed" envelope and its details, aliasing, DELETE's
RETURNING rule, the key-equality rule, the read/write mix of a
transaction, the parameter count) and DynamoDB Local's own strings where no
recording of the service exists (marked where used). The service reports no
position in a syntax error: the recorded messages carry only a detail. Some
refusals of a function call do carry one (`at line:column:length`).
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
# Recorded against the service in 2026 by other emulators' suites (docs/decisions.md, PartiQL):
# index qualifiers, the FROM path, batch and transaction reads, RETURNING in a transaction.
INDEX_WRITE = "This operation is not supported on an index"
INSERT_INDEX = "FROM clause may only contain a single table name in data manipulation statements"
PATH_COMPONENTS = "A path may contain at most 2 components in the FROM clause"
EMPTY_COMPONENT = "Path component cannot be an empty string"
NO_INDEX = "The table does not have the specified index"
#: A SELECT naming a vector index: the Scan answer, without a period (recorded, 2026).
VECTOR_INDEX = "Scan operation not supported on this index type"
GSI_CONSISTENT = "Strongly consistent read is not supported on Global Secondary Indexes"
MULTI_ATTRIBUTE_INDEX = (
    "PartiQL statements cannot be executed on tables with multi-attribute HASH keys or multi-attribute RANGE keys."
)
BATCH_KEY = "Select statements within BatchExecuteStatement must specify the primary key in the where clause."
TRANSACTION_KEY = "Select statements within ExecuteTransaction must specify the primary key in the where clause."
TRANSACTION_INDEX = "Reads on indices are not supported within transactions."
TRANSACTION_RETURNING = "RETURNING clause is not supported in ExecuteTransaction."
INVALID = "One or more parameter values were invalid: "
# Recorded in 2026 (paritysuite/dynamodb-conformance, tier3 partiqlFunctions): functions
# where the service does not take them, set_add/set_delete misuse, empty bags, keyword path steps.
EMPTY_BAG = "Empty bags are not supported"
EXISTS_CONDITION = "EXISTS() must contain a single item read with additional condition"
INVALID_DOT = "Invalid path dot component"


def unrecognized_function(call_name: str, at: str) -> ValidationException:
    """A function the WHERE clause does not know (EXISTS(path), set_add, ...)."""
    return ValidationException(f"Unrecognized function: {call_name} at {at}")


def operand_count(call_name: str, count: int) -> ValidationException:
    return ValidationException(
        "Incorrect number of operands for operator or function; "
        f"operator or function: {call_name}, number of operands: {count}"
    )


def operand_type(operator: str, kind: str) -> ValidationException:
    """An ordering operator (or BETWEEN) given a constant of a type without an order."""
    return ValidationException(
        f"Incorrect operand type for operator or function; operator or function: {operator}, operand type: {kind}"
    )


def too_nested(where: str) -> ValidationException:
    """A literal deeper than the 32 levels of an attribute value; `where` is the path of its first element too deep."""
    return ValidationException(f"Nesting Levels have exceeded supported limits under {where}")


# Partita's own (unconfirmed): the service's answer to nesting this deep is not on record.
TOO_DEEP = "The expression is nested too deeply; nesting depth exceeds "
# DynamoDB Local's wording (its PartiQL translator); not seen in a recording of the service.
INSERT_RETURNING = "RETURNING is not supported in INSERT"
RETURNING_WILDCARD = "Expected '*' after ( MODIFIED | ALL ) ( NEW | OLD ) in RETURNING clause"


def malformed(detail: str = "") -> ValidationException:
    """The service's syntax-error envelope; some failures carry no detail after the colon."""
    return ValidationException(NOT_WELL_FORMED + detail)


class DuplicateItemException(DynamoDBError):
    """An INSERT whose key exists: INSERT is not an upsert."""

    code = "DuplicateItemException"
