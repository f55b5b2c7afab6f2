"""The committed rows an SQLite store's optimistic writes last read or wrote, kept to skip their SELECT.

Every PutItem and UpdateItem reads the item it replaces (for its size, its
condition, its old image), and on the server's path that read was the
store's most expensive statement: about 12 us of a ~75 us PutItem measured
in process, where the same statement alone costs ~5 us (between requests,
Python's work has pushed SQLite's pages out of the CPU's caches). Writes
that land together keep landing on the same items, so the optimistic
writes read through this cache first.

It is right only while it holds the committed state, so it is tied to the
commit sequence (`CommitSeq`, which every commit to the file moves, in
every process): an entry stands for the state at `seq`. A turn of
optimistic writes checks `seq` before its first read and starts the cache
over if anything committed since. Its own commit moves the cache forward
(the rows it stored) only when that commit is the only one since the turn
began and holds only the turn's checked rows (`pending`); any other write
in the group (a locked write, a rerun), a failed commit or a foreign commit
empties it. What a turn read from a stale entry is no worse than what a
read transaction that began before a foreign commit sees: the commit checks
every read of a turn that was not alone (sqlite_writers.unchanged).
"""

from __future__ import annotations

ROW_CACHE_BYTES = 16 << 20
"""About how much the cache holds (keys, values and 64 bytes an entry) before it starts over.

Starting over, rather than evicting one by one, keeps each entry's cost to
a dict store: the cache is refilled by the next turns' reads."""

_ENTRY_OVERHEAD = 64

#: A row as the writers see it: (value, weight), or None when absent.
Entry = tuple[bytes, int] | None


class RowCache:
    """Committed rows by key (None: known absent), valid at commit sequence `seq`."""

    __slots__ = ("rows", "seq", "size", "limit", "pending")

    def __init__(self, limit: int = ROW_CACHE_BYTES) -> None:
        #: Read by the optimistic writers directly (the hot path: one dict lookup).
        self.rows: dict[bytes, Entry] = {}
        #: The commit sequence the rows stand for (None: none yet).
        self.seq: int | None = None
        self.size = 0
        self.limit = limit
        #: What the open group transaction holds, when that is only checked rows of a turn
        #: alone since its start (None: anything else, and the commit empties the cache).
        self.pending: dict[bytes, Entry] | None = None

    def begin_turn(self, seq: int) -> None:
        """A turn's first optimistic read is about to happen at `seq`: drop what another commit made stale."""
        if seq != self.seq:
            self.clear()
            self.seq = seq

    def remember(self, key: bytes, entry: Entry) -> None:
        """A committed row: read by this turn, or stored by the commit that just ended."""
        self.rows[key] = entry
        self.size += len(key) + _ENTRY_OVERHEAD + (0 if entry is None else len(entry[0]))
        if self.size > self.limit:
            self.clear()

    def committed(self, seq: int) -> None:
        """The group committed and the sequence is now `seq`: keep its rows, or start over."""
        rows, self.pending = self.pending, None
        if rows is None:
            self.clear()
        else:
            for key, entry in rows.items():
                self.remember(key, entry)
        self.seq = seq

    def clear(self) -> None:
        self.rows.clear()
        self.size = 0
