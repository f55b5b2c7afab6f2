"""The SQL of the PostgreSQL store's request path, as `pg_wire` statements.

Keys and values travel as bytes (the `binary` parameters), numbers as text.
The claims (`S_TRY_CLAIM`, `S_PUT_CLAIMED`) and the generation read folded
into a write's first item read are explained in postgres.py's docstring.
"""

from __future__ import annotations

from .pg_wire import Statement

GENERATION = "SELECT value FROM partita_meta WHERE name = 'generation'"

S_GET = Statement("SELECT v, w FROM partita_kv WHERE tid = $1 AND ph = $2 AND k = $3", binary=(3,))
S_GENERATION = Statement(GENERATION)
#: A write transaction's first item read, with the generation read folded in (one row, always).
S_GET_WITH_GENERATION = Statement(
    "SELECT m.value, kv.v, kv.w FROM partita_meta m LEFT JOIN partita_kv kv "
    "ON kv.tid = $1 AND kv.ph = $2 AND kv.k = $3 WHERE m.name = 'generation'",
    binary=(3,),
)
#: Fails (division by zero) when a running TransactWriteItems holds the item (postgres.py docstring).
S_TRY_CLAIM = Statement("SELECT 1 / pg_try_advisory_xact_lock_shared($1::bigint)::int")
S_CLAIM = Statement("SELECT pg_advisory_xact_lock($1::bigint)")
S_PUT = Statement(
    "INSERT INTO partita_kv (tid, ph, k, v, w) VALUES ($1, $2, $3, $4, $5) "
    "ON CONFLICT (tid, ph, k) DO UPDATE SET v = EXCLUDED.v, w = EXCLUDED.w",
    binary=(3, 4),
)
#: `S_PUT` with `S_TRY_CLAIM` as its one-time filter (evaluated once, whether or not the row exists).
S_PUT_CLAIMED = Statement(
    "INSERT INTO partita_kv (tid, ph, k, v, w) SELECT $1::integer, $2::bigint, $3::bytea, $4::bytea, $5::bigint "
    "WHERE 1 / pg_try_advisory_xact_lock_shared($6::bigint)::int = 1 "
    "ON CONFLICT (tid, ph, k) DO UPDATE SET v = EXCLUDED.v, w = EXCLUDED.w",
    binary=(3, 4),
)
S_DELETE = Statement("DELETE FROM partita_kv WHERE tid = $1 AND ph = $2 AND k = $3", binary=(3,))
S_DELETE_GROUP_RANGE = Statement(
    "DELETE FROM partita_kv WHERE tid = $1 AND ph = $2 AND k >= $3 AND k < $4", binary=(3, 4)
)
S_DELETE_RANGE = Statement("DELETE FROM partita_kv WHERE k >= $1 AND k < $2", binary=(1, 2))
#: A range in one partition (a Query, an item collection), by direction.
S_GROUP_RANGE = {
    order: Statement(
        "SELECT k, v, w FROM partita_kv WHERE tid = $1 AND ph = $2 AND k >= $3 AND k < $4 "
        f"ORDER BY k {order} LIMIT $5",
        binary=(3, 4),
    )
    for order in ("ASC", "DESC")
}
#: A range across partitions (Scan, the system key spaces: docs/postgresql.md), by direction.
S_RANGE = {
    order: Statement(
        f"SELECT k, v, w FROM partita_kv WHERE k >= $1 AND k < $2 ORDER BY k {order} LIMIT $3",
        binary=(1, 2),
    )
    for order in ("ASC", "DESC")
}
S_GROUP_STATS = Statement(
    "SELECT count(*), coalesce(sum(w), 0)::bigint FROM partita_kv "
    "WHERE tid = $1 AND ph = $2 AND k >= $3 AND k < $4",
    binary=(3, 4),
)
S_STATS = Statement(
    "SELECT count(*), coalesce(sum(w), 0)::bigint FROM partita_kv WHERE k >= $1 AND k < $2", binary=(1, 2)
)
S_BUMP = Statement("UPDATE partita_meta SET value = value + 1 WHERE name = 'generation' RETURNING value")
S_NOTIFY = Statement("SELECT pg_notify($1::text, $2::text)")
