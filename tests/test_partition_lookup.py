"""The meter's partition lookup table finds the partition a bisection of the map finds, for every map shape.

`Resource.number` (and its inline copies in the meter's request path) reads
a table over the hash's leading bits and bisects only where a partition
boundary cuts a slice; a wrong slice would charge, and throttle, the wrong
partition. Driven directly: this is arithmetic on the map, the HTTP side
of throttling is in test_throughput and test_partition_splits.
"""

from __future__ import annotations

import random
from bisect import bisect_right

import pytest

from partita.engine.capacity.partitions import HASH_OFFSET, HASH_SPACE, even_starts
from partita.engine.capacity.resources import Resource


def _resource(starts: list[int]) -> Resource:
    return Resource(7, "Table", "", "arn:aws:dynamodb:us-east-1:000000000000:table/t", 1, starts, True,
                    (12_000.0, 4_000.0), (None, None), 40_000.0)


def _row(hash_value: int) -> bytes:
    return b"\x01" * HASH_OFFSET + hash_value.to_bytes(8, "big") + b"pk"


def _split(starts: list[int], rng: random.Random, times: int) -> list[int]:
    """The map after `times` splits of random partitions at random points (as heat splits cut)."""
    starts = list(starts)
    for _ in range(times):
        number = rng.randrange(len(starts))
        low = starts[number]
        high = starts[number + 1] if number + 1 < len(starts) else HASH_SPACE
        if high - low > 1:
            starts.insert(number + 1, rng.randrange(low + 1, high))
    return starts


MAPS = {
    "one": [0],
    "two": even_starts(2),
    "new on-demand table": even_starts(8),
    "the bench's warm table": even_starts(240),
    "uneven after splits": _split(even_starts(8), random.Random(3), 300),
    "many tiny partitions in one slice": [0, *(2**63 + i for i in range(1, 200))],
}


@pytest.mark.parametrize("name", list(MAPS))
def test_lookup_agrees_with_bisection(name: str) -> None:
    starts = sorted(set(MAPS[name]))
    res = _resource(starts)
    rng = random.Random(11)
    hashes = [rng.getrandbits(64) for _ in range(20_000)]
    for start in starts:  # every boundary and its neighbours
        hashes += [h for h in (start - 1, start, start + 1) if 0 <= h < HASH_SPACE]
    hashes += [0, HASH_SPACE - 1]
    for hash_value in hashes:
        assert res.number(_row(hash_value)) == bisect_right(starts, hash_value) - 1, hex(hash_value)
