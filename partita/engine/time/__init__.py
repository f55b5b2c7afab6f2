"""Time: the server clock and what runs on it.

- `clock`: wall time plus an offset that tests move (every time rule reads it);
- `duties`: the periodic background duties, run by one process at a time;
- `ttl`, `ttl_index`: Time to Live settings, the expiry index and the expiry duty;
- `gsi_lag`: the optional delay before global index changes become visible.
"""
