"""Request-shape validation compiled from the DynamoDB service model botocore ships.

DynamoDB (a Java "coral" service) checks every request twice before the
operation sees it, and clients can tell the two apart:

1. Deserialization. A JSON value of the wrong kind for its member aborts the
   request at once with a ``SerializationException`` whose message comes from
   the Java JSON codec (``NUMBER_VALUE cannot be converted to String``,
   ``Unexpected field type`` ...). Unknown members are ignored; JSON ``null``
   counts as absent.
2. Constraint validation. Every violated model constraint (required, length,
   range, pattern, enum) becomes one clause ``Value <v> at '<path>' failed to
   satisfy constraint: Member must ...``; at most ten are joined into ``N
   validation error(s) detected: a; b`` and raised as a ValidationException
   with coral's validate prefix.

Rather than writing rules per operation, this module walks the model once per
operation (on first use) and builds a tree of small closures; validating a
request is then one pass over the parsed body with no model lookups.

Facts and sources (copied as facts, no code):
- Serialization messages: the current dynalite test helpers (architect/dynalite
  ``test/helpers`` assertType), which record the modern codec's texts.
- Constraint clauses, ``member`` paths (``keySchema.1.member.attributeName``,
  ``scanFilter.a.member.comparisonOperator``), the 10-error cap: dynalite's
  ``validations/index.js`` and tests, and a 2026 catalogue of answers from the
  real service (``describe_table_empty_name``, ``ct_keyschema_empty_entry`` ...).
- Order of clauses: the real service is *not* deterministic here (dynalite's
  newest tests accept any order). The observed orders fit a Java ``HashMap``
  keyed by lowerCamel member names (5 of 5 recent observations), so members are
  visited in that order; clauses for one member follow the hash order of their
  message text (3 of 3 observations). Both are best fits, not certainties.
- Enum lists in messages use the service's own order, which differs from the
  published model for a few enums; those are pinned in ``_ENUM_ORDER`` from
  observed messages. Everything else comes from the model.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from typing import Any

from partita.engine.values import START_OF_MAP, json_token_name
from partita.errors import (
    SerializationException,
    ShapeValidationException,
)

from .java_text import java_hashmap_order, java_map_str, java_str, order_clauses

__all__ = ["validate_request", "compile_operation", "known_operations", "is_model_operation"]

# A leaf check returns the constraint tails it violates ("Member must ...") or
# None, and raises SerializationException for a JSON value of the wrong kind.
LeafCheck = Callable[[Any], "list[str] | None"]
# A container check gets its own full path and appends finished clauses.
ContainerCheck = Callable[[Any, str, list[str]], None]

_JAVA_PKG = "com.amazonaws.dynamodb.v20120810."
_MAX_ERRORS = 10

# The service lists these enums in its own order, not the published model's.
# Source: real-service messages (2026 catalogue: ScalarAttributeType,
# StreamViewType, ContributorInsightsMode) and dynalite's recorded messages
# (the rest). Used only when the set of values still equals the model's.
_ENUM_ORDER: dict[str, tuple[str, ...]] = {
    "ScalarAttributeType": ("B", "N", "S"),
    "StreamViewType": ("OLD_IMAGE", "KEYS_ONLY", "NEW_AND_OLD_IMAGES", "NEW_IMAGE"),
    "ContributorInsightsMode": ("THROTTLED_KEYS", "ACCESSED_AND_THROTTLED_KEYS"),
    "ReturnValue": ("ALL_NEW", "UPDATED_OLD", "ALL_OLD", "NONE", "UPDATED_NEW"),
    "ComparisonOperator": (
        "IN",
        "NULL",
        "BETWEEN",
        "LT",
        "NOT_CONTAINS",
        "EQ",
        "GT",
        "NOT_NULL",
        "NE",
        "LE",
        "BEGINS_WITH",
        "GE",
        "CONTAINS",
    ),
    "ConditionalOperator": ("OR", "AND"),
    "Select": ("SPECIFIC_ATTRIBUTES", "COUNT", "ALL_ATTRIBUTES", "ALL_PROJECTED_ATTRIBUTES"),
    "ProjectionType": ("ALL", "INCLUDE", "KEYS_ONLY"),
}

# Constraints the real service enforces that the published model lacks.
# KeySchema: "Member must have length less than or equal to 2" is recorded from
# the service (dynalite createTable tests, and again in 2026 for a table's
# keySchema); botocore's model only has min 1. A GSI's KeySchema may hold up to
# 4 HASH + 4 RANGE elements (multi-attribute keys, 2025-11), so the GSI shapes
# get an unbounded copy and validation/tables.py words those limits.
# CreateTableInput: the 2026 model lists only TableName as required, but the
# service still answers a missing KeySchema or AttributeDefinitions with
# "Value null at 'keySchema' failed to satisfy constraint: Member must not be
# null" (ack-api-quirks DDB-TABLE-042, verified 2026-10-08).
_MODEL_PATCHES: dict[str, dict[str, Any]] = {
    "KeySchema": {"max": 2},
    "GlobalSecondaryIndexKeySchema": {"type": "list", "member": {"shape": "KeySchemaElement"}, "min": 1},
    "CreateTableInput": {"required": ["TableName", "KeySchema", "AttributeDefinitions"]},
}
_GSI_KEY_SCHEMA_OWNERS = ("GlobalSecondaryIndex", "CreateGlobalSecondaryIndexAction")

# The codec's message for a scalar where a collection nested directly in
# another collection is expected (dynalite: RequestItems.Attr, Keys.0).
_CAST_MSG = (
    "class sun.reflect.generics.reflectiveObjects.ParameterizedTypeImpl cannot be cast to "
    "class java.lang.Class (sun.reflect.generics.reflectiveObjects.ParameterizedTypeImpl and "
    "java.lang.Class are in module java.base of loader 'bootstrap')"
)
_START_OF_LIST = "Start of list found where not expected"
# How many elements past its maximum length a list's elements are still checked.
_EXTRA_ELEMENTS = 1000
# Lists the model leaves unbounded but an operation refuses past a length
# (legacy conditions take at most 99 values: engine/expressions/legacy.py);
# only the element checks are bounded by it, no clause is added.
_OPERATION_MAX = {"AttributeValueList": 100}
# The shapes of L and M attribute values: the only recursion in the model.
_NESTED_VALUE_SHAPES = frozenset(("ListAttributeValue", "MapAttributeValue"))

# Context a structure, list or map value sits in; the codec's messages differ.
_FIELD = "field"  # member of a structure (or the top-level body)
_ELEMENT = "element"  # element of a list or value of a map
# A map's value whose length constraints the map states once for all values
# (see ``_Compiler._map_entries``); otherwise like an element.
_MAP_VALUE = "map value"


# Java regex constructs the model uses that Python's ``re`` spells differently.
_JAVA_REGEX_FIXES: tuple[tuple[str, str], ...] = (
    (r"\p{Print}", r"[\x20-\x7e]"),
    # A surrogate pair range written as UTF-16 units means "any supplementary character".
    (r"\uD800\uDC00-\uDBFF\uDFFF", r"\U00010000-\U0010FFFF"),
)


def _java_regex(pattern: str) -> re.Pattern[str] | None:
    """Compile a model (Java) pattern for Python; None (unchecked) if it cannot be translated."""
    for java, python in _JAVA_REGEX_FIXES:
        pattern = pattern.replace(java, python)
    try:
        return re.compile(pattern, re.DOTALL)
    except re.error:
        return None


def _lower_first(name: str) -> str:
    """Member names in paths are lowerCamel: only the first letter is lowered (``sSESpecification``)."""
    return name[:1].lower() + name[1:]


# --------------------------------------------------------------------------
# Serialization (JSON kind) errors.
# --------------------------------------------------------------------------



def _serialization(message: str | None) -> SerializationException:
    return SerializationException(message)


def _scalar_kind_error(value: Any, java_type: str) -> SerializationException:
    """Error for a list or object where a scalar of ``java_type`` is expected."""
    if isinstance(value, list):
        return _serialization(f"Unrecognized collection type class java.lang.{java_type}")
    return _serialization(START_OF_MAP)


_JAVA_INT_BOUND = 2**31
_JAVA_LONG_BOUND = 2**63


def _as_integer(value: float, java: str) -> int:
    """What the codec makes of a JSON number with a fraction in an Integer/Long member.

    Java's narrowing (truncation toward zero), as dynalite recorded the service
    accepting floats there (it floors; the two differ only below zero, where
    every integer member of the model is out of range anyway). A value beyond
    the Java type's range cannot be converted. Neither answer is on a recent
    record of the service; see docs/decisions.md ("Robustness").
    """
    bound = _JAVA_INT_BOUND if java == "Integer" else _JAVA_LONG_BOUND
    if not -bound <= value < bound:  # also false for NaN
        raise _serialization(f"DECIMAL_VALUE cannot be converted to {java}")
    return int(value)


#: A null element of a list or value of a map (the model's lists and maps are
#: dense). The service's text for this case is unrecorded; this is coral's
#: clause for a null where a value is required.
_NOT_NULL = ["Member must not be null"]

#: How deep the validator follows nested L/M attribute values. Deeper values
#: are refused by the value module ("Nesting Levels have exceeded supported
#: limits"), so following them further would only spend stack.
MAX_VALUE_DEPTH = 34
_value_depth = [0]


def _depth_guarded(check: ContainerCheck) -> ContainerCheck:
    """Stop descending into L/M values past MAX_VALUE_DEPTH (a request is handled on one thread)."""

    def guarded(value: Any, path: str, errors: list[str]) -> None:
        depth = _value_depth[0]
        if depth >= MAX_VALUE_DEPTH:
            return
        _value_depth[0] = depth + 1
        try:
            check(value, path, errors)
        finally:
            _value_depth[0] = depth

    return guarded


# --------------------------------------------------------------------------
# Compilation of shapes.
# --------------------------------------------------------------------------


class _Compiler:
    """Turns model shapes into closures; shared sub-shapes are compiled once per context."""

    def __init__(self, model: dict[str, Any]) -> None:
        self.shapes: dict[str, Any] = dict(model["shapes"])
        # The patches are about DynamoDB's own model; the Streams model lacks its shapes.
        if all(owner in self.shapes for owner in _GSI_KEY_SCHEMA_OWNERS):
            for name, patch in _MODEL_PATCHES.items():
                self.shapes[name] = {**self.shapes.get(name, {}), **patch}
        for owner in _GSI_KEY_SCHEMA_OWNERS:
            if owner not in self.shapes:
                continue
            members = dict(self.shapes[owner]["members"])
            members["KeySchema"] = {**members["KeySchema"], "shape": "GlobalSecondaryIndexKeySchema"}
            self.shapes[owner] = {**self.shapes[owner], "members": members}
        self._leaf_cache: dict[str, LeafCheck] = {}
        self._container_cache: dict[tuple[str, str], ContainerCheck] = {}
        # Leaves of integer shapes: a float member is replaced by its truncation.
        self._integer_leaves: set[LeafCheck] = set()

    # ----- helpers -----

    def java_type(self, shape_name: str) -> str:
        """The Java type the codec names in ``Unrecognized collection type ...`` messages."""
        shape = self.shapes[shape_name]
        kind = shape["type"]
        if kind == "structure":
            return _JAVA_PKG + shape_name
        if kind == "list":
            return f"java.util.List<{self.java_type(shape['member']['shape'])}>"
        if kind == "map":
            return f"java.util.Map<java.lang.String, {self.java_type(shape['value']['shape'])}>"
        return (
            "java.lang."
            + {
                "string": "String",
                "boolean": "Boolean",
                "integer": "Integer",
                "long": "Long",
                "double": "Double",
                "blob": "ByteBuffer",
                "timestamp": "Date",
            }[kind]
        )

    def shape_namer(self, shape_name: str) -> Callable[[Any], str | None]:
        """For value rendering: which structure shape a dict in this position is."""
        shape = self.shapes[shape_name]
        kind = shape["type"]
        if kind == "structure":
            return lambda _v: shape_name
        if kind == "list":
            inner = shape["member"]["shape"]
            return lambda _v: inner if self.shapes[inner]["type"] == "structure" else None
        return lambda _v: None

    def is_container(self, shape_name: str) -> bool:
        return self.shapes[shape_name]["type"] in ("structure", "list", "map")

    # ----- leaves -----

    def leaf(self, shape_name: str) -> LeafCheck:
        cached = self._leaf_cache.get(shape_name)
        if cached is None:
            cached = self._leaf_cache[shape_name] = self._build_leaf(shape_name)
        return cached

    def _build_leaf(self, shape_name: str) -> LeafCheck:
        shape = self.shapes[shape_name]
        kind = shape["type"]
        if shape_name == "TableArn":
            return self._table_arn_leaf()
        if kind == "string":
            return self._string_leaf(shape_name, shape)
        if kind in ("integer", "long"):
            return self._integer_leaf(shape, "Integer" if kind == "integer" else "Long")
        if kind == "double":
            return self._double_leaf(shape)
        if kind == "boolean":
            return _boolean_leaf
        if kind == "blob":
            return _blob_leaf
        if kind == "timestamp":
            return _timestamp_leaf
        raise ValueError(f"not a scalar shape: {shape_name} ({kind})")

    def _string_leaf(self, shape_name: str, shape: dict[str, Any]) -> LeafCheck:
        lo: int | None = shape.get("min")
        hi: int | None = shape.get("max")
        pattern: str | None = shape.get("pattern")
        enum: list[str] | None = shape.get("enum")
        regex = _java_regex(pattern) if pattern else None
        enum_set = frozenset(enum) if enum else None
        enum_msg = ""
        if enum:
            order = _ENUM_ORDER.get(shape_name)
            shown = order if order and set(order) == set(enum) else tuple(enum)
            enum_msg = "Member must satisfy enum value set: [" + ", ".join(shown) + "]"
        lo_msg = f"Member must have length greater than or equal to {lo}"
        hi_msg = f"Member must have length less than or equal to {hi}"
        pattern_msg = f"Member must satisfy regular expression pattern: {pattern}"
        unconstrained = lo is None and hi is None and regex is None and enum_set is None

        def check(value: Any) -> list[str] | None:
            if value.__class__ is not str:
                if isinstance(value, list | dict):
                    raise _scalar_kind_error(value, "String")
                raise _serialization(f"{json_token_name(value)} cannot be converted to String")
            if unconstrained:
                return None
            out: list[str] | None = None
            # Java counts UTF-16 code units; code points differ only past the BMP.
            n = len(value)
            if lo is not None and n < lo:
                out = [lo_msg]
            if hi is not None and n > hi:
                out = (out or []) + [hi_msg]
            if regex is not None and regex.fullmatch(value) is None:
                out = (out or []) + [pattern_msg]
            if enum_set is not None and value not in enum_set:
                out = (out or []) + [enum_msg]
            return out

        return check

    def _table_arn_leaf(self) -> LeafCheck:
        """``TableName`` members take a name or an ARN (model shape ``TableArn``, 1..1024).

        Deviation from the published model, for fidelity: the real service
        still answers a bad *name* with the ``TableName`` shape's clauses
        (length >= 3, <= 255, pattern; observed for DescribeTable in 2026), so
        a value that is not an ARN is checked against ``TableName``; an ARN is
        checked against ``TableArn``. Whether the ARN is well formed is the
        operation's business.
        """
        as_name = self._string_leaf("TableName", self.shapes["TableName"])
        as_arn = self._string_leaf("TableArn", self.shapes["TableArn"])

        def check(value: Any) -> list[str] | None:
            if value.__class__ is str and value.startswith("arn:"):
                return as_arn(value)
            return as_name(value)

        return check

    def _integer_leaf(self, shape: dict[str, Any], java: str) -> LeafCheck:
        lo: int | None = shape.get("min")
        hi: int | None = shape.get("max")
        lo_msg = f"Member must have value greater than or equal to {lo}"
        hi_msg = f"Member must have value less than or equal to {hi}"
        bound = _JAVA_INT_BOUND if java == "Integer" else _JAVA_LONG_BOUND

        def check(value: Any) -> list[str] | None:
            cls = value.__class__
            if cls is not int:
                if cls is float:
                    # Callers replace the float by this truncation (see _as_integer).
                    value = _as_integer(value, java)
                elif cls is bool:
                    raise _serialization(f"{json_token_name(value)} cannot be converted to {java}")
                elif cls is str:
                    raise _serialization(f"STRING_VALUE cannot be converted to {java}")
                else:
                    raise _scalar_kind_error(value, java)
            elif not -bound <= value < bound:
                raise _serialization(f"NUMBER_VALUE cannot be converted to {java}")
            out: list[str] | None = None
            if lo is not None and value < lo:
                out = [lo_msg]
            if hi is not None and value > hi:
                out = (out or []) + [hi_msg]
            return out

        self._integer_leaves.add(check)
        return check

    def _double_leaf(self, shape: dict[str, Any]) -> LeafCheck:
        lo = shape.get("min")
        hi = shape.get("max")

        def check(value: Any) -> list[str] | None:
            cls = value.__class__
            if cls is not int and cls is not float:
                if cls is bool:
                    raise _serialization(f"{json_token_name(value)} cannot be converted to Double")
                if cls is str:
                    raise _serialization("STRING_VALUE cannot be converted to Double")
                raise _scalar_kind_error(value, "Double")
            out: list[str] | None = None
            if lo is not None and value < lo:
                out = [f"Member must have value greater than or equal to {lo}"]
            if hi is not None and value > hi:
                out = (out or []) + [f"Member must have value less than or equal to {hi}"]
            return out

        return check

    # ----- containers -----

    def container(self, shape_name: str, context: str) -> ContainerCheck:
        key = (shape_name, context)
        cached = self._container_cache.get(key)
        if cached is None:
            # Recursive shapes (AttributeValue -> L -> AttributeValue) need a
            # forwarder in the cache before the body is built.
            slot: list[ContainerCheck] = []

            def forward(value: Any, path: str, errors: list[str]) -> None:
                slot[0](value, path, errors)

            self._container_cache[key] = forward
            built = self._build_container(shape_name, context)
            if shape_name in _NESTED_VALUE_SHAPES:
                built = _depth_guarded(built)
            slot.append(built)
            self._container_cache[key] = built
            cached = built
        return cached

    def _build_container(self, shape_name: str, context: str) -> ContainerCheck:
        kind = self.shapes[shape_name]["type"]
        if kind == "structure":
            return self._structure(shape_name, context)
        if kind == "list":
            return self._list(shape_name, context)
        return self._map(shape_name, context)

    def _collection_length(self, shape_name: str) -> Callable[[Any, str, list[str]], None] | None:
        shape = self.shapes[shape_name]
        lo: int | None = shape.get("min")
        hi: int | None = shape.get("max")
        if lo is None and hi is None:
            return None
        namer = self.shape_namer(shape_name)
        lo_msg = f"Member must have length greater than or equal to {lo}"
        hi_msg = f"Member must have length less than or equal to {hi}"

        def check(value: Any, path: str, errors: list[str]) -> None:
            n = len(value)
            if (lo is not None and n < lo) or (hi is not None and n > hi):
                shown = "'" + java_str(value, namer) + "'"
                tails = []
                if lo is not None and n < lo:
                    tails.append(lo_msg)
                if hi is not None and n > hi:
                    tails.append(hi_msg)
                _add(errors, shown, path, tails)

        return check

    def _structure(self, shape_name: str, context: str) -> ContainerCheck:
        shape = self.shapes[shape_name]
        required = set(shape.get("required", ()))
        members: dict[str, Any] = shape["members"]
        by_lower = {_lower_first(name): name for name in members}
        plan: list[tuple[str, str, bool, bool, Any, Callable[[Any], str | None]]] = []
        for lower in java_hashmap_order(list(by_lower)):
            name = by_lower[lower]
            target = members[name]["shape"]
            if self.is_container(target):
                fn: Any = self.container(target, _FIELD)
                plan.append((name, lower, name in required, True, fn, self.shape_namer(target)))
            else:
                fn = self.leaf(target)
                plan.append((name, lower, name in required, False, fn, self.shape_namer(target)))
        integers = {
            entry[0]: "Integer" if self.shapes[members[entry[0]]["shape"]]["type"] == "integer" else "Long"
            for entry in plan
            if entry[4] in self._integer_leaves
        }
        list_msg = f"Unrecognized collection type class {_JAVA_PKG}{shape_name}"
        scalar_msg = (
            "Unexpected field type" if context == _FIELD else "Unexpected value type in payload"
        )

        by_name = {entry[0]: entry for entry in plan}
        required_names = tuple(entry[0] for entry in plan if entry[2])

        def visit(entry: tuple[Any, ...], member: Any, prefix: str, errors: list[str]) -> None:
            _name, lower, _req, is_container, fn, namer = entry
            if is_container:
                fn(member, prefix + lower, errors)
            else:
                tails = fn(member)
                if tails:
                    _add(errors, "'" + java_str(member, namer) + "'", prefix + lower, tails)

        def check(value: Any, path: str, errors: list[str]) -> None:
            if value.__class__ is not dict:
                if isinstance(value, list):
                    raise _serialization(list_msg)
                raise _serialization(scalar_msg)
            prefix = path + "." if path else ""
            # Fast path: visit only the members present (cost follows the body,
            # not the model). Clause order only matters when there are clauses,
            # so on the rare failing request redo the walk in the service's order.
            before = len(errors)
            for name, member in value.items():
                entry = by_name.get(name)
                if entry is not None and member is not None:
                    if member.__class__ is float and name in integers:
                        # The operation sees the integer the codec would have made.
                        member = value[name] = _as_integer(member, integers[name])
                    visit(entry, member, prefix, errors)
            for name in required_names:
                if value.get(name) is None:
                    errors.append("")
                    break
            if len(errors) == before:
                return
            del errors[before:]
            for entry in plan:
                member = value.get(entry[0])
                if member is None:
                    if entry[2]:
                        _add(errors, "null", prefix + entry[1], ["Member must not be null"])
                    continue
                visit(entry, member, prefix, errors)

        return check

    def _list(self, shape_name: str, context: str) -> ContainerCheck:
        member_shape = self.shapes[shape_name]["member"]["shape"]
        length = None if context == _MAP_VALUE else self._collection_length(shape_name)
        # Past its maximum length a list is refused anyway; as the service
        # does, its elements are still checked (clauses for the 3rd of 3 key
        # schema elements are recorded), but only _EXTRA_ELEMENTS past the
        # maximum, so the cost follows the limit, not the input (a million
        # empty transaction items).
        hi: int | None = self.shapes[shape_name].get("max", _OPERATION_MAX.get(shape_name))
        most = None if hi is None else hi + _EXTRA_ELEMENTS
        scalar_msg = "Unexpected field type" if context == _FIELD else _CAST_MSG
        if self.is_container(member_shape):
            child: ContainerCheck = self.container(member_shape, _ELEMENT)
            # A null attribute value is the value module's to refuse, in its words.
            nulls_refused = member_shape != "AttributeValue"

            def check(value: Any, path: str, errors: list[str]) -> None:
                if value.__class__ is not list:
                    if isinstance(value, dict):
                        raise _serialization(START_OF_MAP)
                    raise _serialization(scalar_msg)
                if length is not None:
                    length(value, path, errors)
                if most is not None and len(value) > most:
                    value = value[:most]
                for i, element in enumerate(value, 1):
                    if element is not None:
                        child(element, f"{path}.{i}.member", errors)
                    elif nulls_refused:
                        _add(errors, "null", f"{path}.{i}.member", _NOT_NULL)

            return check

        leaf = self.leaf(member_shape)

        def check_leaves(value: Any, path: str, errors: list[str]) -> None:
            if value.__class__ is not list:
                if isinstance(value, dict):
                    raise _serialization(START_OF_MAP)
                raise _serialization(scalar_msg)
            if length is not None:
                length(value, path, errors)
            if most is not None and len(value) > most:
                value = value[:most]
            for i, element in enumerate(value, 1):
                if element is not None:
                    tails = leaf(element)
                    if tails:
                        shown = "'" + java_str(element, lambda _v: None) + "'"
                        _add(errors, shown, f"{path}.{i}.member", tails)
                else:
                    _add(errors, "null", f"{path}.{i}.member", _NOT_NULL)

        return check_leaves

    def _map(self, shape_name: str, context: str) -> ContainerCheck:
        shape = self.shapes[shape_name]
        value_shape = shape["value"]["shape"]
        collection_length = self._collection_length(shape_name)
        entries = self._map_entries(shape_name)
        length: Callable[[Any, str, list[str]], None] | None = collection_length
        if entries is not None:

            def length(value: Any, path: str, errors: list[str]) -> None:
                if collection_length is not None:
                    collection_length(value, path, errors)
                entries(value, path, errors)

        list_msg = f"Unrecognized collection type {self.java_type(shape_name)}"
        scalar_msg = "Unexpected field type" if context == _FIELD else _CAST_MSG
        # Map keys are not shape-checked per entry: table names in RequestItems
        # get one clause for the whole map (``_map_entries``); attribute-name
        # length gets operation-specific messages, which the operations produce.
        if value_shape == "AttributeValue":
            attr = self.container("AttributeValue", _ELEMENT)

            def check_items(value: Any, path: str, errors: list[str]) -> None:
                if value.__class__ is not dict:
                    if isinstance(value, list):
                        raise _serialization(list_msg)
                    raise _serialization(scalar_msg)
                if length is not None:
                    length(value, path, errors)
                for key, element in value.items():
                    if element is not None:
                        attr(element, f"{path}.{key}.member", errors)

            return check_items

        if self.is_container(value_shape):
            child: ContainerCheck = self.container(value_shape, _MAP_VALUE if entries else _ELEMENT)

            def check(value: Any, path: str, errors: list[str]) -> None:
                if value.__class__ is not dict:
                    if isinstance(value, list):
                        raise _serialization(list_msg)
                    raise _serialization(scalar_msg)
                if length is not None:
                    length(value, path, errors)
                for key, element in value.items():
                    if element is not None:
                        child(element, f"{path}.{key}.member", errors)
                    else:
                        _add(errors, "null", f"{path}.{key}.member", _NOT_NULL)

            return check

        leaf = self.leaf(value_shape)

        def check_leaves(value: Any, path: str, errors: list[str]) -> None:
            if value.__class__ is not dict:
                if isinstance(value, list):
                    raise _serialization(list_msg)
                raise _serialization(scalar_msg)
            if length is not None:
                length(value, path, errors)
            for key, element in value.items():
                if element is not None:
                    tails = leaf(element)
                    if tails:
                        shown = "'" + java_str(element, lambda _v: None) + "'"
                        _add(errors, shown, f"{path}.{key}.member", tails)
                else:
                    _add(errors, "null", f"{path}.{key}.member", _NOT_NULL)

        return check_leaves

    def _map_entries(self, shape_name: str) -> Callable[[Any, str, list[str]], None] | None:
        """Constraints the service states once for a whole map: on its keys and its values' lengths.

        For ``RequestItems`` the service does not descend into the map for
        these: a bad table name or a list of 26 write requests is one clause
        about the map, listing every constraint of the key (or value) shape,
        e.g. ``Value '{a=[...]}' at 'requestItems' failed to satisfy
        constraint: Map value must satisfy constraint: [Member must have length
        less than or equal to 25, Member must have length greater than or equal
        to 1]`` (dynalite's recordings of BatchGetItem and BatchWriteItem), key
        clause first. Only table-name keys are checked here; attribute-name
        keys get operation-specific messages from the operations.
        """
        shape = self.shapes[shape_name]
        value_shape_name = shape["value"]["shape"]
        value_shape = self.shapes[value_shape_name]
        value_tails = _all_constraints(value_shape) if value_shape["type"] in ("list", "map") else []
        checks_keys = shape["key"]["shape"] == "TableArn"
        if not value_tails and not checks_keys:
            return None
        as_name = self._string_leaf("TableName", self.shapes["TableName"])
        as_arn = self._string_leaf("TableArn", self.shapes["TableArn"])
        name_clause = _map_clause("keys", _all_constraints(self.shapes["TableName"]))
        arn_clause = _map_clause("keys", _all_constraints(self.shapes["TableArn"]))
        value_clause = _map_clause("value", value_tails)
        namer = self.shape_namer(value_shape_name)
        lo, hi = value_shape.get("min"), value_shape.get("max")

        def check(value: Any, path: str, errors: list[str]) -> None:
            tails = []
            if checks_keys:
                for key in value:
                    is_arn = key.startswith("arn:")
                    if (as_arn if is_arn else as_name)(key):
                        tails.append(arn_clause if is_arn else name_clause)
                        break
            if value_tails:
                for element in value.values():
                    if isinstance(element, list | dict) and (
                        (lo is not None and len(element) < lo) or (hi is not None and len(element) > hi)
                    ):
                        tails.append(value_clause)
                        break
            if tails:
                shown = "'" + java_map_str(value, namer) + "'"
                for tail in tails:
                    errors.append(f"Value {shown} at '{path}' failed to satisfy constraint: {tail}")

        return check


def _all_constraints(shape: dict[str, Any]) -> list[str]:
    """Every length and pattern constraint of a shape, in the order the service lists them in map clauses."""
    out = []
    if "max" in shape:
        out.append(f"Member must have length less than or equal to {shape['max']}")
    if "min" in shape:
        out.append(f"Member must have length greater than or equal to {shape['min']}")
    if "pattern" in shape:
        out.append(f"Member must satisfy regular expression pattern: {shape['pattern']}")
    return out


def _map_clause(part: str, tails: list[str]) -> str:
    return f"Map {part} must satisfy constraint: [" + ", ".join(tails) + "]"


def _add(errors: list[str], shown: str, path: str, tails: list[str]) -> None:
    """Append the clauses for one member, in the service's (hash) order."""
    if len(tails) > 1:
        clauses = order_clauses(
            [f"Value {shown} at '{path}' failed to satisfy constraint: {t}" for t in tails]
        )
        errors.extend(clauses)
    else:
        errors.append(f"Value {shown} at '{path}' failed to satisfy constraint: {tails[0]}")


def _boolean_leaf(value: Any) -> list[str] | None:
    if value.__class__ is bool:
        return None
    if isinstance(value, list | dict):
        raise _scalar_kind_error(value, "Boolean")
    if isinstance(value, str):
        raise _serialization("Unexpected token received from parser")
    raise _serialization(f"{json_token_name(value)} cannot be converted to Boolean")


_B64_ALPHABET = re.compile(r"[A-Za-z0-9+/]*={0,2}")


def _blob_leaf(value: Any) -> list[str] | None:
    """Blobs travel as base64 text; the codec rejects what it cannot decode exactly."""
    if value.__class__ is not str:
        if isinstance(value, list):
            raise _serialization("Unrecognized collection type class java.nio.ByteBuffer")
        if isinstance(value, dict):
            raise _serialization(START_OF_MAP)
        raise _serialization("only base-64-encoded strings are convertible to bytes")
    n = len(value)
    if n % 4:
        raise _serialization(
            f"Base64 encoded length is expected a multiple of 4 bytes but found: {n}"
        )
    if n and (_B64_ALPHABET.fullmatch(value) is None or _b64_roundtrip(value) != value):
        # The codec's own spelling, "dectected", is kept.
        raise _serialization("Invalid last non-pad Base64 character dectected")
    return None


def _b64_roundtrip(value: str) -> str:
    try:
        return base64.b64encode(base64.b64decode(value, validate=True)).decode("ascii")
    except (binascii.Error, ValueError):
        return ""


def _timestamp_leaf(value: Any) -> list[str] | None:
    """Timestamps are epoch seconds (numbers); no recorded messages exist for other kinds."""
    if value.__class__ in (int, float) or value.__class__ is str:
        return None
    if isinstance(value, list | dict):
        raise _scalar_kind_error(value, "Date")
    raise _serialization(f"{json_token_name(value)} cannot be converted to Date")


# --------------------------------------------------------------------------
# Public API.
# --------------------------------------------------------------------------

#: botocore's service names: DynamoDB's own API and DynamoDB Streams (same JSON protocol).
DYNAMODB = "dynamodb"
STREAMS = "dynamodbstreams"
_models: dict[str, tuple[dict[str, Any], _Compiler]] = {}
#: Compiled validators per service; DynamoDB's own dict is the hot path's.
_validators_by_service: dict[str, dict[str, ContainerCheck | None]] = {DYNAMODB: {}, STREAMS: {}}
_validators = _validators_by_service[DYNAMODB]


def _load(service: str = DYNAMODB) -> tuple[dict[str, Any], _Compiler]:
    try:
        return _models[service]
    except KeyError:
        from botocore.loaders import Loader

        model = Loader().load_service_model(service, "service-2")
        _models[service] = model, _Compiler(model)
        return _models[service]


def known_operations(service: str = DYNAMODB) -> list[str]:
    """Every operation name in the model (for warming at start-up)."""
    return list(_load(service)[0]["operations"])


def is_model_operation(operation: str, service: str = DYNAMODB) -> bool:
    """Whether the service model has ``operation`` (implemented here or not)."""
    return operation in _load(service)[0]["operations"]


def compile_operation(operation: str, service: str = DYNAMODB) -> ContainerCheck | None:
    """The compiled validator for ``operation``; None for an unknown operation or one without input."""
    validators = _validators_by_service[service]
    try:
        return validators[operation]
    except KeyError:
        pass
    model, compiler = _load(service)
    op = model["operations"].get(operation)
    fn = None
    if op is not None and "input" in op:
        fn = compiler.container(op["input"]["shape"], _FIELD)
    validators[operation] = fn
    return fn


def validate_request(operation: str, body: object, service: str = DYNAMODB) -> None:
    """Check ``body`` (parsed JSON) against ``operation``'s input shape.

    Raises SerializationException for a JSON value of the wrong kind (first
    one wins) and ShapeValidationException listing up to ten constraint
    violations. Unknown members and operations pass silently: dispatching an
    unknown target is the protocol layer's answer, not ours.
    """
    fn = _validators_by_service[service].get(operation)
    if fn is None:
        fn = compile_operation(operation, service)
        if fn is None:
            return
    if body.__class__ is not dict:
        if isinstance(body, list):
            raise _serialization(_START_OF_LIST)
        # A bare scalar or null body: the service answers with no message at all.
        raise _serialization(None)
    errors: list[str] = []
    fn(body, "", errors)
    if errors:
        shown = errors[:_MAX_ERRORS]
        n = len(shown)
        raise ShapeValidationException(
            f"{n} validation error{'s' if n > 1 else ''} detected: " + "; ".join(shown)
        )
