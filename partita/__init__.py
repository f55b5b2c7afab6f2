"""Partita: a DynamoDB-compatible server.

The request path's modules may also be installed compiled (setup.py's
COMPILED, built by Cython from the same .py files). Python would always load
the compiled copy of a module over its .py; the finder below loads the .py
instead when it is newer than the copy (an edit since the last build), so an
edited checkout never runs stale code, or when PARTITA_PURE_PYTHON=1 (the
test suite's pure pass, and anyone comparing the two).
"""

from __future__ import annotations

import os
import sys
from importlib.machinery import ExtensionFileLoader, ModuleSpec, PathFinder, SourceFileLoader
from typing import Any

_PURE = os.environ.get("PARTITA_PURE_PYTHON") == "1"


class _SourceOverStale:
    """Finds partita's modules as Python does, but never a compiled copy older than its source."""

    @staticmethod
    def find_spec(name: str, path: Any = None, target: Any = None) -> ModuleSpec | None:
        if not name.startswith("partita."):
            return None
        spec = PathFinder.find_spec(name, path, target)
        if spec is None or spec.__class__ is not ModuleSpec or not isinstance(spec.loader, ExtensionFileLoader):
            return spec
        compiled = spec.origin or ""
        folder, _, file = compiled.rpartition("/")
        source = f"{folder}/{file.partition('.')[0]}.py"
        try:
            newer = os.stat(source).st_mtime > os.stat(compiled).st_mtime
        except OSError:
            return spec  # a C extension of its own (_spend, _digest): no .py of the same name
        if not (_PURE or newer):
            return spec
        source_spec = ModuleSpec(name, SourceFileLoader(name, source), origin=source)
        source_spec.has_location = True
        return source_spec


if not any(finder is _SourceOverStale for finder in sys.meta_path):
    sys.meta_path.insert(0, _SourceOverStale)


def compiled_modules() -> list[str]:
    """The partita modules imported so far that run compiled (bench reports it)."""
    return sorted(
        name
        for name, module in list(sys.modules.items())
        if name.startswith("partita.") and (getattr(module, "__file__", None) or "").endswith(".so")
        and not name.rpartition(".")[2].startswith("_")
    )
