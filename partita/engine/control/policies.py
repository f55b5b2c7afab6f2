"""Resource-based policies of tables and their streams: stored and versioned, not yet enforced.

A policy is kept in its table's catalog document, keyed by the ARN it was
attached to (the table's, or one of the table's stream ARNs), so it is
shared by workers, survives restarts and goes with the table. Enforcement
arrives with authentication. Revision ids are microsecond timestamps, as
DynamoDB's are comparable timestamps; putting the same document again is a
no-op that keeps the revision.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson

from ...errors import DynamoDBError, ResourceNotFoundException, ValidationException
from ...storage.base import Store
from ..tables.catalog import Catalog
from ..tables.schema import Table
from ..time.clock import Clock
from .arns import invalid_resource_arn, parse

MAX_POLICY_BYTES = 20 * 1024
NO_POLICY = "NO_POLICY"
NOT_FOUND = "Resource-based policy not found for the provided ResourceArn: "


class PolicyNotFoundException(DynamoDBError):
    code = "PolicyNotFoundException"


def check_document(policy: str) -> None:
    """A policy is a JSON object with a Statement, at most 20 KB counting white space.

    The service validates policies with IAM's grammar; these messages are
    Partita's (DynamoDB's exact wording could not be confirmed).
    """
    if len(policy.encode()) > MAX_POLICY_BYTES:
        raise ValidationException(
            f"Resource-based policy size exceeds the maximum allowed size of {MAX_POLICY_BYTES} bytes"
        )
    try:
        document = orjson.loads(policy)
    except orjson.JSONDecodeError:
        raise ValidationException("Invalid policy document: the policy is not valid JSON") from None
    if not isinstance(document, dict) or not document.get("Statement"):
        raise ValidationException("Invalid policy document: the policy must be a JSON object with a Statement")


class PolicyOps:
    def __init__(self, store: Store, catalog: Catalog, region: str, clock: Clock) -> None:
        self._store = store
        self._catalog = catalog
        self._region = region
        self._clock = clock

    def _target(self, arn: str) -> str:
        parsed = parse(arn, self._region)
        if parsed is None or parsed.kind == "index":
            raise invalid_resource_arn(arn)
        return parsed.table

    def _table(self, arn: str, view: Any = None) -> Table:
        name = self._target(arn)
        table = self._catalog.get(name, view)
        if table is None:
            raise ResourceNotFoundException(f"Requested resource not found: Table: {name} not found")
        if arn != table.description["TableArn"] and not _is_stream_of(table, arn):
            # Wording assumed from the table case.
            raise ResourceNotFoundException(f"Requested resource not found: Stream: {arn} not found")
        return table

    def get(self, arn: str) -> dict[str, Any]:
        policy = self._table(arn).description.get("_Policies", {}).get(arn)
        if policy is None:
            raise PolicyNotFoundException(NOT_FOUND + arn)
        return {"Policy": policy["Policy"], "RevisionId": policy["RevisionId"]}

    def put(self, arn: str, document: str, expected: str | None) -> str:
        check_document(document)
        with self._store.write() as txn:
            table = self._table(arn, txn)
            policies = table.description.get("_Policies", {})
            current = policies.get(arn)
            _check_expected(table, arn, current, expected)
            if current is not None and current["Policy"] == document:
                return str(current["RevisionId"])
            revision = _next_revision(current, self._clock.now())
            self._save(txn, table, arn, {"Policy": document, "RevisionId": revision})
        return revision

    def delete(self, arn: str, expected: str | None) -> str:
        with self._store.write() as txn:
            table = self._table(arn, txn)
            current = table.description.get("_Policies", {}).get(arn)
            if current is None:
                raise PolicyNotFoundException(NOT_FOUND + arn)
            _check_expected(table, arn, current, expected)
            self._save(txn, table, arn, None)
        return str(current["RevisionId"])

    def _save(self, txn: Any, table: Table, arn: str, policy: dict[str, Any] | None) -> None:
        description = copy.deepcopy(table.description)
        policies = description.setdefault("_Policies", {})
        if policy is None:
            policies.pop(arn, None)
        else:
            policies[arn] = policy
        if not policies:
            description.pop("_Policies")
        self._catalog.put(txn, Table.from_description(description, table.table_id))


def _is_stream_of(table: Table, arn: str) -> bool:
    return arn == table.description.get("LatestStreamArn")


def _check_expected(table: Table, arn: str, current: dict[str, Any] | None, expected: str | None) -> None:
    """ExpectedRevisionId: the revision the caller believes is attached, or NO_POLICY for none.

    Messages recorded against DynamoDB (moto's aws_verified tests).
    """
    if expected is None:
        return
    if expected == NO_POLICY:
        if current is not None:
            raise PolicyNotFoundException(
                f"{NOT_FOUND}Requested policy update expecting none to be present for table {table.name}, "
                f"but a policy exists with revision id {current['RevisionId']}."
            )
        return
    if current is None:
        raise PolicyNotFoundException(NOT_FOUND + arn)
    if current["RevisionId"] != expected:
        raise PolicyNotFoundException(
            f"{NOT_FOUND}Requested update for policy with revision id {expected}, "
            f"but the policy associated to target table {table.name} has revision id {current['RevisionId']}."
        )


def _next_revision(current: dict[str, Any] | None, now: float) -> str:
    """A revision id later than the current one, so string and numeric order agree."""
    revision = int(now * 1_000_000)
    if current is not None:
        revision = max(revision, int(current["RevisionId"]) + 1)
    return str(revision)
