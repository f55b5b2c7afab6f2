"""A process's lease on one shared bucket: tokens it may spend with no lock on the shared region.

The meter (meter.py) grants, spends and settles leases; this is what one
holds. Its tokens live in an array of its resource (`Resource.state`), which
the request path reads and debits without touching the Lease. What a lease has spent is not counted per request: it is its grant
less its tokens, worked out when the lease settles or publishes. Grants are
whole half-units and every charge is a multiple of half a unit (reads are
charged in halves, writes in wholes, transactions double either), so that
difference is exact in binary floating point.
"""

from __future__ import annotations

from typing import Any

from .buckets import DIM, DIM_SIZE, PEAK, TOKENS, refill
from .partitions import PARTITION_READ_UNITS, PARTITION_WRITE_UNITS
from .resources import LEVEL_AT, Resource, tokens_at
from .throttle import ACCOUNT_LIMIT, KEY_RANGE, MAX_ON_DEMAND_LIMIT, PROVISIONED

CEILINGS = (float(PARTITION_READ_UNITS), float(PARTITION_WRITE_UNITS))
BURST_SECONDS = 300.0
#: How much of a bucket's rate one lease takes, in seconds.
LEASE_SECONDS = 0.1
#: How long a lease may be spent before the process settles it again.
LEASE_TTL = 1.0
#: The grant of a lease when the emulation is off (usage only): never spent out, and small
#: enough that grant minus tokens stays exact.
UNLIMITED = 2.0**40


class Lease:
    """Tokens of one shared bucket this process may spend without the lock, until `until`."""

    __slots__ = ("slot", "key", "at", "res", "dim", "level", "ceiling", "grant", "until", "local", "store", "index")

    def __init__(self, slot: int | None, key: tuple[int, int, int], res: Resource, dim: int,
                 number: int | None) -> None:
        """The lease of partition `number` of `res`, or with None of the table (or GSI) itself."""
        #: The bucket's fields in this process only, when the shared region had no free slot for it:
        #: still limited (failing safe), though not shared with other workers.
        self.local: list[float] | None = None
        if slot is None:
            self.local = list(DIM.unpack(bytes(DIM_SIZE)))
            slot = -1
        self.slot = slot
        self.key = key  # the slot's key: another process may free the slot (DeleteTable)
        self.at = slot + 16 + dim * DIM_SIZE  # offset of the bucket's fields in the shared region
        self.res = res
        self.dim = dim
        self.level = level = number is None  # the table's (or GSI's) bucket, not a partition's
        self.ceiling = 0.0 if level else CEILINGS[dim]  # a partition's, for its hot seconds
        #: Where the tokens are: an array of the resource's, which the request path reads directly.
        self.store = res.state
        self.index = LEVEL_AT + dim if number is None else tokens_at(number, dim)
        self.store[self.index] = 0.0
        #: What `tokens` was when the windows last counted this lease: grant - tokens is spent, uncounted.
        self.grant = 0.0
        #: Server time the lease lapses at; `Meter._publish` returns it before then.
        self.until = 0.0

    @property
    def tokens(self) -> float:
        """Tokens left to spend."""
        return self.store[self.index]

    @tokens.setter
    def tokens(self, value: float) -> None:
        self.store[self.index] = value

    def bucket(self, fields: list[float]) -> tuple[float, float]:
        """(refill rate per second, capacity) of the bucket."""
        dim = self.dim
        if not self.level:
            ceiling = CEILINGS[dim]
            return ceiling, ceiling
        res = self.res
        if not res.on_demand:
            rate = res.rates[dim]
            return rate, rate * BURST_SECONDS
        maximum = res.maxima[dim]
        if maximum is not None:
            return maximum, maximum
        # Warm throughput, or twice the peak second, up to the per-table quota.
        rate = min(max(res.rates[dim], 2 * fields[PEAK]), res.quota)
        return rate, rate

    def give_back(self, fields: list[float], now: float, refilled: bool) -> None:
        """Return the unspent tokens into the bucket's fields (refilled to `now` first unless the
        servers' shared bucket refills it: `refilled` False), up to its capacity; the lease then
        holds nothing. Its spent units are counted by the caller."""
        rate, capacity = self.bucket(fields)
        if refilled:
            refill(fields, rate, capacity, now)
        if self.tokens:
            fields[TOKENS] = min(capacity, fields[TOKENS] + self.tokens)
        self.tokens = self.grant = 0.0
        self.until = 0.0

    def take(self, fields: list[float], until: float) -> None:
        """Take a new grant out of the bucket's fields (`grant_of`), to spend until `until`."""
        grant = grant_of(fields, self.bucket(fields)[0])
        fields[TOKENS] -= grant
        self.tokens = self.grant = grant
        self.until = until

    def limit(self, fields: list[float]) -> str:
        """The ThrottlingReason limit type of this bucket."""
        if not self.level:
            return KEY_RANGE
        res = self.res
        if not res.on_demand:
            return PROVISIONED
        if res.maxima[self.dim] is not None:
            return MAX_ON_DEMAND_LIMIT
        return ACCOUNT_LIMIT if max(res.rates[self.dim], 2 * fields[PEAK]) >= res.quota else KEY_RANGE


def grant_of(fields: list[float], rate: float) -> float:
    """The tokens a new lease takes: `LEASE_SECONDS` of the rate, at most what the bucket holds, in half-units."""
    return float(int(min(max(0.0, fields[TOKENS]), rate * LEASE_SECONDS) * 2.0)) / 2.0


# A bucket being settled: [lease, its fields, units this request charges it].
Entry = list[Any]


def pays(entry: Entry) -> bool:
    """Whether the settled bucket can pay the request's units (a full bucket admits one larger request)."""
    lease, fields, units = entry
    tokens = fields[TOKENS]
    return tokens >= units or tokens >= lease.bucket(fields)[1]
