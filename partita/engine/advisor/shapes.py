"""The bounded table of request shapes: what each kind of read asked for and what it cost, with counts.

A shape is a tuple: (operation, table id, index name or None, partition-key
tag, sort-key operator, sort-key tag, filter text, projection text, whether a
Limit was given, Select). Tags are the type prefixes single-table designs put
in key values (`tag_of`: "CLIENTE#42" -> "CLIENTE#"), so every request for
one customer's orders is one shape however many customers there are; no
item content and no whole key value is kept. Recording a request is one
dict look-up and a few additions to its counts (`read`); the first request
of a shape also stores what the findings need to explain it (`add`: the
key attribute names, the filter's attribute names and value types, the
projected attributes). Findings are computed from the table when asked
(`findings.py`), never on the request path.

Why per process, merged through files: requests to several `--workers`
land in different processes. Each process writes its table to
`<data dir>/partita.advisor/<pid>-<start>.json` once a second while it
changes (the background tick), and a reader adds the other processes'
last tables to its own, as /metrics does with request counts.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

log = logging.getLogger("partita.advisor")

Shape = tuple[Any, ...]
# Positions in a shape's counts.
REQUESTS, LOGICAL, PAGES, SCANNED, RETURNED, BYTES, UNITS = range(7)
# Positions in a shape key.
OP, TABLE, INDEX, PK_TAG, SORT_OP, SK_TAG, FILTER, PROJECTION, LIMITED, SELECT = range(10)
_TAG_MAX = 32
WRITE_SECONDS = 1.0


def tag_of(value: Any) -> str | None:
    """The entity-type tag of a key value: the text before its first `#`, `|` or `:` (with the
    separator), or a whole value in capitals ("META", "PROFILE"); None for anything else.

    Only strings carry tags. str methods, not a regular expression: this runs
    on every GetItem.
    """
    if type(value) is not str:
        return None
    if "#" in value:
        sep = "#"
    elif "|" in value:
        sep = "|"
    elif ":" in value:
        sep = ":"
    elif value.isupper() and len(value) <= _TAG_MAX and value.replace("_", "").isalpha():
        return value
    else:
        return None
    head = value.partition(sep)[0]
    return head + sep if 0 < len(head) <= _TAG_MAX and head.replace("_", "").isalpha() else None


POINT_READS = ("GetItem", "BatchGetItem")


def _filled(shape: Shape, counts: list[float]) -> list[float]:
    """A copy of a shape's counts; a point read counts requests only (the advisor's fast path), and each
    is one logical query, one page and one item read."""
    out = list(counts)
    if shape[OP] in POINT_READS:
        out[LOGICAL] = out[PAGES] = out[SCANNED] = out[REQUESTS]
    return out


class Shapes:
    """This process's shapes (bounded by `limit`), and the other workers' last written ones."""

    def __init__(self, directory: Path | None, limit: int) -> None:
        self._dir = directory
        self._limit = max(1, limit)
        #: shape -> counts (REQUESTS ... UNITS)
        self.counts: dict[Shape, list[float]] = {}
        #: shape -> what its first request said about it (names, types; never values)
        self.meta: dict[Shape, dict[str, Any]] = {}
        #: Called when a shape is dropped to make room (the advisor's point-read shortcuts hold counts).
        self.on_drop: Callable[[], None] | None = None
        self._file: Path | None = None
        self.changes = 0
        self._saved = 0
        self._written = 0.0
        if directory is not None:
            directory.mkdir(parents=True, exist_ok=True)

    # -- the request path -------------------------------------------------------------

    def read(self, shape: Shape, scanned: int, returned: int, size: int, units: float, first: bool) -> bool:
        """Count one request (one page) of a known shape; False when the shape is new (call `add`)."""
        counts = self.counts.get(shape)
        if counts is None:
            return False
        if shape[OP] in POINT_READS:  # requests only: see _filled
            counts[REQUESTS] += 1
            counts[RETURNED] += returned
            counts[UNITS] += units
            self.changes += 1
            return True
        counts[REQUESTS] += 1
        counts[PAGES] += 1
        if first:
            counts[LOGICAL] += 1
        counts[SCANNED] += scanned
        counts[RETURNED] += returned
        counts[BYTES] += size
        counts[UNITS] += units
        self.changes += 1
        return True

    def add(self, shape: Shape, meta: dict[str, Any], scanned: int, returned: int, size: int, units: float,
            first: bool) -> None:
        """The first request of a shape: keep it (dropping the least used one if full) and count it."""
        if len(self.counts) >= self._limit:
            coldest = min(self.counts, key=lambda s: self.counts[s][REQUESTS])
            del self.counts[coldest]
            self.meta.pop(coldest, None)
            if self.on_drop is not None:
                self.on_drop()
        self.counts[shape] = [0.0] * 7
        self.meta[shape] = meta
        self.read(shape, scanned, returned, size, units, first)

    # -- housekeeping -----------------------------------------------------------------

    def forget(self, table_id: int) -> None:
        """A table was deleted: its shapes go (a table of the same name gets a new id)."""
        for shape in [s for s in self.counts if s[TABLE] == table_id]:
            del self.counts[shape]
            self.meta.pop(shape, None)
        self.changes += 1

    def clear(self) -> None:
        self.counts.clear()
        self.meta.clear()
        self.changes += 1

    def snapshot(self) -> list[list[Any]]:
        return [[list(shape), _filled(shape, counts), self.meta.get(shape, {})] for shape, counts in self.counts.items()]

    def tick(self) -> None:
        """Write this process's shapes for the other workers, at most once a second while they change."""
        if self._dir is None or self.changes == self._saved:
            return
        now = time.monotonic()
        if now - self._written < WRITE_SECONDS:
            return
        self._written = now
        self._saved = self.changes
        if self._file is None:
            self._file = self._dir / f"{os.getpid()}-{time.time_ns()}.json"
        temporary = self._file.with_suffix(".tmp")
        try:
            temporary.write_bytes(orjson.dumps(self.snapshot()))
            os.replace(temporary, self._file)
        except (OSError, TypeError):
            log.exception("could not write the request shapes of this worker")

    def merged(self) -> dict[Shape, tuple[list[float], dict[str, Any]]]:
        """Every shape of this process and of the other workers' last files, counts added."""
        counts_now, meta_now = dict(self.counts), dict(self.meta)  # C-level copies: safe beside the request thread
        out: dict[Shape, tuple[list[float], dict[str, Any]]] = {
            shape: (_filled(shape, counts), meta_now.get(shape, {})) for shape, counts in counts_now.items()}
        if self._dir is None:
            return out
        for path in self._dir.glob("*.json"):
            if path == self._file:
                continue
            try:
                rows = orjson.loads(path.read_bytes())
            except (OSError, orjson.JSONDecodeError):
                continue
            for raw, counts, meta in rows:
                shape = tuple(raw)
                mine = out.get(shape)
                if mine is None:
                    out[shape] = (list(counts), meta)
                else:
                    for i, n in enumerate(counts):
                        mine[0][i] += n
        return out
