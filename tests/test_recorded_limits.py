"""Limits at their exact boundaries, as DynamoDB answers them.

Every expected answer is DynamoDB's as a 2026 public conformance suite records
it (paritysuite/dynamodb-conformance, tests/tier3/limits: numberExponent,
numberByteSize, expressionSize, nestingDepth, itemSizeBySurface; captured in
eu-west-2 and other regions). Where the records leave a detail open (a message
tail, the negative edge of the 64-bit exponent) the test says so. See
docs/decisions.md, the last bullet of "Robustness (no 500, bounded cost)".
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import create_table, error_of
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

OVERFLOW = "Number overflow. Attempting to store a number with magnitude larger than supported range"
UNDERFLOW = "Number underflow. Attempting to store a number with magnitude smaller than supported range"
NOT_NUMERIC = "The parameter cannot be converted to a numeric value"
PUT_SIZE = "Item size has exceeded the maximum allowed size"
EXPRESSION_SIZE = "Expression size has exceeded the maximum allowed size"
NESTING = ("Nesting Levels have exceeded supported limits: "
           "Attributes in the item have nested levels beyond supported limit")
MAX_ITEM = 409_600
MAX_EXPRESSION = 4096
LONG_MAX = 2**63 - 1


@pytest.fixture(scope="module")
def table(ddb: Any) -> str:
    name = f"limits-{uuid.uuid4().hex[:10]}"
    create_table(ddb, name)
    return name


@pytest.fixture(scope="module")
def number_table(ddb: Any) -> str:
    name = f"limits-n-{uuid.uuid4().hex[:10]}"
    create_table(ddb, name, hash_key=("pk", "N"))
    return name


@pytest.fixture(scope="module")
def sorted_table(ddb: Any) -> str:
    name = f"limits-sn-{uuid.uuid4().hex[:10]}"
    create_table(ddb, name, range_key=("sk", "N"))
    return name


#: PutItem, UpdateItem and DeleteItem report a bad number inside the request envelope
#: (paritysuite valueLayers, us-east-1 and eu-west-2; docs/decisions.md "Query and Scan").
ENVELOPE = "1 validation error detected: "


def refusal(call: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        call()
    return error_of(excinfo)


# --- Number exponents ------------------------------------------------------------------

# DynamoDB reads the exponent in full: one past 32 bits is out of range, not
# wrapped; one past 64 bits is not a number at all. The records pin the phrase;
# the ": <literal>" tail of the not-numeric answer is ours (the one the other
# not-numeric refusals carry), unconfirmed for the item API.
RECORDED_EXPONENTS = [
    ("1e99999999999", OVERFLOW),
    ("1e-99999999999", UNDERFLOW),
    ("1e2147483648", OVERFLOW),
    ("1e9223372036854775808", f"{NOT_NUMERIC}: 1e9223372036854775808"),
    ("0e126", OVERFLOW),
    ("0e-131", UNDERFLOW),
]


@pytest.mark.parametrize(("literal", "message"), RECORDED_EXPONENTS)
def test_an_attribute_value_exponent_is_read_in_full(ddb: Any, table: str, literal: str,
                                                      message: str) -> None:
    item = {"pk": {"S": "nx"}, "val": {"N": literal}}
    assert refusal(lambda: ddb.put_item(TableName=table, Item=item)) == ("ValidationException", ENVELOPE + message)


def test_zero_and_the_smallest_magnitude_with_an_exponent_are_stored(ddb: Any, table: str) -> None:
    ddb.put_item(TableName=table, Item={"pk": {"S": "nx-zero"}, "val": {"N": "0e125"}})
    ddb.put_item(TableName=table, Item={"pk": {"S": "nx-small"}, "val": {"N": "1e-130"}})
    zero = ddb.get_item(TableName=table, Key={"pk": {"S": "nx-zero"}}, ConsistentRead=True)["Item"]
    small = ddb.get_item(TableName=table, Key={"pk": {"S": "nx-small"}}, ConsistentRead=True)["Item"]
    assert zero["val"] == {"N": "0"}
    assert small["val"] == {"N": "0." + "0" * 129 + "1"}


def test_a_64_bit_exponent_fault_is_the_same_in_values_sets_and_keys(ddb: Any, table: str,
                                                                     number_table: str) -> None:
    literal = "1e9223372036854775808"
    message = f"{NOT_NUMERIC}: {literal}"
    assert refusal(lambda: ddb.put_item(TableName=table, Item={"pk": {"S": "nx"}, "v": {"NS": ["1", literal]}})) == (
        "ValidationException", ENVELOPE + message)
    assert refusal(lambda: ddb.get_item(TableName=number_table, Key={"pk": {"N": literal}})) == (
        "ValidationException", message)
    assert refusal(lambda: ddb.put_item(
        TableName=table, Item={"pk": {"S": "nx"}}, ConditionExpression="attribute_not_exists(n) OR n = :v",
        ExpressionAttributeValues={":v": {"N": literal}})) == (
        "ValidationException", ENVELOPE + message)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(exponent=st.one_of(
    st.integers(min_value=-1000, max_value=1000).map(lambda d: LONG_MAX + d),
    st.integers(min_value=-1000, max_value=1000).map(lambda d: -LONG_MAX - 1 + d),
    st.integers(min_value=10**18, max_value=2**70),
    st.integers(min_value=-(2**70), max_value=-(10**18)),
))
@example(exponent=LONG_MAX)
@example(exponent=LONG_MAX + 1)
@example(exponent=-LONG_MAX - 1)
@example(exponent=-LONG_MAX - 2)
def test_an_exponent_is_out_of_range_within_64_bits_and_not_a_number_past_them(
        ddb: Any, table: str, exponent: int) -> None:
    # The negative edge (-2**63 still a number) is Java's long, unconfirmed:
    # the records have only positive exponents past 64 bits.
    literal = f"1e{exponent}"
    if -LONG_MAX - 1 <= exponent <= LONG_MAX:
        expected = OVERFLOW if exponent > 0 else UNDERFLOW
    else:
        expected = f"{NOT_NUMERIC}: {literal}"
    item = {"pk": {"S": "nx"}, "val": {"N": literal}}
    assert refusal(lambda: ddb.put_item(TableName=table, Item=item)) == ("ValidationException", ENVELOPE + expected)


def test_an_exponent_of_thousands_of_digits_costs_nothing_to_refuse(ddb: Any, table: str) -> None:
    literal = "1e" + "9" * 50_000
    item = {"pk": {"S": "nx"}, "val": {"N": literal}}
    code, message = refusal(lambda: ddb.put_item(TableName=table, Item=item))
    assert (code, message[: len(ENVELOPE + NOT_NUMERIC)]) == ("ValidationException", ENVELOPE + NOT_NUMERIC)


@pytest.mark.parametrize("surface", ["get", "delete", "update", "query", "batch_get"])
def test_a_key_with_a_huge_exponent_is_refused_not_matched(ddb: Any, number_table: str, sorted_table: str,
                                                           surface: str) -> None:
    big = {"N": "1e99999999999"}
    calls = {
        "get": lambda: ddb.get_item(TableName=number_table, Key={"pk": big}),
        "delete": lambda: ddb.delete_item(TableName=number_table, Key={"pk": big}),
        "update": lambda: ddb.update_item(TableName=number_table, Key={"pk": big}, UpdateExpression="SET a = :a",
                                          ExpressionAttributeValues={":a": {"S": "x"}}),
        "query": lambda: ddb.query(TableName=sorted_table, KeyConditionExpression="pk = :p AND sk = :v",
                                   ExpressionAttributeValues={":p": {"S": "q"}, ":v": big}),
        "batch_get": lambda: ddb.batch_get_item(RequestItems={number_table: {"Keys": [{"pk": big}]}}),
    }
    code, message = refusal(calls[surface])
    assert code == "ValidationException"
    assert OVERFLOW in message


# --- A number's byte cost, measured at the 400 KB gate ------------------------------------

# (literal, bytes) as measured against eu-west-2 by an accept/refuse pair either
# side of the gate.
RECORDED_NUMBER_BYTES = [
    ("0", 1), ("1", 2), ("12", 2), ("123", 3), ("1234", 3),
    ("12345678901234567890123456789012345678", 20), ("0042", 2), ("100", 2), ("1010", 3),
    ("0.0000001", 2), ("1E125", 2), ("1E-100", 2), ("1.5", 3), ("15", 2), ("1.2", 3),
    ("1.200", 3), ("1.234", 4), ("3.14159", 5), ("123456", 4), ("100.5", 4), ("0.15", 2),
    ("-42", 3), ("-0", 1),
]


@pytest.mark.parametrize(("literal", "cost"), RECORDED_NUMBER_BYTES)
def test_a_number_costs_what_dynamodb_charges_for_it(ddb: Any, table: str, literal: str, cost: int) -> None:
    def item(pk: str, total: int) -> dict[str, Any]:
        padding = total - len("pk") - len(pk) - len("n") - cost - len("p")
        return {"pk": {"S": pk}, "n": {"N": literal}, "p": {"S": "x" * padding}}

    ddb.put_item(TableName=table, Item=item(f"at-{literal}", MAX_ITEM))
    over = item(f"over-{literal}", MAX_ITEM + 1)
    assert refusal(lambda: ddb.put_item(TableName=table, Item=over)) == ("ValidationException", PUT_SIZE)


def test_a_number_is_stored_expanded_and_trimmed(ddb: Any, table: str) -> None:
    for pk, literal in (("rt-trim", "0042.1200"), ("rt-exp", "1E125")):
        ddb.put_item(TableName=table, Item={"pk": {"S": pk}, "n": {"N": literal}})
    got = {pk: ddb.get_item(TableName=table, Key={"pk": {"S": pk}}, ConsistentRead=True)["Item"]["n"]["N"]
           for pk in ("rt-trim", "rt-exp")}
    assert got == {"rt-trim": "42.12", "rt-exp": "1" + "0" * 125}


# --- Expression size: 4096 bytes of the raw text, on every surface --------------------------

def _pad_name(i: int, length: int = 50) -> str:
    suffix = f"x{i}"
    return "a" * (length - len(suffix)) + suffix


def _clauses(target: int, prefix: str, joiner: str, clause: Any) -> tuple[str, int]:
    """Clauses joined to exactly `target` bytes, the last name stretched to land on it."""
    parts: list[str] = []
    total = len(prefix)
    while total + (len(joiner) if parts else 0) + len(clause(len(parts), 50)) <= target:
        total += (len(joiner) if parts else 0) + len(clause(len(parts), 50))
        parts.append(clause(len(parts), 50))
    parts[-1] = clause(len(parts) - 1, 50 + target - total)
    text = prefix + joiner.join(parts)
    assert len(text.encode()) == target
    return text, len(parts)


def _values(count: int) -> dict[str, Any]:
    return {f":v{i}": {"S": "x"} for i in range(count)}


def _surfaces(ddb: Any, table: str, size: int) -> dict[str, Any]:
    update, n_update = _clauses(size, "SET ", ", ", lambda i, n: f"{_pad_name(i, n)} = :v{i}")
    condition, _ = _clauses(size, "", " AND ", lambda i, n: f"attribute_not_exists({_pad_name(i, n)})")
    filter_, n_filter = _clauses(size, "", " OR ", lambda i, n: f"{_pad_name(i, n)} = :v{i}")
    projection, _ = _clauses(size, "", ", ", lambda i, n: _pad_name(i, n))
    return {
        "UpdateExpression": lambda: ddb.update_item(
            TableName=table, Key={"pk": {"S": f"es-u{size}"}}, UpdateExpression=update,
            ExpressionAttributeValues=_values(n_update)),
        "ConditionExpression": lambda: ddb.put_item(
            TableName=table, Item={"pk": {"S": f"es-c{size}"}}, ConditionExpression=condition),
        "Query FilterExpression": lambda: ddb.query(
            TableName=table, KeyConditionExpression="pk = :pk", FilterExpression=filter_,
            ExpressionAttributeValues={**_values(n_filter), ":pk": {"S": "es-q"}}),
        "Scan FilterExpression": lambda: ddb.scan(
            TableName=table, FilterExpression=filter_, ExpressionAttributeValues=_values(n_filter)),
        "ProjectionExpression": lambda: ddb.get_item(
            TableName=table, Key={"pk": {"S": "es-p"}}, ProjectionExpression=projection),
        "transacted ConditionExpression": lambda: ddb.transact_write_items(TransactItems=[
            {"Put": {"TableName": table, "Item": {"pk": {"S": f"es-t{size}"}}, "ConditionExpression": condition}}]),
        "transacted UpdateExpression": lambda: ddb.transact_write_items(TransactItems=[
            {"Update": {"TableName": table, "Key": {"pk": {"S": f"es-tu{size}"}}, "UpdateExpression": update,
                        "ExpressionAttributeValues": _values(n_update)}}]),
    }


SURFACES = ["UpdateExpression", "ConditionExpression", "Query FilterExpression", "Scan FilterExpression",
            "ProjectionExpression", "transacted ConditionExpression", "transacted UpdateExpression"]


@pytest.mark.parametrize("surface", SURFACES)
def test_an_expression_of_4096_bytes_is_accepted_and_4097_refused(ddb: Any, table: str, surface: str) -> None:
    _surfaces(ddb, table, MAX_EXPRESSION)[surface]()
    code, message = refusal(_surfaces(ddb, table, MAX_EXPRESSION + 1)[surface])
    assert code == "ValidationException"
    assert EXPRESSION_SIZE in message


def test_an_oversized_second_action_refuses_the_whole_transaction(ddb: Any, table: str) -> None:
    condition, _ = _clauses(MAX_EXPRESSION + 1, "", " AND ",
                            lambda i, n: f"attribute_not_exists({_pad_name(i, n)})")
    code, message = refusal(lambda: ddb.transact_write_items(TransactItems=[
        {"Put": {"TableName": table, "Item": {"pk": {"S": "es-first"}}}},
        {"Put": {"TableName": table, "Item": {"pk": {"S": "es-second"}}, "ConditionExpression": condition}},
    ]))
    assert code == "ValidationException"
    assert EXPRESSION_SIZE in message
    assert "Item" not in ddb.get_item(TableName=table, Key={"pk": {"S": "es-first"}}, ConsistentRead=True)


def test_the_raw_expression_is_measured_not_the_substituted_one(ddb: Any, table: str) -> None:
    names = {f"#a{i}": "n" * 246 + f"q{i}" for i in range(30)}  # ~7.5 KB once substituted
    ddb.get_item(TableName=table, Key={"pk": {"S": "es-p"}}, ProjectionExpression=", ".join(names),
                 ExpressionAttributeNames=names)


# --- Nesting depth: 32 levels, the attribute itself level 1 ---------------------------------

def _deep(wraps: int) -> dict[str, Any]:
    value: dict[str, Any] = {"S": "leaf"}
    for _ in range(wraps):
        value = {"M": {"n": value}}
    return value


def _writes(ddb: Any, table: str, wraps: int) -> dict[str, Any]:
    item = {"pk": {"S": f"nest-{wraps}"}, "data": _deep(wraps)}
    return {
        "PutItem": lambda: ddb.put_item(TableName=table, Item=item),
        "BatchWriteItem": lambda: ddb.batch_write_item(RequestItems={table: [{"PutRequest": {"Item": item}}]}),
        "TransactWriteItems": lambda: ddb.transact_write_items(
            TransactItems=[{"Put": {"TableName": table, "Item": item}}]),
    }


@pytest.mark.parametrize("surface", ["PutItem", "BatchWriteItem", "TransactWriteItems"])
def test_a_written_item_nests_31_wraps_and_not_32(ddb: Any, table: str, surface: str) -> None:
    _writes(ddb, table, 31)[surface]()
    assert refusal(_writes(ddb, table, 32)[surface]) == ("ValidationException", NESTING)


def test_a_transaction_does_not_check_the_depth_of_a_condition_value(ddb: Any, table: str) -> None:
    # UpdateItem refuses a 32-wrap value (most regions); a transaction runs
    # the condition, as 30 of 33 regions still did in October 2026.
    ddb.put_item(TableName=table, Item={"pk": {"S": "nest-eav"}, "marker": {"S": "x"}})
    with pytest.raises(ClientError) as excinfo:
        ddb.transact_write_items(TransactItems=[{"ConditionCheck": {
            "TableName": table, "Key": {"pk": {"S": "nest-eav"}}, "ConditionExpression": "#d = :deep",
            "ExpressionAttributeNames": {"#d": "data"}, "ExpressionAttributeValues": {":deep": _deep(32)}}}])
    reasons = excinfo.value.response["CancellationReasons"]
    assert [reason["Code"] for reason in reasons] == ["ConditionalCheckFailed"]
