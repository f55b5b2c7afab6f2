"""SearchVectors over a per-index matrix cached in memory and kept current by deltas.

The store's entry rows are the truth; the matrix (`matrix.Matrix`) is a cache
of them. Every change to an index bumps its version row and logs the changed
entry's key in the change's own commit (`entries.bump_version`), so a search
reads the one version row and, when it moved, reads the log rows since the
cached version and the entry rows they name, all in one snapshot, and applies
just those (whoever wrote them: this process or another worker sharing the
store). A log trimmed past the cache, or a backfill batch, rebuilds in full.

Exact search is numpy over the whole (or search-schema-scoped) matrix; ties
are broken by the item's key, so results are deterministic. With
`approximate=True` an unscoped search asks the usearch HNSW graph (built in
one batch, then kept current with the same deltas) for candidates and scores
them exactly, so scores keep their documented meaning; a search scoped by a
condition stays exact over the matching rows. A search holds its index's
lock only while it refreshes the matrix (deltas change it in place); searches
on an up-to-date matrix share it (a reader/writer lock), and numpy and usearch
release the GIL, so they run side by side.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from ...storage.base import ReadView, Store
from ..model.keys import prefix_successor
from .entries import changes, version
from .matrix import Matrix, build, value_key
from .model import VectorIndex

__all__ = ["VectorSearch", "value_key"]

#: Candidates asked of the approximate graph per result wanted.
CANDIDATE_FACTOR = 10
#: Beyond this many changed entries a full rebuild is cheaper than deltas.
MAX_DELTA = 50_000


def _load(view: ReadView, index: VectorIndex, number: int) -> Matrix:
    end = prefix_successor(index.prefix)
    assert end is not None
    rows = list(view.range(index.prefix, end))
    matrix = build(rows, len(index.prefix), index.dimensions, index.distance, tuple(n for n, _ in index.schema))
    matrix.version = number
    return matrix


def _scores(matrix: Matrix, index: VectorIndex, query: np.ndarray, rows: np.ndarray | None) -> np.ndarray:
    """Scores of `rows` (None: all) in the documented sense of the distance function."""
    vectors = matrix.vectors if rows is None else matrix.vectors[rows]
    if index.distance == "COSINE":
        assert matrix.norms is not None
        norms = matrix.norms if rows is None else matrix.norms[rows]
        q_norm = np.float32(np.linalg.norm(query))
        if q_norm == 0:
            return np.ones(vectors.shape[0], dtype=np.float32)
        dots = vectors @ query
        scale = norms * q_norm
        # A zero vector is orthogonal to everything: similarity 0, score 1.
        similarity = np.divide(dots, scale, out=np.zeros_like(dots), where=norms > 0)
        return np.clip(np.float32(1.0) - similarity, 0.0, 2.0)
    if index.distance == "DOT_PRODUCT":
        return vectors @ query
    diff = vectors - query
    return np.sqrt(np.einsum("ij,ij->i", diff, diff))


def _top(scores: np.ndarray, k: int, descending: bool, keys: list[bytes], rows: np.ndarray | None) -> np.ndarray:
    """Positions (into `scores`) of the k best scores, best first, ties in key order."""
    keyed = -scores if descending else scores
    if k < keyed.shape[0]:
        kth = np.partition(keyed, k - 1)[k - 1]
        candidates = np.nonzero(keyed <= kth)[0]
    else:
        candidates = np.arange(keyed.shape[0])
    ordered = sorted(candidates.tolist(), key=lambda p: (keyed[p], keys[p if rows is None else rows[p]]))
    return np.asarray(ordered[:k], dtype=np.int64)


class _Shared:
    """A reader/writer lock: searches share a matrix, a refresh (which moves rows) has it alone.

    Writers go first once waiting, so a stream of searches cannot starve a refresh.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._writing = False
        self._waiting = 0

    @contextmanager
    def read(self) -> Iterator[None]:
        with self._cond:
            while self._writing or self._waiting:
                self._cond.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                if not self._readers:
                    self._cond.notify_all()

    @contextmanager
    def write(self) -> Iterator[None]:
        with self._cond:
            self._waiting += 1
            while self._writing or self._readers:
                self._cond.wait()
            self._waiting -= 1
            self._writing = True
        try:
            yield
        finally:
            with self._cond:
                self._writing = False
                self._cond.notify_all()


class VectorSearch:
    """The per-process cache of vector index matrices, and the search over them."""

    def __init__(self, store: Store, approximate: bool = False) -> None:
        self._store = store
        self.approximate = approximate
        self._cache: dict[tuple[int, int], Matrix] = {}
        self._locks: dict[tuple[int, int], _Shared] = {}
        self._lock = threading.Lock()

    def _fresh(self, index: VectorIndex, key: tuple[int, int]) -> Matrix:
        """The cached matrix brought up to the store's version (caller holds the index's write lock)."""
        cached = self._cache.get(key)
        if cached is not None and cached.version == version(self._store, index):
            return cached
        with self._store.snapshot() as view:
            number = version(view, index)
            changed = None if cached is None or number < cached.version else changes(view, index, cached.version, number)
            if cached is None or changed is None or len(changed) > MAX_DELTA:
                cached = _load(view, index, number)
            else:
                found = {suffix: view.get(index.prefix + suffix) for suffix in sorted(changed)}
                for suffix, raw in found.items():
                    if raw is None:
                        cached.remove(suffix)
                    else:
                        cached.upsert(suffix, raw)
                cached.version = number
        self._cache[key] = cached
        return cached

    def matrix(self, index: VectorIndex) -> Matrix:
        """The index's matrix, current as of now (for the bench and tests)."""
        key = (index.table_id, index.index_id)
        with self._index_lock(key).write():
            return self._fresh(index, key)

    def _index_lock(self, key: tuple[int, int]) -> _Shared:
        with self._lock:
            lock = self._locks.get(key)
            if lock is None:
                lock = self._locks[key] = _Shared()
            return lock

    def search(
        self, index: VectorIndex, query: np.ndarray, top_k: int, terms: list[tuple[str, tuple[str, str]]]
    ) -> list[tuple[float, bytes, int, np.ndarray]]:
        """[(score, header JSON, entry bytes, vector)] of the top_k nearest entries matching every term.

        Exact as of the call: the store's version is read first, and the search runs
        (under the shared lock, beside other searches) only on a matrix at that version,
        or on the one this call brought past it under the write lock. A matrix
        from before a reset can carry a higher version, so only our own refresh's
        object is trusted to be ahead.
        """
        key = (index.table_id, index.index_id)
        lock = self._index_lock(key)
        wanted = version(self._store, index)
        graph = self.approximate and not terms
        refreshed: Matrix | None = None
        while True:
            with lock.read():
                cached = self._cache.get(key)
                if cached is not None and (cached.version == wanted or (
                        cached is refreshed and cached.version >= wanted)) and (
                        not graph or cached.graph is not None):
                    return self._search(cached, index, query, top_k, terms)
            with lock.write():
                refreshed = self._fresh(index, key)
                if graph:
                    refreshed.ensure_graph()
                wanted = refreshed.version

    def _search(
        self, matrix: Matrix, index: VectorIndex, query: np.ndarray, top_k: int,
        terms: list[tuple[str, tuple[str, str]]],
    ) -> list[tuple[float, bytes, int, np.ndarray]]:
        n = matrix.n
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
            positions = self._approximate(matrix, query, top_k)
            scores = _scores(matrix, index, query, positions)
            best = _top(scores, top_k, descending, matrix.keys, positions)
            picked = positions[best]
        else:
            scores = _scores(matrix, index, query, rows)
            best = _top(scores, top_k, descending, matrix.keys, rows)
            picked = best if rows is None else rows[best]
        final = scores[best]
        return [
            (float(s), matrix.headers[i], int(matrix.weights[i]), matrix.vectors[i].copy())
            for s, i in zip(final, picked, strict=True)
        ]

    @staticmethod
    def _approximate(matrix: Matrix, query: np.ndarray, top_k: int) -> np.ndarray:
        graph = matrix.ensure_graph()
        wanted = min(top_k * CANDIDATE_FACTOR, matrix.n)
        probe = query
        if index_is_cosine(matrix):
            norm = float(np.linalg.norm(query))
            probe = query / norm if norm > 0 else query
        found = graph.search(np.ascontiguousarray(probe, dtype=np.float32), wanted)
        return np.asarray(found.keys, dtype=np.int64)


def index_is_cosine(matrix: Matrix) -> bool:
    return matrix.distance == "COSINE"
