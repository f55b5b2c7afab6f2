"""A PostgreSQL cluster of a test's own (tests/pg/cluster.sh), for tests that restart it or read its log."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CLUSTER = Path(__file__).parent / "pg" / "cluster.sh"


@contextmanager
def own_cluster() -> Iterator[tuple[str, Path]]:
    """(URL, folder) of a fresh cluster, removed afterwards."""
    # Not under pytest's tmp_path (0700 folders): the cluster's unprivileged owner must reach it.
    folder = Path(tempfile.mkdtemp(prefix="partita-pg-")) / "cluster"
    try:
        url = subprocess.run(["bash", str(CLUSTER), "start", str(folder)], capture_output=True, text=True, check=True)
        yield url.stdout.strip(), folder
    finally:
        subprocess.run(["bash", str(CLUSTER), "stop", str(folder)], capture_output=True, check=False)
        shutil.rmtree(folder.parent, ignore_errors=True)


def restart(folder: Path, down_seconds: float = 0) -> None:
    """Crash the cluster (immediate stop), keep it down a while, start it on the same port."""
    subprocess.run(
        ["bash", str(CLUSTER), "restart", str(folder), "immediate", str(down_seconds)], check=True, capture_output=True
    )
