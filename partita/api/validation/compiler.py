"""The compiler behind the request-shape validator: model shapes into check closures.

``shapes.py`` is the validator's entry point (it loads botocore's model per
service, caches one compiled check per operation and runs it over a request);
this module does the compiling, once per shape and context. Structures, lists
and maps become closures here; scalar members get the leaf checks of
``leaves.py``. Split from ``shapes.py``, whose docstring gives the service's
rules this follows and their sources.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from partita.engine.model.serialization_errors import START_OF_MAP
from partita.errors import shown as shown_text

from .clauses import add_clauses, add_framework_clauses, all_constraints, lower_first, map_clause
from .java_text import java_hashmap_order, java_map_str, java_str, json_text
from .leaves import (
    LeafCheck,
    as_integer,
    blob_leaf,
    boolean_leaf,
    data_plane_table_leaf,
    double_leaf,
    integer_leaf,
    serialization,
    string_leaf,
    table_arn_leaf,
    timestamp_leaf,
)
from .model_patches import FRAMEWORK_LENGTHS, FRAMEWORK_MEMBERS, JSON_ECHO_MAPS, patched_shapes

__all__ = ["ContainerCheck", "MAX_VALUE_DEPTH", "ShapeCompiler"]

# A container check gets its own full path and appends finished clauses.
ContainerCheck = Callable[[Any, str, list[str]], None]

_JAVA_PKG = "com.amazonaws.dynamodb.v20120810."

# The codec's message for a scalar where a collection nested directly in
# another collection is expected (dynalite: RequestItems.Attr, Keys.0).
_CAST_MSG = (
    "class sun.reflect.generics.reflectiveObjects.ParameterizedTypeImpl cannot be cast to "
    "class java.lang.Class (sun.reflect.generics.reflectiveObjects.ParameterizedTypeImpl and "
    "java.lang.Class are in module java.base of loader 'bootstrap')"
)
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
# (see ``ShapeCompiler._map_entries``); otherwise like an element.
_MAP_VALUE = "map value"

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


class ShapeCompiler:
    """Turns model shapes into closures; shared sub-shapes are compiled once per context."""

    def __init__(self, model: dict[str, Any]) -> None:
        self.shapes: dict[str, Any] = patched_shapes(model["shapes"])
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
            return table_arn_leaf(self.shapes)
        if shape_name == "DataPlaneTableArn":
            return data_plane_table_leaf(self.shapes)
        if kind == "string":
            return string_leaf(shape_name, shape)
        if kind in ("integer", "long"):
            check = integer_leaf(shape, "Integer" if kind == "integer" else "Long")
            self._integer_leaves.add(check)
            return check
        if kind == "double":
            return double_leaf(shape)
        if kind == "boolean":
            return boolean_leaf
        if kind == "blob":
            return blob_leaf
        if kind == "timestamp":
            return timestamp_leaf
        raise ValueError(f"not a scalar shape: {shape_name} ({kind})")

    # ----- containers -----

    def operation(self, input_shape: str) -> ContainerCheck:
        """The check of an operation's whole body: its input structure, as a field."""
        return self.container(input_shape, _FIELD)

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
        framework = shape_name in FRAMEWORK_LENGTHS

        def check(value: Any, path: str, errors: list[str]) -> None:
            n = len(value)
            if (lo is not None and n < lo) or (hi is not None and n > hi):
                tails = []
                if lo is not None and n < lo:
                    tails.append(lo_msg)
                if hi is not None and n > hi:
                    tails.append(hi_msg)
                if framework:
                    add_framework_clauses(errors, path, tails)
                    return
                shown = "'" + java_str(value, namer) + "'"
                add_clauses(errors, shown, path, tails)

        return check

    def _structure(self, shape_name: str, context: str) -> ContainerCheck:
        shape = self.shapes[shape_name]
        required = set(shape.get("required", ()))
        members: dict[str, Any] = shape["members"]
        by_lower = {lower_first(name): name for name in members}
        plan: list[tuple[str, str, bool, bool, Any, Callable[[Any], str | None] | None]] = []
        framework = {name for owner, name in FRAMEWORK_MEMBERS if owner == shape_name}
        for lower in java_hashmap_order(list(by_lower)):
            name = by_lower[lower]
            target = members[name]["shape"]
            if self.is_container(target):
                fn: Any = self.container(target, _FIELD)
                plan.append((name, lower, name in required, True, fn, self.shape_namer(target)))
            else:
                fn = self.leaf(target)
                # A framework-worded member: no namer, the clause echoes no value.
                namer = None if name in framework else self.shape_namer(target)
                plan.append((name, lower, name in required, False, fn, namer))
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
                    if namer is None:
                        add_framework_clauses(errors, prefix + lower, tails)
                    else:
                        add_clauses(errors, "'" + java_str(member, namer) + "'", prefix + lower, tails)

        def check(value: Any, path: str, errors: list[str]) -> None:
            if value.__class__ is not dict:
                if isinstance(value, list):
                    raise serialization(list_msg)
                raise serialization(scalar_msg)
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
                        member = value[name] = as_integer(member, integers[name])
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
                        add_clauses(errors, "null", prefix + entry[1], ["Member must not be null"])
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
                        raise serialization(START_OF_MAP)
                    raise serialization(scalar_msg)
                if length is not None:
                    length(value, path, errors)
                if most is not None and len(value) > most:
                    value = value[:most]
                for i, element in enumerate(value, 1):
                    if element is not None:
                        child(element, f"{path}.{i}.member", errors)
                    elif nulls_refused:
                        add_clauses(errors, "null", f"{path}.{i}.member", _NOT_NULL)

            return check

        leaf = self.leaf(member_shape)

        def check_leaves(value: Any, path: str, errors: list[str]) -> None:
            if value.__class__ is not list:
                if isinstance(value, dict):
                    raise serialization(START_OF_MAP)
                raise serialization(scalar_msg)
            if length is not None:
                length(value, path, errors)
            if most is not None and len(value) > most:
                value = value[:most]
            for i, element in enumerate(value, 1):
                if element is not None:
                    tails = leaf(element)
                    if tails:
                        shown = "'" + java_str(element, lambda _v: None) + "'"
                        add_clauses(errors, shown, f"{path}.{i}.member", tails)
                else:
                    add_clauses(errors, "null", f"{path}.{i}.member", _NOT_NULL)

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
        # and too long attribute names get one clause for the whole map
        # (``_map_entries``); an empty attribute name is the operations' to refuse.
        if value_shape == "AttributeValue":
            attr = self.container("AttributeValue", _ELEMENT)
            # Members whose check can only pass on a string ({"S": ...}, {"N": ...}): an
            # attribute made of one of them alone needs no visit (most attributes of most
            # items), which also spares building its path.
            av_members = self.shapes["AttributeValue"]["members"]
            free = frozenset(
                name for name, member in av_members.items()
                if self._unconstrained_string(member["shape"])
            )

            def check_items(value: Any, path: str, errors: list[str]) -> None:
                if value.__class__ is not dict:
                    if isinstance(value, list):
                        raise serialization(list_msg)
                    raise serialization(scalar_msg)
                if length is not None:
                    length(value, path, errors)
                for key, element in value.items():
                    if element is not None:
                        if element.__class__ is dict and len(element) == 1:
                            for member, raw in element.items():
                                if raw.__class__ is str and member in free:
                                    break
                            else:
                                attr(element, f"{path}.{key}.member", errors)
                            continue
                        attr(element, f"{path}.{key}.member", errors)

            return check_items

        if self.is_container(value_shape):
            child: ContainerCheck = self.container(value_shape, _MAP_VALUE if entries else _ELEMENT)

            def check(value: Any, path: str, errors: list[str]) -> None:
                if value.__class__ is not dict:
                    if isinstance(value, list):
                        raise serialization(list_msg)
                    raise serialization(scalar_msg)
                if length is not None:
                    length(value, path, errors)
                for key, element in value.items():
                    if element is not None:
                        child(element, f"{path}.{key}.member", errors)
                    else:
                        add_clauses(errors, "null", f"{path}.{key}.member", _NOT_NULL)

            return check

        leaf = self.leaf(value_shape)

        def check_leaves(value: Any, path: str, errors: list[str]) -> None:
            if value.__class__ is not dict:
                if isinstance(value, list):
                    raise serialization(list_msg)
                raise serialization(scalar_msg)
            if length is not None:
                length(value, path, errors)
            for key, element in value.items():
                if element is not None:
                    tails = leaf(element)
                    if tails:
                        shown = "'" + java_str(element, lambda _v: None) + "'"
                        add_clauses(errors, shown, f"{path}.{key}.member", tails)
                else:
                    add_clauses(errors, "null", f"{path}.{key}.member", _NOT_NULL)

        return check_leaves

    def _unconstrained_string(self, shape_name: str) -> bool:
        """A string shape without length, pattern or enum: every JSON string passes its leaf check."""
        shape = self.shapes[shape_name]
        return shape["type"] == "string" and not any(k in shape for k in ("min", "max", "pattern", "enum"))

    def _map_entries(self, shape_name: str) -> Callable[[Any, str, list[str]], None] | None:
        """Constraints the service states once for a whole map: on its keys and its values' lengths.

        For ``RequestItems`` the service does not descend into the map for
        these: a bad table name or a list of 26 write requests is one clause
        about the map, listing every constraint of the key (or value) shape,
        e.g. ``Value '{a=[...]}' at 'requestItems' failed to satisfy
        constraint: Map value must satisfy constraint: [Member must have length
        less than or equal to 25, Member must have length greater than or equal
        to 1]`` (dynalite's recordings of BatchGetItem and BatchWriteItem), key
        clause first.

        Attribute-name keys (an Item, a Key, AttributeUpdates, a map value's
        M ...) have one constraint in the model, at most 65535 characters; a
        longer name is the same kind of one clause, "Map keys must satisfy
        constraint: [Member must have length less than or equal to 65535]".
        That the service words it so is inferred from the model and its
        RequestItems answers (it was observed refusing a 65536-byte name with
        "65535" in the message); the empty name, which the model allows, is
        the operations' to refuse.
        """
        shape = self.shapes[shape_name]
        value_shape_name = shape["value"]["shape"]
        value_shape = self.shapes[value_shape_name]
        value_tails = all_constraints(value_shape) if value_shape["type"] in ("list", "map") else []
        checks_keys = shape["key"]["shape"] == "TableArn"
        name_shape = self.shapes[shape["key"]["shape"]] if shape["key"]["shape"] == "AttributeName" else None
        name_max = name_shape.get("max") if name_shape is not None else None
        if not value_tails and not checks_keys and name_max is None:
            return None
        name_key_clause = map_clause("keys", all_constraints(name_shape)) if name_max is not None else ""
        as_name = string_leaf("TableName", self.shapes["TableName"])
        as_arn = string_leaf("TableArn", self.shapes["TableArn"])
        name_clause = map_clause("keys", all_constraints(self.shapes["TableName"]))
        arn_clause = map_clause("keys", all_constraints(self.shapes["TableArn"]))
        value_clause = map_clause("value", value_tails)
        namer = self.shape_namer(value_shape_name)
        lo, hi = value_shape.get("min"), value_shape.get("max")
        json_echo = shape_name in JSON_ECHO_MAPS

        def check(value: Any, path: str, errors: list[str]) -> None:
            tails = []
            if name_max is not None and value and max(map(len, value)) > name_max:
                tails.append(name_key_clause)
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
                if json_echo:
                    shown = "'" + shown_text(json_text(value)) + "'"
                else:
                    shown = "'" + java_map_str(value, namer) + "'"
                for tail in tails:
                    errors.append(f"Value {shown} at '{path}' failed to satisfy constraint: {tail}")

        return check
