"""The jobs page: backups, restores, exports, imports and bulk puts in progress, the latest exports,
imports and bulk puts, and the delivery of each Kinesis streaming destination.

Progress is read from the store (engine/backups/progress.py), the same
figures `GET /metrics` reports, so it is right whichever worker answers.
"""

from __future__ import annotations

from ..engine.backups.progress import recent, running
from ..engine.engine import Engine
from ..engine.kinesis.service import deliveries
from .render import render
from .web import Answer, Request, html


def jobs_page(engine: Engine, request: Request, _: str) -> Answer:
    rows = sorted([*recent(engine.store), *engine.bulk.recent()], key=lambda r: r["start"], reverse=True)[:20]
    return html(render("jobs.html", running=running(engine.store), finished=rows, now=engine.clock.now(),
                       kinesis=deliveries(engine.store, engine.clock)))
