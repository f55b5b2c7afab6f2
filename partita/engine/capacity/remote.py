"""Token buckets shared by every Partita server over one PostgreSQL database.

The shared memory region (meter.py) makes a bucket common to the workers of
one server; servers on different hosts share only the database. So with
`--backend`, the region's buckets are not refilled by the clock: their
tokens are *borrowed* from a row of the UNLOGGED table `partita_capacity`,
which is the real bucket, refilled there on the server clock (every server
reads the same clock offset from the store). A server borrows when its
local bucket cannot pay a request: the request's shortfall plus
`BORROW_SECONDS` of the bucket's rate, in one UPDATE (the row lock
serializes servers). Local tokens are then spent exactly as before
(leases, settling), so a request costs a round trip only once per
`BORROW_SECONDS` of a bucket's rate, never on the lease path.

Tolerance: a server may hold up to `BORROW_SECONDS` of a bucket's rate
(plus its workers' 100 ms leases) that another server cannot use, so N
servers together admit at most the bucket's rate plus its capacity plus
N x 0.1 s of its rate over any period, and a server may throttle while
another holds unused tokens for as long. UNLOGGED because a crash that
refills every bucket only forgives throttling. A database error borrows
nothing and admits the request (fails open): the request itself then
meets the same database and fails with its own error, and throttling must
not be what a database outage looks like.
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger("partita.capacity")

#: How much of a bucket's rate one borrowing takes beyond the request's own shortfall.
BORROW_SECONDS = 0.1
_SIGN = 2**63  # partition starts span 64 unsigned bits; the column is a signed bigint

# Refill for the time passed, grant what is asked (all of it from a full bucket, which admits
# one request larger than itself), and keep the rest; `granted` carries the grant back.
_BORROW = """
WITH b AS (SELECT LEAST(%(cap)s, tokens + GREATEST(0, %(now)s - at) * %(rate)s) AS t
           FROM partita_capacity WHERE tid = %(tid)s AND tag = %(tag)s AND start = %(start)s AND dim = %(dim)s
           FOR UPDATE)
UPDATE partita_capacity c SET
    granted = CASE WHEN b.t >= %(cap)s THEN %(want)s ELSE LEAST(%(want)s, GREATEST(0, b.t)) END,
    tokens = b.t - CASE WHEN b.t >= %(cap)s THEN %(want)s ELSE LEAST(%(want)s, GREATEST(0, b.t)) END,
    at = GREATEST(c.at, %(now)s)
FROM b WHERE c.tid = %(tid)s AND c.tag = %(tag)s AND c.start = %(start)s AND c.dim = %(dim)s
RETURNING c.granted
"""
_NEW = """
INSERT INTO partita_capacity (tid, tag, start, dim, tokens, at) VALUES (%(tid)s, %(tag)s, %(start)s, %(dim)s,
    %(cap)s, %(now)s) ON CONFLICT DO NOTHING
"""


class RemoteBuckets:
    """The database's buckets, on one autocommit connection of this process (used under the region lock)."""

    def __init__(self, url: str) -> None:
        self._url = url
        self._conn: Any = None

    def _connection(self) -> Any:
        if self._conn is None or self._conn.closed:
            import psycopg

            self._conn = psycopg.connect(self._url, autocommit=True)  # its table: schema version 3
        return self._conn

    def borrow(self, key: tuple[int, int, int], dim: int, want: float, rate: float, capacity: float,
               now: float) -> float:
        """Take up to `want` tokens from the shared bucket; what was granted (`want` when the database fails)."""
        table_id, tag, start = key
        args = {"tid": table_id, "tag": tag, "start": start - _SIGN, "dim": dim, "want": want, "rate": rate,
                "cap": capacity, "now": now}
        try:
            conn = self._connection()
            row = conn.execute(_BORROW, args).fetchone()
            if row is None:
                conn.execute(_NEW, args)
                row = conn.execute(_BORROW, args).fetchone()
            return want if row is None else float(row[0])
        except Exception as error:  # noqa: BLE001 - any database failure: fail open, reconnect next time
            log.warning("shared throughput buckets unavailable (%s); admitting", error)
            self._drop()
            return want

    def forget(self, table_id: int) -> None:
        try:
            self._connection().execute("DELETE FROM partita_capacity WHERE tid = %s", (table_id,))
        except Exception as error:  # noqa: BLE001
            log.warning("shared throughput buckets unavailable (%s)", error)
            self._drop()

    def _drop(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except Exception:  # noqa: BLE001
                pass
        self._conn = None

    def close(self) -> None:
        self._drop()
