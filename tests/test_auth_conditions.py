"""`--auth` condition operators on dates and the time keys; principals' own keys remembered."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from auth_helpers import ALLOW_ALL, client, create, user, write_auth
from botocore.exceptions import ClientError
from conftest import launch

from partita.protocol.auth import Authenticator, AuthFileError
from partita.protocol.auth.policies import IMPLICIT, compile_policy, decide

ARN = "arn:aws:dynamodb:us-east-1:000000000000:table/"
T = "cond-table"
PAST, FUTURE = "2001-02-03T04:05:06Z", "2100-01-01T00:00:00Z"


def _get(url: str, name: str) -> tuple[str, str] | None:
    try:
        client(url, name).get_item(TableName=T, Key={"pk": {"S": "a"}})
    except ClientError as error:
        return error.response["Error"]["Code"], error.response["Error"]["Message"]
    return None


def _allow(condition: dict[str, Any]) -> dict[str, Any]:
    return {"Effect": "Allow", "Action": "dynamodb:GetItem", "Resource": ARN + T, "Condition": condition}


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    now = int(time.time())
    path: Path = write_auth(
        tmp_path_factory.mktemp("auth") / "auth.json",
        user("admin", *ALLOW_ALL["Statement"]),
        user("until", _allow({"DateLessThan": {"aws:CurrentTime": FUTURE}})),
        user("expired", _allow({"DateLessThan": {"aws:CurrentTime": PAST}})),
        user("since", _allow({"DateGreaterThanEquals": {"aws:CurrentTime": PAST},
                              "DateLessThanEquals": {"aws:EpochTime": str(now + 86400)}})),
        user("epoch", _allow({"NumericGreaterThan": {"aws:EpochTime": now - 86400}})),
        user("window", _allow({"DateGreaterThan": {"aws:EpochTime": str(now + 86400)}})),
        user("denied-later", {"Effect": "Allow", "Action": "*", "Resource": "*"},
             {"Effect": "Deny", "Action": "dynamodb:GetItem", "Resource": "*",
              "Condition": {"DateGreaterThan": {"aws:CurrentTime": "2001-02-03"}}}),
        user("named", _allow({"StringEquals": {"aws:username": "named"}, "Bool": {"aws:SecureTransport": "false"}})),
        user("misnamed", _allow({"StringEquals": {"aws:username": "someone-else"}})),
    )
    srv = launch("--in-memory", "--auth", str(path))
    admin = client(srv.url, "admin")
    create(admin, T)
    admin.put_item(TableName=T, Item={"pk": {"S": "a"}})
    yield srv.url
    srv.stop()


def _implicit(name: str) -> tuple[str, str]:
    return ("AccessDeniedException",
            f"User: arn:aws:iam::000000000000:user/{name} is not authorized to perform: dynamodb:GetItem on "
            f"resource: {ARN}{T} because no identity-based policy allows the dynamodb:GetItem action")


def test_current_time_against_dates(url: str) -> None:
    assert _get(url, "until") is None
    assert _get(url, "since") is None
    assert _get(url, "expired") == _implicit("expired")
    assert _get(url, "denied-later") == (
        "AccessDeniedException",
        f"User: arn:aws:iam::000000000000:user/denied-later is not authorized to perform: dynamodb:GetItem on "
        f"resource: {ARN}{T} with an explicit deny in an identity-based policy")


def test_epoch_time(url: str) -> None:
    assert _get(url, "epoch") is None
    assert _get(url, "window") == _implicit("window")


def test_conditions_on_the_principals_own_keys(url: str) -> None:
    for _ in range(3):  # remembered after the first: the same answer each time
        assert _get(url, "named") is None
        assert _get(url, "misnamed") == _implicit("misnamed")


def test_a_bad_date_in_a_policy_stops_the_load(tmp_path: Path) -> None:
    path = write_auth(tmp_path / "auth.json", user("x", _allow({"DateLessThan": {"aws:CurrentTime": "soon"}})))
    with pytest.raises(AuthFileError) as excinfo:
        Authenticator(path, "us-east-1")
    assert str(excinfo.value) == (
        "users[0].policies[0]: DateLessThan needs dates (ISO 8601 or epoch seconds), not ['soon']")


@pytest.mark.parametrize("operator, value, wanted, allowed", [
    ("DateEquals", "2020-01-01T00:00:00Z", "2020-01-01", True),
    ("DateEquals", "2020-01-01T00:00:00Z", "1577836800", True),
    ("DateEquals", "2020-01-01T01:00:00+01:00", "2020-01-01T00:00:00Z", True),
    ("DateNotEquals", "2020-01-01T00:00:00Z", "2020-01-01T00:00:01Z", True),
    ("DateNotEquals", "2020-01-01T00:00:00Z", "2020-01-01", False),
    ("DateLessThan", "2020-01-01T00:00:00Z", "2020-01-01T00:00:00.500Z", True),
    ("DateLessThan", "2020-01-01T00:00:00Z", "2020-01-01", False),
    ("DateLessThanEquals", "2020-01-01T00:00:00Z", "2020-01-01", True),
    ("DateGreaterThan", "1577836801", "2020-01-01T00:00:00Z", True),
    ("DateGreaterThanEquals", "2019-12-31T23:59:59Z", "2020-01-01", False),
    ("DateGreaterThan", "not a date", "2020-01-01", False),
    ("DateGreaterThanIfExists", None, "2020-01-01", True),
    ("DateGreaterThan", None, "2020-01-01", False),
])
def test_date_operators(operator: str, value: str | None, wanted: str, allowed: bool) -> None:
    statements = compile_policy({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": "*", "Resource": "*", "Condition": {operator: {"aws:CurrentTime": wanted}}},
    ]}, {})
    context = {} if value is None else {"aws:currenttime": [value]}
    why = decide(statements, None, "dynamodb:GetItem", "*", (), context)
    assert (why is None) == allowed, why
    assert why in (None, IMPLICIT)
