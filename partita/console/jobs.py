"""The jobs page: backups, restores, exports and imports in progress, and the latest exports and imports.

Progress is read from the store (engine/backups/progress.py), the same
figures `GET /metrics` reports, so it is right whichever worker answers.
"""

from __future__ import annotations

import datetime

from ..engine.backups.progress import recent, running
from ..engine.engine import Engine
from .render import render
from .web import Answer, Request, html


def _when(epoch: float) -> str:
    return datetime.datetime.fromtimestamp(epoch, tz=datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def jobs_page(engine: Engine, request: Request, _: str) -> Answer:
    finished = [dict(row, start=_when(row["start"])) for row in recent(engine.store)]
    return html(render("jobs.html", running=running(engine.store), finished=finished))
