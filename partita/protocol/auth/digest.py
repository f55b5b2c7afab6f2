"""SigV4's per-request SHA-256 work: OpenSSL in one C call when built (_digest.c), else hashlib.

Three functions, whose states are opaque to their callers (bytes of
SHA256_CTX structures from the C module, hashlib objects from the fallback):

- `state(data, start=None)`: SHA-256 having absorbed `data` (after `start`).
  The fixed parts of a signature are kept this way: HMAC's two keyed pads,
  and per set of signed header values the canonical request and the string
  to sign up to the hash that follows them (sigv4.Form).
- `join(canonical, inner, outer)`: those three states as one value, which
  a request reads together (one object: fewer cache misses in a loaded
  server than three).
- `check(states, body, signature)`: hash the body, finish the canonical
  request, the string to sign and HMAC's outer hash from the joined states,
  and compare the hex signature in constant time.

Why a C accelerator (docs/decisions.md, "Authentication: the SigV4
accelerator"): through hashlib the four hashes a request needs allocate and
copy a dozen objects and contexts, which in a loaded server cost more than
the hashing; `--auth` has to stay within 10 % of a GetItem. The module is
optional: without a compiler or OpenSSL's headers `pip install` skips it
and this file's Python does the same work (tests/test_auth_digest.py holds
the two to the same answers).
"""

from __future__ import annotations

from binascii import hexlify
from hashlib import sha256
from hmac import compare_digest
from typing import Any


def py_state(data: bytes, start: Any = None) -> Any:
    if start is None:
        return sha256(data)
    state = start.copy()
    state.update(data)
    return state


def py_join(canonical: Any, inner: Any, outer: Any) -> Any:
    return (canonical, inner, outer)


def py_check(states: Any, body: bytes, signature: bytes) -> bool:
    canonical, inner, outer = states
    request = canonical.copy()
    request.update(hexlify(sha256(body).digest()))
    mac = inner.copy()
    mac.update(hexlify(request.digest()))
    final = outer.copy()
    final.update(mac.digest())
    return compare_digest(hexlify(final.digest()), signature)


try:
    from ._digest import check, join, state
except ImportError:  # not built: the same in Python
    state, join, check = py_state, py_join, py_check
    ACCELERATED = False
else:
    ACCELERATED = True

__all__ = ["ACCELERATED", "check", "join", "py_check", "py_join", "py_state", "state"]
