"""The SQLite store's WAL stays bounded under sustained writes (storage/sqlite_files.py).

A PASSIVE checkpoint never catches up while commits keep coming, and SQLite
restarts the WAL only when one has: before the truncating checkpoint, four
seconds of 25-row commits grew the file to 885 MB. The checkpointer thread
truncates past the limit; the writers' own checkpoint at WAL_CEILING_FACTOR
times the limit bounds the file when that thread is starved (CI once saw
100 MB against a 1 MB limit). Store level, because the limit is lowered here
to keep the test small; the server uses the same store.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from conftest import STORE

from partita.storage.sqlite import SQLiteStore
from partita.storage.sqlite_files import WAL_CEILING_FACTOR

COMMITS = 3000
LIMIT_FRAMES = 512  # 1 MB of 2 KB pages
FRAME_BYTES = 24 + 2048  # a WAL frame: its header and one page
CEILING = LIMIT_FRAMES * WAL_CEILING_FACTOR
# Alone, the writer checkpoints in the commit that crosses the ceiling: the file passes it by less
# than one commit (a 25-row commit writes under 100 pages).
STARVED_BOUND = 32 + (CEILING + 100) * FRAME_BYTES
# Beside the thread, the writer's checkpoint is skipped while the thread's holds SQLite's checkpoint
# lock, and is tried again at the next commit: a loaded machine can stretch that to many commits
# (seen here: 800 pages past the ceiling). Unbounded, the file passes 90 MB.
RUNNING_BOUND = 4 * CEILING * FRAME_BYTES


def _write(store: SQLiteStore, wal: Path) -> tuple[int, int]:
    """Commit COMMITS batches of 25 random rows; answer the rows written and the WAL's peak size."""
    rng = random.Random(7)
    written = 0
    peak = 0
    for _ in range(COMMITS):
        with store.write() as txn:
            for _ in range(25):
                txn.put(rng.randbytes(16), rng.randbytes(130), 1)
        written += 25
        peak = max(peak, wal.stat().st_size)
    return written, peak


def _count(store: SQLiteStore) -> int:
    with store.snapshot() as view:
        count, _ = view.stats(b"", b"\xff" * 17)
    return count


@pytest.mark.skipif(STORE != "memory", reason="store level on its own SQLite file: runs once")
@pytest.mark.parametrize("checkpointer", ["running", "starved"])
def test_wal_stays_bounded_under_sustained_writes(tmp_path: Path, checkpointer: str) -> None:
    path = tmp_path / "partita.sqlite3"
    store = SQLiteStore(path, wal_limit_frames=LIMIT_FRAMES)
    if checkpointer == "starved":  # the worst a loaded machine can do to the thread: it never runs
        assert store._checkpointer is not None
        store._checkpointer.close()
        store._checkpointer = None
    wal = Path(str(path) + "-wal")
    try:
        written, peak = _write(store, wal)
        count = _count(store)
    finally:
        store.close()
    assert count == written  # every row committed, none lost to a checkpoint or truncation
    # With no checkpoint at all, these commits leave over 300 MB of WAL.
    bound = STARVED_BOUND if checkpointer == "starved" else RUNNING_BOUND
    assert 0 < peak < bound, (peak, bound)
