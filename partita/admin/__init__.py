"""Partita's own admin and introspection API under `/partita/v1/`, beside the DynamoDB API.

DynamoDB only ever answers `POST /`, so these paths can never clash with
it. Answers are plain JSON; errors are `{"error": message}` with an HTTP
status, not DynamoDB's envelope, because no DynamoDB client calls them.
"""

from __future__ import annotations

from .routes import PREFIX, answer

__all__ = ["PREFIX", "answer"]
