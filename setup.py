"""The compiled parts: SigV4's hashing over OpenSSL (partita/protocol/auth/_digest.c) and the
meter's lease arithmetic, per request and per batch (partita/engine/capacity/_spend.c).

Everything else is in pyproject.toml. Both extensions are optional: where
one cannot be built (no compiler, no OpenSSL headers) the install goes on
and digest.py or spend.py beside it does the same work in Python.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "partita.protocol.auth._digest",
            ["partita/protocol/auth/_digest.c"],
            libraries=["crypto"],
            optional=True,
        ),
        Extension("partita.engine.capacity._spend", ["partita/engine/capacity/_spend.c"], optional=True),
    ]
)
