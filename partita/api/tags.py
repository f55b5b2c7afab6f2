"""Tag operations: TagResource, UntagResource, ListTagsOfResource."""

from __future__ import annotations

from typing import Any

from ..engine.engine import Engine


class EmptyAnswer(dict[str, Any]):
    """An answer the protocol layer sends as a zero-length body, not ``{}``.

    DynamoDB answers a successful TagResource and UntagResource with HTTP 200
    and no body at all (observed); SDKs read both forms alike, raw HTTP
    clients and recorded-answer suites do not.
    """


def tag_resource(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    engine.tags.tag(request["ResourceArn"], request["Tags"])
    return EmptyAnswer()


def untag_resource(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    engine.tags.untag(request["ResourceArn"], request["TagKeys"])
    return EmptyAnswer()


def list_tags_of_resource(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    """All tags in one page: a table has at most 50, so NextToken is never needed."""
    return {"Tags": engine.tags.list(request["ResourceArn"])}
