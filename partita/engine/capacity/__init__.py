"""Partitions and capacity: DynamoDB's unit arithmetic, partition maps, throughput emulation.

`units` is the arithmetic every request uses (ReturnConsumedCapacity);
`partitions` the partition maps kept in the catalog; `meter` the token
buckets of `--emulate-throughput` (per-process leases over `buckets` in the
`shared` region) and the counters the introspection API, Contributor
Insights and `/metrics` read, with `spend` the arithmetic of a request its
leases pay (C in `_spend.c` when built); `splits` the background duty that splits
partitions by size and for heat; `stats` the per-process request counts and
latencies `/metrics` merges across workers.
"""

from .units import READ_UNIT_BYTES, WRITE_UNIT_BYTES, Consumed, read_units, write_units

__all__ = ["READ_UNIT_BYTES", "WRITE_UNIT_BYTES", "Consumed", "read_units", "write_units"]
