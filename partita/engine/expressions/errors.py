"""The one way this package builds DynamoDB's expression errors."""

from __future__ import annotations

from partita.errors import ValidationException


def invalid(kind: str, message: str) -> ValidationException:
    """`Invalid <kind>: <message>`, the prefix DynamoDB puts on every expression error."""
    return ValidationException(f"Invalid {kind}: {message}")
