"""Every engine capability keeps its rows under a key space of its own (the first byte of the key).

Three branches once chose the same byte for three capabilities, and one read the
others' rows as its own. The spaces are module constants named `*_SPACE` (or
`SPACE`); two modules may share one only as listed here, on purpose.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "partita"
#: Spaces deliberately shared: the vector index's rows live among the table rows (own index ids).
SHARED = {b"\x01": {"engine/tables/schema.py", "engine/vector/model.py"}}


def _spaces() -> dict[bytes, set[str]]:
    found: dict[bytes, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.parse(path.read_text()).body:
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
                continue
            name = node.targets[0].id
            value = node.value
            if (name == "SPACE" or name.endswith("_SPACE")) and isinstance(value, ast.Constant) and isinstance(
                    value.value, bytes) and len(value.value) == 1:
                found.setdefault(value.value, set()).add(str(path.relative_to(PACKAGE)))
    return found


def test_each_key_space_belongs_to_one_capability() -> None:
    spaces = _spaces()
    assert len(spaces) >= 15  # the scan sees the constants (a rename would make it see nothing)
    for space, modules in spaces.items():
        if len(modules) > 1:
            assert SHARED.get(space) == modules, f"key space {space!r} is used by {sorted(modules)}"
