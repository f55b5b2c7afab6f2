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

#: HNSW parameters, tuned with bench/vector_search.py on 768-d data. Candidates are
#: re-scored exactly from the float32 rows, so the graph only has to find them:
#: connectivity 16 and expansion_add 64 build ~4x faster than 32 / 128 with no
#: recall lost on clustered (embedding-like) data, where a beam of 128 finds
#: the 100 candidates. Random Gaussian data, which no graph index navigates well,
#: needs a far wider beam and is then slower than exact search (docs/decisions.md).
CONNECTIVITY = 16
EXPANSION_ADD = 64
EXPANSION_SEARCH = 128
#: The graph's own copy of the vectors. COSINE rows are unit vectors, so an 8-bit
#: copy (usearch scales [-1, 1] to int8) keeps their order well enough for
#: candidates at a quarter of the memory traffic: the build is ~3x faster.
#: EUCLIDEAN and DOT_PRODUCT vectors have any magnitude, which int8 would clip.
_GRAPH_DTYPE = {"COSINE": "i8", "EUCLIDEAN": "f32", "DOT_PRODUCT": "f32"}
#: Rows handed to the graph per batch add (each batch is multi-threaded).
_BUILD_CHUNK = 16_384
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
        #: COSINE keeps each row's norm, not a second (unit) copy of the rows: exact
        #: search divides one product by the norms, and the memory is halved.
        self._norms = np.empty(self._vectors.shape[0], dtype=np.float32) if distance == "COSINE" else None
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
    def norms(self) -> np.ndarray | None:
        return None if self._norms is None else self._norms[: self.n]

    @property
    def weights(self) -> np.ndarray:
        return self._weights[: self.n]

    def nbytes(self) -> int:
        """Bytes of the numeric arrays actually used (the memory-per-vector figure)."""
        per_row = self._vectors.itemsize * self.dimensions + 8 + (4 if self._norms is not None else 0)
        return per_row * self.n

    # -- changes -------------------------------------------------------------------------

    def _grow(self) -> None:
        size = self._vectors.shape[0] * 2
        self._vectors = np.resize(self._vectors, (size, self.dimensions))
        if self._norms is not None:
            self._norms = np.resize(self._norms, size)
        self._weights = np.resize(self._weights, size)

    def _set_row(self, row: int, vector: np.ndarray) -> None:
        self._vectors[row] = vector
        if self._norms is not None:
            self._norms[row] = np.linalg.norm(self._vectors[row])

    def _graph_vector(self, rows: slice | int) -> np.ndarray:
        """Rows as the graph holds them: unit vectors for COSINE (zero stays zero)."""
        vectors = self._vectors[rows]
        if self._norms is None:
            return vectors
        norms = self._norms[rows]
        if vectors.ndim == 1:
            return vectors / norms if norms > 0 else vectors
        return np.divide(vectors, norms[:, None], out=np.zeros_like(vectors), where=norms[:, None] > 0)

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
            if self._norms is not None:
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

            graph = Index(ndim=self.dimensions, metric=_METRIC[self.distance], dtype=_GRAPH_DTYPE[self.distance],
                          connectivity=CONNECTIVITY, expansion_add=EXPANSION_ADD,
                          expansion_search=EXPANSION_SEARCH)
            for start in range(0, self.n, _BUILD_CHUNK):  # bounded temporary unit copies
                stop = min(start + _BUILD_CHUNK, self.n)
                graph.add(np.arange(start, stop, dtype=np.uint64),
                          np.ascontiguousarray(self._graph_vector(slice(start, stop))), threads=0)
            self.graph = graph
        return self.graph


def build(rows: list[tuple[bytes, bytes]], skip: int, dimensions: int, distance: str,
          schema: tuple[str, ...]) -> Matrix:
    """A matrix over entry rows (`skip` = the index prefix length, cut off the keys)."""
    matrix = Matrix(dimensions, distance, schema, capacity=len(rows))
    for key, raw in rows:
        matrix.upsert(key[skip:], raw)
    return matrix
