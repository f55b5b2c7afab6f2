"""The compiled parts, all optional: where one cannot be built the install goes on in Python.

- SigV4's hashing over OpenSSL (partita/protocol/auth/_digest.c) and the
  meter's lease arithmetic (partita/engine/capacity/_spend.c): hand-written C,
  with digest.py and spend.py beside them doing the same work in Python.
- The request path's modules (COMPILED below), compiled from their own .py
  sources by Cython when it is present (a build requirement in
  pyproject.toml): the same code, about 1.5x faster a request, and nothing to
  keep in step by hand. `partita/__init__.py` runs a module's .py instead of
  its compiled copy when the .py is newer (an edit since the last build) or
  PARTITA_PURE_PYTHON=1. Where Cython, a compiler or the Python headers are
  missing, or PARTITA_PURE_PYTHON=1 at build time, every module stays Python.
"""

from __future__ import annotations

import os

from setuptools import Extension, setup

COMPILED = """
api/validation/compiler.py api/validation/leaves.py api/validation/shapes.py api/validation/reads.py
api/validation/key_conditions.py
engine/model/values.py engine/model/sizes.py engine/model/item_keys.py engine/model/keys.py
engine/capacity/meter.py engine/capacity/charges.py engine/capacity/stats.py engine/capacity/units.py
engine/capacity/hotkeys.py
""".split()
"""Modules on the path of every item request, by profile (bench/README, issue 27).

Only modules whose code runs per request: compiling the rest would lengthen
every install for nothing."""


def _compiled_modules() -> list[Extension]:
    if os.environ.get("PARTITA_PURE_PYTHON") == "1":
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:
        return []
    extensions = [
        Extension("partita." + path[:-3].replace("/", "."), ["partita/" + path], optional=True)
        for path in COMPILED
    ]
    # annotation_typing off: type hints stay hints, as in Python (a compiled
    # module must answer exactly as its source does); binding on: functions
    # keep Python's introspection (signatures, __wrapped__, pickling by name).
    return cythonize(
        extensions,
        build_dir="build/cython",
        compiler_directives={"language_level": 3, "annotation_typing": False, "binding": True},
        nthreads=os.cpu_count() or 1,
        quiet=True,
    )


setup(
    ext_modules=[
        Extension(
            "partita.protocol.auth._digest",
            ["partita/protocol/auth/_digest.c"],
            libraries=["crypto"],
            optional=True,
        ),
        Extension("partita.engine.capacity._spend", ["partita/engine/capacity/_spend.c"], optional=True),
        *_compiled_modules(),
    ],
    options={"build_ext": {"parallel": os.cpu_count() or 1}},
)
