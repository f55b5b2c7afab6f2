"""The one compiled part: SigV4's hashing over OpenSSL (partita/protocol/auth/_digest.c).

Everything else is in pyproject.toml. The extension is optional: where it
cannot be built (no compiler, no OpenSSL headers) the install goes on and
partita/protocol/auth/digest.py does the same work in Python.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "partita.protocol.auth._digest",
            ["partita/protocol/auth/_digest.c"],
            libraries=["crypto"],
            optional=True,
        )
    ]
)
