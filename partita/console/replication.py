"""The replication page: every global table's replicas, the lag, the backlog and the conflicts resolved.

The figures are `GET /partita/v1/replication`'s (admin/replication.py); on a
server of one region the page says how to serve several.
"""

from __future__ import annotations

from ..admin.replication import status
from ..engine.engine import Engine
from .render import render
from .web import Answer, Request, html


def replication_page(engine: Engine, request: Request, _: str) -> Answer:
    gt = engine.global_tables
    return html(render("replication.html", status=None if gt is None else status(gt)))
