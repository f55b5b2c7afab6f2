"""The compiled request path (setup.py's COMPILED) and partita/__init__.py's choice of copy.

Whether a compiled module answers as its source does is the whole suite's
job: `./dev test` runs the SQLite pass on the .py files (PARTITA_PURE_PYTHON=1)
and the other two on the compiled copies. These tests hold the choice itself:
a compiled copy is used only when it is at least as new as its source, and
never under PARTITA_PURE_PYTHON=1, so an edited checkout cannot run stale code.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import partita

ROOT = Path(partita.__file__).resolve().parent
MODULE = "partita.engine.model.sizes"
COMPILED = sorted((ROOT / "engine" / "model").glob("sizes.*.so"))


def _fake_tree(tmp_path: Path) -> tuple[Path, Path, Path]:
    """partita/__init__.py and one module as source plus its real compiled copy, in a folder of their own."""
    assert COMPILED, "no compiled copy"
    package = tmp_path / "partita"
    (package / "engine" / "model").mkdir(parents=True)
    shutil.copy(ROOT / "__init__.py", package / "__init__.py")
    (package / "engine" / "__init__.py").write_text("")
    (package / "engine" / "model" / "__init__.py").write_text("")
    source = package / "engine" / "model" / "sizes.py"
    source.write_text("FROM_SOURCE = True\n")
    compiled = package / "engine" / "model" / COMPILED[0].name
    shutil.copy(COMPILED[0], compiled)
    return tmp_path, source, compiled


def _spec_origin(tree: Path, *, pure: bool = False) -> str:
    env = {k: v for k, v in os.environ.items() if k != "PARTITA_PURE_PYTHON"}
    if pure:
        env["PARTITA_PURE_PYTHON"] = "1"
    env["PYTHONPATH"] = str(tree)
    code = f"import importlib.util; print(importlib.util.find_spec({MODULE!r}).origin)"
    out = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True, env=env,
                         cwd=tree, check=True)
    return out.stdout.strip()


@pytest.mark.skipif(not COMPILED, reason="the request path is not compiled here (no Cython or compiler at install)")
def test_a_compiled_copy_newer_than_its_source_is_used(tmp_path: Path) -> None:
    tree, source, compiled = _fake_tree(tmp_path)
    os.utime(source, (1_000_000, 1_000_000))
    os.utime(compiled, (2_000_000, 2_000_000))
    assert _spec_origin(tree) == str(compiled)
    assert _spec_origin(tree, pure=True) == str(source)


@pytest.mark.skipif(not COMPILED, reason="the request path is not compiled here (no Cython or compiler at install)")
def test_a_source_edited_after_the_build_wins(tmp_path: Path) -> None:
    tree, source, compiled = _fake_tree(tmp_path)
    os.utime(compiled, (1_000_000, 1_000_000))
    os.utime(source, (2_000_000, 2_000_000))
    assert _spec_origin(tree) == str(source)
    out = subprocess.run(
        [sys.executable, "-P", "-c", f"import {MODULE} as m; print(m.FROM_SOURCE, m.__file__)"],
        capture_output=True, text=True, cwd=tree, check=True,
        env={**{k: v for k, v in os.environ.items() if k != "PARTITA_PURE_PYTHON"}, "PYTHONPATH": str(tree)},
    )
    assert out.stdout.split() == ["True", str(source)]


def test_pure_python_loads_every_module_from_source() -> None:
    """PARTITA_PURE_PYTHON=1 is what the SQLite pass relies on: not one compiled request-path module."""
    code = (
        "import partita, partita.cli.serve, partita.protocol.server, partita.api.items, partita.api.reads, "
        "partita.api.batch, partita.storage.memory, partita.storage.sqlite; print(partita.compiled_modules())"
    )
    env = {**os.environ, "PARTITA_PURE_PYTHON": "1"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "[]"
