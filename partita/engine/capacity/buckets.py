"""One bucket's fields in the shared region, and the arithmetic on them (refill, windows, usage).

A slot of the shared region holds, per dimension (read, write), eleven
doubles: the token bucket (tokens, last refill) and the usage windows every
reader wants (this and the previous second, this and the previous minute,
throttles, the peak second, the total). They are kept together so that one
unpack and one pack serve a whole refill-check-debit of a bucket.
"""

from __future__ import annotations

import struct
from typing import Any

READ, WRITE = 0, 1
DIMENSIONS = ("Read", "Write")

# tokens, last refill, second id, units this second, units the second before,
# minute id, units this minute, units the minute before, throttled requests,
# peak units in one second, total units, hot seconds in the current streak,
# the last hot second (partition buckets: splits for heat, splits.py).
DIM = struct.Struct("<13d")
DIM_SIZE = DIM.size
(TOKENS, LAST, SEC, SEC_UNITS, PREV_SEC, MIN, MIN_UNITS, PREV_MIN, THROTTLED, PEAK, TOTAL,
 HOT_STREAK, LAST_HOT) = range(13)
#: A partition is hot in a second when it throttled a request or used this share of its ceiling.
HOT_SHARE = 0.8
#: A streak of hot seconds ends after this many seconds without one.
COOL_SECONDS = 60.0
SLOT_BYTES = 16 + 2 * DIM_SIZE


def refill(fields: list[float], rate: float, capacity: float, now: float) -> float:
    """Refill one bucket's fields for the time passed (a bucket never used starts full)."""
    last = fields[LAST]
    if last == 0.0:
        tokens = capacity
    else:
        tokens = min(capacity, fields[TOKENS] + max(0.0, now - last) * rate)
    fields[TOKENS] = tokens
    fields[LAST] = now
    return tokens


def mark_hot(fields: list[float], second: float) -> None:
    """Count `second` in the partition's streak of hot seconds (once per second)."""
    last = fields[LAST_HOT]
    if last == second:
        return
    if second < last:
        return  # published late: that second is already past the streak's end
    fields[HOT_STREAK] = fields[HOT_STREAK] + 1 if last and second - last <= COOL_SECONDS else 1.0
    fields[LAST_HOT] = second


def roll(fields: list[float], now: float, ceiling: float = 0.0) -> None:
    """Move the second and minute windows to `now` (a partition's `ceiling` marks hot seconds)."""
    second = float(int(now))
    if fields[SEC] != second:
        if ceiling and fields[SEC_UNITS] >= HOT_SHARE * ceiling:
            mark_hot(fields, fields[SEC])
        fields[PEAK] = max(fields[PEAK], fields[SEC_UNITS])
        fields[PREV_SEC] = fields[SEC_UNITS] if fields[SEC] == second - 1 else 0.0
        fields[SEC] = second
        fields[SEC_UNITS] = 0.0
    minute = float(int(now // 60))
    if fields[MIN] != minute:
        fields[PREV_MIN] = fields[MIN_UNITS] if fields[MIN] == minute - 1 else 0.0
        fields[MIN] = minute
        fields[MIN_UNITS] = 0.0


def count(fields: list[float], units: float, now: float, ceiling: float = 0.0) -> None:
    """Add consumed units to the windows and the total, as of `now`."""
    if fields[SEC] != float(int(now)) or fields[MIN] != float(int(now // 60)):
        roll(fields, now, ceiling)
    fields[SEC_UNITS] += units
    fields[MIN_UNITS] += units
    fields[TOTAL] += units


def windowed(current: float, previous: float, fraction: float) -> float:
    """A sliding-window rate: this window's units plus the unelapsed share of the last one's."""
    return current + previous * (1.0 - fraction)


def usage(buf: Any, slot: int | None, now: float) -> dict[str, float]:
    """The per-second and per-minute rates, throttles and totals of one slot (None: never used)."""
    out: dict[str, float] = {}
    for dim, name in enumerate(("read", "write")):
        if slot is None:
            fields = [0.0] * 13
        else:
            fields = list(DIM.unpack_from(buf, slot + 16 + dim * DIM_SIZE))
            roll(fields, now)
        out[f"{name}_units_per_second"] = windowed(fields[SEC_UNITS], fields[PREV_SEC], now % 1.0)
        out[f"{name}_units_per_minute"] = windowed(fields[MIN_UNITS], fields[PREV_MIN], (now % 60.0) / 60.0)
        out[f"{name}_throttled"] = fields[THROTTLED]
        out[f"{name}_units_total"] = fields[TOTAL]
        out[f"{name}_peak_second"] = max(fields[PEAK], fields[SEC_UNITS])
        out[f"{name}_hot_streak"] = fields[HOT_STREAK] if now - fields[LAST_HOT] <= COOL_SECONDS else 0.0
    out["throttled_requests"] = out["read_throttled"] + out["write_throttled"]
    return out
