"""The meter's request path over this process's leases: one C call when built (_spend.c), else Python.

Both functions take a `Resource` (resources.py) and spend from the lease
tokens in its `state` array: a request's units from its partition's lease
and the table's (or GSI's), found by `lookup` (or `number(row)` where a
partition boundary cuts the slice). A paid request's units go into the
hot-key sampling debt, and a request is due in the ranking when the debt
reaches `HOT_SAMPLE_UNITS` (every request, with its own units, on a table
with Contributor Insights: `exact`). The caller holds the meter's lock and
has checked that no publish is due.

- `one(res, dim, row, units, key)`: one request (`Meter.charge_table`).
  Answers -1.0 if the leases cannot pay it (nothing is debited), else the
  units to rank it with in the hot keys, 0.0 for none (or no `key`).
- `writes(res, table, actions, resolved, position)`: a BatchWriteItem's
  ItemActions from `position` while they are writes to `table`, each with
  its (old, new) items in `resolved`; each one's units are
  ReturnConsumedCapacity's (`units.write_need`). Answers `(status, position,
  units)`: DONE, `position` the end of the list or the first action to
  another table; SHORT, the leases cannot pay the action at `position`
  (`units` of it), which is not debited; SAMPLE, the action before
  `position` is due in the ranking with `units`.

Why C (docs/decisions.md, "Cost of the emulation, sixth pass"): a batch's
loop in Python was most of what the emulation cost BatchWriteItem, and a
request's few lines allocate a float per token count they write. The module
is optional, as _digest.c is: without a compiler `pip install` skips it and
`py_one` and `py_writes` do the same (tests/test_capacity_spend.py holds the
two to the same answers and fails if the module was not built).
"""

from __future__ import annotations

from typing import Any

from .buckets import WRITE
from .partitions import HASH_OFFSET
from .resources import AMBIGUOUS, DEBT_AT, LEVEL_AT, PARTS_AT, Resource, tokens_at
from .units import WRITE_UNIT_BYTES, write_need

DONE, SHORT, SAMPLE = 0, 1, 2
#: Units between two requests the hot-key ranking samples, on a table without Contributor Insights.
HOT_SAMPLE_UNITS = 8.0


def sample(res: Resource, dim: int, units: float) -> float:
    """The units to rank a paid request with in the hot keys now, 0.0 for none (the debt keeps them).

    Every request with its own units on a Contributor Insights table;
    else one request per `HOT_SAMPLE_UNITS` units (`Meter._rank` says why).
    """
    if res.exact:
        return units
    state = res.state
    owed = state[DEBT_AT + dim] + units
    if owed >= HOT_SAMPLE_UNITS:
        state[DEBT_AT + dim] = 0.0
        return owed
    state[DEBT_AT + dim] = owed
    return 0.0


def py_one(res: Resource, dim: int, row: bytes, units: float, key: Any) -> float:
    state = res.state
    at = tokens_at(res.number(row), dim)
    left = state[at]
    if left < units or state[LEVEL_AT + dim] < units:
        return -1.0
    state[at] = left - units
    state[LEVEL_AT + dim] -= units
    return 0.0 if key is None else sample(res, dim, units)


def py_writes(res: Resource, table: Any, actions: list[Any], resolved: list[tuple[Any, Any]],
              position: int) -> tuple[int, int, float]:
    state = res.state
    level = state[LEVEL_AT + WRITE]
    try:  # the table's lease in a local, stored back however this ends
        while position < len(actions):
            action = actions[position]
            if action.table is not table:
                break
            need = write_need(action, *resolved[position])
            at = tokens_at(res.number(action.row), WRITE)
            left = state[at]
            if left < need or level < need:
                return SHORT, position, need
            state[at] = left - need
            level -= need
            position += 1
            if action.key is not None:
                due = sample(res, WRITE, need)
                if due:
                    return SAMPLE, position, due
        return DONE, position, 0.0
    finally:
        state[LEVEL_AT + WRITE] = level


try:
    from ._spend import layout, one, writes
except ImportError:  # not built: the same in Python
    one, writes = py_one, py_writes
    ACCELERATED = False
else:
    ACCELERATED = True
    layout(HASH_OFFSET, LEVEL_AT, DEBT_AT, PARTS_AT, WRITE, WRITE_UNIT_BYTES, HOT_SAMPLE_UNITS, AMBIGUOUS)
