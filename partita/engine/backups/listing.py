"""One listing rule for ListExports and ListImports: oldest first, paged by the last ARN seen.

Both list job documents sorted by (StartTime, ARN); the NextToken is the last
ARN of the page, so the next page starts right after that ARN's place in the
same order (a token that names nothing starts from the beginning).
"""

from __future__ import annotations

from typing import Any


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
