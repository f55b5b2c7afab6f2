"""Query and Scan: validate in DynamoDB's order, read one page, shape the answer.

The order of checks is part of the contract (a request with two faults gets
the service's first one): parameter mixing, legacy conditions, the starting
key's values, then expressions, then everything that needs the table's key
schema. ``validation/reads.py`` holds the rules (a KeyConditionExpression's
form: ``validation/key_conditions.py``); this module runs them in order and
turns the engine's page into DynamoDB's response.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..engine.advisor.describe import (
    describe_filter,
    describe_legacy_filter,
    describe_projection,
    legacy_filter_text,
)
from ..engine.advisor.shapes import tag_of
from ..engine.engine import Engine
from ..engine.expressions import Path, bind, bind_projection
from ..engine.expressions.legacy import (
    LegacyCondition,
    check_conditional_operator,
    translate_attributes_to_get,
    translate_conditions,
)
from ..engine.items.reads import (
    KeySpace,
    Page,
    PageSpec,
    Predicate,
    SortCondition,
    row_hash,
    segment_bounds,
)
from ..engine.model.values import normalize_value
from ..errors import ValidationException, ValueFault
from .expression_params import CURRENT, Expressions, check_usage, read_expressions
from .layers import current_wording
from .validation import reads as rules
from .validation.key_conditions import KeyTerm, key_terms_from_expression

Item = dict[str, dict[str, Any]]

# Parameter-mixing messages list expression parameters in this order; the
# expressions themselves are parsed (and report errors) in the other one.
_QUERY_EXPRESSIONS = ("ProjectionExpression", "FilterExpression", "KeyConditionExpression")
_QUERY_PARSE_ORDER = ("KeyConditionExpression", "FilterExpression", "ProjectionExpression")
_QUERY_LEGACY = ("AttributesToGet", "QueryFilter", "ConditionalOperator", "KeyConditions")
_SCAN_EXPRESSIONS = ("ProjectionExpression", "FilterExpression")
_SCAN_PARSE_ORDER = ("FilterExpression", "ProjectionExpression")
_SCAN_LEGACY = ("AttributesToGet", "ScanFilter", "ConditionalOperator")


class _Filter:
    """A request's filter and projection in either form, expression or legacy."""

    __slots__ = ("paths", "names", "predicate", "projector", "projection_paths", "legacy_filter", "condition")

    def __init__(self) -> None:
        self.paths: list[Path] = []
        self.names: dict[str, str] = {}
        self.predicate: Callable[[Item], bool] | None = None
        self.projector: Callable[[Item], Item] | None = None
        self.projection_paths: list[Path] = []
        self.legacy_filter: dict[str, Any] | None = None
        #: The parsed FilterExpression's tree (for the advisor's description of a new shape).
        self.condition: Any = None


def _legacy_filter(request: dict[str, Any], param: str) -> LegacyCondition | None:
    """Validate QueryFilter/ScanFilter and ConditionalOperator; the filter as an AST."""
    translated = translate_conditions(request.get(param), request.get("ConditionalOperator"), param)
    check_conditional_operator(request, (param,))
    return translated


def _filter_and_projection(
    request: dict[str, Any], expressions: Expressions, legacy_filter: LegacyCondition | None, param: str
) -> _Filter:
    out = _Filter()
    out.names = expressions.names
    condition = expressions.get("FilterExpression")
    if condition is not None:
        out.condition = condition.root
        out.paths = list(rules.condition_paths(condition))
        out.predicate = bind(condition, expressions.names, expressions.values)
    elif legacy_filter is not None:
        out.legacy_filter = request[param]
        out.predicate = bind(legacy_filter.condition, legacy_filter.names, legacy_filter.values)
    projection = expressions.get("ProjectionExpression")
    if projection is not None:
        out.projection_paths = list(projection.paths)
        out.projector = bind_projection(projection, expressions.names)
    else:
        legacy_projection = translate_attributes_to_get(request.get("AttributesToGet"))
        if legacy_projection is not None:
            out.projector = bind_projection(legacy_projection.projection, legacy_projection.names)
    return out


def _key_conditions(request: dict[str, Any]) -> dict[str, KeyTerm]:
    """Validate legacy KeyConditions as conditions; one term per attribute."""
    conditions = request["KeyConditions"]
    translate_conditions(conditions, None, "KeyConditions")
    return {
        name: KeyTerm(
            entry["ComparisonOperator"],
            [normalize_value(v) for v in entry.get("AttributeValueList") or ()],
        )
        for name, entry in conditions.items()
    }


def _space(engine: Engine, request: dict[str, Any], operation: str) -> KeySpace:
    """What the request reads: the table, or the index it names (which must be readable)."""
    table = engine.tables.get(request["TableName"])
    name = request.get("IndexName")
    if name is None:
        return KeySpace(table)
    index = table.index(name)
    if index is None:
        if any(v.name == name for v in table.vector_indexes):
            # Captured from the service (Aug 2026, other emulators' records): Query's message
            # ends with a period, Scan's does not.
            raise ValidationException(f"{operation} operation not supported on this index type"
                                      + ("." if operation == "Query" else ""))
        raise ValidationException(f"The table does not have the specified index: {name}")
    status = next(
        (d.get("IndexStatus") for d in table.description.get("GlobalSecondaryIndexes", []) if d["IndexName"] == name),
        None,
    )
    if status == "CREATING":
        raise ValidationException(f"Cannot read from backfilling global secondary index: {name}")
    space = KeySpace(table, index)
    rules.check_index_read(space, request)
    if index.is_global:
        engine.settle_global_indexes()
    return space


def _named_heads(request: dict[str, Any], filt: _Filter) -> set[str]:
    """Top-level attributes a read's projection and filter name (to compare with an index's)."""
    heads = rules.path_heads(iter(filt.projection_paths), filt.names)[0]
    heads |= set(request.get("AttributesToGet") or ())
    heads |= rules.path_heads(iter(filt.paths), filt.names)[0]
    if filt.legacy_filter is not None:
        heads |= set(filt.legacy_filter)
    return heads


def _needs_table(space: KeySpace, request: dict[str, Any], filt: _Filter, index_view: bool = False) -> bool:
    """Whether an index read must fetch items from the table (local indexes only).

    With `index_view` (PartiQL) only the projection decides: the filter reads
    the index's own entries, so it neither fetches nor is refused on a GSI.
    """
    if space.index is None:
        return False
    if index_view:
        heads = rules.path_heads(iter(filt.projection_paths), filt.names)[0]
    else:
        heads = _named_heads(request, filt)
    rules.check_global_projection(space, heads)
    if space.index.is_global or space.index.projection == "ALL":
        return False
    return request.get("Select") == "ALL_ATTRIBUTES" or bool(rules.unprojected(space, heads))


def _on_index_entry(space: KeySpace, predicate: Predicate) -> Predicate:
    """A filter judged on what the index entry holds, though the item was fetched from the table."""
    assert space.index is not None
    index, table_keys = space.index, space.table.key_names
    return lambda item: predicate(index.project(item, table_keys))


def _spec(request: dict[str, Any], filt: _Filter, space: KeySpace, index_view: bool = False,
          as_stored: bool = False) -> PageSpec:
    select = request.get("Select")
    fetch = _needs_table(space, request, filt, index_view)
    predicate = filt.predicate
    if index_view and fetch and predicate is not None:
        predicate = _on_index_entry(space, predicate)
    return PageSpec(
        limit=request.get("Limit"),
        predicate=predicate,
        projector=filt.projector,
        keep_items=select != "COUNT",
        consistent=bool(request.get("ConsistentRead")),
        fetch_from_table=fetch,
        as_stored=as_stored,
    )


def _answer(request: dict[str, Any], page: Page) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if request.get("Select") != "COUNT":
        out["Items"] = page.items
    out["Count"] = page.count
    out["ScannedCount"] = page.scanned_count
    if page.last_evaluated_key is not None:
        out["LastEvaluatedKey"] = page.last_evaluated_key
    document = page.consumed.document(request.get("ReturnConsumedCapacity"))
    if document is not None:
        out["ConsumedCapacity"] = document
    return out


def _advise(engine: Engine, operation: str, request: dict[str, Any], space: KeySpace, filt: _Filter, page: Page,
            first: bool, pk_tag: str | None = None, sort: SortCondition | None = None) -> None:
    """Count the page in its request shape (engine/advisor/shapes.py): a tuple and a few additions."""
    filter_text = request.get("FilterExpression")
    if filter_text is None and filt.legacy_filter is not None:
        filter_text = legacy_filter_text(filt.legacy_filter)
    projection = request.get("ProjectionExpression")
    if projection is None and request.get("AttributesToGet"):
        projection = ", ".join(request["AttributesToGet"])
    index = space.index
    sort_op = sk_tag = None
    if sort is not None:
        sort_op = sort.op
        range_key = space.range_key
        if (sort.type_ or (range_key.type if range_key is not None else None)) == "S":
            sk_tag = tag_of(sort.values[0])
    shape = (operation, space.table.table_id, None if index is None else index.name, pk_tag, sort_op, sk_tag,
             filter_text, projection, "Limit" in request, request.get("Select"))
    shapes = engine.advisor.shapes
    if not shapes.read(shape, page.scanned_count, page.count, page.bytes_read, page.consumed.total, first):
        shapes.add(shape, _describe(space, filt, request), page.scanned_count, page.count, page.bytes_read,
                   page.consumed.total, first)


def _describe(space: KeySpace, filt: _Filter, request: dict[str, Any]) -> dict[str, Any]:
    """A new shape's names and types (no values), for the findings to explain and fix it."""
    if filt.condition is not None:
        filtered = describe_filter(filt.condition, filt.names, request.get("ExpressionAttributeValues") or {})
    elif filt.legacy_filter is not None:
        filtered = describe_legacy_filter(filt.legacy_filter)
    else:
        filtered = {}
    projected = describe_projection(filt.projection_paths, filt.names) or list(request.get("AttributesToGet") or [])
    range_key = space.range_key
    return {
        "keys": [space.hash_key.name, None if range_key is None else range_key.name],
        "key_types": [space.hash_key.type, None if range_key is None else range_key.type],
        "filter": filtered,
        "projection": projected,
    }


def _projection_nested(filt: _Filter) -> set[str]:
    return rules.path_heads(iter(filt.projection_paths), filt.names)[1]


def query(
    engine: Engine,
    request: dict[str, Any],
    *,
    key_filters: bool = False,
    index_view: bool = False,
    pages: list[Page] | None = None,
    as_stored: bool = False,
) -> dict[str, Any]:
    """Query; `key_filters` lets the filter name key attributes (PartiQL's WHERE may, the JSON API may not),
    `index_view` judges the filter on the index's entries (PartiQL's, see _needs_table).

    `pages` receives the engine's page (the console shows its bytes read before the filter); a
    read made for the console is the developer browsing, not an access pattern, so the advisor
    does not count it.
    """
    try:  # a bad number or set member: bare, current wording (layers.py)
        rules.check_select(request, "Query")
        # KeyConditions may accompany the other expressions when there is no
        # KeyConditionExpression: the service only refuses mixing within a pair.
        legacy = _QUERY_LEGACY if request.get("KeyConditionExpression") is not None else _QUERY_LEGACY[:-1]
        check_usage(request, _QUERY_EXPRESSIONS, legacy)
        query_filter = _legacy_filter(request, "QueryFilter")
        rules.check_attributes_to_get(request)
        start_key = rules.normalize_start_key(request)
        if request.get("KeyConditions") is None and request.get("KeyConditionExpression") is None:
            raise ValidationException(
                "Either the KeyConditions or KeyConditionExpression parameter must be specified in the request."
            )
        expressions = read_expressions(request, _QUERY_PARSE_ORDER, layer=CURRENT)
        key_condition = expressions.get("KeyConditionExpression")
        if key_condition is not None:
            terms = key_terms_from_expression(key_condition, expressions.names, expressions.values)
        else:
            terms = _key_conditions(request)
        rules.check_condition_count(terms, request.get("IndexName") is not None)
    except ValueFault as fault:
        raise current_wording(fault) from None

    table = _space(engine, request, "Query")
    hash_value: str | tuple[str, ...]
    equal_ranges: tuple[str, ...] = ()
    if table.index is not None and table.index.multi:
        hash_value, equal_ranges, sort = rules.check_multi_query_keys(table, terms, start_key)
    else:
        hash_value, sort = rules.check_query_keys(table, terms, start_key)
    filt = _filter_and_projection(request, expressions, query_filter, "QueryFilter")
    rules.check_scalar_keys(table, _projection_nested(filt))
    if filt.legacy_filter is not None:
        rules.check_filter_keys(table, set(filt.legacy_filter), legacy=True)
    elif filt.paths:
        heads, nested = rules.path_heads(iter(filt.paths), filt.names)
        if not key_filters:
            rules.check_filter_keys(table, heads, legacy=False)
        rules.check_scalar_keys(table, nested)

    page = engine.reads.query(
        table,
        hash_value,
        sort,
        _spec(request, filt, table, index_view, as_stored),
        forward=request.get("ScanIndexForward", True) is not False,
        start_key=start_key,
        equal_ranges=equal_ranges,
    )
    if pages is not None:
        pages.append(page)
    pk_tag = tag_of(hash_value) if table.hash_key.type == "S" else None
    if pages is None:
        _advise(engine, "Query", request, table, filt, page, start_key is None, pk_tag, sort)
    return _answer(request, page)


def scan(
    engine: Engine, request: dict[str, Any], *, index_view: bool = False, pages: list[Page] | None = None,
    as_stored: bool = False,
) -> dict[str, Any]:
    check_usage(request, _SCAN_EXPRESSIONS, _SCAN_LEGACY)
    rules.check_attributes_to_get(request)
    scan_filter = _legacy_filter(request, "ScanFilter")
    start_key = rules.normalize_start_key(request)
    segment, total_segments = rules.check_segments(request)
    expressions = read_expressions(request, _SCAN_PARSE_ORDER)
    rules.check_select(request, "Scan")

    table = _space(engine, request, "Scan")
    rules.check_scan_start_key(table, start_key)
    if start_key is not None and total_segments > 1:
        low, high = segment_bounds(segment, total_segments)
        start_hash = row_hash(table, table.position(start_key))
        rules.check_start_key_segment(start_hash, low, high, segment, total_segments)
    filt = _filter_and_projection(request, expressions, scan_filter, "ScanFilter")
    rules.check_scalar_keys(table, _projection_nested(filt))
    if filt.paths:
        rules.check_scalar_keys(table, rules.path_heads(iter(filt.paths), filt.names)[1])

    page = engine.reads.scan(
        table,
        _spec(request, filt, table, index_view, as_stored),
        segment=segment,
        total_segments=total_segments,
        start_key=start_key,
    )
    if pages is not None:
        pages.append(page)
    if pages is None:  # not the console's (see query)
        _advise(engine, "Scan", request, table, filt, page, start_key is None)
    return _answer(request, page)


def query_operation(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    """The JSON API's Query: its answer only goes to orjson, so items may stay as stored (PageSpec.as_stored).

    In-process callers that read the items (PartiQL, the console) call `query`.
    """
    return query(engine, request, as_stored=True)


def scan_operation(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    """The JSON API's Scan (see `query_operation`)."""
    return scan(engine, request, as_stored=True)
