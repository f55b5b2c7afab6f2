"""Request validation derived from DynamoDB's service model (see ``shapes``)."""

from partita.api.validation.shapes import compile_operation, known_operations, validate_request

__all__ = ["compile_operation", "known_operations", "validate_request"]
