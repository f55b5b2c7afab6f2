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

from collections.abc import Iterator
from contextlib import contextmanager

from ..errors import (
    ENVELOPE,
    RequestFault,
    ShapeValidationException,
    ValidationException,
    ValueFault,
)


@contextmanager
def enveloped() -> Iterator[None]:
    """PutItem, UpdateItem, DeleteItem: parameter and value faults inside the envelope."""
    try:
        yield
    except ValueFault as fault:
        raise ShapeValidationException(ENVELOPE + fault.current) from None
    except RequestFault as fault:
        raise ShapeValidationException(ENVELOPE + (fault.message or "")) from None


@contextmanager
def current_wording() -> Iterator[None]:
    """GetItem, Query: value faults bare, in the current layer's wording."""
    try:
        yield
    except ValueFault as fault:
        raise ValidationException(fault.current) from None
