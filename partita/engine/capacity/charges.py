"""What one request charges to which partitions: the bridge from the item paths to the meter.

A write charges its table's partition (the table units plus its local
index units, which DynamoDB takes from the table) and, for each GSI whose
entry it changes, that index's partition of the new entry (or of the old
one when the item leaves the index). The units are computed before anything
is stored, with the same rules as `writes.store_item`, so a throttled write
writes nothing and an admitted one is charged exactly what
ReturnConsumedCapacity reports.
"""

from __future__ import annotations

from typing import Any

from ...errors import DynamoDBError
from ..items.actions import ActionKind, ItemAction
from ..model.sizes import item_size
from ..tables.schema import Index, Table
from .meter import READ, WRITE, Charge, Meter
from .partitions import TABLE_MAP, row_hash
from .units import write_need, write_units

Item = dict[str, dict[str, Any]]


def _entry(table: Table, index: Index, item: Item | None) -> tuple[bytes, Item] | None:
    if item is None or not index.covers(item):
        return None
    return table.index_row_key(index, item), index.project(item, table.key_names)


def _index_units(table: Table, index: Index, old: Item | None, new: Item | None) -> tuple[float, bytes | None]:
    """The units `store_item` will charge this index, and the entry row they fall on (mirrors _write_index)."""
    before = _entry(table, index, old)
    after = _entry(table, index, new)
    units = 0.0
    row = None
    if before is not None and (after is None or before[0] != after[0]):
        units += write_units(item_size(before[1]))
        row = before[0]
        before = None
    if after is not None:
        if before is not None and before[1] == after[1]:
            return units, row
        size = item_size(after[1])
        units += write_units(size if before is None else max(size, item_size(before[1])))
        row = after[0]
    return units, row


def _index_key(index: Index, item: Item | None) -> Item | None:
    if item is None:
        return None
    return {name: item[name] for name in index.key_names if name in item}


def write_charges(meter: Meter, action: ItemAction, old: Item | None, new: Item | None, factor: float = 1.0) -> list[Charge]:
    """Charges of one resolved write (`factor` 2 for a transaction's)."""
    check = action.kind is ActionKind.CHECK
    table = action.table
    resources = meter.resources(table)
    if not table.indexes and not check:  # the common case, kept short
        return [(resources[TABLE_MAP], WRITE, row_hash(action.row), write_need(action, old, new) * factor, action.key,
                 action.row)]
    if check:
        new_size = action.old_size
    else:
        new_size = 0 if new is None else action.new_size
    units = write_units(max(0 if old is None else action.old_size, new_size))
    global_charges: list[Charge] = []
    for index in table.indexes:
        if check:
            break
        index_units, row = _index_units(table, index, old, new)
        if not index_units:
            continue
        if not index.is_global:
            units += index_units
            continue
        resource = resources.get(index.name)
        if resource is None or row is None:
            continue
        subject = new if new is not None and index.covers(new) else old
        global_charges.append((resource, WRITE, row_hash(row), index_units * factor, _index_key(index, subject), row))
    row = action.row
    own: Charge = (resources[TABLE_MAP], WRITE, row_hash(row), units * factor, action.key, row)
    if not global_charges:
        return [own]
    return [own, *global_charges]


def charge_write(meter: Meter, action: ItemAction, old: Item | None, new: Item | None) -> None:
    """Charge one put, update or delete outside a transaction (raises the throttling exception).

    A table without indexes is the common case: charged by
    `Meter.charge_table`, with no list or tuple of charges.
    """
    table = action.table
    if table.indexes:
        meter.charge(write_charges(meter, action, old, new))
        return
    meter.charge_table(table, WRITE, action.row, write_need(action, old, new), action.key)


def charge_batch(meter: Meter, actions: list[ItemAction],
                 resolved: list[tuple[Item | None, Item | None]]) -> list[DynamoDBError | None] | None:
    """Charge a BatchWriteItem's resolved requests in order; None if all are admitted, else each one's refusal.

    The requests to one table without indexes (a batch's usual shape) are
    charged by one `Meter.charge_writes`, the others one by one as
    `charge_write` charges them: the same units and the same order, so the
    same requests are refused as when each is charged on its own. Every
    table is charged: without --emulate-throughput the meter counts and
    never refuses.
    """
    refused: list[DynamoDBError | None] | None = None
    count = len(actions)
    position = 0
    while position < count:
        table = actions[position].table
        if not table.indexes:
            position, refused = meter.charge_writes(table, actions, resolved, position, refused)
        else:
            try:
                charge_write(meter, actions[position], *resolved[position])
            except DynamoDBError as error:
                refused = refused or [None] * count
                refused[position] = error
            position += 1
    return refused


def read_charge(meter: Meter, table: Table, index_name: str | None, row: bytes, units: float,
                key: Item | None) -> Charge:
    """One read: a point read (row = its row key) or a Query/Scan page (row = where it starts)."""
    resources = meter.resources(table)
    index = None if index_name is None else table.index(index_name)
    resource = resources[index.name] if index is not None and index.is_global else resources[TABLE_MAP]
    return (resource, READ, row_hash(row), units, key, row)
