"""The in-memory copy of one vector index: float32 rows, a key -> row map, and the HNSW graph.

The store's entry rows are the truth and this is a cache of them that is
kept current by deltas (`search.VectorSearch` reads the index's change log
and calls `upsert` / `remove` for the keys that changed) rather than rebuilt
per write. Rows stay dense: a removal moves the last row into the hole, so
exact search is one matrix product over `vectors` with no dead rows to mask.
The row order is therefore not the key order; ties are broken by `keys`
where results are picked. The graph (approximate mode) is keyed by row
position and follows the same moves (usearch `remove` / `rename` / `add`).
"""

from __future__ import annotations

import threading
from decimal import Decimal
from typing import Any

import numpy as np
import orjson

from .entries import decode

#: HNSW parameters: connectivity 32 and a wide search beam, because the
#: search re-scores candidates exactly and recall, not graph latency, is what
#: random high-dimensional data (the hard case) costs. See bench/vector_search.py.
CONNECTIVITY = 32
EXPANSION_ADD = 128
EXPANSION_SEARCH = 1024
_METRIC = {"COSINE": "ip", "EUCLIDEAN": "l2sq", "DOT_PRODUCT": "ip"}


def value_key(value: dict[str, Any]) -> tuple[str, str]:
    """A search-schema value as compared by `=`: Numbers by numeric value, others by content."""
    kind, raw = next(iter(value.items()))
    if kind == "N":
        return kind, str(Decimal(raw).normalize())
    return kind, str(raw)


class Matrix:
    """One index's rows; callers hold `lock` while they change or read it."""

    def __init__(self, dimensions: int, distance: str, schema: tuple[str, ...], capacity: int = 0) -> None:
        self.version = 0
        self.dimensions = dimensions
        self.distance = distance
        self.n = 0
        self._vectors = np.empty((max(capacity, 16), dimensions), dtype=np.float32)
        cosine = distance == "COSINE"
        self._unit = np.empty_like(self._vectors) if cosine else None
        self._norms = np.empty(self._vectors.shape[0], dtype=np.float32) if cosine else None
        self._weights = np.empty(self._vectors.shape[0], dtype=np.int64)
        self.headers: list[bytes] = []
        self.keys: list[bytes] = []
        self.rows: dict[bytes, int] = {}
        #: Search-schema attribute -> value key per row (None where absent).
        self.columns: dict[str, list[tuple[str, str] | None]] = {name: [] for name in schema}
        self.graph: Any = None
        self.lock = threading.Lock()

    # -- views ---------------------------------------------------------------------------

    @property
    def vectors(self) -> np.ndarray:
        return self._vectors[: self.n]

    @property
    def unit(self) -> np.ndarray | None:
        return None if self._unit is None else self._unit[: self.n]

    @property
    def norms(self) -> np.ndarray | None:
        return None if self._norms is None else self._norms[: self.n]

    @property
    def weights(self) -> np.ndarray:
        return self._weights[: self.n]

    def nbytes(self) -> int:
        """Bytes of the numeric arrays actually used (the memory-per-vector figure)."""
        per_row = self._vectors.itemsize * self.dimensions * (2 if self._unit is not None else 1) + 8 + 4
        return per_row * self.n

    # -- changes -------------------------------------------------------------------------

    def _grow(self) -> None:
        size = self._vectors.shape[0] * 2
        self._vectors = np.resize(self._vectors, (size, self.dimensions))
        if self._unit is not None and self._norms is not None:
            self._unit = np.resize(self._unit, (size, self.dimensions))
            self._norms = np.resize(self._norms, size)
        self._weights = np.resize(self._weights, size)

    def _set_row(self, row: int, vector: np.ndarray) -> None:
        self._vectors[row] = vector
        if self._unit is not None and self._norms is not None:
            norm = float(np.linalg.norm(vector))
            self._norms[row] = norm
            self._unit[row] = vector / norm if norm > 0 else 0.0

    def _graph_vector(self, row: int) -> np.ndarray:
        return self._unit[row] if self._unit is not None else self._vectors[row]

    def upsert(self, key: bytes, raw: bytes) -> None:
        """Put the entry row `raw` stored under `key` (new or changed)."""
        header, vector, weight = decode(raw, self.dimensions)
        row = self.rows.get(key)
        if row is None:
            if self.n == self._vectors.shape[0]:
                self._grow()
            row = self.n
            self.n += 1
            self.rows[key] = row
            self.keys.append(key)
            self.headers.append(header)
            for column in self.columns.values():
                column.append(None)
        else:
            self.headers[row] = header
            if self.graph is not None:
                self.graph.remove(row)
        self._set_row(row, vector)
        self._weights[row] = weight
        if self.columns:
            attrs = orjson.loads(header)
            for name, column in self.columns.items():
                value = attrs.get(name)
                column[row] = None if value is None else value_key(value)
        if self.graph is not None:
            self.graph.add(row, self._graph_vector(row))

    def remove(self, key: bytes) -> None:
        """Drop `key`'s row (absent: nothing to do); the last row takes its place."""
        row = self.rows.pop(key, None)
        if row is None:
            return
        last = self.n - 1
        if self.graph is not None:
            self.graph.remove(row)
        if row != last:
            moved = self.keys[last]
            self.rows[moved] = row
            self.keys[row] = moved
            self.headers[row] = self.headers[last]
            self._vectors[row] = self._vectors[last]
            if self._unit is not None and self._norms is not None:
                self._unit[row] = self._unit[last]
                self._norms[row] = self._norms[last]
            self._weights[row] = self._weights[last]
            for column in self.columns.values():
                column[row] = column[last]
            if self.graph is not None:
                self.graph.rename(last, row)
        self.keys.pop()
        self.headers.pop()
        for column in self.columns.values():
            column.pop()
        self.n = last

    # -- approximate ---------------------------------------------------------------------

    def ensure_graph(self) -> Any:
        """The HNSW graph over every row, built once in one multi-threaded batch add."""
        if self.graph is None:
            from usearch.index import Index

            graph = Index(ndim=self.dimensions, metric=_METRIC[self.distance], dtype="f32",
                          connectivity=CONNECTIVITY, expansion_add=EXPANSION_ADD,
                          expansion_search=EXPANSION_SEARCH)
            if self.n:
                source = self.unit if self._unit is not None else self.vectors
                graph.add(np.arange(self.n, dtype=np.uint64), np.ascontiguousarray(source), threads=0)
            self.graph = graph
        return self.graph


def build(rows: list[tuple[bytes, bytes]], skip: int, dimensions: int, distance: str,
          schema: tuple[str, ...]) -> Matrix:
    """A matrix over entry rows (`skip` = the index prefix length, cut off the keys)."""
    matrix = Matrix(dimensions, distance, schema, capacity=len(rows))
    for key, raw in rows:
        matrix.upsert(key[skip:], raw)
    return matrix
