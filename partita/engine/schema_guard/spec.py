"""The schema file: read (JSON, or YAML with PyYAML), checked whole, and compiled once at start-up.

    {"mode": "reject",
     "entities": [{"name": "Customer", "table": "Shop", "match": {"pk": "CLIENTE#*", "sk": "PERFIL"},
                   "schema": {"type": "object", "required": ["email"]}}]}

Every fault of the file is a `SchemaFileError` naming where it is
(`entities[0].match.pk`), raised before the server serves anything: a guard
that silently checked less than it was given would be worse than none. The
JSON Schema library (`jsonschema`) is an optional dependency, imported here
only, so a server without `--schema` never loads it.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from .plain import JsonNumber

MODES = ("reject", "warn")
#: The shape of the file itself, checked with the same library as the entities' schemas.
FILE_SHAPE: dict[str, Any] = {
    "type": "object",
    "required": ["entities"],
    "additionalProperties": False,
    "properties": {
        "mode": {"enum": list(MODES)},
        "entities": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["name", "table", "schema"],
                "additionalProperties": False,
                "properties": {
                    "name": {"type": "string", "minLength": 1},
                    "table": {"type": "string", "minLength": 1},
                    "match": {"type": "object", "additionalProperties": {"type": "string"}},
                    "schema": {"type": ["object", "boolean"]},
                },
            },
        },
    },
}


class SchemaFileError(ValueError):
    """A schema file Partita cannot use: the message says where and why (shown at start-up)."""


@dataclass(slots=True)
class Entity:
    """One entity: the items of `table` whose attributes match every glob of `match`."""

    name: str
    table: str
    #: (attribute name, compiled glob) pairs; an item matches when each attribute's string form matches.
    match: list[tuple[str, re.Pattern[str]]]
    #: The globs as written (shown by the console and the admin API).
    globs: dict[str, str]
    schema: Any
    #: A jsonschema validator instance for `schema` (its draft: `$schema`, else 2020-12).
    validator: Any


@dataclass(slots=True)
class GuardSpec:
    mode: str
    entities: list[Entity]
    #: Entities by table name, in file order (the first entity that matches an item is its entity).
    by_table: dict[str, list[Entity]] = field(default_factory=dict)
    #: Where the spec came from (a file name, or "local(schema=...)"), for messages.
    source: str = ""

    def describe(self) -> dict[str, Any]:
        """The spec as the admin API and the console show it."""
        return {
            "mode": self.mode,
            "source": self.source,
            "entities": [{"name": e.name, "table": e.table, "match": e.globs, "schema": as_json(e.schema)}
                         for e in self.entities],
        }


def as_json(value: Any) -> Any:
    """A schema ready for orjson: exact decimals and integers past 64 bits as raw JSON numbers
    (orjson writes neither)."""
    if isinstance(value, Decimal) or (isinstance(value, int) and not isinstance(value, bool)
                                      and not -(2**63) <= value < 2**64):
        import orjson

        return orjson.Fragment(str(value))
    if isinstance(value, list):
        return [as_json(v) for v in value]
    if isinstance(value, dict):
        return {k: as_json(v) for k, v in value.items()}
    return value


def load_spec(path: str | Path) -> GuardSpec:
    """Read and compile a schema file: `.yaml`/`.yml` as YAML (needs PyYAML), anything else as JSON."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise SchemaFileError(f"{path}: cannot read it ({error})") from None
    if path.suffix.lower() in (".yaml", ".yml"):
        document = _yaml(text, path)
    else:
        try:
            document = json.loads(text, parse_float=JsonNumber, parse_constant=_no_constant)
        except ValueError as error:
            raise SchemaFileError(f"{path}: not JSON ({error})") from None
    return spec_from_document(document, str(path))


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _yaml(text: str, path: Path) -> Any:
    try:
        import yaml
    except ImportError:
        raise SchemaFileError(
            f"{path}: reading a YAML schema file needs PyYAML, which is not installed "
            "(pip install 'partita[schema]', or give the file as JSON)"
        ) from None
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise SchemaFileError(f"{path}: not YAML ({error})") from None
    try:
        return _json_values(document, "")
    except SchemaFileError as error:
        raise SchemaFileError(f"{path}: {error}") from None


def _json_values(value: Any, where: str) -> Any:
    """YAML's values as JSON's: floats exact (as written), and nothing JSON has no word for."""
    if isinstance(value, bool) or value is None or isinstance(value, int | str):
        return value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise SchemaFileError(f"{_at(where)}{value} is not a JSON number")
        return JsonNumber(repr(value))
    if isinstance(value, list):
        return [_json_values(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise SchemaFileError(f"{_at(where)}the key {k!r} is not a string (quote it)")
            out[k] = _json_values(v, f"{where}.{k}" if where else k)
        return out
    raise SchemaFileError(f"{_at(where)}{value!r} is not a JSON value (quote it to make it a string)")


def _at(where: str) -> str:
    return f"at {where}: " if where else ""


def spec_from_document(document: Any, source: str) -> GuardSpec:
    """Check and compile a schema document (parsed JSON); `source` names it in every message."""
    if isinstance(document, Mapping) and not isinstance(document, dict):
        document = dict(document)
    try:
        from jsonschema import Draft202012Validator
        from jsonschema.exceptions import SchemaError, best_match
        from jsonschema.validators import validator_for
    except ImportError:
        raise SchemaFileError(
            f"{source}: the schema guard needs the jsonschema package, which is not installed "
            "(pip install 'partita[schema]')"
        ) from None
    document = _exact_numbers(document)
    shape_error = best_match(Draft202012Validator(FILE_SHAPE).iter_errors(document))
    if shape_error is not None:
        raise SchemaFileError(f"{source}: {_at(path_text(shape_error.absolute_path))}{shape_error.message}")
    spec = GuardSpec(document.get("mode", "reject"), [], source=source)
    seen: set[str] = set()
    for position, doc in enumerate(document["entities"]):
        where = f"{source}: entities[{position}] ({doc['name']})"
        if doc["name"] in seen:
            raise SchemaFileError(f"{where}: another entity has this name")
        seen.add(doc["name"])
        schema = doc["schema"]
        cls = validator_for(schema, default=Draft202012Validator)
        try:
            cls.check_schema(schema)
        except SchemaError as error:
            raise SchemaFileError(
                f"{where}: not a valid JSON Schema: {_at(path_text(error.absolute_path, 'schema'))}{error.message}"
            ) from None
        _check_refs(schema, "schema", where, _lookup(schema))
        globs = dict(doc.get("match") or {})
        entity = Entity(
            doc["name"], doc["table"], [(name, re.compile(fnmatch.translate(glob), re.S)) for name, glob in globs.items()],
            globs, schema, cls(schema),
        )
        spec.entities.append(entity)
        spec.by_table.setdefault(entity.table, []).append(entity)
    return spec


def _exact_numbers(value: Any) -> Any:
    """Floats given in Python (local(schema={...})) become exact decimals, as parsed JSON's are."""
    if isinstance(value, float) and not isinstance(value, bool):
        if value != value or value in (float("inf"), float("-inf")):
            return value  # refused by the shape or the metaschema, with its path
        return JsonNumber(repr(value))
    if isinstance(value, Decimal) and not isinstance(value, JsonNumber):
        return JsonNumber(value)
    if isinstance(value, list | tuple):
        return [_exact_numbers(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _exact_numbers(v) for k, v in value.items()}
    return value


def _lookup(schema: Any) -> Any:
    """Resolves a '#...' reference against the entity's schema (None when a nested `$id` moves the
    base, which only the validator follows: such references are then checked when used)."""
    if _nested_id(schema, top=True):
        return None
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    resolver = Registry().resolver_with_root(Resource.from_contents(schema, default_specification=DRAFT202012))
    return resolver.lookup


def _nested_id(schema: Any, top: bool = False) -> bool:
    if isinstance(schema, list):
        return any(_nested_id(member) for member in schema)
    if not isinstance(schema, dict):
        return False
    if not top and isinstance(schema.get("$id"), str):
        return True
    return any(_nested_id(member) for key, member in schema.items() if key not in _VALUES)


#: Keywords whose members are values, not schemas.
_VALUES = ("const", "enum", "examples", "default")


def _check_refs(schema: Any, where: str, entity: str, lookup: Any) -> None:
    """Only references inside the entity's own schema: nothing is ever fetched, and a dangling
    one is a start-up error rather than a refused write later."""
    if isinstance(schema, list):
        for i, member in enumerate(schema):
            _check_refs(member, f"{where}[{i}]", entity, lookup)
        return
    if not isinstance(schema, dict):
        return
    for keyword in ("$ref", "$dynamicRef"):
        ref = schema.get(keyword)
        if not isinstance(ref, str):
            continue
        if not ref.startswith("#"):
            raise SchemaFileError(
                f"{entity}: at {where}.{keyword}: {ref!r} is not a reference inside this schema "
                "(only '#...' references are followed; nothing is fetched)"
            )
        if lookup is not None:
            try:
                lookup(ref)
            except Exception:  # referencing's Unresolvable (and a pointer into a non-container)
                raise SchemaFileError(f"{entity}: at {where}.{keyword}: {ref!r} points to nothing in this schema") from None
    for key, member in schema.items():
        if key not in _VALUES:
            _check_refs(member, f"{where}.{key}", entity, lookup)


def path_text(path: Any, root: str = "") -> str:
    """A JSON path as a DynamoDB document path: `address.city`, `tags[1]` ('' for the root)."""
    out = root
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out
