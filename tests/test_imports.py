"""The house rules of partita/'s imports: no cycles, and requests flow down the layers.

grimp reads every import of the package (top-level, inside functions, and under
`if TYPE_CHECKING:`), so a cycle hidden in a function or a type hint counts
too: the fix is to move the shared piece down or to pass it in.
"""

from __future__ import annotations

from pathlib import Path

import grimp
import pytest

#: Highest first. A module may import from its own layer or any layer below it.
LAYERS: list[tuple[str, ...]] = [
    ("cli", "testing", "__main__"),
    ("protocol",),
    ("console", "admin"),
    ("api",),
    ("partiql",),
    ("engine",),
    ("storage",),
    ("errors",),
]
_RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("partita", cache_dir=None)


def _imports(graph: grimp.ImportGraph) -> dict[str, set[str]]:
    return {module: graph.find_modules_directly_imported_by(module) for module in graph.modules}


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _layer(module: str) -> int:
    parts = module.split(".")
    if len(parts) == 1:  # partita/__init__.py
        return len(LAYERS) - 1
    return _RANK[parts[1]]


def test_every_top_level_module_has_a_layer(graph: grimp.ImportGraph) -> None:
    unplaced = sorted({m.split(".")[1] for m in graph.modules if "." in m} - set(_RANK))
    assert unplaced == [], f"give these a layer in LAYERS: {unplaced}"


def test_no_import_cycles(graph: grimp.ImportGraph) -> None:
    edges = _imports(graph)
    described = []
    for component in _cycles(edges):
        members = set(component)
        links = [f"{a} -> {b}" for a in component for b in sorted(edges[a] & members)]
        described.append("\n  ".join(links))
    assert described == [], "import cycles:\n  " + "\n\n  ".join(described)


def test_no_import_from_a_higher_layer(graph: grimp.ImportGraph) -> None:
    upward = []
    for importer, imported in sorted((a, b) for a, bs in _imports(graph).items() for b in bs):
        if _layer(imported) < _layer(importer):
            lines = sorted({d["line_number"] for d in graph.get_import_details(importer=importer, imported=imported)})
            upward.append(f"{importer} -> {imported} (line {', '.join(map(str, lines))})")
    assert upward == [], "imports from a higher layer:\n  " + "\n  ".join(upward)


def test_the_cycle_finder_finds_cycles() -> None:
    """The check above cannot pass by finding nothing: a known cycle and a known chain."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_over_600_lines() -> None:
    root = Path(__file__).resolve().parent.parent / "partita"
    long = sorted(
        f"{path.relative_to(root)} ({count})"
        for path in root.rglob("*.py")
        if (count := len(path.read_text().splitlines())) > 600
    )
    assert long == [], f"split these by responsibility: {long}"
