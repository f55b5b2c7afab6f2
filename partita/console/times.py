"""Times for people: a date in UTC and how far it is from the server clock ("in 59 min", "3 min ago").

Every time the console shows (stream records, TTL expiries, the server
clock, schema violations) is an epoch number underneath; a page shows the
date, the distance from the server clock (which `partita clock advance`
moves, so "now" is the server's, not the browser's) and keeps the number in
the `<time>` element's title. `static/streams.js` counts down with the same
wording (`span`).
"""

from __future__ import annotations

import datetime

from markupsafe import Markup, escape


def absolute(epoch: float) -> str:
    return datetime.datetime.fromtimestamp(epoch, tz=datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def span(seconds: float) -> str:
    """A duration rounded down to what a person reads: 42 s, 59 min, 2 h 5 min, 3 days 4 h."""
    whole = int(seconds)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min"
    if whole < 86400:
        hours, minutes = whole // 3600, whole % 3600 // 60
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    days, hours = whole // 86400, whole % 86400 // 3600
    text = f"{days} day" if days == 1 else f"{days} days"
    return f"{text} {hours} h" if hours else text


def relative(epoch: float, now: float) -> str:
    delta = epoch - now
    if abs(delta) < 1:
        return "now"
    return f"in {span(delta)}" if delta > 0 else f"{span(-delta)} ago"


def when(epoch: float | int | str | None, now: float) -> Markup:
    """`<time>` with the date and, beside it, the distance from the server clock; '' for no time."""
    if epoch is None or epoch == "":
        return Markup("")
    try:
        value = float(epoch)
        text = absolute(value)
    except (TypeError, ValueError, OverflowError, OSError):  # not a time (a TTL attribute of another type)
        return Markup("%s") % epoch
    iso = datetime.datetime.fromtimestamp(value, tz=datetime.UTC).isoformat()
    return Markup('<time datetime="%s" title="%s">%s</time> <small class="relative">(%s)</small>') % (
        iso, escape(str(epoch)), text, relative(value, now))
