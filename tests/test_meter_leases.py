"""The meter's leases conserve tokens: two processes sharing one region admit exactly what one bucket holds.

These drive `Meter` directly (two instances over one file stand for two
worker processes) on a frozen clock, because the property is arithmetic on
the shared buckets: wall time refilling a bucket while a test runs would
blur the exact counts this checks. The HTTP behaviour is in test_throughput.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from partita.engine.capacity.leases import LEASE_SECONDS, LEASE_TTL
from partita.engine.capacity.meter import PUBLISH_SECONDS, WRITE, Charge, Meter, Resource
from partita.engine.capacity.partitions import even_starts
from partita.errors import DynamoDBError


class FrozenClock:
    def __init__(self, now: float) -> None:
        self.value = now

    def now(self) -> float:
        return self.value

    now_cached = now


def _resource(on_demand: bool, rate: float) -> Resource:
    return Resource(7, "Table", "", "arn:aws:dynamodb:us-east-1:000000000000:table/t", 1, even_starts(4),
                    on_demand, (rate, rate), (None, None), 40_000.0)


def _drain(meters: list[tuple[Meter, Resource]], units: float, limit: int = 100_000) -> int:
    """Charge `units` to one hash from each meter in turn until every one is throttled; admitted count."""
    admitted = 0
    throttled = set()
    for i in range(limit):
        which = i % len(meters)
        if which in throttled:
            if len(throttled) == len(meters):
                return admitted
            continue
        meter, res = meters[which]
        charge: Charge = (res, WRITE, 5, units, None, b"")
        try:
            meter.charge([charge])
            admitted += 1
        except DynamoDBError:
            throttled.add(which)
    raise AssertionError("never throttled")


@pytest.mark.parametrize("units", [1.0, 10.0])
def test_two_processes_share_a_partition_ceiling_exactly(tmp_path: Path, units: float) -> None:
    clock = FrozenClock(1_800_000_000.0)
    path = tmp_path / "partita.capacity"
    meters = [Meter(clock, path, True) for _ in range(2)]  # type: ignore[arg-type]
    pairs = [(m, _resource(True, 40_000.0)) for m in meters]
    # A partition holds 1000 write units: leases move tokens, never create them.
    assert _drain(pairs, units) * units == 1000.0
    clock.value += 1.0  # a second later the partition is full again; the leases have expired
    assert _drain(pairs, units) * units == 1000.0
    for meter, _ in pairs:
        meter.publish()
    usage = meters[0].usage(pairs[0][1], 0)
    assert usage["write_units_total"] == 2000.0
    assert usage["write_throttled"] >= 2
    for meter in meters:
        meter.close()


def test_unspent_leases_return_to_the_bucket(tmp_path: Path) -> None:
    clock = FrozenClock(1_800_000_000.0)
    path = tmp_path / "partita.capacity"
    first, second = Meter(clock, path, True), Meter(clock, path, True)  # type: ignore[arg-type]
    mine, theirs = _resource(True, 40_000.0), _resource(True, 40_000.0)
    lease = LEASE_SECONDS * 1000  # of the partition's 1000 write units a second
    first.charge([(mine, WRITE, 5, 1.0, None, b"")])  # the partition: 1000 - 1, and a lease taken out
    assert _drain([(second, theirs)], 1.0) == 999 - lease  # the other process gets the rest, not the lease
    # The publish before the lease's lapse takes it back unspent; the bucket refilled meanwhile.
    clock.value += LEASE_TTL - PUBLISH_SECONDS
    refilled = (LEASE_TTL - PUBLISH_SECONDS) * 1000
    assert refilled + lease < 1000  # (else the bucket would be full either way)
    first.publish()
    assert _drain([(second, theirs)], 1.0) == refilled + lease  # without the return: refilled
    for meter in (first, second):
        meter.close()
