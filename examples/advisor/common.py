"""What every advisor scenario shares: a server to run it against, and printing the findings.

Each scenario module has `run(ddb, table, advance)`: it creates `table`
(and uses `advance(seconds)` to move the server clock where time matters)
and sends the requests of one access pattern. `main(run)` runs it against a
fresh in-process server (`partita.testing.local`) and prints what
`partita advise` prints. Partita's tests run the same `run` functions
against their server and assert each finding's evidence
(tests/test_advisor_examples.py).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

Advance = Callable[[float], Any]
Run = Callable[[Any, str, Advance], None]


def key_table(ddb: Any, name: str, sort: bool = True, **extra: Any) -> None:
    """A table keyed pk (S) [and sk (S)], on demand, plus any CreateTable members in `extra`."""
    schema = [{"AttributeName": "pk", "KeyType": "HASH"}]
    names = {"pk"}
    if sort:
        schema.append({"AttributeName": "sk", "KeyType": "RANGE"})
        names.add("sk")
    for index in extra.get("GlobalSecondaryIndexes", []) + extra.get("LocalSecondaryIndexes", []):
        names |= {k["AttributeName"] for k in index["KeySchema"]}
    ddb.create_table(TableName=name, BillingMode="PAY_PER_REQUEST", KeySchema=schema,
                     AttributeDefinitions=[{"AttributeName": n, "AttributeType": "S"} for n in sorted(names)],
                     **extra)


def batch_put(ddb: Any, table: str, items: list[dict[str, Any]]) -> None:
    for start in range(0, len(items), 25):
        requests = [{"PutRequest": {"Item": item}} for item in items[start:start + 25]]
        ddb.batch_write_item(RequestItems={table: requests})


def main(run: Run, **server_options: Any) -> None:
    """Run one scenario against a fresh in-memory server and print the advisor's findings."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # a clone, not an installed partita
    from partita.engine.advisor.report import as_text
    from partita.testing import local

    with local(**server_options) as server:
        run(server.client(), "demo", server.advance_clock)
        print(as_text(server.advice()))
