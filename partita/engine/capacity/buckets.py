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
# peak units in one second, total units.
DIM = struct.Struct("<11d")
DIM_SIZE = DIM.size
TOKENS, LAST, SEC, SEC_UNITS, PREV_SEC, MIN, MIN_UNITS, PREV_MIN, THROTTLED, PEAK, TOTAL = range(11)
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


def roll(fields: list[float], now: float) -> None:
    """Move the second and minute windows to `now`."""
    second = float(int(now))
    if fields[SEC] != second:
        fields[PEAK] = max(fields[PEAK], fields[SEC_UNITS])
        fields[PREV_SEC] = fields[SEC_UNITS] if fields[SEC] == second - 1 else 0.0
        fields[SEC] = second
        fields[SEC_UNITS] = 0.0
    minute = float(int(now // 60))
    if fields[MIN] != minute:
        fields[PREV_MIN] = fields[MIN_UNITS] if fields[MIN] == minute - 1 else 0.0
        fields[MIN] = minute
        fields[MIN_UNITS] = 0.0


def count(fields: list[float], units: float, now: float) -> None:
    """Add consumed units to the windows and the total, as of `now`."""
    if fields[SEC] != float(int(now)) or fields[MIN] != float(int(now // 60)):
        roll(fields, now)
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
            fields = [0.0] * 11
        else:
            fields = list(DIM.unpack_from(buf, slot + 16 + dim * DIM_SIZE))
            roll(fields, now)
        out[f"{name}_units_per_second"] = windowed(fields[SEC_UNITS], fields[PREV_SEC], now % 1.0)
        out[f"{name}_units_per_minute"] = windowed(fields[MIN_UNITS], fields[PREV_MIN], (now % 60.0) / 60.0)
        out[f"{name}_throttled"] = fields[THROTTLED]
        out[f"{name}_units_total"] = fields[TOTAL]
        out[f"{name}_peak_second"] = max(fields[PEAK], fields[SEC_UNITS])
    out["throttled_requests"] = out["read_throttled"] + out["write_throttled"]
    return out
