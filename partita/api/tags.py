"""Tag operations: TagResource, UntagResource, ListTagsOfResource."""

from __future__ import annotations

from typing import Any

from ..engine.engine import Engine
from .answers import EmptyAnswer


def tag_resource(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    engine.tags.tag(request["ResourceArn"], request["Tags"])
    return EmptyAnswer()


def untag_resource(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    engine.tags.untag(request["ResourceArn"], request["TagKeys"])
    return EmptyAnswer()


def list_tags_of_resource(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    """All tags in one page: a table has at most 50, so NextToken is never needed."""
    return {"Tags": engine.tags.list(request["ResourceArn"])}
