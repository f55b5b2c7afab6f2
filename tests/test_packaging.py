"""`pip install .` builds a wheel with everything the server needs; `partita --version`."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from importlib.metadata import version
from pathlib import Path

import pytest

# Store-independent (the wheel does not depend on the store): once per `./dev test`, in the memory pass.
pytestmark = pytest.mark.skipif(os.environ.get("PARTITA_TEST_STORE") == "sqlite",
                                reason="store-independent; runs with PARTITA_TEST_STORE=memory")

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    # The build compiles setup.py's COMPILED modules with Cython while the other test workers run:
    # past 300 s on a loaded 2-core host once, when the list held 52 modules (18 since; 52 s alone).
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(out)],
                   check=True, capture_output=True, timeout=900)
    (built,) = out.glob("partita-*.whl")
    return built


def test_wheel_holds_every_module_the_data_files_and_entry_points(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    sources = {p.relative_to(ROOT).as_posix() for p in (ROOT / "partita").rglob("*.py")}
    assert sources - names == set()
    assert "partita/py.typed" in names
    for pattern in ("console/templates/**/*", "console/static/**/*"):  # the console's assets, when present
        assets = {p.relative_to(ROOT).as_posix() for p in (ROOT / "partita").glob(pattern) if p.is_file()}
        assert assets - names == set()
    (entry_points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "[console_scripts]\npartita = partita.cli:main" in text
    assert "[pytest11]\npartita = partita.testing.plugin" in text
    assert not any(n.startswith(("tests/", "examples/", "bench/")) for n in names)


def test_installed_wheel_serves_and_reports_its_version(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site), str(wheel)],
                   check=True, capture_output=True, timeout=300)
    # Run from elsewhere, with only the installed copy importable as `partita`.
    env = {**os.environ, "PYTHONPATH": str(site)}
    shown = subprocess.run([sys.executable, "-m", "partita", "--version"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=60, check=True)
    assert shown.stdout == f"partita {version('partita')}\n"
    where = subprocess.run([sys.executable, "-c", "import partita; print(partita.__file__)"], cwd=tmp_path,
                           env=env, capture_output=True, text=True, timeout=60, check=True)
    assert where.stdout.startswith(str(site))
    server = subprocess.Popen([sys.executable, "-m", "partita", "serve", "--in-memory", "--port", "0"],
                              cwd=tmp_path, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        assert server.stdout.readline().startswith("Partita serving DynamoDB at http://127.0.0.1:")
    finally:
        server.terminate()
        server.wait(10)


def test_console_script_version() -> None:
    script = Path(sys.executable).with_name("partita")
    shown = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=60, check=True)
    assert shown.stdout == "partita 0.1.0\n"
