"""One listing rule for ListExports and ListImports: oldest first, paged by the last ARN seen.

Both list job documents sorted by (StartTime, ARN); the NextToken is the last
ARN of the page, so the next page starts right after that ARN's place in the
same order (a token that names nothing starts from the beginning).
"""

from __future__ import annotations

from typing import Any

import orjson

from ...storage.base import Store
from .keys import end_of


def page(
    docs: list[dict[str, Any]], arn_key: str, token: str | None, limit: int
) -> tuple[list[dict[str, Any]], str | None]:
    """(this page's documents, the NextToken or None), from all documents in any order."""
    docs = sorted(docs, key=lambda d: (d["StartTime"], d[arn_key]))
    if token:
        for i, doc in enumerate(docs):
            if doc[arn_key] == token:
                docs = docs[i + 1 :]
                break
    if len(docs) > limit:
        docs = docs[:limit]
        return docs, docs[-1][arn_key]
    return docs, None


def listed(
    store: Store, prefix: bytes, arn_key: str, request: dict[str, Any], limit_key: str
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The page a List call asks for (TableArn filter, NextToken, limit) and the answer's NextToken part."""
    docs = [orjson.loads(raw) for _, raw in store.range(prefix, end_of(prefix))]
    if request.get("TableArn"):
        docs = [d for d in docs if d["TableArn"] == request["TableArn"]]
    docs, token = page(docs, arn_key, request.get("NextToken"), request.get(limit_key) or 25)
    return docs, {} if token is None else {"NextToken": token}
