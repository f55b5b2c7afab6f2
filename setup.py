"""The compiled parts, all optional: where one cannot be built the install goes on in Python.

- SigV4's hashing over OpenSSL (partita/protocol/auth/_digest.c) and the
  meter's lease arithmetic (partita/engine/capacity/_spend.c): hand-written C,
  with digest.py and spend.py beside them doing the same work in Python.
- A few modules of the request path (COMPILED below), compiled from their own
  .py sources by Cython when it is present (a build requirement in
  pyproject.toml): the same code, nothing to keep in step by hand, and a
  request about a twentieth cheaper than in pure Python. Only those that gain:
  compiling the whole request path made it slower (COMPILED's note).
  `partita/__init__.py` runs a module's .py instead of
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
storage/postgres.py storage/pg_wire.py storage/pg_keys.py storage/pg_views.py
""".split()
"""The modules that run faster compiled, measured (bench/README, issue 27, tenth pass).

Untyped code compiled by Cython looks every attribute and method up through
the generic slots, where Python 3.11's specializing interpreter caches them
per instruction, and each compiled module adds its generated machine code to
what the CPU's caches must hold for a request. Compiled, the shape
validator's walk, the attribute-value model and the meter's arithmetic run
faster, alone and together; the other groups of the request path gained a few
per cent at most alone, and compiling all of them (about fifty modules) made a
served PutItem, GetItem or UpdateItem about a fifth slower than compiling
these alone. The PostgreSQL storage modules, which only a PostgreSQL server
loads, decode rows faster compiled; the SQLite ones gained nothing. Measure
with bench/tree_cost.py and bench/run.py before adding one."""


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
