"""The SQLite store's companions: the files and the thread beside the database.

The catalog generation (a counter every process reads on each request), the
commit sequence (which tells a turn of optimistic writes whether anything
committed since it read), and the checkpointer thread. Split from sqlite.py,
which keeps the store itself.
"""

from __future__ import annotations

import fcntl
import mmap
import os
import sqlite3
import threading
from pathlib import Path

CHECKPOINT_SECONDS = 0.1
"""How often the checkpointer thread copies the WAL into the database."""

WAL_LIMIT_FRAMES = 16384
"""WAL pages (32 MB at 2 KB pages) past which the checkpointer truncates the WAL.

A PASSIVE checkpoint copies only the frames that existed when it began, and
SQLite starts the WAL over only when a writer finds everything copied: under
sustained writes that moment never comes, and the file grew without bound
(measured: 885 MB after 4 s of 25-row commits in a loop). Past the limit a
TRUNCATE checkpoint waits for the write lock, copies the few frames PASSIVE
left, and empties the file; writers wait for it (their busy timeout), which
costs a few milliseconds once per 32 MB written."""

WAL_CEILING_FACTOR = 4
"""The writers' own checkpoint starts at this many times the limit: the backstop for a starved checkpointer.

The checkpointer is a thread, and a loaded machine can starve it (CI saw a
WAL of 100 MB against a 1 MB limit while the test's writer kept the GIL and
the turn). Each writer connection therefore keeps SQLite's automatic
checkpoint, set this far above the limit. It runs inside the COMMIT that
crosses the ceiling, while the writer still holds its turn, so no other
writer can append meanwhile. The checkpoint copies everything unless a
reader pins old frames, and the next write restarts the WAL from its start.
It is skipped while the thread holds SQLite's checkpoint lock and tried again
at the next commit, so the file stops within a few commits of the ceiling
however the threads are scheduled. While the checkpointer keeps up it never
fires, and no request pays its stall."""

TRUNCATE_WAIT_MS = 200
"""How long the truncating checkpoint waits for writers and readers before giving up until next time."""


class Generation:
    """A counter shared by every process that opens one store.

    Kept in a small memory-mapped file beside the database so reading it
    costs no SQL statement; incremented under a file lock so no increment is
    lost. In memory (one process) it is a plain integer.
    """

    def __init__(self, path: Path | None) -> None:
        self._value = 0
        self._file = None
        self._map: mmap.mmap | None = None
        if path is not None:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            if os.fstat(fd).st_size < 8:
                os.ftruncate(fd, 8)
            self._file = fd
            self._map = mmap.mmap(fd, 8)

    def read(self) -> int:
        if self._map is None:
            return self._value
        return int.from_bytes(self._map[:8], "little")

    def bump(self) -> None:
        if self._map is None or self._file is None:
            self._value += 1
            return
        fcntl.lockf(self._file, fcntl.LOCK_EX)
        try:
            self._map[:8] = (self.read() + 1).to_bytes(8, "little")
        finally:
            fcntl.lockf(self._file, fcntl.LOCK_UN)

    def close(self) -> None:
        if self._map is not None and self._file is not None:
            self._map.close()
            os.close(self._file)
            self._map = None


class Checkpointer:
    """Copies the WAL into the database from its own thread and connection.

    SQLite's automatic checkpoint runs inside the COMMIT that crosses 1,000
    WAL pages and fsyncs twice (synchronous=NORMAL syncs at checkpoints
    only), so every few hundred commits one request stalled the event loop
    for milliseconds. A PASSIVE checkpoint from another connection never
    blocks writers (the GIL is released while SQLite works); the next writer
    after a complete checkpoint starts the WAL over, so it does not grow.
    Durability is unchanged: a commit is in the WAL before its answer leaves.
    """

    def __init__(self, path: Path, limit_frames: int = WAL_LIMIT_FRAMES) -> None:
        self._db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA busy_timeout=0")  # busy: another process is checkpointing
        self.limit_frames = limit_frames
        self._turn_path = path.with_suffix(".writelock")  # the writers' turn (SQLiteStore._take_turn)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="partita-checkpoint", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(CHECKPOINT_SECONDS):
            try:
                row = self._db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                if row is not None and row[1] > self.limit_frames:
                    self._truncate()
            except sqlite3.Error:
                continue

    def _truncate(self) -> None:
        """Empty the WAL, queued with the writers of every process on their file lock.

        Without the turn, SQLite's busy handler polls for the write lock and a
        writer that commits back to back keeps winning it (measured: the WAL
        still peaked at 440 MB where it should stop near the limit).
        """
        fd = os.open(self._turn_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # releases the GIL while it waits
            self._db.execute(f"PRAGMA busy_timeout={TRUNCATE_WAIT_MS}")
            try:
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            finally:
                self._db.execute("PRAGMA busy_timeout=0")
        finally:
            os.close(fd)  # closing the descriptor releases the lock

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self._db.close()


class CommitSeq:
    """A number every commit to the file moves, kept in the write-lock file (memory-mapped).

    It lets a turn of optimistic writes skip re-reading what they read: if
    no commit happened since their first read, every read saw the state the
    commit applies to. A committer makes it odd before its COMMIT and even
    after, both under the write lock, so a process killed between the two
    leaves it odd and the next check re-reads instead of trusting it.
    """

    def __init__(self, fd: int | None) -> None:
        self._value = 0
        self._map: mmap.mmap | None = None
        if fd is not None:
            if os.fstat(fd).st_size < 8:
                os.ftruncate(fd, 8)
            self._map = mmap.mmap(fd, 8)

    def read(self) -> int:
        if self._map is None:
            return self._value
        return int.from_bytes(self._map[:8], "little")

    def _set(self, value: int) -> None:
        if self._map is None:
            self._value = value
        else:
            self._map[:8] = value.to_bytes(8, "little")

    def begin(self) -> None:
        """About to commit (under the write lock)."""
        value = self.read()
        self._set(value + 1 if value % 2 == 0 else value + 2)

    def end(self) -> None:
        """Committed (still under the write lock)."""
        self._set(self.read() + 1)

    def unchanged_since(self, start: int) -> bool:
        return start % 2 == 0 and self.read() == start

    def close(self) -> None:
        if self._map is not None:
            self._map.close()
            self._map = None
