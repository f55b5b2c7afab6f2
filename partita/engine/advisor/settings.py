"""The advisor's thresholds: when a pattern in the recorded traffic becomes a finding.

Every threshold is a setting with a documented default (README, "The
access-pattern advisor"), changed with `partita serve --advice-setting
NAME=VALUE` (repeatable), `local(advice_setting=[...])` or the pytest
plugin's `--partita-option advice-setting=NAME=VALUE`. The defaults are set
so that a test suite's small tables still show a Scan used as a WHERE
clause (the lesson is the same at 20 items as at 20 million), while the
findings about load (hot and low-cardinality keys) wait for enough units
that a few test writes do not raise them.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace


@dataclass(frozen=True, slots=True)
class AdvisorSettings:
    #: scan-filter: a Scan or Query shape that read at least this many items in all...
    scan_filter_min_read: int = 10
    #: ...and returned at most this share of them.
    scan_filter_max_returned: float = 0.2
    #: hot-key: a partition key whose last minute averaged this share of a partition's ceiling
    #: (3,000 read / 1,000 write units a second), or that was throttled...
    hot_key_ceiling_share: float = 0.5
    #: ...or that carried this share of its table's (or GSI's) units...
    hot_key_share: float = 0.5
    #: ...among at least this many partition keys with traffic...
    hot_key_min_keys: int = 10
    #: ...out of at least this many units.
    hot_key_min_units: float = 100.0
    #: low-cardinality-key: at most this many partition-key values...
    low_cardinality_keys: int = 3
    #: ...carry at least this share of a table's (or GSI's) units...
    low_cardinality_share: float = 0.8
    #: ...out of at least this many units, and (unless this is 1) the values or the key attribute's
    #: name say status, date or boolean: a few keys carrying the traffic is also what a small data
    #: set (two test vehicles) looks like.
    low_cardinality_min_units: float = 500.0
    low_cardinality_any_values: int = 0
    #: lsi-collection-growth: an item collection of a table with a local index at this share of
    #: the collection limit (10 GB, or --item-collection-limit)...
    lsi_collection_share: float = 0.5
    #: ...or growing fast enough to reach the limit within this many days.
    lsi_horizon_days: float = 365.0
    #: unbounded-collection: a Query with no sort-key condition and no Limit reading this many pages
    #: per logical Query (its first page and the pages that follow it)...
    unbounded_pages: float = 2.0
    #: ...or this many items per logical Query.
    unbounded_items: float = 1000.0
    #: gsi-read-after-write: a Query on a GSI this soon (server clock) after a write that entered the
    #: collection and the range it reads.
    gsi_read_window_ms: float = 1000.0
    #: projection-after-read: a Query or Scan with a projection over items of at least this many bytes...
    projection_min_item_bytes: float = 1024.0
    #: ...whose projected attributes are at most this share of the item (sampled from the table).
    projection_max_share: float = 0.25
    #: Findings need at least this many requests of a shape (each finding's own minimums apply too).
    min_requests: int = 1
    #: How many request shapes are kept (the least used is dropped when a new one arrives).
    max_shapes: int = 1024
    #: How many items the entity view samples per table or index.
    entity_sample: int = 1000

    def to_dict(self) -> dict[str, float | int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


DEFAULT = AdvisorSettings()


def parse_settings(pairs: list[str] | None) -> AdvisorSettings:
    """`NAME=VALUE` pairs over the defaults; ValueError names the bad pair (a start-up error)."""
    known = {f.name: f for f in fields(AdvisorSettings)}
    changes: dict[str, float | int] = {}
    for pair in pairs or []:
        name, sep, raw = pair.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or name not in known:
            raise ValueError(f"unknown advice setting {pair!r} (known: {', '.join(sorted(known))})")
        kind = int if known[name].type in (int, "int") else float
        try:
            value = kind(raw.strip())
        except ValueError:
            raise ValueError(f"advice setting {name} needs a {'whole ' if kind is int else ''}number, "
                             f"not {raw.strip()!r}") from None
        if value < 0 or value != value:
            raise ValueError(f"advice setting {name} must not be negative")
        changes[name] = value
    return replace(DEFAULT, **changes)
