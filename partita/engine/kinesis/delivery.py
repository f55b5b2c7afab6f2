"""The delivery duty: moves each live destination along and sends the table's changes to Kinesis.

Runs in the one process that holds the duty lock. A destination ENABLING is
checked against the endpoint (DescribeStreamSummary) and becomes ACTIVE or
ENABLE_FAILED with DynamoDB's descriptions; DISABLING becomes DISABLED and
the table stops logging; UPDATING becomes ACTIVE. For an ACTIVE (or UPDATING)
destination the changes after the stored position are read in commit order,
sent with one PutRecords (at most 500 records and 5 MB, Kinesis' limits), and
the position advances, in the store, past the records Kinesis acknowledged:
up to the first failed one, so what follows is sent again (in order, with
duplicates, never a gap). A kill -9 between the send and the commit sends
the batch again after the restart. A failing endpoint or a missing stream is
retried with back-off (0.5 s doubling to 30 s) and reported in the console
and /metrics; as on DynamoDB, the destination stays ACTIVE.
"""

from __future__ import annotations

import logging
import os
import re
import time
from typing import Any

from ...storage.base import Store
from ..backups.changelog import changes, position
from ..tables.catalog import Catalog
from ..time.clock import Clock
from .destinations import set_live
from .records import encode
from .state import State, all_states, live_entry, read_state, state_key, write_state

log = logging.getLogger("partita.kinesis")
#: Records one PutRecords sends (Kinesis' limit; the crash tests shrink it with PARTITA_KINESIS_BATCH).
BATCH = int(os.environ.get("PARTITA_KINESIS_BATCH", "500"))
#: Seconds the duty waits after each delivered batch: 0 in service; the crash tests slow delivery down.
PAUSE = float(os.environ.get("PARTITA_KINESIS_PAUSE", "0"))
_BYTES = 4_500_000  # under PutRecords' 5 MB, leaving room for partition keys
_ARN = re.compile(r"^arn:aws[\w-]*:kinesis:([a-z0-9-]+):(\d{12}):stream/([a-zA-Z0-9_.-]{1,128})$")
#: The descriptions DynamoDB gives a failed enable (DDB-TABLE-318): a missing, unreadable or
#: not-yet-ACTIVE stream reads as a permission problem; a stream of another region says so.
NO_PERMISSION = "User does not have a permission to use kinesis stream"
OTHER_REGION = "The kinesis Arn used to enable kinesis replication belongs to a stream which is not in the current region"


class KinesisDelivery:
    def __init__(self, store: Store, catalog: Catalog, clock: Clock, endpoint: str | None,
                 region: str | None) -> None:
        self._store = store
        self._catalog = catalog
        self._clock = clock
        self.endpoint = endpoint
        self._region = region
        self._clients: dict[str, Any] = {}
        #: table id -> (monotonic time of the next attempt, current delay): retries of a failing destination.
        self._backoff: dict[int, tuple[float, float]] = {}

    def _client(self, region: str) -> Any:
        client = self._clients.get(region)
        if client is None:  # made on first use: a server without destinations needs no credentials
            import boto3
            from botocore.config import Config

            config = Config(retries={"max_attempts": 1}, connect_timeout=2, read_timeout=10)
            client = boto3.session.Session().client("kinesis", endpoint_url=self.endpoint, region_name=region,
                                                    config=config)
            self._clients[region] = client
        return client

    def run(self) -> bool:
        worked = False
        for state in all_states(self._store):
            entry = live_entry(state)
            if entry is None:
                continue
            wait = self._backoff.get(state["table_id"])
            if wait is not None and time.monotonic() < wait[0]:
                continue
            status = entry["DestinationStatus"]
            if status == "ENABLING":
                self._check(state, entry)
                worked = True
            elif status == "DISABLING":
                self._transition(state, entry, "DISABLED")
                worked = True
            else:
                if status == "UPDATING":
                    self._transition(state, entry, "ACTIVE")
                worked = self._deliver(state, entry) or worked
        return worked

    # -- the state machine ---------------------------------------------------------------------

    def _transition(self, state: State, entry: dict[str, Any], status: str, description: str | None = None) -> None:
        with self._store.write() as txn:
            current = read_state(txn, state["table_id"])
            if current is None:
                return
            for found in current["entries"]:
                if found["StreamArn"] == entry["StreamArn"] and found["DestinationStatus"] == entry["DestinationStatus"]:
                    found["DestinationStatus"] = status
                    if description is not None:
                        found["DestinationStatusDescription"] = description
                    if status == "DISABLED":
                        found.pop("ApproximateCreationDateTimePrecision", None)  # re-enabling starts without it
            write_state(txn, current)
            if status in ("DISABLED", "ENABLE_FAILED"):
                table = self._catalog.get(current["table"], txn)
                if table is not None and table.table_id == current["table_id"]:
                    set_live(txn, self._catalog, table, False)

    def _check(self, state: State, entry: dict[str, Any]) -> None:
        """ENABLING -> ACTIVE when the endpoint has the stream, ACTIVE; else ENABLE_FAILED."""
        match = _ARN.match(entry["StreamArn"])
        if match is None:
            self._transition(state, entry, "ENABLE_FAILED", NO_PERMISSION)
            return
        stream_region, _account, name = match.groups()
        if stream_region != (self._region or state["region"]):
            self._transition(state, entry, "ENABLE_FAILED", OTHER_REGION)
            return
        if self.endpoint is None:
            log.warning("Kinesis destination %s of %s: no --kinesis-endpoint to deliver to", entry["StreamArn"],
                        state["table"])
            self._transition(state, entry, "ENABLE_FAILED", NO_PERMISSION)
            return
        try:
            summary = self._client(self._region or stream_region).describe_stream_summary(StreamName=name)
            active = summary["StreamDescriptionSummary"]["StreamStatus"] in ("ACTIVE", "UPDATING")
        except Exception as error:  # not found, not reachable, refused: DynamoDB reports them all alike
            log.warning("Kinesis destination %s of %s failed to enable: %s", entry["StreamArn"], state["table"], error)
            active = False
        self._transition(state, entry, "ACTIVE" if active else "ENABLE_FAILED", None if active else NO_PERMISSION)

    # -- delivery --------------------------------------------------------------------------------

    def _deliver(self, state: State, entry: dict[str, Any]) -> bool:
        batch: list[tuple[int, bytes, str]] = []
        size = 0
        precision = entry.get("ApproximateCreationDateTimePrecision")
        for change in changes(self._store, state["table_id"], state["delivered"], BATCH):
            data, key = encode(state, change, precision)
            if batch and size + len(data) > _BYTES:
                break
            batch.append((change.n, data, key))
            size += len(data) + len(key)
        if not batch:
            self._forget_if_gone(state)
            return False
        match = _ARN.match(entry["StreamArn"])
        assert match is not None  # checked when it became ACTIVE
        stream_region, _account, name = match.groups()
        try:
            out = self._client(self._region or stream_region).put_records(
                StreamName=name, Records=[{"Data": data, "PartitionKey": key} for _, data, key in batch])
            results = out.get("Records", [])
            failed = next((i for i, r in enumerate(results) if r.get("ErrorCode")), len(batch))
            error = None if failed == len(batch) else f"{results[failed]['ErrorCode']}: {results[failed].get('ErrorMessage', '')}"
        except Exception as exc:
            failed, error = 0, str(exc)
        self._commit(state, batch[failed - 1][0] if failed else None, failed, error)
        if error is not None:
            _, delay = self._backoff.get(state["table_id"], (0.0, 0.25))
            delay = min(delay * 2, 30.0)
            self._backoff[state["table_id"]] = (time.monotonic() + delay, delay)
            log.warning("Kinesis delivery of %s to %s failed (retrying in %.1fs): %s", state["table"],
                        entry["StreamArn"], delay, error)
        else:
            self._backoff.pop(state["table_id"], None)
            if PAUSE:
                time.sleep(PAUSE)
        return failed > 0

    def _forget_if_gone(self, state: State) -> None:
        table = self._catalog.get(state["table"])
        if table is not None and table.table_id == state["table_id"]:
            return
        with self._store.write() as txn:
            current = read_state(txn, state["table_id"])
            if current is not None and current["delivered"] >= position(txn, current["table_id"]):
                txn.delete(state_key(current["table_id"]))

    def _commit(self, state: State, delivered: int | None, sent: int, error: str | None) -> None:
        """Advance the position past what Kinesis acknowledged; a table gone and caught up forgets its row."""
        with self._store.write() as txn:
            current = read_state(txn, state["table_id"])
            if current is None:
                return
            if delivered is not None and delivered > current["delivered"]:
                current["delivered"] = delivered
                current["sent"] = current.get("sent", 0) + sent
                current["sent_at"] = self._clock.now()
            if error is None:
                current.pop("error", None)
            else:
                current["error"] = error
                current["error_at"] = self._clock.now()
            state.update(current)
            table = self._catalog.get(current["table"], txn)
            if (table is None or table.table_id != current["table_id"]) and \
                    current["delivered"] >= position(txn, current["table_id"]):
                txn.delete(state_key(current["table_id"]))
                return
            write_state(txn, current)
