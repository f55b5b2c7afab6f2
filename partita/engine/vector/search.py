"""SearchVectors over a per-index matrix cached in memory.

The store's entry rows are the truth; the matrix is a cache of them. Each
index has a version row that every change to it bumps in the change's own
commit, so a search reads that one row and rebuilds the matrix only when the
version moved, whoever wrote it (this process or another worker sharing the
store). The rebuild reads the version and the rows in one snapshot, so the
cache is never a mix of two states. Persisting the matrix itself is not
needed: on SQLite the rows survive a restart and the first search rebuilds
from them (100,000 x 768 in about a second, see bench/vector_search.py).

Exact search is numpy over the whole (or HASH-scoped) matrix; ties are
broken by row order (the item's key order), so results are deterministic.
With `approximate=True` an unscoped search first asks a usearch HNSW graph
(built with the matrix) for candidates and then scores them exactly, so
scores keep their documented meaning; a search scoped by a search-schema
condition stays exact over the matching rows.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import numpy as np
import orjson

from ...storage.base import Store
from ..keys import prefix_successor
from .entries import decode, version
from .model import VectorIndex

#: Candidates asked of the approximate graph per result wanted.
CANDIDATE_FACTOR = 10


def value_key(value: dict[str, Any]) -> tuple[str, str]:
    """A search-schema value as compared by `=`: Numbers by numeric value, others by content."""
    kind, raw = next(iter(value.items()))
    if kind == "N":
        return kind, str(Decimal(raw).normalize())
    return kind, str(raw)


@dataclass(slots=True)
class _Matrix:
    version: int
    vectors: np.ndarray  # (n, d) float32
    unit: np.ndarray | None  # rows scaled to unit length (COSINE)
    norms: np.ndarray | None
    headers: list[bytes]
    weights: np.ndarray
    #: Search-schema attribute -> object array of value keys (None where absent).
    columns: dict[str, np.ndarray]
    graph: Any = None
    lock: threading.Lock = field(default_factory=threading.Lock)


def _load(store: Store, index: VectorIndex) -> _Matrix:
    end = prefix_successor(index.prefix)
    assert end is not None
    with store.snapshot() as view:
        number = version(view, index)
        rows = list(view.range(index.prefix, end))
    n, d = len(rows), index.dimensions
    vectors = np.empty((n, d), dtype=np.float32)
    headers: list[bytes] = []
    weights = np.empty(n, dtype=np.int64)
    columns = {name: np.empty(n, dtype=object) for name, _ in index.schema}
    for i, (_, raw) in enumerate(rows):
        header, vectors[i], weights[i] = decode(raw, d)
        headers.append(header)
        if columns:
            attrs = orjson.loads(header)
            for name in columns:
                value = attrs.get(name)
                columns[name][i] = None if value is None else value_key(value)
    unit = norms = None
    if index.distance == "COSINE":
        norms = np.linalg.norm(vectors, axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            unit = np.where(norms[:, None] > 0, vectors / norms[:, None], 0).astype(np.float32)
    return _Matrix(number, vectors, unit, norms, headers, weights, columns)


def _scores(matrix: _Matrix, index: VectorIndex, query: np.ndarray, rows: np.ndarray | None) -> np.ndarray:
    """Scores of `rows` (None: all) in the documented sense of the distance function."""
    if index.distance == "COSINE":
        assert matrix.unit is not None and matrix.norms is not None
        unit = matrix.unit if rows is None else matrix.unit[rows]
        q_norm = float(np.linalg.norm(query))
        if q_norm == 0:
            return np.ones(unit.shape[0], dtype=np.float32)
        similarity = unit @ (query / q_norm)
        norms = matrix.norms if rows is None else matrix.norms[rows]
        out = (1.0 - similarity).astype(np.float32)
        out[norms == 0] = 1.0  # a zero vector is orthogonal to everything
        return np.clip(out, 0.0, 2.0)
    vectors = matrix.vectors if rows is None else matrix.vectors[rows]
    if index.distance == "DOT_PRODUCT":
        return vectors @ query
    diff = vectors - query
    return np.sqrt(np.einsum("ij,ij->i", diff, diff))


def _top(scores: np.ndarray, k: int, descending: bool) -> np.ndarray:
    """Positions of the k best scores, best first, ties in row order."""
    keyed = -scores if descending else scores
    if k < keyed.shape[0]:
        kth = np.partition(keyed, k - 1)[k - 1]
        candidates = np.nonzero(keyed <= kth)[0]
    else:
        candidates = np.arange(keyed.shape[0])
    order = np.argsort(keyed[candidates], kind="stable")
    return candidates[order][:k]


class VectorSearch:
    """The per-process cache of vector index matrices, and the search over them."""

    def __init__(self, store: Store, approximate: bool = False) -> None:
        self._store = store
        self.approximate = approximate
        self._cache: dict[tuple[int, int], _Matrix] = {}
        self._lock = threading.Lock()

    def matrix(self, index: VectorIndex) -> _Matrix:
        key = (index.table_id, index.index_id)
        cached = self._cache.get(key)
        if cached is not None and cached.version == version(self._store, index):
            return cached
        with self._lock:
            cached = self._cache.get(key)
            if cached is None or cached.version != version(self._store, index):
                cached = _load(self._store, index)
                self._cache[key] = cached
        return cached

    def search(
        self, index: VectorIndex, query: np.ndarray, top_k: int, terms: list[tuple[str, tuple[str, str]]]
    ) -> list[tuple[float, bytes, int, np.ndarray]]:
        """[(score, header JSON, entry bytes, vector)] of the top_k nearest entries matching every term."""
        matrix = self.matrix(index)
        n = matrix.vectors.shape[0]
        if n == 0:
            return []
        rows: np.ndarray | None = None
        if terms:
            mask = np.ones(n, dtype=bool)
            for name, wanted in terms:
                column = matrix.columns[name]
                mask &= np.fromiter((v == wanted for v in column), dtype=bool, count=n)
            rows = np.nonzero(mask)[0]
            if rows.shape[0] == 0:
                return []
        descending = index.distance == "DOT_PRODUCT"
        if rows is None and self.approximate and n > top_k:
            positions = self._approximate(matrix, index, query, top_k)
            scores = _scores(matrix, index, query, positions)
            picked = positions[_top(scores, top_k, descending)]
            final = _scores(matrix, index, query, picked)
        else:
            scores = _scores(matrix, index, query, rows)
            best = _top(scores, top_k, descending)
            picked = best if rows is None else rows[best]
            final = scores[best]
        return [
            (float(s), matrix.headers[i], int(matrix.weights[i]), matrix.vectors[i])
            for s, i in zip(final, picked, strict=True)
        ]

    def _approximate(self, matrix: _Matrix, index: VectorIndex, query: np.ndarray, top_k: int) -> np.ndarray:
        with matrix.lock:
            if matrix.graph is None:
                matrix.graph = build_graph(matrix.vectors, index.distance)
        found = matrix.graph.search(query, min(top_k * CANDIDATE_FACTOR, matrix.vectors.shape[0]))
        return np.asarray(found.keys, dtype=np.int64)


def build_graph(vectors: np.ndarray, distance: str) -> Any:
    """A usearch HNSW graph over `vectors`, keyed by row position."""
    from usearch.index import Index

    metric = {"COSINE": "cos", "EUCLIDEAN": "l2sq", "DOT_PRODUCT": "ip"}[distance]
    graph = Index(ndim=vectors.shape[1], metric=metric, dtype="f32", connectivity=16, expansion_add=128,
                  expansion_search=256)
    graph.add(np.arange(vectors.shape[0], dtype=np.uint64), vectors)
    return graph
