"""SearchVectors: validate in the service's order, search, shape SearchResults.

Order (as recorded from the service by conformance suites, with the
expression checks DynamoDB runs before it looks at a table): request
shape (dispatch) -> expressions (syntax, placeholders, unused names and
values) -> TopK range -> SearchVector values -> table -> index -> index
status -> vector dimension -> SearchConditionExpression operators -> its
attributes -> the HASH rule.

SearchConditionExpression is an AND of `attribute = :value` over top-level
search-schema attributes, and every other form is refused. Sources (quoted
in docs/decisions.md, "Vector indexes"): the pinned service model (botocore
1.44.8: HASH and INLINE_FILTER attributes "support only the equality
operator (=)"), the API reference and the developer guide's troubleshooting
page ("Comparison, range, and set-membership operators are not yet
available"), and searches recorded against the service in August and
September 2026 (< <= > >= <> and `>= AND <=`: "Invalid comparator"; BETWEEN,
IN: "Invalid operator"; NOT: an operator error, raised before attribute
names are checked). The developer guide's SearchConditionExpression
reference lists wider operators in its contents, but its body could not be
read and no recorded response accepts any of them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import orjson

from ..engine.engine import Engine
from ..engine.expressions import Path, Value
from ..engine.expressions.ast import And, Between, Call, Compare, In, Node, Not, Or
from ..engine.expressions.evaluate import bind_projection
from ..engine.vector.entries import _f32
from ..engine.vector.model import MAX_TOP_K, MIN_REQUEST_BYTES, VectorIndex
from ..engine.vector.search import value_key
from ..errors import ValidationException
from .expression_params import read_expressions

_EXPRESSIONS = ("SearchConditionExpression", "ProjectionExpression")
_COMPARATOR = "Invalid SearchConditionExpression: Invalid comparator used in SearchConditionExpression"
#: Recorded for BETWEEN and IN, and (as an operator error) for NOT; OR and functions are unrecorded
#: and given the same answer.
_OPERATOR = "Invalid SearchConditionExpression: Invalid operator used in SearchConditionExpression"


def _query_vector(values: list[dict[str, Any]]) -> np.ndarray:
    out = []
    for value in values:
        f = _f32(value) if isinstance(value, dict) else None
        if f is None:
            raise ValidationException(
                "Search vector contains invalid values. All values in the search vector must be a "
                "32-bit floating-point number attribute"
            )
        out.append(f)
    return np.asarray(out, dtype=np.float32)


def _attribute(path: Path, names: dict[str, str]) -> str:
    if len(path.elements) != 1 or not isinstance(path.elements[0], str):
        # Documented (top-level attributes only); the message is unconfirmed.
        raise ValidationException(
            "Invalid SearchConditionExpression: Only top-level attributes can be used in SearchConditionExpression"
        )
    element = path.elements[0]
    return names[element] if element.startswith("#") else element


def _check_operators(node: Node) -> None:
    """Refuse every form but an AND of `path = :value` before any attribute is looked at.

    The order is the service's: a condition with a refused operator and an attribute outside
    the SearchSchema gets the operator error (ScyllaDB's Alternator tests, run against
    DynamoDB, Sept 2026: "both DynamoDB and Alternator check for bad operators in the
    expression before checking that the individual attribute names are valid").
    """
    if isinstance(node, And):
        _check_operators(node.left)
        _check_operators(node.right)
        return
    if isinstance(node, (Between, In, Or, Not, Call)):
        raise ValidationException(_OPERATOR)
    assert isinstance(node, Compare)
    if node.op != "=":
        raise ValidationException(_COMPARATOR)
    sides = {type(node.left), type(node.right)}
    if sides != {Path, Value}:
        # unconfirmed: `a = b`, `:x = :y` or a function operand; the comparator answer.
        raise ValidationException(_COMPARATOR)


def _terms(node: Node, index: VectorIndex, names: dict[str, str], values: dict[str, Any],
           out: list[tuple[str, tuple[str, str]]]) -> None:
    """Flatten an AND of equalities (already checked by `_check_operators`) into (attribute, value key) terms."""
    if isinstance(node, And):
        _terms(node.left, index, names, values, out)
        _terms(node.right, index, names, values, out)
        return
    assert isinstance(node, Compare)
    path, value = (node.left, node.right) if isinstance(node.left, Path) else (node.right, node.left)
    assert isinstance(path, Path) and isinstance(value, Value)
    attribute = _attribute(path, names)
    if all(attribute != name for name, _ in index.schema):
        raise ValidationException(
            "SearchConditionExpression must not contain any attributes that is not in SearchSchema. "
            f"Invalid attribute: {attribute}"
        )
    out.append((attribute, value_key(values[value.name])))


def search_vectors(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    expressions = read_expressions(request, _EXPRESSIONS)
    top_k = request["TopK"]
    if top_k > MAX_TOP_K:
        raise ValidationException(
            f"Provided TopK value '{top_k}' is out of valid range. The value must be between 1 and "
            f"{MAX_TOP_K} inclusive"
        )
    query = _query_vector(request["SearchVector"])
    table = engine.tables.get(request["TableName"])
    name = request["IndexName"]
    index = next((i for i in table.vector_indexes if i.name == name), None)
    if index is None or index.status == "DELETING":
        raise ValidationException(f"The table does not have the specified index: {name}")
    if index.status == "CREATING":
        raise ValidationException(f"Cannot search backfilling vector index: {name}")
    if query.shape[0] != index.dimensions:
        raise ValidationException(
            f"Input search vector dimension {query.shape[0]} does not match vector index dimension {index.dimensions}"
        )
    terms: list[tuple[str, tuple[str, str]]] = []
    condition = expressions.get("SearchConditionExpression")
    if condition is not None:
        _check_operators(condition.root)
        _terms(condition.root, index, expressions.names, expressions.values, terms)
    if index.hash_key is not None and all(attr != index.hash_key[0] for attr, _ in terms):
        raise ValidationException("SearchConditionExpression must be provided when SearchSchema has a HASH key")
    found = engine.vectors.search(index, query, top_k, terms)
    projection = expressions.get("ProjectionExpression")
    project = None if projection is None else bind_projection(projection, expressions.names)
    results = []
    wants_vector = projection is not None and index.attribute in {
        _attribute_or_none(p, expressions.names) for p in projection.paths}
    for score, header, _, vector in found:
        item = orjson.loads(header)
        if project is not None:
            if wants_vector:
                # The index's float32 copy, in the shortest decimal naming each float32.
                item[index.attribute] = {"L": [{"N": str(x)} for x in vector]}
            item = project(item)
        results.append({"Item": item, "Score": score})
    out: dict[str, Any] = {"SearchResults": results}
    if request.get("ReturnConsumedCapacity", "NONE") != "NONE":
        # Partita's own figure: AWS meters the bytes its search examined and does not
        # reproduce it between identical calls; here the query plus the entries returned.
        examined = 4 * index.dimensions + sum(w for _, _, w, _ in found)
        out["ConsumedCapacity"] = {"VectorSearchRequestBytes": float(max(MIN_REQUEST_BYTES, examined))}
    return out


def _attribute_or_none(path: Path, names: dict[str, str]) -> str | None:
    element = path.elements[0]
    if not isinstance(element, str):
        return None
    return names.get(element, element) if element.startswith("#") else element

