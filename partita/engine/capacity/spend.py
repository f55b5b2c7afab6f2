"""A BatchWriteItem's writes to one table, spent from the meter's leases: one C call when built (_spend.c).

`writes(state, lookup, shift, table, actions, resolved, position, exact,
number)` goes through `actions` (ItemActions) from `position` while they
are writes to `table`, each with its (old, new) pair in `resolved`. For
each it computes the write units (ReturnConsumedCapacity's: 1 KB of the
larger of the old and the new item, at least one), finds its partition
(`Resource.lookup` shifted by `shift`, or `number(row)` where a boundary
cuts the slice) and, if the table's lease and the partition's hold that
many tokens in `state` (`Resource.state`), debits both and adds the units to
the hot-key sampling debt. It stops and answers `(status, position, units)`:

- DONE: `position` is the end of the list or the first action to another table;
- SHORT: the leases cannot pay the action at `position` (`units` of it), which
  is not debited: the meter settles it as a request of its own;
- SAMPLE: the action before `position` is due in the hot-key ranking with
  `units` (its own on a Contributor Insights table, `exact`; else the debt,
  which is reset).

The caller holds the meter's lock (and checked that no publish is due).
Why a C accelerator (docs/decisions.md, "Cost of the emulation, sixth
pass"): this loop in Python was most of what the emulation cost a batch.
The module is optional, as _digest.c is: without a compiler `pip install`
skips it and `py_spend` does the same (tests/test_capacity_spend.py holds
the two to the same answers and fails if the module was not built).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from typing import Any

from .buckets import WRITE
from .partitions import HASH_OFFSET
from .resources import AMBIGUOUS, DEBT_AT, LEVEL_AT, PARTS_AT
from .units import WRITE_UNIT_BYTES, write_units

DONE, SHORT, SAMPLE = 0, 1, 2
#: Units between two requests the hot-key ranking samples, on a table without Contributor Insights.
HOT_SAMPLE_UNITS = 8.0
_HASH_NEXT = HASH_OFFSET + 1


def write_need(action: Any, old: Any, new: Any) -> float:
    """The units of a put or delete whose stored item was `old` and will be `new` (None: no item)."""
    size = 0 if new is None else action.new_size
    if old is not None and action.old_size > size:
        size = action.old_size
    return write_units(size)


def py_spend(state: array[float], lookup: array[int], shift: int, table: Any, actions: list[Any],
             resolved: list[tuple[Any, Any]], position: int, exact: bool,
             number: Callable[[bytes], int]) -> tuple[int, int, float]:
    level, owed = state[LEVEL_AT + WRITE], state[DEBT_AT + WRITE]
    try:
        while position < len(actions):
            action = actions[position]
            if action.table is not table:
                break
            need = write_need(action, *resolved[position])
            row = action.row
            partition = lookup[(row[HASH_OFFSET] << 8 | row[_HASH_NEXT]) >> shift]
            if partition == AMBIGUOUS:
                partition = number(row)
            at = PARTS_AT + (partition << 1) + WRITE
            left = state[at]
            if left < need or level < need:
                return SHORT, position, need
            state[at] = left - need
            level -= need
            position += 1
            if action.key is not None:
                if exact:
                    return SAMPLE, position, need
                owed += need
                if owed >= HOT_SAMPLE_UNITS:
                    due, owed = owed, 0.0
                    return SAMPLE, position, due
        return DONE, position, 0.0
    finally:
        state[LEVEL_AT + WRITE], state[DEBT_AT + WRITE] = level, owed


try:
    from ._spend import layout, writes
except ImportError:  # not built: the same in Python
    writes = py_spend
    ACCELERATED = False
else:
    ACCELERATED = True
    layout(HASH_OFFSET, LEVEL_AT, DEBT_AT, PARTS_AT, WRITE, WRITE_UNIT_BYTES, HOT_SAMPLE_UNITS, AMBIGUOUS)
