"""Per-process request counts, latency histograms and event counters, merged across workers for /metrics.

Why not prometheus-client's multiprocess mode: its counters and histograms
take a lock and write a memory-mapped file on every increment, several
microseconds a request for a histogram. Here a request costs two clock
reads, one dict look-up and a few integer additions in plain Python lists
of this process; the background tick writes the process's totals to
`<dir>/<pid>-<start>.json` at its next tick (0.25 s) after a change, and at
most once a second while requests keep coming (atomically, by rename), and
a scrape adds every file but its own to its live totals. A worker that died
leaves its last file, so totals never go down; a new process gets a new file
name, so nothing is overwritten. Without a data directory (`--in-memory`,
one process) there are no files. Other workers' numbers are at most about a
second old.
"""

from __future__ import annotations

import logging
import os
import time
from bisect import bisect_left
from pathlib import Path
from threading import get_ident
from typing import Any

import orjson

log = logging.getLogger("partita.metrics")

#: Upper bounds (seconds) of the latency histogram's buckets; +Inf is implied.
BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
SUCCESS = "success"
WRITE_SECONDS = 1.0


class ProcessStats:
    def __init__(self, directory: Path | None) -> None:
        self._dir = directory
        #: operation -> outcome -> count
        self.requests: dict[str, dict[str, int]] = {}
        #: operation -> [bucket counts..., +Inf count, sum of seconds]
        self.latency: dict[str, list[float]] = {}
        #: (name, table) -> count: stream records written, TTL deletions
        self.events: dict[tuple[str, str], float] = {}
        self._file: Path | None = None
        self._written = 0.0
        #: Requests and events counted (only ever increases; the tick only reads it).
        self._changes = 0
        self._seen = 0  # at the last tick
        self._saved = 0  # at the last write
        #: While a request's counts are journaled (`journal`): where they go, and whose thread's.
        self._journal: list[tuple[Any, ...]] | None = None
        self._journal_thread = 0
        if directory is not None:
            directory.mkdir(parents=True, exist_ok=True)

    # -- a request's counts, kept until its answer is final -----------------------------

    def journal(self) -> None:
        """Keep this thread's counts aside until `unjournal`, instead of counting them.

        Why: on the SQLite store a request's write may be run again at the
        group commit (its reads changed), and both runs count; the server
        keeps each run's counts and applies the last run's once its answer
        is final, so a rerun request counts once. Other threads (the TTL
        duty, say) count as usual meanwhile.
        """
        self._journal = []
        self._journal_thread = get_ident()

    def unjournal(self) -> list[tuple[Any, ...]]:
        """Stop journaling; the counts kept since `journal`, for `apply` (or to drop)."""
        kept, self._journal = self._journal, None
        return kept or []

    def kept(self) -> int:
        """How many counts this thread's journal holds (-1 when it keeps none), for `forget`."""
        journal = self._journal
        return -1 if journal is None or get_ident() != self._journal_thread else len(journal)

    def forget(self, kept: int) -> None:
        """Drop what the journal gained since `kept()` said `kept`: counts of a run that was rolled back.

        Only journaled counts can be taken back; without a journal (the memory
        store, PostgreSQL) a stream record of a run that a conflict rolls back
        stays counted (docs/decisions.md, "/metrics").
        """
        if kept >= 0 and self._journal is not None:
            del self._journal[kept:]

    def apply(self, kept: list[tuple[Any, ...]]) -> None:
        """Count what `unjournal` returned."""
        for kind, a, b, n in kept:
            if kind == "observe":
                self._observe(a, b, n)
            else:
                self._add_event(a, b, n)

    def observe(self, operation: str, outcome: str, seconds: float) -> None:
        """One answered request: its outcome (SUCCESS or the error code) and its latency."""
        if self._journal is not None and get_ident() == self._journal_thread:
            self._journal.append(("observe", operation, outcome, seconds))
            return
        self._observe(operation, outcome, seconds)

    def _observe(self, operation: str, outcome: str, seconds: float) -> None:
        outcomes = self.requests.get(operation)
        if outcomes is None:
            outcomes = self.requests[operation] = {}
            self.latency[operation] = [0.0] * (len(BUCKETS) + 2)
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
        self._changes += 1
        histogram = self.latency[operation]
        histogram[bisect_left(BUCKETS, seconds)] += 1
        histogram[-1] += seconds

    def add(self, name: str, table: str, n: float = 1.0) -> None:
        """An event counted by table: stream records written, TTL deletions."""
        if self._journal is not None and get_ident() == self._journal_thread:
            self._journal.append(("add", name, table, n))
            return
        self._add_event(name, table, n)

    def _add_event(self, name: str, table: str, n: float) -> None:
        key = (name, table)
        self.events[key] = self.events.get(key, 0.0) + n
        self._changes += 1

    # -- sharing between workers ------------------------------------------------------

    def _snapshot(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "latency": self.latency,
            "events": [[name, table, n] for (name, table), n in self.events.items()],
        }

    def tick(self) -> None:
        """Write this process's totals for the other workers once they changed.

        At once when the process has gone quiet (no change since the last
        tick), else at most every `WRITE_SECONDS`.
        """
        changes = self._changes
        if self._dir is None or changes == self._saved:
            return
        now = time.monotonic()
        quiet = changes == self._seen
        self._seen = changes
        if not quiet and now - self._written < WRITE_SECONDS:
            return
        self._written = now
        self._saved = changes
        if self._file is None:
            self._file = self._dir / f"{os.getpid()}-{time.time_ns()}.json"
        temporary = self._file.with_suffix(".tmp")
        try:
            temporary.write_bytes(orjson.dumps(self._snapshot()))
            os.replace(temporary, self._file)
        except OSError:
            log.exception("could not write the metrics of this worker")

    def merged(self) -> dict[str, Any]:
        """This process's live totals plus every other worker's last written ones."""
        total = orjson.loads(orjson.dumps(self._snapshot()))  # a deep copy to add into
        if self._dir is None:
            return total
        for path in self._dir.glob("*.json"):
            if path == self._file:
                continue
            try:
                other = orjson.loads(path.read_bytes())
            except (OSError, orjson.JSONDecodeError):
                continue  # being replaced, or not ours
            _add(total, other)
        return total


def _add(total: dict[str, Any], other: dict[str, Any]) -> None:
    for operation, outcomes in other.get("requests", {}).items():
        mine = total["requests"].setdefault(operation, {})
        for outcome, n in outcomes.items():
            mine[outcome] = mine.get(outcome, 0) + n
    for operation, histogram in other.get("latency", {}).items():
        mine = total["latency"].setdefault(operation, [0.0] * len(histogram))
        for i, n in enumerate(histogram):
            mine[i] += n
    events = {(name, table): n for name, table, n in total["events"]}
    for name, table, n in other.get("events", []):
        events[(name, table)] = events.get((name, table), 0.0) + n
    total["events"] = [[name, table, n] for (name, table), n in events.items()]
