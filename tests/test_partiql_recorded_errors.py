"""PartiQL error answers that DynamoDB gave in 2026, asserted verbatim.

Each case is a request sent as the public conformance suite
paritysuite/dynamodb-conformance sent it to AWS (tests/tier3/error-messages/
partiqlFunctions.test.ts), with the code and message AWS answered. Positions (`at line:column:length`) count characters
from 1 in the statement actually sent, so they are worked out from the
statement rather than written down: the table name differs per run.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import create_table, error_of

ITEM = "pq-fn-msg"
NOT_WELL_FORMED = "Statement wasn't well formed, can't be processed: "
LEFTOVER = f"{NOT_WELL_FORMED}Unexpected token after expression"
REQUIRES_PATH = "Operator or function requires a document path; operator or function: attribute_exists"
OPERANDS = (
    "Incorrect number of operands for operator or function; "
    "operator or function: attribute_exists, number of operands: {}"
)
BAD_TYPE = "An operand in the update expression has an incorrect data type"


@pytest.fixture(scope="module")
def table(ddb: Any) -> str:
    """One S-keyed table holding the item the recorded statements name."""
    name = f"t-recorded-{uuid.uuid4().hex[:10]}"
    create_table(ddb, name)
    ddb.put_item(
        TableName=name,
        Item={
            "pk": {"S": ITEM},
            "ss": {"SS": ["a", "b", "c"]},
            "ns": {"NS": ["1", "2", "3"]},
            "s": {"S": "str"},
            "m": {"M": {"inner": {"SS": ["x"]}}},
        },
    )
    return name


def at(statement: str, token: str, length: int | None = None, after: str | None = None) -> str:
    """`1:column:length` of the first `token` at or after `after`, as AWS counts it."""
    start = statement.index(after) if after else 0
    return f"1:{statement.index(token, start) + 1}:{len(token) if length is None else length}"


def where(condition: str) -> str:
    return f"SELECT * FROM \"{{T}}\" WHERE pk = '{ITEM}' AND {condition}"


def update(assignment: str) -> str:
    return f"UPDATE \"{{T}}\" SET {assignment} WHERE pk = '{ITEM}'"


# (statement with {T} for the table, parameters, message; `{at:token}` or
# `{at:token:after}` in the message is the position of token in the statement)
FUNCTIONS: list[tuple[str, list[dict[str, Any]] | None, str]] = [
    (where("attribute_exists('ss')"), None, REQUIRES_PATH),
    (where("attribute_exists(?)"), [{"S": "ss"}], REQUIRES_PATH),
    (where("attribute_exists()"), None, OPERANDS.format(0)),
    (where("attribute_exists(ss, ns)"), None, OPERANDS.format(2)),
    (
        f"SELECT attribute_exists(ss) FROM \"{{T}}\" WHERE pk = '{ITEM}'",
        None,
        "Unexpected path component at {at:attribute_exists}",
    ),
    (where("EXISTS(ss)"), None, "Unrecognized function: exists at {at:EXISTS}"),
    (where("attribute_exists(m.inner)"), None, f"{NOT_WELL_FORMED}Invalid path dot component"),
    (
        update("t = set_add(ss, <<'x'>>)"),
        None,
        "The first argument to SET_ADD must equal the assignment value at {at:set_add}",
    ),
    (
        update("ss = set_add(<<'a'>>, <<'b'>>)"),
        None,
        "The first argument to SET_ADD must equal the assignment value at {at:set_add}",
    ),
    (
        update("ss = set_add(ss, 'x')"),
        None,
        "The second argument to SET_ADD must be a value with type SET at {at:ss:set_add(}",
    ),
    (
        update("ss = set_add(ss, ['x'])"),
        None,
        "The second argument to SET_ADD must be a value with type SET at {at:ss:set_add(}",
    ),
    (update("ss = set_add(ss)"), None, "SET_ADD must have exactly two arguments at {at:set_add}"),
    (
        update("ss = set_add(ss, <<'x'>>, <<'y'>>)"),
        None,
        "SET_ADD must have exactly two arguments at {at:set_add}",
    ),
    (update("ss = set_add(ss, <<1>>)"), None, BAD_TYPE),
    (update("s = set_add(s, <<'x'>>)"), None, BAD_TYPE),
    (
        update("ss = set_add(ss, <<'x', 'x'>>)"),
        None,
        "One or more parameter values were invalid: Input collection [x, x] contains duplicates.",
    ),
    (update("ss = set_add(ss, <<>>)"), None, "Empty bags are not supported"),
    (update("m.inner = set_add(m.inner, <<'y'>>)"), None, f"{NOT_WELL_FORMED}Invalid path dot component"),
    (where("set_add(ss, <<'x'>>) = ss"), None, "Unrecognized function: set_add at {at:set_add}"),
    (
        "INSERT INTO \"{T}\" VALUE {{'pk': 'pq-fn-msg-insert', 'ss': set_add(<<'a'>>, <<'b'>>)}}",
        None,
        "Unsupported data type: set_add under key root at {at:set_add}",
    ),
    (
        update("t = set_delete(ss, <<'a'>>)"),
        None,
        "The first argument to SET_DELETE must equal the assignment value at {at:set_delete}",
    ),
    (
        update("ss = set_delete(ss, 'a')"),
        None,
        "The second argument to SET_DELETE must be a value with type SET at {at:ss:set_delete(}",
    ),
    (update("ss = set_delete(ss, <<1>>)"), None, BAD_TYPE),
]


def expected_message(statement: str, template: str) -> str:
    """The recorded message with each `{at:...}` replaced by its position in `statement`."""
    while "{at:" in template:
        start = template.index("{at:")
        end = template.index("}", start)
        token, _, after = template[start + 4 : end].partition(":")
        template = template[:start] + at(statement, token, after=after or None) + template[end + 1 :]
    return template


@pytest.mark.parametrize(("template", "parameters", "message"), FUNCTIONS)
def test_function_errors(ddb: Any, table: str, template: str, parameters: Any, message: str) -> None:
    statement = template.replace("{T}", table) if "{{" not in template else template.format(T=table)
    extra = {"Parameters": parameters} if parameters else {}
    with pytest.raises(ClientError) as excinfo:
        ddb.execute_statement(Statement=statement, **extra)
    assert error_of(excinfo) == ("ValidationException", expected_message(statement, message))


def test_exists_without_a_further_condition(ddb: Any, table: str) -> None:
    """EXISTS over a bare key read checks nothing, so the service refuses it (recorded)."""
    with pytest.raises(ClientError) as excinfo:
        ddb.execute_transaction(
            TransactStatements=[
                {"Statement": f"EXISTS(SELECT * FROM \"{table}\" WHERE pk = '{ITEM}')"},
                {"Statement": f"UPDATE \"{table}\" SET z = 1 WHERE pk = 'pq-fn-msg-never-written'"},
            ]
        )
    assert error_of(excinfo) == (
        "ValidationException",
        "Validation failed in TransactStatements[0]: "
        "EXISTS() must contain a single item read with additional condition",
    )
