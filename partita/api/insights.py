"""Contributor Insights: UpdateContributorInsights, DescribeContributorInsights, ListContributorInsights.

The rankings themselves are served by the introspection API (hot keys),
computed from the throughput meter's counters.
"""

from __future__ import annotations

from typing import Any

from ..engine.engine import Engine
from ..errors import ValidationException

DEFAULT_PAGE = 100


def update_contributor_insights(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    return engine.insights.update(
        request["TableName"], request.get("IndexName"), request["ContributorInsightsAction"],
        request.get("ContributorInsightsMode"),
    )


def describe_contributor_insights(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    return engine.insights.describe(request["TableName"], request.get("IndexName"))


def list_contributor_insights(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    """Summaries in table-name order, paged by a NextToken that is the position of the next one."""
    summaries = engine.insights.summaries(request.get("TableName"))
    token = request.get("NextToken")
    start = 0
    if token is not None:
        if not token.isdigit() or int(token) > len(summaries):
            raise ValidationException("Invalid NextToken")  # wording unconfirmed
        start = int(token)
    size = request.get("MaxResults") or DEFAULT_PAGE
    page = summaries[start : start + size]
    out: dict[str, Any] = {"ContributorInsightsSummaries": page}
    if start + size < len(summaries):
        out["NextToken"] = str(start + size)
    return out
