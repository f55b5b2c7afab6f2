"""Control-plane operations infrastructure tools call on every refresh.

DescribeEndpoints, DescribeLimits, Update/DescribeContinuousBackups and
Put/Get/DeleteResourcePolicy. Terraform, CDK, SAM and PynamoDB read these
even when the application never uses the feature, so each must answer as
DynamoDB does.
"""

from __future__ import annotations

from typing import Any

from ..engine.capacity.partitions import ACCOUNT_MAX_UNITS
from ..engine.engine import Engine

ENDPOINT_CACHE_MINUTES = 1440


def describe_endpoints(host: str) -> dict[str, Any]:
    """This server, as the client reached it (the Host header), for endpoint discovery."""
    return {"Endpoints": [{"Address": host, "CachePeriodInMinutes": ENDPOINT_CACHE_MINUTES}]}


def describe_limits(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    """The per-table quota the throughput emulation caps on-demand tables at (`--table-max-units`).

    The account quota is DynamoDB's default (80,000), raised to the table
    quota when that is set higher; with the emulation, CreateTable and
    UpdateTable enforce it over the provisioned tables and GSIs (capacity/account.py).
    """
    table = int(engine.meter.table_quota)
    account = max(ACCOUNT_MAX_UNITS, table)
    return {
        "AccountMaxReadCapacityUnits": account,
        "AccountMaxWriteCapacityUnits": account,
        "TableMaxReadCapacityUnits": table,
        "TableMaxWriteCapacityUnits": table,
    }


def describe_continuous_backups(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    return {"ContinuousBackupsDescription": engine.backups.describe(request["TableName"])}


def update_continuous_backups(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    spec = request["PointInTimeRecoverySpecification"]
    return {"ContinuousBackupsDescription": engine.backups.update(request["TableName"], spec)}


def put_resource_policy(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    """ConfirmRemoveSelfResourceAccess is accepted; it matters once policies are enforced."""
    revision = engine.policies.put(request["ResourceArn"], request["Policy"], request.get("ExpectedRevisionId"))
    return {"RevisionId": revision}


def get_resource_policy(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    return engine.policies.get(request["ResourceArn"])


def delete_resource_policy(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    return {"RevisionId": engine.policies.delete(request["ResourceArn"], request.get("ExpectedRevisionId"))}
