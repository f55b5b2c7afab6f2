"""Which validation layer an operation's request faults are worded by.

A 2026 conformance suite (paritysuite/dynamodb-conformance, tier3
error-messages/valueLayers and the request-validation envelope cases of
putItem, deleteItem and updateItem) recorded that DynamoDB words a bad number,
a repeated set member and the request's own parameter faults by the layer that
checks them: PutItem, UpdateItem and DeleteItem inside "1 validation error
detected: "; GetItem and Query bare in the current wording; BatchWriteItem,
the transactions and Scan in the older wording. Faults are raised with the
older wording (`ValueFault.current` carries the other); these wrappers, put
around the checks an operation makes before it looks up the table, reword them.
"""

from __future__ import annotations

from ..errors import (
    ENVELOPE,
    RequestFault,
    ShapeValidationException,
    ValidationException,
    ValueFault,
)

#: What the enveloping operations catch around their pre-lookup checks.
ENVELOPED_FAULTS = (ValueFault, RequestFault)


def enveloped(fault: ValueFault | RequestFault) -> ShapeValidationException:
    """PutItem, UpdateItem, DeleteItem: a parameter or value fault inside the envelope.

    Callers catch and re-raise (`raise enveloped(fault) from None`) rather than
    enter a context manager: a try block costs nothing on the hot path.
    """
    text = fault.current if isinstance(fault, ValueFault) else (fault.message or "")
    return ShapeValidationException(ENVELOPE + text)


def current_wording(fault: ValueFault) -> ValidationException:
    """GetItem, Query: a value fault bare, in the current layer's wording."""
    return ValidationException(fault.current)
