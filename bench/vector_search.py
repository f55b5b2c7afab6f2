"""SearchVectors engine bench: exact vs approximate latency, recall@10, delta cost, memory per vector.

Runs the engine's search directly on a matrix of random Gaussian vectors (no HTTP; the
hardest case for a graph index), as `python bench/vector_search.py [N] [DIMS]`. Bounded:
one graph build (one multi-threaded batch add), 50 queries, 100 deltas.
"""

from __future__ import annotations

import struct
import sys
import time

import numpy as np
import orjson

from partita.engine.vector.matrix import Matrix, build
from partita.engine.vector.model import VectorIndex
from partita.engine.vector.search import VectorSearch


def _row(i: int, vector: np.ndarray) -> tuple[bytes, bytes]:
    header = orjson.dumps({"id": {"N": str(i)}})
    return struct.pack(">I", i), struct.pack("<II", len(header), 0) + header + vector.astype("<f4").tobytes()


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    d = int(sys.argv[2]) if len(sys.argv) > 2 else 768
    rng = np.random.default_rng(1)
    vectors = rng.standard_normal((n, d), dtype=np.float32)
    index = VectorIndex("bench", 1, 1, "emb", d, "COSINE", None, (), "KEYS_ONLY", frozenset(), "ACTIVE")
    t = time.perf_counter()
    matrix = build([_row(i, v) for i, v in enumerate(vectors)], 0, d, "COSINE", ())
    load = time.perf_counter() - t
    exact, approx = VectorSearch(None, False), VectorSearch(None, True)  # type: ignore[arg-type]
    t = time.perf_counter()
    matrix.ensure_graph()
    graph_build = time.perf_counter() - t
    queries = rng.standard_normal((50, d), dtype=np.float32)
    results = {}
    for name, engine in (("exact", exact), ("approximate", approx)):
        times, found = [], []
        for q in queries:
            t = time.perf_counter()
            out = engine._search(matrix, index, q, 10, [])
            times.append(time.perf_counter() - t)
            found.append({header for _, header, *_ in out})
        results[name] = (found, sorted(times))
    recall = np.mean([len(a & e) / 10 for a, e in zip(results["approximate"][0], results["exact"][0], strict=True)])
    for name, (_, times) in results.items():
        print(f"{name}: p50 {times[len(times) // 2] * 1000:.1f} ms, p95 {times[int(len(times) * 0.95)] * 1000:.1f} ms")
    print(f"matrix load {load:.1f} s; graph build {graph_build:.1f} s; recall@10 {recall:.3f}; n={n} d={d}")
    t = time.perf_counter()
    for i in range(100):  # 50 overwrites and 50 removals, graph kept current
        if i % 2:
            matrix.remove(struct.pack(">I", i))
        else:
            key, raw = _row(i, rng.standard_normal(d, dtype=np.float32))
            matrix.upsert(key, raw)
    print(f"delta apply: {(time.perf_counter() - t) * 10:.2f} ms per changed entry (with the graph)")
    print(f"memory per vector: matrix {matrix.nbytes() / matrix.n:.0f} B + graph "
          f"{_graph_bytes(matrix) / matrix.n:.0f} B")


def _graph_bytes(matrix: Matrix) -> int:
    return int(matrix.graph.memory_usage) if matrix.graph is not None else 0


if __name__ == "__main__":
    main()
