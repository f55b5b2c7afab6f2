"""Checking an item against its entity's schema, where every write path resolves its new item.

`items/single.py::resolve` calls `check` with the item a Put or an Update
would store (an update's item after it is applied), for PutItem, UpdateItem,
the requests of a BatchWriteItem, the actions of a TransactWriteItems and
PartiQL's writes, which all pass there. Deletes, condition checks, TTL,
restores and imports store no item a client wrote and are not checked.

- `reject`: a violation raises ValidationException, so nothing of the
  request is written: a PutItem or UpdateItem fails, a BatchWriteItem fails
  as a whole (like any item it could not accept), and a TransactWriteItems is
  cancelled with ValidationError as that action's reason.
- `warn`: the violation rides on the action and `record` writes it to the
  store in the write's own commit (`log.py`), so only writes that happened
  are recorded, once, whatever the store retries.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Context, localcontext
from itertools import islice
from typing import TYPE_CHECKING, Any

from ...errors import ValidationException
from .log import write_violation
from .plain import plain_item, string_form
from .spec import Entity, GuardSpec, path_text

if TYPE_CHECKING:
    from ...storage.base import WriteTxn
    from ..time.clock import Clock

Item = dict[str, dict[str, Any]]

#: Errors kept per violation in warn mode (reject mode reports the first).
MAX_ERRORS = 3
#: An error's text is cut here: jsonschema's messages quote the offending value, which may be 400 KB.
MAX_ERROR_CHARS = 500
#: Enough digits for any remainder of two DynamoDB numbers (38 digits, 1E-130 to 1E+126):
#: `multipleOf` divides, and the default 28 digits would fail on 1E+125 / 0.01.
_EXACT = Context(prec=300, Emax=999999, Emin=-999999)
#: Partita's own wording (DynamoDB has no schema guard, so no message of its to follow):
#: "unconfirmed" by nature, recorded as such in docs/decisions.md.
REJECTED = "Schema guard: the item does not match schema {entity}: {error}"


@dataclass(slots=True)
class Violation:
    """One write whose item does not match its entity's schema (warn mode keeps these)."""

    table: str
    entity: str
    #: "Put" or "Update": which kind of write stored the item.
    write: str
    key: Item
    errors: list[str]


def _error_text(error: Any) -> str:
    message = error.message
    if len(message) > MAX_ERROR_CHARS:
        message = message[:MAX_ERROR_CHARS] + "..."
    where = path_text(error.absolute_path)
    return f"at {where}: {message}" if where else message


class SchemaGuard:
    def __init__(self, spec: GuardSpec, clock: Clock) -> None:
        self.spec = spec
        self.reject = spec.mode == "reject"
        self._by_table = spec.by_table
        self._clock = clock

    def entity_of(self, table: str, item: Item) -> Entity | None:
        """The first entity of `table` whose every glob matches the item's attribute."""
        for entity in self._by_table.get(table, ()):
            for name, pattern in entity.match:
                text = string_form(item.get(name))
                if text is None or pattern.fullmatch(text) is None:
                    break
            else:
                return entity
        return None

    def check(self, table: str, item: Item, key: Item, write: str) -> Violation | None:
        """None when the item matches no entity or its entity's schema; else the violation.

        In reject mode a violation raises ValidationException instead.
        """
        if table not in self._by_table:
            return None
        entity = self.entity_of(table, item)
        if entity is None:
            return None
        try:
            with localcontext(_EXACT):
                errors = [_error_text(e) for e in islice(entity.validator.iter_errors(plain_item(item)), MAX_ERRORS)]
        except Exception as error:  # a reference the start-up check could not follow (a nested $id)
            errors = [f"the schema cannot be applied: {error}"[:MAX_ERROR_CHARS]]
        if not errors:
            return None
        if self.reject:
            raise ValidationException(REJECTED.format(entity=entity.name, error=errors[0]))
        return Violation(table, entity.name, write, key, errors)

    def record(self, txn: WriteTxn, violation: Violation) -> None:
        write_violation(txn, violation.table, violation.entity, violation.write, violation.key,
                        violation.errors, self._clock.now())
