"""PartiQL numbers that Java cannot parse, in parameters and in literals (issue 26, class 2).

DynamoDB reads numbers with Java's BigDecimal: an exponent, or a scale (fraction
digits less the exponent), outside 32-bit integers does not parse. A parameter
then answers "The parameter cannot be converted to a numeric value: <text>",
wherever it sits (a WHERE, a VALUE, a SET, the key; inside a list, a map or a
number set), with no "Validation failed in TransactStatements[i]: " in
ExecuteTransaction and as the member's error in BatchExecuteStatement; a
literal is the bare "Statement wasn't well formed, can't be processed: ". One
that parses but whose precision less scale passes 2**31 wraps in 32-bit
arithmetic (1e2147483647 is an "underflow"). All as recorded on AWS by a 2026
conformance suite (partiqlParameterNumbers, partiqlGrammar).
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import create_table, error_of
from hypothesis import given, settings
from hypothesis import strategies as st

NOT_NUMERIC = "The parameter cannot be converted to a numeric value: "
UNDERFLOW = "Number underflow. Attempting to store a number with magnitude smaller than supported range"
OVERFLOW = "Number overflow. Attempting to store a number with magnitude larger than supported range"
NESTING = "Nesting Levels have exceeded supported limits: Attributes in the item have nested levels beyond supported limit"
NOT_WELL_FORMED = "Statement wasn't well formed, can't be processed: "


@pytest.fixture(scope="module")
def tables(ddb: Any) -> tuple[str, str]:
    suffix = uuid.uuid4().hex[:8]
    composite, numeric = f"pq-num-{suffix}", f"pq-numkey-{suffix}"
    create_table(ddb, composite, range_key=("sk", "S"))
    create_table(ddb, numeric, hash_key=("pk", "N"))
    return composite, numeric


def _positions(table: str) -> list[str]:
    return [
        f"SELECT * FROM \"{table}\" WHERE pk = 'pq-pn' AND n = ?",
        f"INSERT INTO \"{table}\" VALUE {{'pk': 'pq-pn-insert', 'sk': 's', 'n': ?}}",
        f"UPDATE \"{table}\" SET n = ? WHERE pk = 'pq-pn' AND sk = 's'",
        f"SELECT * FROM \"{table}\" WHERE pk = ?",
    ]


def _refused(call: Any, **request: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        call(**request)
    return error_of(excinfo)


def _expected(text: str) -> str:
    """What the service answers for the parameter `text` (an exponent of ten or more digits)."""
    mantissa, _, exponent_text = text.lower().partition("e")
    exponent = int(exponent_text)
    whole, _, fraction = mantissa.lstrip("+-").partition(".")
    scale = len(fraction) - exponent
    if not (-(2**31) <= exponent < 2**31 and -(2**31) <= scale < 2**31):
        return NOT_NUMERIC + text
    precision = max(len((whole + fraction).lstrip("0")), 1)
    if precision - scale >= 2**31:
        return UNDERFLOW  # wrapped
    return OVERFLOW if precision - scale - 1 > 0 else UNDERFLOW


@pytest.mark.parametrize("text", ["1e99999999999", "-1e99999999999", "1e-99999999999", "1e2147483648",
                                  "1e-2147483648"])
def test_an_unconvertible_parameter_in_every_position(ddb: Any, tables: tuple[str, str], text: str) -> None:
    for statement in _positions(tables[0]):
        assert _refused(ddb.execute_statement, Statement=statement, Parameters=[{"N": text}]) == (
            "ValidationException", NOT_NUMERIC + text), statement


def test_a_parameter_that_parses_but_wraps_is_an_underflow(ddb: Any, tables: tuple[str, str]) -> None:
    for statement in _positions(tables[0]):
        assert _refused(ddb.execute_statement, Statement=statement, Parameters=[{"N": "1e2147483647"}]) == (
            "ValidationException", UNDERFLOW), statement
    # An ordinary out-of-range number keeps its range message.
    assert _refused(ddb.execute_statement, Statement=_positions(tables[0])[2], Parameters=[{"N": "1e200"}]) == (
        "ValidationException", OVERFLOW)


@pytest.mark.parametrize("parameter", [
    {"L": [{"N": "1"}, {"N": "1e99999999999"}]},
    {"M": {"x": {"N": "1e99999999999"}}},
    {"NS": ["1", "1e99999999999"]},
])
def test_an_unconvertible_number_inside_a_parameter(ddb: Any, tables: tuple[str, str], parameter: Any) -> None:
    assert _refused(ddb.execute_statement, Statement=_positions(tables[0])[0], Parameters=[parameter]) == (
        "ValidationException", NOT_NUMERIC + "1e99999999999")


def test_transactions_and_batches_report_the_parameter_as_it_is(ddb: Any, tables: tuple[str, str]) -> None:
    table = tables[0]
    update = f"UPDATE \"{table}\" SET n = ? WHERE pk = 'pq-pn' AND sk = 's'"
    assert _refused(ddb.execute_transaction, TransactStatements=[
        {"Statement": update, "Parameters": [{"N": "1e99999999999"}]}]) == (
        "ValidationException", NOT_NUMERIC + "1e99999999999")
    answer = ddb.batch_execute_statement(Statements=[{
        "Statement": f"SELECT * FROM \"{table}\" WHERE pk = 'pq-pn' AND sk = 's' AND n = ?",
        "Parameters": [{"N": "1e99999999999"}]}])
    assert answer["Responses"] == [{"Error": {"Code": "ValidationError", "Message": NOT_NUMERIC + "1e99999999999"}}]
    # A parameter nested too deeply, before an unconvertible one: the nesting message, no prefix either.
    for depth in (40, 100):
        deep: dict[str, Any] = {"S": "leaf"}
        for _ in range(depth):
            deep = {"M": {"n": deep}}
        assert _refused(ddb.execute_transaction, TransactStatements=[{
            "Statement": f"UPDATE \"{table}\" SET x = ? SET y = ? WHERE pk = 'pq-pn' AND sk = '1'",
            "Parameters": [deep, {"N": "abc"}]}]) == ("ValidationException", NESTING), depth
    # A statement's own fault keeps the prefix.
    assert _refused(ddb.execute_transaction, TransactStatements=[{
        "Statement": f"UPDATE \"{table}\" SET n = 1 WHERE pk = 'pq-pn' AND sk = 's' RETURNING ALL NEW *"}]
    )[1].startswith("Validation failed in TransactStatements[0]: ")


@pytest.mark.parametrize("literal", ["1e2147483648", "1e99999999999", "1.5e-2147483647", "-1e-2147483649"])
def test_an_unparsable_literal_is_not_well_formed(ddb: Any, tables: tuple[str, str], literal: str) -> None:
    assert _refused(ddb.execute_statement, Statement=f"SELECT * FROM \"{tables[1]}\" WHERE pk = {literal}") == (
        "ValidationException", NOT_WELL_FORMED)


@settings(max_examples=30, deadline=None)
@given(
    sign=st.sampled_from(["", "-", "+"]),
    whole=st.sampled_from(["1", "12", "0", "007", "9"]),
    fraction=st.sampled_from(["", ".", ".5", ".25", ".000"]),
    exponent=st.integers(min_value=-(2**31) - 3, max_value=2**31 + 3).filter(lambda e: abs(e) >= 10**9)
    | st.sampled_from([2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 2**31 - 2]),
)
def test_the_class_of_huge_exponents(ddb: Any, tables: tuple[str, str], sign: str, whole: str, fraction: str,
                                     exponent: int) -> None:
    text = f"{sign}{whole}{fraction}e{exponent}"
    assert _refused(ddb.execute_statement, Statement=_positions(tables[0])[2], Parameters=[{"N": text}]) == (
        "ValidationException", _expected(text))
