"""Replica changes in the background: their phases on the server clock, and a new replica's items.

A background duty (the process holding the duty lock runs it) that takes
each job row replica_updates.py wrote one step further:

- create: copy the source's items into the new replica in batches, each
  with its replication version, through last-writer-wins (writes made
  meanwhile, in any region, reach the new replica as change records and the
  later version wins whatever arrives first); ReplicaStatusPercentProgress
  follows the copy on a non-empty table. Once copied and `--replica-phase-ms`
  has passed: every member ACTIVE.
- update: after the phase, the replica and the table ACTIVE again.
- delete: the members UPDATING for a phase (the replica still ACTIVE in
  their Replicas), then the replica DELETING (its own table no longer shows
  the group) for a phase, then its table is dropped and it leaves the group;
  the last member left stands alone again (its stream stays, as recorded).

Each step is one commit over every region (coordinator.write), so a crash
leaves a job where its last step left it and the next leader resumes it.
"""

from __future__ import annotations

import copy
import logging
import threading
from typing import Any

import orjson

from ...storage.base import Conflict
from . import group as groups
from .keys import (
    JOB,
    JOB_END,
    counter_key,
    cursors_of,
    job_key,
    outbox_of,
    unpack_version,
    version_key,
    versions_of,
)
from .replicator import leave_cursors

log = logging.getLogger("partita.replication")
#: Items a creating replica is filled with per step.
COPY_BATCH = 200


class ReplicaJobs:
    def __init__(self, coordinator: Any) -> None:
        self._gt = coordinator
        #: The duty thread and a settle asked by a test take turns (a job is read, then stepped).
        self._turn = threading.Lock()

    def run(self) -> bool:
        """The background duty: one step of every job; whether any moved."""
        with self._gt.home.store.serialized(), self._turn:  # in this order on every thread (Store.serialized)
            return self._run()

    def _run(self) -> bool:
        moved = False
        for key, raw in list(self._gt.home.store.range(JOB, JOB_END)):
            job = orjson.loads(raw)
            region = key[len(JOB):].split(b"\x00", 1)[0].decode()
            try:
                moved = self._step(region, job) or moved
            except Conflict:
                moved = True
        return moved

    def _step(self, region: str, job: dict[str, Any]) -> bool:
        kind = job["kind"]
        if kind == "create":
            return self._create(region, job)
        if kind == "update":
            return self._update(region, job)
        if kind == "strong":
            return self._strong(region, job)
        if kind == "dissolve":
            return self._dissolve(region, job)
        return self._delete(region, job)

    def _due(self, job: dict[str, Any]) -> bool:
        return bool(self._gt.clock.now() >= job["due"])

    # -- create ------------------------------------------------------------------------

    def _create(self, region: str, job: dict[str, Any]) -> bool:
        gt = self._gt
        name, source, target = job["name"], job["source"], job["target"]
        with gt.write() as txn:
            table = gt.table(source, name, txn)
            replica = gt.table(target, name, txn)
            if table is None or replica is None or table.replication is None:
                txn.delete(job_key(region, name))  # the table went away meanwhile
                return True
            if job["cursor"] != "done":
                self._copy(txn, job, table, replica)
                members = gt.members(txn, table)
                group = copy.deepcopy(table.replication)
                entry = groups.member(group, target)
                if entry is not None and job["total"]:
                    progress = min(100, job["copied"] * 100 // job["total"])
                    if entry.get("progress") != progress:
                        entry["progress"] = progress
                        gt.put_group(txn, members, group)
                txn.put(job_key(region, name), orjson.dumps(job))
                return True
            if not self._due(job):
                return False
            members = gt.members(txn, table)
            group = copy.deepcopy(table.replication)
            entry = groups.member(group, target)
            if entry is not None:
                entry["status"] = "ACTIVE"
                entry.pop("progress", None)
            gt.put_group(txn, members, group, {r: "ACTIVE" for r in (source, target)})
            txn.delete(job_key(region, name))
        return True

    def _copy(self, txn: Any, job: dict[str, Any], table: Any, replica: Any) -> None:
        gt = self._gt
        source, target = job["source"], job["target"]
        view = gt.view(source, txn)
        start, end = table.data_range()
        if job["cursor"] is not None:
            start = bytes.fromhex(job["cursor"]) + b"\x00"
        rows = list(view.range(start, end, limit=COPY_BATCH))
        cut = len(table.prefix)
        for row, raw in rows:
            suffix = row[cut:]
            held = view.get(version_key(table.table_id, suffix))
            version = (0, source) if held is None else unpack_version(held)
            gt.apply(txn, target, replica, suffix, orjson.loads(raw), version)
        job["copied"] += len(rows)
        job["cursor"] = rows[-1][0].hex() if len(rows) == COPY_BATCH else "done"

    # -- update ------------------------------------------------------------------------

    def _update(self, region: str, job: dict[str, Any]) -> bool:
        if not self._due(job):
            return False
        gt = self._gt
        name, target = job["name"], job["target"]
        with gt.write() as txn:
            table = gt.table(job["source"], name, txn)
            if table is None or table.replication is None:
                txn.delete(job_key(region, name))
                return True
            group = copy.deepcopy(table.replication)
            entry = groups.member(group, target)
            if entry is not None:
                entry["status"] = "ACTIVE"
            members = gt.members(txn, table)
            gt.put_group(txn, members, group, {r: "ACTIVE" for r in members})
            txn.delete(job_key(region, name))
        return True

    # -- multi-Region strong consistency ----------------------------------------------------

    def _strong(self, region: str, job: dict[str, Any]) -> bool:
        """A STRONG group being born (empty tables: nothing to copy): every member ACTIVE after the phase."""
        if not self._due(job):
            return False
        gt = self._gt
        with gt.write() as txn:
            table = gt.table(job["source"], job["name"], txn)
            if table is not None and table.replication is not None:
                group = copy.deepcopy(table.replication)
                for entry in group["members"]:
                    entry["status"] = "ACTIVE"
                if "witness" in group:
                    group["witness"]["status"] = "ACTIVE"
                members = gt.members(txn, table)
                gt.put_group(txn, members, group, {r: "ACTIVE" for r in members})
            txn.delete(job_key(region, job["name"]))
        return True

    def _dissolve(self, region: str, job: dict[str, Any]) -> bool:
        """A STRONG group taken apart: replicas and witness DELETING, then gone; the source stands alone."""
        if not self._due(job):
            return False
        gt = self._gt
        name, source = job["name"], job["source"]
        if job["stage"] == 1:
            with gt.write() as txn:
                table = gt.table(source, name, txn)
                if table is None or table.replication is None:
                    txn.delete(job_key(region, name))
                    return True
                group = copy.deepcopy(table.replication)
                for entry in group["members"]:
                    if entry["region"] in job["targets"]:
                        entry["status"] = "DELETING"
                if "witness" in group:
                    group["witness"]["status"] = "DELETING"
                members = gt.members(txn, table)
                gt.put_group(txn, {source: members[source]}, group, {source: "ACTIVE"})
                for target in job["targets"]:
                    if target in members:
                        gt.put_group(txn, {target: members[target]}, group, {target: "DELETING"})
                job.update(stage=2, due=gt.clock.now() + gt.phase)
                txn.put(job_key(region, name), orjson.dumps(job))
            return True
        for target in job["targets"]:
            self._drop(target, name)
        with gt.write() as txn:
            table = gt.table(source, name, txn)
            if table is not None and table.replication is not None:
                gt.put_group(txn, {source: table}, None)
                _forget(gt.view(source, txn), table.table_id)
            txn.delete(job_key(region, name))
        return True

    # -- delete ------------------------------------------------------------------------

    def _delete(self, region: str, job: dict[str, Any]) -> bool:
        if not self._due(job):
            return False
        gt = self._gt
        name, target = job["name"], job["target"]
        if job["stage"] == 1:
            with gt.write() as txn:
                anchor = self._anchor(txn, job)
                if anchor is None:
                    txn.delete(job_key(region, name))
                    return True
                members = gt.members(txn, anchor)
                group = copy.deepcopy(anchor.replication)
                entry = groups.member(group, target)
                if entry is not None:
                    entry["status"] = "DELETING"
                rest = {r: t for r, t in members.items() if r != target}
                gt.put_group(txn, rest, group, {r: "ACTIVE" for r in rest})
                replica = members.get(target)
                if replica is not None:
                    gt.put_group(txn, {target: replica}, None, {target: "DELETING"})
                job.update(stage=2, due=gt.clock.now() + gt.phase)
                txn.put(job_key(region, name), orjson.dumps(job))
            return True
        self._drop(target, name)
        with gt.write() as txn:
            anchor = self._anchor(txn, job)
            if anchor is not None:
                members = gt.members(txn, anchor)
                group = copy.deepcopy(anchor.replication)
                group["members"] = [m for m in group["members"] if m["region"] != target]
                leave_cursors(gt, txn, members, target)
                rest = {r: t for r, t in members.items() if r != target}
                alone = len(group["members"]) <= 1 and "witness" not in group
                gt.put_group(txn, rest, None if alone else group)
                if alone:
                    for other_region, other in rest.items():
                        _forget(gt.view(other_region, txn), other.table_id)
            txn.delete(job_key(region, name))
        return True

    def _anchor(self, txn: Any, job: dict[str, Any]) -> Any:
        """A remaining member's table (it holds the group), or None."""
        gt = self._gt
        for region in gt.regions():
            if region == job["target"]:
                continue
            table = gt.table(region, job["name"], txn)
            if table is not None and table.replication is not None and groups.member(
                    table.replication, job["target"]) is not None:
                return table
        return None

    def _drop(self, region: str, name: str) -> None:
        """Delete the leaving replica's table in its region, as DeleteTable would (its stream stays readable)."""
        gt = self._gt
        engine = gt.engines[region]
        table = engine.catalog.get(name)
        if table is None:
            return
        if table.description.get("DeletionProtectionEnabled") or table.replication is not None:
            with gt.write() as txn:
                current = gt.table(region, name, txn)
                if current is not None:
                    description = copy.deepcopy(current.description)
                    description["DeletionProtectionEnabled"] = False
                    description.pop(groups.MEMBER, None)
                    gt.put(txn, region, current, description)
        engine.tables.delete(name)
        engine.meter.forget(table.table_id)  # every table is metered: free its slots
        with engine.store.write() as txn:
            _forget(txn, table.table_id)


def _forget(view: Any, table_id: int) -> None:
    """Drop a table's replication rows (versions, change records, counter, cursors)."""
    view.delete_range(*versions_of(table_id))
    view.delete_range(*outbox_of(table_id))
    view.delete_range(*cursors_of(table_id))
    view.delete(counter_key(table_id))

