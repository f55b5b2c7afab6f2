"""The exceptions and messages of global tables, as DynamoDB words them.

Each message is a public record of DynamoDB's answer: the ack-api-quirks
lab's probes of the service (October 2026; see docs/decisions.md, "Regions
and global tables") unless marked unconfirmed where it is raised.
"""

from __future__ import annotations

from ...errors import DynamoDBError, ResourceInUseException, ValidationException


class ReplicatedWriteConflictException(DynamoDBError):
    """A write to a multi-Region strongly consistent table met another region's write of the item (retryable)."""

    code = "ReplicatedWriteConflictException"


class GlobalTableNotFoundException(DynamoDBError):
    code = "GlobalTableNotFoundException"


INVALID = "One or more parameter values were invalid: "


def in_use() -> ResourceInUseException:
    """Another replica or table change of the group is under way."""
    return ResourceInUseException("The resource which you are attempting to change is in use.")


def already_exists(name: str) -> ValidationException:
    # "a the" and the typographic quotes are the service's (recorded verbatim, DDB-TABLE-223).
    return ValidationException(
        f"Failed to create a the new replica of table with name: \u2018{name}\u2019 because one or more "
        "replicas already existed as tables."
    )


def not_members(regions: list[str]) -> ValidationException:
    return ValidationException(
        "Update global table operation failed because one or more replicas were not part of the global table. "
        f"Please retry the request without these replicas: [{', '.join(regions)}]."
    )


def local_region() -> ValidationException:
    return ValidationException(
        "Cannot add or delete the local region through ReplicaUpdates. "
        "Use CreateTable, DeleteTable, or UpdateTable as required."
    )


def region_disabled(region: str) -> ValidationException:
    """A well-formed region this server does not serve: DynamoDB's answer for a region not enabled."""
    return ValidationException(
        f"Failed to access the region: \u2018{region}\u2019. User is missing the permissions since the region is disabled."
    )


def region_unsupported(region: str, served: list[str]) -> ValidationException:
    """A region name that is no region. DynamoDB lists every region of its own; the list here is
    the server's regions (the service's list is AWS's, so the list is unconfirmed)."""
    return ValidationException(
        f"Region {region} is not supported. The latest version of global tables are only supported in the "
        f"following regions: [{', '.join(served)}]."
    )


def recent_source() -> ValidationException:
    return ValidationException(
        "Replica cannot be deleted because it has acted as a source region for new replica(s) being added to the "
        "table in the last 24 hours."
    )


def protected(name: str, region: str) -> ValidationException:
    return ValidationException(
        f"Cannot delete table {name} in region {region} because it has deletion protection enabled. "
        "Disable deletion protection first."
    )
