"""SearchVectors engine bench: exact vs approximate latency, recall@10, memory per vector.

Runs the engine's search directly on a matrix of random unit vectors (no HTTP), as
`python bench/vector_search.py [N] [DIMS]`. Bounded: one build, 50 queries.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from partita.engine.vector.model import VectorIndex
from partita.engine.vector.search import VectorSearch, _Matrix


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    d = int(sys.argv[2]) if len(sys.argv) > 2 else 768
    rng = np.random.default_rng(1)
    vectors = rng.standard_normal((n, d), dtype=np.float32)
    index = VectorIndex("bench", 1, 1, "emb", d, "COSINE", None, (), "KEYS_ONLY", frozenset(), "ACTIVE")
    norms = np.linalg.norm(vectors, axis=1)
    matrix = _Matrix(0, vectors, (vectors / norms[:, None]).astype(np.float32), norms, [b"{}"] * n,
                     np.zeros(n, dtype=np.int64), {})
    exact, approx = VectorSearch(None, False), VectorSearch(None, True)  # type: ignore[arg-type]
    for engine in (exact, approx):
        engine.matrix = lambda _index, m=matrix: m  # type: ignore[method-assign]
    t = time.perf_counter()
    approx._approximate(matrix, index, vectors[0], 10)
    build = time.perf_counter() - t
    queries = rng.standard_normal((50, d), dtype=np.float32)
    results = {}
    for name, engine in (("exact", exact), ("approximate", approx)):
        times, found = [], []
        for q in queries:
            t = time.perf_counter()
            out = engine.search(index, q, 10, [])
            times.append(time.perf_counter() - t)
            found.append([round(s, 5) for s, *_ in out])
        results[name] = (found, sorted(times))
    recall = np.mean([len(set(a) & set(e)) / 10 for a, e in zip(results["approximate"][0], results["exact"][0],
                                                               strict=True)])
    for name, (_, times) in results.items():
        print(f"{name}: p50 {times[len(times) // 2] * 1000:.1f} ms, p95 {times[int(len(times) * 0.95)] * 1000:.1f} ms")
    print(f"graph build {build:.1f} s; recall@10 {recall:.3f}; n={n} d={d}")
    print(f"matrix memory per vector: {(vectors.nbytes + matrix.unit.nbytes) / n:.0f} B (+ graph "  # type: ignore[union-attr]
          f"{approx_graph_bytes(matrix) / n:.0f} B)")


def approx_graph_bytes(matrix: _Matrix) -> int:
    return int(matrix.graph.memory_usage) if matrix.graph is not None else 0


if __name__ == "__main__":
    main()
