"""The one place the control plane reads the time.

Continuous-backup restore windows and policy revision ids are time rules;
they read the clock here so the server clock (engine/clock.py, being built
separately) can be swapped in with a one-line change.
"""

from __future__ import annotations

import time as _time


def now() -> float:
    """Seconds since the epoch on the server clock."""
    return _time.time()
