"""The access-pattern advisor (issue 28): request shapes, findings, and the entity view.

`shapes` is the bounded table of request shapes the read paths count into;
`traces` what the write path leaves (recent GSI entries, item-collection
sizes); `settings` the thresholds; `advisor` the front door the engine
holds. `findings` (with `fixes`, the CreateTable/UpdateTable inputs) and
`entities` run only when asked: `GET /partita/v1/advice`, the console's
Advice and Entities pages, `partita advise`, the pytest plugin.

Nothing is imported here: the write path imports `traces` alone.
"""
