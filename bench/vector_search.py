"""SearchVectors engine bench: exact vs approximate latency, recall@10, delta cost, memory per vector.

Runs the engine's search directly on a COSINE matrix (no HTTP), as
`python bench/vector_search.py [N] [DIMS] [clustered|gaussian] [EF,EF,...]`
(the last: expansion_search values to try on the same graph; default the engine's):
- `clustered` (default): a Gaussian mixture of 300 unit centres, each vector its
  centre plus noise of norm 0.5 (neighbours at cosine ~0.8), normalised; queries
  drawn the same way. Closer to real embeddings, which lie near a low-dimensional
  structure.
- `gaussian`: i.i.d. standard normal vectors, the worst case for any graph index
  (every point is nearly equidistant from every other).
Bounded: one graph build (one multi-threaded batch add), 100 queries per setting,
100 deltas; then search throughput with 1 and 2 searching threads (through
`VectorSearch.search`, i.e. its reader/writer lock).
"""

from __future__ import annotations

import os
import struct
import sys
import threading
import time

import numpy as np
import orjson

from partita.engine.vector.matrix import EXPANSION_SEARCH, Matrix, build
from partita.engine.vector.model import VectorIndex
from partita.engine.vector.search import VectorSearch


def _row(i: int, vector: np.ndarray) -> tuple[bytes, bytes]:
    header = orjson.dumps({"id": {"N": str(i)}})
    return struct.pack(">I", i), struct.pack("<II", len(header), 0) + header + vector.astype("<f4").tobytes()


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    d = int(sys.argv[2]) if len(sys.argv) > 2 else 768
    data = sys.argv[3] if len(sys.argv) > 3 else "clustered"
    rng = np.random.default_rng(1)
    vectors, queries = _data(rng, data, n, d), _data(rng, data, 100, d)
    index = VectorIndex("bench", 1, 1, "emb", d, "COSINE", None, (), "KEYS_ONLY", frozenset(), "ACTIVE")
    t = time.perf_counter()
    matrix = build([_row(i, v) for i, v in enumerate(vectors)], 0, d, "COSINE", ())
    load = time.perf_counter() - t
    exact, approx = VectorSearch(None, False), VectorSearch(None, True)  # type: ignore[arg-type]
    t = time.perf_counter()
    matrix.ensure_graph()
    graph_build = time.perf_counter() - t
    exact_found, exact_times = _run(exact, matrix, index, queries)
    print(f"exact: p50 {_ms(exact_times, 0.5)} ms, p95 {_ms(exact_times, 0.95)} ms")
    print(f"matrix load {load:.1f} s; graph build {graph_build:.1f} s ({n / graph_build:.0f} vectors/s); "
          f"n={n} d={d} {data}; load average {os.getloadavg()[0]:.1f}")
    beams = [int(e) for e in sys.argv[4].split(",")] if len(sys.argv) > 4 else [EXPANSION_SEARCH]
    for ef in beams:
        matrix.graph.expansion_search = ef
        found, times = _run(approx, matrix, index, queries)
        recall = np.mean([len(a & e) / 10 for a, e in zip(found, exact_found, strict=True)])
        print(f"approximate (expansion_search {ef}): p50 {_ms(times, 0.5)} ms, p95 {_ms(times, 0.95)} ms, "
              f"recall@10 {recall:.3f}")
    matrix.graph.expansion_search = EXPANSION_SEARCH
    for mode in ("exact", "approximate"):
        rates = [f"{_throughput(matrix, index, queries, threads, mode == 'approximate'):.0f}" for threads in (1, 2)]
        print(f"{mode} throughput, 1 / 2 searching threads: {rates[0]} / {rates[1]} searches/s")
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


def _run(engine: VectorSearch, matrix: Matrix, index: VectorIndex,
         queries: np.ndarray) -> tuple[list[set[bytes]], list[float]]:
    times, found = [], []
    for q in queries:
        t = time.perf_counter()
        out = engine._search(matrix, index, q, 10, [])
        times.append(time.perf_counter() - t)
        found.append({header for _, header, *_ in out})
    return found, sorted(times)


def _ms(times: list[float], quantile: float) -> str:
    return f"{times[min(len(times) - 1, int(len(times) * quantile))] * 1000:.1f}"


class _Still:
    """A store whose version row never moves: the cached matrix stays current."""

    def get(self, key: bytes) -> None:
        return None


def _throughput(matrix: Matrix, index: VectorIndex, queries: np.ndarray, threads: int, approximate: bool) -> float:
    search = VectorSearch(_Still(), approximate)  # type: ignore[arg-type]
    search._cache[(index.table_id, index.index_id)] = matrix
    matrix.version = 0

    def run(part: np.ndarray) -> None:
        for q in part:
            search.search(index, q, 10, [])

    repeat = np.concatenate([queries] * (20 if approximate else 1))
    workers = [threading.Thread(target=run, args=(repeat[i::threads],)) for i in range(threads)]
    t = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return len(repeat) / (time.perf_counter() - t)


def _data(rng: np.random.Generator, kind: str, n: int, d: int) -> np.ndarray:
    if kind == "gaussian":
        return rng.standard_normal((n, d), dtype=np.float32)
    centres = np.random.default_rng(2).standard_normal((300, d), dtype=np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    noise = rng.standard_normal((n, d), dtype=np.float32) * np.float32(0.5 / np.sqrt(d))
    out = centres[rng.integers(0, len(centres), n)] + noise
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def _graph_bytes(matrix: Matrix) -> int:
    return int(matrix.graph.memory_usage) if matrix.graph is not None else 0


if __name__ == "__main__":
    main()
