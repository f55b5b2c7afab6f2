"""The request-level rules around expressions, shared by every data operation.

Which expressions a request carries, whether it mixes them with the legacy
parameters, whether ExpressionAttributeNames/Values are allowed, well formed
and all used: DynamoDB checks these before it looks at the table, in this
order, with these words.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..engine.expressions import (
    check_placeholders,
    parse_condition,
    parse_projection,
    parse_update,
)
from ..engine.model.values import MSG_NESTING, normalize_value, normalize_value_one_level_deeper
from ..errors import RequestFault, ValidationException, ValueFault

#: How an operation words its parameter and value faults, as a 2026 conformance suite recorded
#: on AWS (docs/decisions.md, "Query and Scan"). OLDER (BatchWriteItem, transactions, Scan ...):
#: a bad value inside "ExpressionAttributeValues contains invalid value: ... for key :v".
#: CURRENT (GetItem, Query): a bad number or repeated set member unwrapped, in the current
#: wording. ENVELOPED (PutItem, UpdateItem, DeleteItem): CURRENT, and the caller puts the
#: request's parameter and value faults inside "1 validation error detected: ".
OLDER, CURRENT, ENVELOPED = "older", "current", "enveloped"

_NAME_KEY = re.compile(r"#[A-Za-z0-9_]+\Z")
_VALUE_KEY = re.compile(r":[A-Za-z0-9_]+\Z")

# Expressions that may use ExpressionAttributeValues (a projection cannot).
_USES_VALUES = (
    "UpdateExpression", "ConditionExpression", "KeyConditionExpression", "FilterExpression", "SearchConditionExpression",
)

_PARSERS: dict[str, Callable[[str], Any]] = {
    "ConditionExpression": lambda text: parse_condition(text, "ConditionExpression"),
    "FilterExpression": lambda text: parse_condition(text, "FilterExpression"),
    "KeyConditionExpression": lambda text: parse_condition(text, "KeyConditionExpression"),
    "SearchConditionExpression": lambda text: parse_condition(text, "SearchConditionExpression"),
    "ProjectionExpression": parse_projection,
    "UpdateExpression": parse_update,
}


@dataclass(slots=True)
class Expressions:
    """The parsed expressions of one request and the placeholders they use."""

    parsed: dict[str, Any] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)
    values: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: A value sits one level past the item limit (only when the caller allowed it).
    deep_values: bool = False

    def get(self, param: str) -> Any:
        return self.parsed.get(param)


#: What a request without expressions reads: one shared value, never changed by its readers.
_NO_EXPRESSIONS = Expressions()


def _braces(params: Sequence[str]) -> str:
    return "{" + ", ".join(params) + "}"


def check_usage(
    request: dict[str, Any], expression_params: Sequence[str], legacy_params: Sequence[str], layer: str = OLDER
) -> bool:
    """The mixing rules on their own (Query checks its starting key between them and the parsing).

    True when the request uses expressions. In the ENVELOPED layer the
    ExpressionAttributeValues text names no null expressions (2026 records).
    """
    for param in expression_params:
        if param in request:
            break
    else:  # no expression (most GetItem, PutItem): nothing to list
        for param in legacy_params:
            if param in request:
                break
        else:
            if "ExpressionAttributeNames" not in request and "ExpressionAttributeValues" not in request:
                return False
    used = [p for p in expression_params if p in request]
    legacy = [p for p in legacy_params if p in request]
    if used and legacy:
        raise ValidationException(
            "Can not use both expression and non-expression parameters in the same request: "
            f"Non-expression parameters: {_braces(legacy)} Expression parameters: {_braces(used)}"
        )
    if used:
        return True
    if "ExpressionAttributeNames" in request:
        raise RequestFault("ExpressionAttributeNames can only be specified when using expressions")
    if "ExpressionAttributeValues" in request:
        message = "ExpressionAttributeValues can only be specified when using expressions"
        if layer != ENVELOPED:
            nulls = [p for p in expression_params if p in _USES_VALUES]
            message += f": {' and '.join(nulls)} {'is' if len(nulls) == 1 else 'are'} null"
        raise RequestFault(message)
    return False


def _placeholder_map(request: dict[str, Any], param: str, pattern: re.Pattern[str]) -> dict[str, Any]:
    mapping = request.get(param)
    if mapping is None:
        return {}
    if not mapping:
        raise RequestFault(f"{param} must not be empty")
    names = pattern is _NAME_KEY
    for key, value in mapping.items():
        if not pattern.match(key):
            raise ValidationException(f'{param} contains invalid key: Syntax error; key: "{key}"')
        if names and value == "":
            # DynamoDB's words, as applications quote them ("... for key #DE").
            raise ValidationException(f"{param} contains invalid value: Empty attribute name for key {key}")
    return mapping


def _normalized_values(
    values: dict[str, Any], one_level_deeper: bool = False, layer: str = OLDER
) -> tuple[dict[str, dict[str, Any]], bool]:
    """The canonical values, and whether one needed the extra level `one_level_deeper` allows.

    Outside the OLDER layer a bad number or repeated set member is reported as it is, with no
    wrapper naming the placeholder (2026 records); other value faults keep the wrapper.
    """
    out = {}
    deep = False
    for key, value in values.items():
        try:
            try:
                out[key] = normalize_value(value)
            except ValidationException as error:
                if not one_level_deeper or error.message != MSG_NESTING:
                    raise
                out[key] = normalize_value_one_level_deeper(value)
                deep = True
        except ValidationException as error:
            if layer != OLDER and isinstance(error, ValueFault):
                raise
            raise ValidationException(
                f"ExpressionAttributeValues contains invalid value: {error.message} for key {key}"
            ) from None
    return out, deep


def read_expressions(
    request: dict[str, Any],
    expression_params: Sequence[str],
    legacy_params: Sequence[str] = (),
    values_one_level_deeper: bool = False,
    layer: str = OLDER,
) -> Expressions:
    """Validate and parse the request's expressions (cached by text).

    `values_one_level_deeper`: ExpressionAttributeValues may nest one level
    past the item limit (TransactWriteItems; see normalize_value_one_level_deeper).
    `layer`: how the operation words its faults (OLDER, CURRENT, ENVELOPED).
    """
    if not check_usage(request, expression_params, legacy_params, layer):
        return _NO_EXPRESSIONS
    names = _placeholder_map(request, "ExpressionAttributeNames", _NAME_KEY)
    values, deep = _normalized_values(
        _placeholder_map(request, "ExpressionAttributeValues", _VALUE_KEY), values_one_level_deeper, layer
    )
    parsed = {}
    for param in expression_params:
        text = request.get(param)
        if text is not None:
            try:
                parsed[param] = _PARSERS[param](text)
            except ValidationException as error:
                if text.strip():
                    raise
                # An empty expression is a fault of the request's parameters, not of an expression.
                raise RequestFault(error.message) from None
    check_placeholders(list(parsed.values()), names, values)
    return Expressions(parsed, names, values, deep)

