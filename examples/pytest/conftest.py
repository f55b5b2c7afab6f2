"""The whole set-up: declare the tables once; the partita plugin does the rest."""

from pathlib import Path

from partita.testing.plugin import tables_fixture

HERE = Path(__file__).parent

#: The stack's tables (from the SAM/CloudFormation template), created for each test.
stack = tables_fixture(HERE / "template.yaml")
#: One more table from CreateTable input in JSON.
events = tables_fixture(HERE / "events.json", name="events")
