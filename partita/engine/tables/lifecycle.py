"""Table lifecycle: CreateTable, DescribeTable, ListTables, DeleteTable.

The request has been validated by the api layer; this module builds and
stores DynamoDB's table description and answers from it.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from ...errors import ResourceInUseException, ResourceNotFoundException, ValidationException
from ...storage.base import Store, WriteTxn
from ..capacity.account import check_account
from ..capacity.partitions import store_initial_map
from ..control import throughput
from ..model.keys import prefix_successor
from ..streams.lifecycle import sync_stream
from ..time.clock import Clock
from ..time.ttl_index import table_range as ttl_rows
from ..vector import declare as vector_declare
from ..vector.entries import live_documents as live_vector_documents
from .catalog import Catalog
from .schema import Table

ACCOUNT_ID = "000000000000"


def index_document(spec: dict[str, Any], table_arn: str, status: str | None) -> dict[str, Any]:
    """An index as DescribeTable reports it; `status` is None for a local index (it has none)."""
    doc: dict[str, Any] = {
        "IndexName": spec["IndexName"],
        "KeySchema": spec["KeySchema"],
        "Projection": spec["Projection"],
    }
    if status is not None:
        provisioned = spec.get("ProvisionedThroughput") or {}
        doc["IndexStatus"] = status
        doc["ProvisionedThroughput"] = {
            "NumberOfDecreasesToday": 0,
            "ReadCapacityUnits": provisioned.get("ReadCapacityUnits", 0),
            "WriteCapacityUnits": provisioned.get("WriteCapacityUnits", 0),
        }
        throughput.describe_new(doc, spec, on_demand="ProvisionedThroughput" not in spec)
    doc.update(IndexSizeBytes=0, ItemCount=0, IndexArn=f"{table_arn}/index/{spec['IndexName']}")
    return doc


def describe_sse(description: dict[str, Any], sse: dict[str, Any] | None, region: str) -> None:
    """SSEDescription for an SSESpecification (encryption itself is the disk's business)."""
    if not sse:
        return
    if sse.get("Enabled"):
        key = sse.get("KMSMasterKeyId") or f"arn:aws:kms:{region}:{ACCOUNT_ID}:key/{uuid.uuid4()}"
        description["SSEDescription"] = {"Status": "ENABLED", "SSEType": "KMS", "KMSMasterKeyArn": key}
    else:
        description.pop("SSEDescription", None)


def stream_label(now: float, previous: str | None = None) -> str:
    """An ISO-8601 label with milliseconds (`2026-12-01T15:17:45.123`), later than `previous`.

    Labels name streams in their ARNs, so a table that re-enables its stream
    within one millisecond still gets a new label.
    """
    millis = int(now * 1000)
    while True:
        seconds, ms = divmod(millis, 1000)
        label = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{ms:03d}"
        if previous is None or label > previous:
            return label
        millis += 1


def enable_stream(description: dict[str, Any], stream: dict[str, Any], now: float) -> None:
    """A new stream: its specification, label and ARN as DescribeTable reports them.

    The stream itself (shards, records) is opened by `engine.streams` in the
    same transaction.
    """
    label = stream_label(now, description.get("LatestStreamLabel"))
    description["StreamSpecification"] = stream
    description["LatestStreamLabel"] = label
    description["LatestStreamArn"] = f"{description['TableArn']}/stream/{label}"


# DeleteTable's answer leaves these out although DescribeTable has them
# (recorded against DynamoDB by ScyllaDB's Alternator tests and dynalite#60).
_OMITTED_WHEN_DELETING = (
    "AttributeDefinitions", "KeySchema", "CreationDateTime", "GlobalSecondaryIndexes", "LocalSecondaryIndexes",
)


def _not_found(name: str) -> ResourceNotFoundException:
    return ResourceNotFoundException(f"Requested resource not found: Table: {name} not found")


class TableOps:
    def __init__(self, store: Store, catalog: Catalog, region: str, clock: Clock | None = None) -> None:
        self._store = store
        self._catalog = catalog
        self.region = region
        self.clock = Clock(store) if clock is None else clock
        #: With --emulate-throughput: provisioned units the account's tables may sum to (0: unchecked).
        self.account_max_units = 0
        #: Called in DeleteTable's transaction before the rows go (backups in progress complete first).
        self.before_delete: Callable[[WriteTxn, Table], None] | None = None

    def others(self, txn: WriteTxn, name: str) -> Iterator[dict[str, Any]]:
        """Descriptions of every table but `name` (the account maximum sums them)."""
        for other in list(self._catalog.names(None)):
            table = None if other == name else self._catalog.get(other, txn)
            if table is not None:
                yield table.description

    def arn(self, name: str) -> str:
        return f"arn:aws:dynamodb:{self.region}:{ACCOUNT_ID}:table/{name}"

    def create(self, request: dict[str, Any]) -> dict[str, Any]:
        """Store a new table; the answer says CREATING, as DynamoDB's does.

        The table is usable at once (see docs/decisions.md): DescribeTable
        reports ACTIVE from the first call, so waiters return immediately.
        """
        name = request["TableName"]
        with self._store.write() as txn:
            if self._catalog.get(name, txn) is not None:
                raise ResourceInUseException(f"Table already exists: {name}")
            table_id = self._catalog.next_table_id(txn)
            description = self._describe_new(request, table_id)
            if self.account_max_units:
                check_account(description, self.others(txn, name), self.account_max_units)
            store_initial_map(description)
            sync_stream(txn, None, description, description["CreationDateTime"])
            self._catalog.put(txn, Table.from_description(description, table_id))
        out = _without_private(description)
        out["TableStatus"] = "CREATING"
        if "GlobalSecondaryIndexes" in out:
            # The answer shows the indexes CREATING with the table, without their WarmThroughput
            # (recorded on the service in 2026); DescribeTable has them ACTIVE at once.
            out["GlobalSecondaryIndexes"] = [
                {k: v for k, v in {**doc, "IndexStatus": "CREATING"}.items() if k != "WarmThroughput"}
                for doc in out["GlobalSecondaryIndexes"]
            ]
        return out

    def _describe_new(self, request: dict[str, Any], table_id: int) -> dict[str, Any]:
        name = request["TableName"]
        now = self.clock.now()
        billing = request.get("BillingMode", "PROVISIONED")
        provisioned = request.get("ProvisionedThroughput") or {}
        description: dict[str, Any] = {
            "AttributeDefinitions": request["AttributeDefinitions"],
            "TableName": name,
            "KeySchema": request["KeySchema"],
            "TableStatus": "ACTIVE",
            "CreationDateTime": now,
            "ProvisionedThroughput": {
                "NumberOfDecreasesToday": 0,
                "ReadCapacityUnits": provisioned.get("ReadCapacityUnits", 0),
                "WriteCapacityUnits": provisioned.get("WriteCapacityUnits", 0),
            },
            "TableSizeBytes": 0,
            "ItemCount": 0,
            "TableArn": self.arn(name),
            "TableId": str(uuid.uuid4()),
            "BillingModeSummary": {"BillingMode": billing},
            "TableClassSummary": {"TableClass": request.get("TableClass", "STANDARD")},
            "DeletionProtectionEnabled": bool(request.get("DeletionProtectionEnabled", False)),
        }
        if billing == "PAY_PER_REQUEST":
            description["BillingModeSummary"]["LastUpdateToPayPerRequestDateTime"] = now
        throughput.describe_new(description, request, on_demand=billing == "PAY_PER_REQUEST")
        describe_sse(description, request.get("SSESpecification"), self.region)
        stream = request.get("StreamSpecification")
        if stream and stream.get("StreamEnabled"):
            enable_stream(description, stream, now)
        if request.get("Tags"):
            description["_Tags"] = request["Tags"]
        self._describe_indexes(request, description)
        vector_declare.describe_create(request, description)
        return description

    def _describe_indexes(self, request: dict[str, Any], description: dict[str, Any]) -> None:
        """Index documents as DescribeTable shows them, plus each index's private row id."""
        ids: dict[str, int] = {}
        for kind in ("LocalSecondaryIndexes", "GlobalSecondaryIndexes"):
            specs = request.get(kind)
            if not specs:
                continue
            for spec in specs:
                ids[spec["IndexName"]] = len(ids) + 1
            is_global = kind == "GlobalSecondaryIndexes"
            description[kind] = [
                index_document(spec, description["TableArn"], "ACTIVE" if is_global else None) for spec in specs
            ]
        description["_IndexIds"] = ids
        description["_NextIndexId"] = len(ids) + 1

    def get(self, name: str) -> Table:
        table = self._catalog.get(name)
        if table is None or "_Restoring" in table.description:  # a table being restored is not there yet
            raise ResourceNotFoundException("Requested resource not found")
        if table.replication is not None and table.description.get("TableStatus") == "CREATING":
            # A global table's replica being created in this region is not there yet for data
            # operations (DynamoDB: "... or its status might not be ACTIVE"); DescribeTable shows it.
            raise ResourceNotFoundException("Requested resource not found")
        return table

    def describe(self, name: str) -> dict[str, Any]:
        table = self._catalog.get(name)
        if table is None:
            raise _not_found(name)
        return self.public(table, live_counts=True)

    def public(self, table: Table, *, live_counts: bool = True) -> dict[str, Any]:
        out = _without_private(table.description)
        if live_counts:
            out["ItemCount"], out["TableSizeBytes"] = self._store.stats(*table.data_range())
            for kind in ("LocalSecondaryIndexes", "GlobalSecondaryIndexes"):
                if kind in out:
                    out[kind] = [self._live_index(table, doc) for doc in out[kind]]
            if "VectorIndexes" in out:
                out["VectorIndexes"] = live_vector_documents(self._store, table, out["VectorIndexes"])
        return out

    def _live_index(self, table: Table, doc: dict[str, Any]) -> dict[str, Any]:
        if doc.get("IndexStatus") == "CREATING":
            # A new index reports 0 items and bytes until it is built, as DynamoDB's
            # do (its counts refresh every six hours); live counts start once ACTIVE.
            return doc
        index = table.index(doc["IndexName"])
        assert index is not None
        start = index.prefix
        end = prefix_successor(start)
        assert end is not None
        count, size = self._store.stats(start, end)
        return {**doc, "ItemCount": count, "IndexSizeBytes": size}

    def list(self, start_after: str | None, limit: int | None) -> dict[str, Any]:
        limit = 100 if limit is None else limit
        names: list[str] = []
        more = False
        for name in self._catalog.names(start_after):
            if len(names) == limit:
                more = True
                break
            names.append(name)
        out: dict[str, Any] = {"TableNames": names}
        if more:
            out["LastEvaluatedTableName"] = names[-1]
        return out

    def delete(self, name: str) -> dict[str, Any]:
        with self._store.write() as txn:
            table = self._catalog.get(name, txn)
            if table is None:
                raise _not_found(name)
            if table.description.get("DeletionProtectionEnabled"):
                raise ValidationException(
                    "Resource cannot be deleted as it is currently protected against deletion. "
                    "Disable deletion protection first."
                )
            vector_declare.check_deletable(table.description)
            if self.before_delete is not None:
                self.before_delete(txn, table)
            out = self.public(table, live_counts=False)
            count, size = txn.stats(*table.data_range())
            txn.delete_range(*table.all_rows_range())
            txn.delete_range(*ttl_rows(table.table_id))
            sync_stream(txn, table.description, None, self.clock.now())  # readable for 24 h more
            self._catalog.delete(txn, name)
        out.update(TableStatus="DELETING", ItemCount=count, TableSizeBytes=size)
        for member in _OMITTED_WHEN_DELETING:
            out.pop(member, None)
        return out


def _without_private(description: dict[str, Any]) -> dict[str, Any]:
    """A table document without Partita's own bookkeeping (`_Tags`, `_Stream`, `_IndexIds`...)."""
    return {k: v for k, v in description.items() if not k.startswith("_")}
