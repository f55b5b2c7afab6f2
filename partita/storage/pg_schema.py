"""The PostgreSQL schema of Partita, its version, and the steps between versions.

Every row of the key space lives in `partita_kv`, keyed by (table id,
partition hash, key bytes): the columns a distributed engine distributes by
(docs/postgresql.md gives Citus' and YugabyteDB's DDL). The table id and the
partition hash are not new data: they are bytes 1-4 and 7-14 of an item or
index row key (engine/tables/schema.py), copied into columns so that the database
can hash-distribute on them and every item-collection statement names them.
Rows outside the tables' row space (catalog, tokens, streams ...) carry table
id 0 and their key space's first byte as partition hash.

The schema version is a row of `partita_meta`. A newer Partita upgrades an
older schema step by step under an advisory lock (so servers starting
together migrate once); an older Partita refuses a newer schema instead of
misreading it.
"""

from __future__ import annotations

from collections.abc import Callable

import psycopg

#: The version this Partita writes and reads.
SCHEMA_VERSION = 3
#: pg_advisory_lock key held while the schema is created or migrated ("PARTITA1").
MIGRATION_LOCK = 0x5041525449544131


class SchemaTooNew(Exception):
    """The database was made by a newer Partita; this one must not touch it."""


def _v1(conn: psycopg.Connection) -> None:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS partita_meta (name text PRIMARY KEY, value bigint NOT NULL)"
    )
    conn.execute(
        """CREATE TABLE IF NOT EXISTS partita_kv (
            tid integer NOT NULL,
            ph bigint NOT NULL,
            k bytea NOT NULL,
            v bytea NOT NULL,
            w bigint NOT NULL,
            PRIMARY KEY (tid, ph, k)
        )"""
    )
    conn.execute(
        "INSERT INTO partita_meta (name, value) VALUES ('generation', 0), ('schema_version', 1) "
        "ON CONFLICT (name) DO NOTHING"
    )


def _v2(conn: psycopg.Connection) -> None:
    """Version 2: an index in key order across partitions, for Scan and the system key spaces."""
    conn.execute("CREATE INDEX IF NOT EXISTS partita_kv_k ON partita_kv (k)")


def _v3(conn: psycopg.Connection) -> None:
    """Version 3: the throughput buckets servers share with `--emulate-throughput` (engine/capacity/remote.py).

    UNLOGGED: tokens refill on the server clock, so a crash that empties
    the table loses nothing a bucket needs (a missing row starts full).
    """
    conn.execute(
        """CREATE UNLOGGED TABLE IF NOT EXISTS partita_capacity (
            tid bigint NOT NULL,
            tag integer NOT NULL,
            start bigint NOT NULL,
            dim smallint NOT NULL,
            tokens double precision NOT NULL,
            at double precision NOT NULL,
            granted double precision NOT NULL DEFAULT 0,
            PRIMARY KEY (tid, tag, start, dim)
        )"""
    )


#: STEPS[n - 1] brings a version n - 1 schema to version n.
STEPS: tuple[Callable[[psycopg.Connection], None], ...] = (_v1, _v2, _v3)
assert len(STEPS) == SCHEMA_VERSION


def recorded_version(conn: psycopg.Connection) -> int:
    """The schema version in the database; 0 when Partita never ran on it."""
    exists = conn.execute("SELECT to_regclass('partita_meta') IS NOT NULL").fetchone()
    if not exists or not exists[0]:
        return 0
    row = conn.execute("SELECT value FROM partita_meta WHERE name = 'schema_version'").fetchone()
    return 0 if row is None else int(row[0])


def migrate(conn: psycopg.Connection) -> int:
    """Create or upgrade the schema to SCHEMA_VERSION (autocommit connection); the version found."""
    conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK,))
    try:
        found = recorded_version(conn)
        if found > SCHEMA_VERSION:
            raise SchemaTooNew(
                f"the database schema is version {found}, made by a newer Partita; this Partita "
                f"understands versions up to {SCHEMA_VERSION}. Upgrade Partita to serve this database."
            )
        for version in range(found + 1, SCHEMA_VERSION + 1):
            with conn.transaction():
                STEPS[version - 1](conn)
                conn.execute(
                    "UPDATE partita_meta SET value = %s WHERE name = 'schema_version'", (version,)
                )
        return found
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK,))
