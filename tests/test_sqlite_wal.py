"""The SQLite store's WAL stays bounded under sustained writes (storage/sqlite_files.py, Checkpointer).

A PASSIVE checkpoint never catches up while commits keep coming, and SQLite
restarts the WAL only when one has: before the truncating checkpoint, four
seconds of 25-row commits grew the file to 885 MB. Store level, because the
limit (32 MB) is lowered here to keep the test small; the server uses the
same store.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from conftest import STORE

from partita.storage.sqlite import SQLiteStore

COMMITS = 3000
LIMIT_FRAMES = 512  # 1 MB of 2 KB pages


@pytest.mark.skipif(STORE != "memory", reason="store level on its own SQLite file: runs once")
def test_wal_stays_bounded_under_sustained_writes(tmp_path: Path) -> None:
    path = tmp_path / "partita.sqlite3"
    store = SQLiteStore(path)
    checkpointer = store._checkpointer
    assert checkpointer is not None
    checkpointer.limit_frames = LIMIT_FRAMES
    wal = Path(str(path) + "-wal")
    rng = random.Random(7)
    written = 0
    peak = 0
    try:
        for _ in range(COMMITS):
            with store.write() as txn:
                for _ in range(25):
                    txn.put(rng.randbytes(16), rng.randbytes(130), 1)
            written += 25
            peak = max(peak, wal.stat().st_size)
        with store.snapshot() as view:
            count, _ = view.stats(b"", b"\xff" * 17)
    finally:
        store.close()
    assert count == written  # every row committed, none lost to a truncation
    # Unbounded, 1,500 such commits leave well over 100 MB of WAL (3,000: over 200 MB); bounded,
    # the file is emptied whenever the checkpointer (every 0.1 s) finds more than the limit in it.
    # The bound leaves room for a checkpointer thread starved by a loaded machine (CI saw 63 MB).
    assert peak < 96 * 1024 * 1024, peak
    assert not wal.exists() or os.path.getsize(wal) < 96 * 1024 * 1024
