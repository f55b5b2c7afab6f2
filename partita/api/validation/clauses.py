"""The text of coral's constraint clauses, shared by the compiled shape checks (compiler.py).

``Value <v> at '<path>' failed to satisfy constraint: Member must ...``: how one
member's clauses are worded and ordered, and how a map states its key and
value constraints once. Sources are listed in shapes.py's docstring.
"""

from __future__ import annotations

from typing import Any

from .java_text import order_clauses


def lower_first(name: str) -> str:
    """Member names in paths are lowerCamel: only the first letter is lowered (``sSESpecification``)."""
    return name[:1].lower() + name[1:]


def all_constraints(shape: dict[str, Any]) -> list[str]:
    """Every length and pattern constraint of a shape, in the order the service lists them in map clauses."""
    out = []
    if "max" in shape:
        out.append(f"Member must have length less than or equal to {shape['max']}")
    if "min" in shape:
        out.append(f"Member must have length greater than or equal to {shape['min']}")
    if "pattern" in shape:
        out.append(f"Member must satisfy regular expression pattern: {shape['pattern']}")
    return out


def map_clause(part: str, tails: list[str]) -> str:
    return f"Map {part} must satisfy constraint: [" + ", ".join(tails) + "]"


def add_clauses(errors: list[str], shown: str, path: str, tails: list[str]) -> None:
    """Append the clauses for one member, in the service's (hash) order."""
    if len(tails) > 1:
        clauses = order_clauses(
            [f"Value {shown} at '{path}' failed to satisfy constraint: {t}" for t in tails]
        )
        errors.extend(clauses)
    else:
        errors.append(f"Value {shown} at '{path}' failed to satisfy constraint: {tails[0]}")


def framework_path(path: str) -> str:
    """A member path as the validation framework names it: members PascalCase, as sent.

    Only the first segment (a top-level member) and the last (the member
    the constraint is on) are member names in the paths this is used for
    (``RequestItems``, ``RequestItems.<table>.member.Keys``); map keys and
    ``member`` stay as they are.
    """
    first, dot, rest = path.partition(".")
    head = first[:1].upper() + first[1:]
    if not dot:
        return head
    body, _, last = rest.rpartition(".")
    return f"{head}.{body}.{last[:1].upper()}{last[1:]}" if body else f"{head}.{last[:1].upper()}{last[1:]}"


def add_framework_clauses(errors: list[str], path: str, tails: list[str]) -> None:
    """The framework's clause: no value echoed, the member named as sent."""
    errors.extend(f"Value at '{framework_path(path)}' failed to satisfy constraint: {t}" for t in tails)
