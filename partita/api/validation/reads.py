"""Query's and Scan's semantic rules, in DynamoDB's order and words.

Two groups, because the service checks them at two moments:

* before the table is looked up: Select against the projection parameters,
  the ExclusiveStartKey's values, Segment/TotalSegments, the number of key
  conditions, and the *form* of a KeyConditionExpression (no OR/NOT/IN/<>, one
  condition per key, no nested paths or operations ...; in key_conditions.py,
  which also defines the KeyTerm both kinds of key condition become). A request
  that fails these fails even against a table that does not exist.
* against the table's key schema: which key attributes the conditions name
  and how, whether ExclusiveStartKey is a key of this table (and of this
  query or segment), and whether a filter or projection touches a key in a
  way the service forbids.

Sources for the texts: dynalite's query and scan tests (recorded against the
real service), moto's aws-verified tests for the Select rules, and users
quoting real errors (the empty key value message). See docs/decisions.md.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator, Mapping
from typing import Any

from ...engine.expressions import (
    And,
    Between,
    Call,
    Compare,
    Condition,
    In,
    Not,
    Or,
    Path,
    Projection,
    resolve_path,
)
from ...engine.items.reads import KeySpace, SortCondition
from ...engine.model.item_keys import check_key
from ...engine.model.values import (
    MSG_EMPTY_AV,
    MSG_EMPTY_BS,
    MSG_EMPTY_SS,
    MSG_MULTIPLE_TYPES,
    MSG_NULL_NOT_TRUE,
    compare,
    normalize_value,
)
from ...engine.tables.schema import KeyAttribute
from ...errors import ShapeValidationException, ValidationException
from .key_conditions import KeyTerm

AttributeValue = dict[str, Any]
Item = dict[str, AttributeValue]

INVALID = "One or more parameter values were invalid: "
STARTING_KEY_INVALID = "The provided starting key is invalid"
KEY_MISMATCH = "The provided key element does not match the schema"

# ExclusiveStartKey value errors that the service reports inside "The provided
# starting key is invalid: ..."; the others (number syntax and range, empty
# number set, duplicate set members) come back bare, as dynalite recorded.
_STARTING_KEY_WRAPPED = frozenset(
    (MSG_EMPTY_AV, MSG_MULTIPLE_TYPES, MSG_NULL_NOT_TRUE, MSG_EMPTY_SS, MSG_EMPTY_BS)
)

# Legacy operators that can never select a key range.
_NOT_INDEXABLE = frozenset(("NULL", "NOT_NULL", "NE", "CONTAINS", "NOT_CONTAINS", "IN"))
_EMPTY_KIND = {"S": "string", "B": "binary"}


# -- before the table ---------------------------------------------------------------


def check_select(request: Mapping[str, Any], operation: str) -> None:
    """Select against ProjectionExpression/AttributesToGet and IndexName.

    On the real service Query reports these with the "1 validation error
    detected: " envelope of its input validation and Scan reports them bare
    (moto's aws-verified tests pin both), except SPECIFIC_ATTRIBUTES without a
    projection, which Scan too wraps in the envelope since its September 2026
    rewording (a 2026 conformance suite, pinned region eu-west-2; most regions
    still answered bare then).
    """
    select = request.get("Select")
    if select is None:
        return
    projection = (
        "ProjectionExpression"
        if request.get("ProjectionExpression") is not None
        else "AttributesToGet"
        if request.get("AttributesToGet") is not None
        else None
    )
    message = None
    if select == "SPECIFIC_ATTRIBUTES":
        if projection is None:
            message = (
                "Must specify the AttributesToGet or ProjectionExpression when choosing to get "
                "SPECIFIC_ATTRIBUTES"
            )
    elif projection is not None:
        chosen = "only the Count" if select == "COUNT" else select
        message = f"Cannot specify the {projection} when choosing to get {chosen}"
    elif select == "ALL_PROJECTED_ATTRIBUTES" and request.get("IndexName") is None:
        message = "ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName"
    if message is None:
        return
    if operation == "Query" or (select == "SPECIFIC_ATTRIBUTES" and projection is None):
        raise ShapeValidationException("1 validation error detected: " + message)
    raise ValidationException(message)


def check_attributes_to_get(request: Mapping[str, Any]) -> None:
    names = request.get("AttributesToGet")
    if names is None:
        return
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ValidationException(f"{INVALID}Duplicate value in attribute name: {name}")
        seen.add(name)


def normalize_start_key(request: Mapping[str, Any]) -> Item | None:
    """ExclusiveStartKey's values, validated and canonical (None if absent)."""
    key = request.get("ExclusiveStartKey")
    if key is None:
        return None
    out: Item = {}
    for name, av in key.items():
        try:
            out[name] = normalize_value(av)
        except ValidationException as error:
            message = error.message or ""
            if message in _STARTING_KEY_WRAPPED:
                raise ValidationException(f"{STARTING_KEY_INVALID}: {message}") from None
            raise
    return out


def check_segments(request: Mapping[str, Any]) -> tuple[int, int]:
    """(Segment, TotalSegments) of a Scan; (0, 1) when it is not parallel."""
    segment = request.get("Segment")
    total = request.get("TotalSegments")
    if segment is not None and total is None:
        raise ValidationException(
            "The TotalSegments parameter is required but was not present in the request when "
            "Segment parameter is present"
        )
    if total is None:
        return 0, 1
    if segment is None:
        raise ValidationException(
            "The Segment parameter is required but was not present in the request when parameter "
            "TotalSegments is present"
        )
    if segment >= total:
        # The September 2026 wording drops the older ": Segment: 5 is not less than
        # TotalSegments: 5" (a 2026 conformance suite, pinned region eu-west-2).
        raise ValidationException(
            "The Segment parameter is zero-based and must be less than parameter TotalSegments"
        )
    return segment, total


#: A multi-attribute GSI key has up to 4 HASH and 4 RANGE attributes, each with one condition.
MAX_KEY_CONDITIONS = 8
_CONDITION_COUNT = "Conditions can be of length 1 or 2 only"


def check_condition_count(terms: Mapping[str, KeyTerm], on_index: bool) -> None:
    """Before the table is known: no more conditions than the key read can have attributes.

    A table's key has at most 2, as recorded of the service before
    multi-attribute keys. An index's may have up to 8 (a multi-attribute GSI);
    whether a single-attribute index's 2 is exceeded needs the key schema, so
    :func:`check_query_keys` applies that after the table is looked up.
    """
    if not 1 <= len(terms) <= (MAX_KEY_CONDITIONS if on_index else 2):
        raise ValidationException(_CONDITION_COUNT)


# -- against the table ----------------------------------------------------------------


def _key_attributes(space: KeySpace) -> list[tuple[KeyAttribute, bool]]:
    """The key a Query's conditions address: the index's key on an index read."""
    index = space.index
    if index is not None and index.multi:
        return [(a, True) for a in index.hash_keys] + [(a, False) for a in index.range_keys]
    out = [(space.hash_key, True)]
    if space.range_key is not None:
        out.append((space.range_key, False))
    return out


def _single_type(av: AttributeValue) -> str:
    return next(iter(av))


def check_query_keys(
    table: KeySpace, terms: Mapping[str, KeyTerm], start_key: Item | None
) -> tuple[str, SortCondition | None]:
    """Validate key conditions and ExclusiveStartKey against the table's key schema.

    Returns the partition-key value and the sort-key condition (if any). The
    checks run per key attribute, hash first, as the service runs them: the
    starting key's attribute, then that attribute's condition.
    """
    n = len(terms)
    if n > 2:
        raise ValidationException(_CONDITION_COUNT)
    attributes = _key_attributes(table)
    if start_key is not None and len(start_key) != len(table.key_names):
        raise ValidationException(STARTING_KEY_INVALID)
    for attr, is_hash in attributes:
        if start_key is not None:
            av = start_key.get(attr.name)
            if av is None:
                raise ValidationException(STARTING_KEY_INVALID)
            if attr.type not in av:
                raise ValidationException(KEY_MISMATCH)
        if is_hash and table.range_key is None and n > 1:
            raise ValidationException("Query key condition not supported")
        term = terms.get(attr.name)
        if term is None:
            if is_hash or n > 1:
                raise ValidationException(f"Query condition missed key schema element: {attr.name}")
            continue
        _check_term(attr, term, is_hash)
    hk = table.hash_key
    hash_value = terms[hk.name].values[0][hk.type]
    rk = table.range_key
    range_term = None if rk is None else terms.get(rk.name)
    if start_key is not None:
        _check_start_key_values(table, start_key)
        start_hash = start_key[hk.name][hk.type]
        if range_term is None:
            if start_hash != hash_value:
                raise ValidationException(
                    "The provided starting key is outside query boundaries based on provided conditions"
                )
        else:
            assert rk is not None
            if not _term_matches(range_term, start_key[rk.name]):
                raise ValidationException("The provided starting key does not match the range key predicate")
            if start_hash != hash_value:
                raise ValidationException("The query can return at most one row and cannot be restarted")
    sort = None
    if range_term is not None:
        assert rk is not None
        sort = SortCondition(range_term.op, tuple(v[rk.type] for v in range_term.values))
    return hash_value, sort


def _check_term(attr: KeyAttribute, term: KeyTerm, is_hash: bool) -> None:
    """One key condition against its attribute: indexable, of the attribute's type, not empty."""
    if term.op in _NOT_INDEXABLE:
        raise ValidationException("Attempted conditional constraint is not an indexable operation")
    if any(attr.type not in value for value in term.values):
        raise ValidationException(f"{INVALID}Condition parameter type does not match schema type")
    if is_hash and term.op != "EQ":
        raise ValidationException("Query key condition not supported")
    for value in term.values:
        if value[attr.type] == "" and attr.type in _EMPTY_KIND:
            raise ValidationException(
                "One or more parameter values are not valid. The AttributeValue for a key "
                f"attribute cannot contain an empty {_EMPTY_KIND[attr.type]} value. Key: {attr.name}"
            )


def check_multi_query_keys(
    space: KeySpace, terms: Mapping[str, KeyTerm], start_key: Item | None
) -> tuple[tuple[str, ...], tuple[str, ...], SortCondition | None]:
    """Key conditions on a multi-attribute GSI key: (HASH values, equal RANGE prefix, last condition).

    Every HASH attribute needs an equality; RANGE conditions cover a
    left-to-right prefix of the RANGE attributes, and only the last one named
    may be a range condition. The gap message is the service's, recorded in
    2026 (a conformance suite run against AWS, and floci's tests); with more
    than one attribute lacking an equality this lists them all, comma
    separated, which is unconfirmed. The checks run per attribute in schema
    order, as for single-attribute keys: the starting key's attribute, then
    that attribute's condition.
    """
    index = space.index
    assert index is not None
    if start_key is not None and len(start_key) != len(space.key_names):
        raise ValidationException(STARTING_KEY_INVALID)
    key_names = set(index.key_names)
    for attr, is_hash in _key_attributes(space):
        if start_key is not None:
            av = start_key.get(attr.name)
            if av is None:
                raise ValidationException(STARTING_KEY_INVALID)
            if attr.type not in av:
                raise ValidationException(KEY_MISMATCH)
        term = terms.get(attr.name)
        if term is None:
            if is_hash:
                raise ValidationException(f"Query condition missed key schema element: {attr.name}")
            continue
        _check_term(attr, term, is_hash)
    if any(name not in key_names for name in terms):
        missing = next((a.name for a in index.range_keys if a.name not in terms), None)
        if missing is None:  # pragma: no cover - 8 conditions at most, all on key attributes
            raise ValidationException("Query key condition not supported")
        raise ValidationException(f"Query condition missed key schema element: {missing}")
    named = [i for i, a in enumerate(index.range_keys) if a.name in terms]
    sort: SortCondition | None = None
    equal: tuple[str, ...] = ()
    if named:
        last = named[-1]
        lacking = [a.name for a in index.range_keys[:last] if a.name not in terms or terms[a.name].op != "EQ"]
        if lacking:
            raise ValidationException(
                f"RANGE key attributes {', '.join(lacking)} must have equality conditions specified in the "
                f"query because a condition is present on key attribute {index.range_keys[last].name}"
            )
        equal = tuple(terms[a.name].values[0][a.type] for a in index.range_keys[:last])
        attr = index.range_keys[last]
        term = terms[attr.name]
        if term.op == "EQ":
            equal += (term.values[0][attr.type],)
        else:
            sort = SortCondition(term.op, tuple(v[attr.type] for v in term.values), attr.type)
    hash_values = tuple(terms[a.name].values[0][a.type] for a in index.hash_keys)
    if start_key is not None:
        _check_start_key_values(space, start_key)
        if any(start_key[a.name][a.type] != v for a, v in zip(index.hash_keys, hash_values, strict=True)):
            raise ValidationException(
                "The provided starting key is outside query boundaries based on provided conditions"
            )
        for a in index.range_keys:
            term = terms.get(a.name)
            if term is not None and not _term_matches(term, start_key[a.name]):
                raise ValidationException("The provided starting key does not match the range key predicate")
    return hash_values, equal, sort


def _check_start_key_values(space: KeySpace, start_key: Item) -> None:
    """ExclusiveStartKey is a table key, plus the index key on an index read."""
    table_key = start_key
    if space.index is not None:
        if len(start_key) != len(space.key_names):
            raise ValidationException(STARTING_KEY_INVALID)
        table_key = {name: start_key[name] for name in space.table.key_names if name in start_key}
    try:
        # An empty value keeps "were invalid:" here (dynalite's record; no newer one for a start key).
        check_key(space.table, table_key, empty_prefix=INVALID.strip())
    except ValidationException as error:
        raise ValidationException(f"{STARTING_KEY_INVALID}: {error.message}") from None
    for attr, _ in _key_attributes(space):
        value = start_key.get(attr.name)
        if value is None or attr.type not in value:
            raise ValidationException(STARTING_KEY_INVALID)


def check_scan_start_key(space: KeySpace, start_key: Item | None) -> None:
    """A Scan's ExclusiveStartKey must be exactly a key of what it reads.

    A key of another shape is Query's short "The provided starting key is
    invalid" since Scan's September 2026 rewording (it used to append ": The
    provided key element does not match the schema"; a 2026 conformance suite,
    pinned region eu-west-2). Its values' own errors keep their wrapping.
    """
    if start_key is None:
        return
    try:
        _check_start_key_values(space, start_key)
    except ValidationException as error:
        if error.message == f"{STARTING_KEY_INVALID}: {KEY_MISMATCH}":
            raise ValidationException(STARTING_KEY_INVALID) from None
        raise


def check_start_key_segment(
    start_hash: int, low: int, high: int, segment: int, total_segments: int
) -> None:
    """A parallel scan may only resume inside its own segment."""
    if not low <= start_hash < high:
        raise ValidationException(
            f"{STARTING_KEY_INVALID}: Invalid ExclusiveStartKey. Please use ExclusiveStartKey with "
            f"correct Segment. TotalSegments: {total_segments} Segment: {segment}"
        )


def _term_matches(term: KeyTerm, av: AttributeValue) -> bool:
    """Whether a key value satisfies a sort-key term (ExclusiveStartKey's sanity check)."""
    op = term.op
    first = term.values[0]
    if op == "BEGINS_WITH":
        t = _single_type(first)
        if t == "S":
            return bool(av["S"].startswith(first["S"]))
        return base64.b64decode(av["B"]).startswith(base64.b64decode(first["B"]))
    c = compare(av, first)
    if op == "EQ":
        return c == 0
    if op == "LT":
        return c < 0
    if op == "LE":
        return c <= 0
    if op == "GT":
        return c > 0
    if op == "GE":
        return c >= 0
    if op == "BETWEEN":
        return c >= 0 and compare(av, term.values[1]) <= 0
    return False


# -- filters and projections touching keys ---------------------------------------------


def condition_paths(condition: Condition) -> Iterator[Path]:
    """Every document path a condition reads, in text order."""
    stack: list[Any] = [condition.root]
    out: list[Path] = []
    while stack:
        node = stack.pop()
        if isinstance(node, Path):
            out.append(node)
        elif isinstance(node, (And, Or)):
            stack.extend((node.right, node.left))
        elif isinstance(node, Not):
            stack.append(node.operand)
        elif isinstance(node, Compare):
            stack.extend((node.right, node.left))
        elif isinstance(node, Between):
            stack.extend((node.high, node.low, node.operand))
        elif isinstance(node, In):
            stack.extend(reversed((node.operand, *node.options)))
        elif isinstance(node, Call):
            stack.extend(reversed(node.args))
    return iter(out)


def path_heads(paths: Iterator[Path], names: Mapping[str, str]) -> tuple[set[str], set[str]]:
    """(top-level names, top-level names of nested paths) of resolved paths."""
    heads: set[str] = set()
    nested: set[str] = set()
    for path in paths:
        resolved = resolve_path(path, names)
        if resolved is None:  # pragma: no cover - placeholders were checked
            continue
        head = str(resolved[0])
        heads.add(head)
        if len(resolved) > 1:
            nested.add(head)
    return heads, nested


def check_filter_keys(table: KeySpace, heads: set[str], legacy: bool) -> None:
    """A Query filter may not name a key attribute: the key conditions own them."""
    for attr, _ in _key_attributes(table):
        if attr.name in heads:
            what = "QueryFilter" if legacy else "Filter Expression"
            raise ValidationException(
                f"{what} can only contain non-primary key attributes: Primary key attribute: {attr.name}"
            )


def check_scalar_keys(table: KeySpace, nested: set[str]) -> None:
    """Key attributes are scalars: a path may not index or dereference into one."""
    for name in table.key_names:
        if name in nested:
            raise ValidationException(
                "Key attributes must be scalars; list random access '[]' and map lookup '.' are not "
                f"allowed: Key: {name}"
            )


def projection_paths(projection: Projection) -> Iterator[Path]:
    return iter(projection.paths)


# -- index reads ------------------------------------------------------------------------


def check_index_read(space: KeySpace, request: Mapping[str, Any]) -> None:
    """What an index read may ask for: no strong reads or unprojected attributes on a GSI."""
    index = space.index
    if index is None:
        return
    if index.is_global and request.get("ConsistentRead"):
        raise ValidationException("Consistent reads are not supported on global secondary indexes")
    if index.is_global and request.get("Select") == "ALL_ATTRIBUTES" and index.projection != "ALL":
        raise ValidationException(
            f"{INVALID}Select type ALL_ATTRIBUTES is not supported for global secondary index "
            f"{index.name} because its projection type is not ALL"
        )


def unprojected(space: KeySpace, heads: set[str]) -> list[str]:
    """The attributes named by a read that its index does not hold, in name order."""
    index = space.index
    if index is None or index.projection == "ALL":
        return []
    held = set(space.key_names) | (index.non_key if index.projection == "INCLUDE" else set())
    return sorted(heads - held)


def check_global_projection(space: KeySpace, heads: set[str]) -> None:
    """A GSI cannot fetch from its table: naming an attribute it does not project is an error."""
    index = space.index
    missing = unprojected(space, heads)
    if index is not None and index.is_global and missing:
        raise ValidationException(
            f"{INVALID}Global secondary index {index.name} does not project [{', '.join(missing)}]"
        )
