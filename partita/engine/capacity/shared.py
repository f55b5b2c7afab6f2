"""Counters every worker process shares: fixed-size slots in one memory-mapped file.

Throughput limits must hold across `--workers` (one partition's 1000 write
units are shared by every process serving it), so the token buckets and the
usage windows live in a small memory map beside the store (an anonymous map
for `--in-memory`, which has one process). A slot is found by open
addressing on its key (table id, resource tag, partition start), claimed
under the region's lock, and then cached per process. The lock is a `lockf`
on the file when several processes may share it; the meter takes it only
when a process settles its leases (meter.py), not on every request.
"""

from __future__ import annotations

import fcntl
import mmap
import os
import struct
import threading
import zlib
from collections.abc import Iterator
from pathlib import Path

_KEY = struct.Struct("<IIQ")  # table id, tag (0 = free), partition start / key digest
#: The first bytes of the file: a file of another layout (an older Partita) is cleared, not misread.
MAGIC = b"PCAP0003"  # 0003: 16384 bucket slots (issue 28)
HEADER = 64


def slot_key(buffer: mmap.mmap, at: int) -> tuple[int, int, int]:
    """The key (table id, tag, start) of the slot at `at`; tag 0 when free."""
    return _KEY.unpack_from(buffer, at)  # type: ignore[return-value]


class SlotTable:
    """`count` slots of `size` bytes, the first 16 of each being its key."""

    def __init__(self, buffer: mmap.mmap, base: int, count: int, size: int, lock: RegionLock) -> None:
        self.buffer = buffer
        self.base = base
        self.count = count
        self.size = size
        self._lock = lock
        self._cache: dict[tuple[int, int, int], int] = {}

    def find(self, table_id: int, tag: int, start: int, create: bool = True) -> int | None:
        """Byte offset of the slot of this key (claimed if new and `create`); None if absent or full.

        Call with the region lock held when `create` is true.
        """
        key = (table_id, tag, start)
        offset = self._cache.get(key)
        if offset is not None:
            return offset
        buf = self.buffer
        first = zlib.crc32(_KEY.pack(table_id, tag, start)) % self.count
        for probe in range(64):
            at = self.base + ((first + probe) % self.count) * self.size
            found_table, found_tag, found_start = _KEY.unpack_from(buf, at)
            if found_tag == 0:
                if not create:
                    return None
                _KEY.pack_into(buf, at, table_id, tag, start)
                self._cache[key] = at
                return at
            if (found_table, found_tag, found_start) == key:
                self._cache[key] = at
                return at
        return None

    def slots(self) -> Iterator[tuple[int, int, int, int]]:
        """(table id, tag, start, offset) of every claimed slot.

        One `iter_unpack` over the table (a C loop) rather than an unpack per
        slot: DeleteTable and every introspection walk all the slots.
        """
        whole = struct.Struct(f"<IIQ{self.size - _KEY.size}x")
        view = memoryview(self.buffer)[self.base : self.base + self.count * self.size]
        try:
            for i, (table_id, tag, start) in enumerate(whole.iter_unpack(view)):
                if tag:
                    yield table_id, tag, start, self.base + i * self.size
        finally:
            view.release()

    def release_all(self) -> None:
        """Forget every slot (every table was dropped), writing only the claimed ones."""
        zero = bytes(self.size)
        for _, _, _, at in list(self.slots()):
            self.buffer[at : at + self.size] = zero
        self._cache = {}

    def release_table(self, table_id: int) -> None:
        """Forget every slot of a deleted table (slots of other tables keep their places)."""
        buf = self.buffer
        zero = bytes(self.size)
        for found_table, _, _, at in list(self.slots()):
            if found_table == table_id:
                buf[at : at + self.size] = zero
        self._cache = {k: v for k, v in self._cache.items() if k[0] != table_id}


class RegionLock:
    """A thread lock, plus a file lock when other processes map the same file.

    A plain context manager class (not contextlib's generator form, which
    costs several microseconds a use on the request path).
    """

    __slots__ = ("_thread", "_fd")

    def __init__(self, fd: int | None) -> None:
        self._thread = threading.Lock()
        self._fd = fd

    def held(self) -> RegionLock:
        return self

    def __enter__(self) -> None:
        self._thread.acquire()
        if self._fd is not None:
            try:
                fcntl.lockf(self._fd, fcntl.LOCK_EX)
            except BaseException:
                self._thread.release()
                raise

    def __exit__(self, *exc: object) -> None:
        if self._fd is not None:
            fcntl.lockf(self._fd, fcntl.LOCK_UN)
        self._thread.release()


class SharedRegion:
    """The memory map: a table of partition slots, then a table of hot-key slots."""

    def __init__(self, path: Path | None, layout: list[tuple[int, int]]) -> None:
        total = HEADER + sum(count * size for count, size in layout)
        self._fd: int | None = None
        if path is None:
            self.buffer = mmap.mmap(-1, total)
        else:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            fcntl.lockf(fd, fcntl.LOCK_EX)
            try:
                size = os.fstat(fd).st_size
                if size < total:
                    os.ftruncate(fd, total)
                self.buffer = mmap.mmap(fd, total)
                if self.buffer[: len(MAGIC)] != MAGIC:
                    if size:  # a new file reads as zeros: writing them would only touch every page
                        self.buffer[:] = bytes(total)
                    self.buffer[: len(MAGIC)] = MAGIC
            finally:
                fcntl.lockf(fd, fcntl.LOCK_UN)
            self._fd = fd
        if path is None:
            self.buffer[: len(MAGIC)] = MAGIC
        self.lock = RegionLock(self._fd)
        self.tables: list[SlotTable] = []
        base = HEADER
        for count, size in layout:
            self.tables.append(SlotTable(self.buffer, base, count, size, self.lock))
            base += count * size

    def close(self) -> None:
        self.buffer.close()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
