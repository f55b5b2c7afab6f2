"""Eventually consistent reads from a PostgreSQL streaming replica (`--read-replica`).

DynamoDB lets a read without ConsistentRead (and every GSI read) miss the
latest writes; a hot-standby replica of the primary gives exactly that, and
takes those reads off the primary. Only reads come here (`Store.eventual`);
writes, strongly consistent reads, the catalog and the generation counter
stay on the primary, so a lagging replica can make an item look older but
never makes a write or a condition decide on stale data.
"""

from __future__ import annotations

from collections.abc import Iterator

from .base import Store, WriteTxn
from .postgres import PooledReads


class ReplicaReads(PooledReads, Store):
    """The read half of a store, over a pool of connections to a replica."""

    def __init__(self, url: str, *, pool_size: int = 8) -> None:
        self._open_pool(url, pool_size)

    def write(self, transactional: bool = False, exclusive: bool = False) -> Iterator[WriteTxn]:
        raise TypeError("a replica takes no writes")

    def generation(self) -> int:
        raise TypeError("the generation is the primary's")

    def duty_lock(self) -> Iterator[bool]:
        raise TypeError("duties run against the primary")

    def close(self) -> None:
        self._close_pool()
