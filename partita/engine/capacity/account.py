"""The account maximum of provisioned capacity, checked by CreateTable and UpdateTable (with the emulation).

DynamoDB's account quota caps the read and write capacity units provisioned
over all of an account's tables and their global indexes in a Region
(DescribeLimits' AccountMax*; on-demand tables and indexes count nothing).
Partita checks it where capacity is provisioned, in the catalog write
transaction, so two CreateTables cannot both pass it; only with
`--emulate-throughput`, whose limits DescribeLimits reports.

The message follows the service's "Subscriber limit exceeded:" form of the
other account quotas; its wording for this quota is **unconfirmed** (not
found in AWS documentation or recorded answers).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...errors import LimitExceededException


def provisioned_units(description: dict[str, Any]) -> tuple[int, int]:
    """(read, write) units provisioned by one table and its GSIs; an on-demand table has none."""
    if (description.get("BillingModeSummary") or {}).get("BillingMode") == "PAY_PER_REQUEST":
        return 0, 0
    docs = [description, *(description.get("GlobalSecondaryIndexes") or [])]
    read = write = 0
    for doc in docs:
        throughput = doc.get("ProvisionedThroughput") or {}
        read += int(throughput.get("ReadCapacityUnits") or 0)
        write += int(throughput.get("WriteCapacityUnits") or 0)
    return read, write


def check_account(new: dict[str, Any], others: Iterable[dict[str, Any]], maximum: int) -> None:
    """Raise LimitExceededException if `new` with every other table passes the account maximum."""
    read, write = provisioned_units(new)
    if not read and not write:
        return
    for description in others:
        r, w = provisioned_units(description)
        read += r
        write += w
    for dimension, total in (("read", read), ("write", write)):
        if total > maximum:
            raise LimitExceededException(
                f"Subscriber limit exceeded: The requested {dimension} capacity units would bring the account's "
                f"provisioned total to {total}, over the account limit of {maximum}"
            )
