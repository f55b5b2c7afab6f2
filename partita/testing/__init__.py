"""Partita for a Python test suite: an in-process server and a pytest plugin.

    from partita.testing import local

    with local() as partita:          # a real server on a free loopback port
        ddb = partita.client()        # or boto3.client("dynamodb"): the environment points here
        ...

The pytest plugin (`partita.testing.plugin`, registered as a `pytest11`
entry point) gives the fixtures `partita`, `dynamodb_endpoint`,
`dynamodb_client`, `dynamodb_resource` and `partita_tables`.
"""

from __future__ import annotations

from .server import LocalPartita, local

__all__ = ["LocalPartita", "local"]
