"""PartiQL under fine-grained access control: each statement is authorized with the keys it touches.

A tenant allowed only its own partition key (`dynamodb:LeadingKeys` = its
user name) reads and writes its items through ExecuteStatement,
BatchExecuteStatement and ExecuteTransaction, and is refused any statement
that touches another tenant's key or that cannot name its keys (a SELECT
that scans), with DynamoDB's AccessDeniedException.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from auth_helpers import ALLOW_ALL, client, user, write_auth
from botocore.exceptions import ClientError
from conftest import launch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ACCOUNT = "000000000000"
TENANTS = "Tenants"
ARN = f"arn:aws:dynamodb:us-east-1:{ACCOUNT}:table/{TENANTS}"
PARTIQL = ["dynamodb:PartiQLSelect", "dynamodb:PartiQLInsert", "dynamodb:PartiQLUpdate", "dynamodb:PartiQLDelete"]


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tenant = {
        "Effect": "Allow",
        "Action": [*PARTIQL, "dynamodb:GetItem", "dynamodb:Scan"],
        "Resource": [ARN, ARN + "/index/*"],
        "Condition": {"ForAllValues:StringEquals": {"dynamodb:LeadingKeys": ["${aws:username}"]}},
    }
    path: Path = write_auth(
        tmp_path_factory.mktemp("auth") / "auth.json",
        user("admin", *ALLOW_ALL["Statement"]),
        user("alice", tenant),
        user("bob", tenant),
        # The developer guide's example: select statements allowed, full table scans denied.
        user("noscan", {"Effect": "Allow", "Action": "dynamodb:PartiQLSelect", "Resource": ARN},
             {"Effect": "Deny", "Action": "dynamodb:PartiQLSelect", "Resource": ARN,
              "Condition": {"Bool": {"dynamodb:FullTableScan": ["true"]}}}),
        user("reader", {"Effect": "Allow", "Action": "dynamodb:PartiQLSelect", "Resource": ARN}),
        user("notbob", {"Effect": "Allow", "Action": "dynamodb:PartiQLSelect", "Resource": ARN},
             {"Effect": "Deny", "Action": "dynamodb:PartiQLSelect", "Resource": ARN,
              "Condition": {"ForAnyValue:StringEquals": {"dynamodb:LeadingKeys": ["bob"]}}}),
    )
    srv = launch("--in-memory", "--auth", str(path))
    admin = client(srv.url, "admin")
    admin.create_table(
        TableName=TENANTS,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexes=[{"IndexName": "by-g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}],
        BillingMode="PAY_PER_REQUEST",
    )
    for name in ("alice", "bob"):
        admin.put_item(TableName=TENANTS, Item={"pk": {"S": name}, "g": {"S": name}, "v": {"N": "1"}})
    yield srv.url
    srv.stop()


def _denied(who: str, action: str, resource: str = ARN, why: str = "implicit") -> tuple[str, str]:
    head = f"User: arn:aws:iam::{ACCOUNT}:user/{who} is not authorized to perform: dynamodb:{action} on resource: {resource} "
    if why == "identity":
        return "AccessDeniedException", head + "with an explicit deny in an identity-based policy"
    return "AccessDeniedException", head + f"because no identity-based policy allows the dynamodb:{action} action"


def _refused(call: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        call()
    error = excinfo.value.response["Error"]
    return error["Code"], error.get("Message", "")


def _bobs_item(url: str) -> dict[str, Any]:
    return client(url, "admin").get_item(TableName=TENANTS, Key={"pk": {"S": "bob"}})["Item"]


def test_a_tenant_reads_its_own_partition_only(url: str) -> None:
    alice = client(url, "alice")
    got = alice.execute_statement(Statement=f"SELECT pk FROM \"{TENANTS}\" WHERE pk = 'alice'")["Items"]
    assert got == [{"pk": {"S": "alice"}}]
    assert alice.execute_statement(Statement=f"SELECT * FROM \"{TENANTS}\" WHERE pk IN ['alice']")["Items"][0][
        "pk"] == {"S": "alice"}
    assert alice.execute_statement(Statement=f"SELECT * FROM \"{TENANTS}\" WHERE pk = ?",
                                   Parameters=[{"S": "alice"}])["Items"][0]["pk"] == {"S": "alice"}
    for statement, parameters in (
        (f"SELECT * FROM \"{TENANTS}\" WHERE pk = 'bob'", None),
        (f"SELECT * FROM \"{TENANTS}\" WHERE pk = ?", [{"S": "bob"}]),
        (f"SELECT * FROM \"{TENANTS}\" WHERE pk IN ['alice', 'bob']", None),
        (f"SELECT * FROM \"{TENANTS}\" WHERE pk = 'bob' AND v = 1", None),
    ):
        extra = {"Parameters": parameters} if parameters else {}
        assert _refused(lambda s=statement, e=extra: alice.execute_statement(Statement=s, **e)) == _denied(
            "alice", "PartiQLSelect")


def test_a_statement_that_scans_is_refused_to_a_tenant(url: str) -> None:
    alice = client(url, "alice")
    for statement in (
        f"SELECT * FROM \"{TENANTS}\"",
        f"SELECT * FROM \"{TENANTS}\" WHERE v = 1",
        f"SELECT * FROM \"{TENANTS}\" WHERE pk = 'alice' OR pk = 'bob'",
        f"SELECT * FROM \"{TENANTS}\" WHERE pk <> 'alice'",
    ):
        assert _refused(lambda s=statement: alice.execute_statement(Statement=s)) == _denied("alice", "PartiQLSelect")
    # An index is read by its own partition key: the tenant's key there is its LeadingKeys too.
    by_index = f"SELECT pk FROM \"{TENANTS}\".\"by-g\" WHERE g = 'alice'"
    assert alice.execute_statement(Statement=by_index)["Items"] == [{"pk": {"S": "alice"}}]
    assert _refused(lambda: alice.execute_statement(Statement=f"SELECT pk FROM \"{TENANTS}\".\"by-g\"")) == _denied(
        "alice", "PartiQLSelect", ARN + "/index/by-g")


def test_a_tenant_writes_its_own_partition_only(url: str) -> None:
    alice = client(url, "alice")
    alice.execute_statement(Statement=f"UPDATE \"{TENANTS}\" SET v = 2 WHERE pk = 'alice'")
    with pytest.raises(ClientError) as excinfo:
        alice.execute_statement(Statement=f"INSERT INTO \"{TENANTS}\" VALUE {{'pk': 'alice'}}")
    assert excinfo.value.response["Error"]["Code"] == "DuplicateItemException"
    for statement, action in (
        (f"INSERT INTO \"{TENANTS}\" VALUE {{'pk': 'mallory', 'v': 9}}", "PartiQLInsert"),
        (f"UPDATE \"{TENANTS}\" SET v = 9 WHERE pk = 'bob'", "PartiQLUpdate"),
        (f"UPDATE \"{TENANTS}\" SET v = 9 WHERE pk = 'bob' RETURNING ALL OLD *", "PartiQLUpdate"),
        (f"DELETE FROM \"{TENANTS}\" WHERE pk = 'bob'", "PartiQLDelete"),
        # No key named (the statement is invalid anyway): refused before anything can run.
        (f"UPDATE \"{TENANTS}\" SET v = 9 WHERE v = 1", "PartiQLUpdate"),
    ):
        assert _refused(lambda s=statement: alice.execute_statement(Statement=s)) == _denied("alice", action)
    assert _bobs_item(url) == {"pk": {"S": "bob"}, "g": {"S": "bob"}, "v": {"N": "1"}}
    assert client(url, "admin").get_item(TableName=TENANTS, Key={"pk": {"S": "mallory"}}).get("Item") is None


def test_batches_and_transactions_check_every_statement(url: str) -> None:
    alice = client(url, "alice")
    own = f"SELECT * FROM \"{TENANTS}\" WHERE pk = 'alice'"
    other = f"SELECT * FROM \"{TENANTS}\" WHERE pk = 'bob'"
    answer = alice.batch_execute_statement(Statements=[{"Statement": own}])["Responses"]
    assert answer[0]["Item"]["pk"] == {"S": "alice"}
    assert _refused(lambda: alice.batch_execute_statement(
        Statements=[{"Statement": own}, {"Statement": other}])) == _denied("alice", "PartiQLSelect")
    assert _refused(lambda: alice.batch_execute_statement(Statements=[
        {"Statement": f"UPDATE \"{TENANTS}\" SET v = 7 WHERE pk = ?", "Parameters": [{"S": "bob"}]},
    ])) == _denied("alice", "PartiQLUpdate")
    assert alice.execute_transaction(TransactStatements=[{"Statement": own}])["Responses"][0]["Item"]["pk"] == {
        "S": "alice"}
    assert _refused(lambda: alice.execute_transaction(TransactStatements=[
        {"Statement": f"UPDATE \"{TENANTS}\" SET v = 3 WHERE pk = 'alice'"},
        {"Statement": f"DELETE FROM \"{TENANTS}\" WHERE pk = 'bob'"},
    ])) == _denied("alice", "PartiQLDelete")
    assert _refused(lambda: alice.execute_transaction(TransactStatements=[
        {"Statement": f"EXISTS(SELECT * FROM \"{TENANTS}\" WHERE pk = 'bob')"},
        {"Statement": f"UPDATE \"{TENANTS}\" SET v = 3 WHERE pk = 'alice'"},
    ])) == _denied("alice", "PartiQLSelect")
    assert _bobs_item(url)["v"] == {"N": "1"}


def test_the_json_operations_agree(url: str) -> None:
    """The same tenant is refused the equivalent Scan and GetItem of another tenant's key."""
    alice = client(url, "alice")
    assert alice.get_item(TableName=TENANTS, Key={"pk": {"S": "alice"}})["Item"]["pk"] == {"S": "alice"}
    assert _refused(lambda: alice.get_item(TableName=TENANTS, Key={"pk": {"S": "bob"}})) == _denied("alice", "GetItem")


def test_full_table_scan_is_a_condition_key(url: str) -> None:
    noscan = client(url, "noscan")
    assert noscan.execute_statement(Statement=f"SELECT pk FROM \"{TENANTS}\" WHERE pk = 'bob'")["Items"] == [
        {"pk": {"S": "bob"}}]
    assert _refused(lambda: noscan.execute_statement(Statement=f"SELECT pk FROM \"{TENANTS}\"")) == _denied(
        "noscan", "PartiQLSelect", why="identity")


def test_a_principal_without_key_conditions_may_scan(url: str) -> None:
    items = client(url, "reader").execute_statement(Statement=f"SELECT pk FROM \"{TENANTS}\"")["Items"]
    assert sorted(item["pk"]["S"] for item in items) == ["alice", "bob"]


def test_a_deny_on_a_key_covers_a_statement_that_scans(url: str) -> None:
    """A scan touches every key, bob's among them: a Deny conditioned on his key applies to it."""
    notbob = client(url, "notbob")
    assert notbob.execute_statement(Statement=f"SELECT pk FROM \"{TENANTS}\" WHERE pk = 'alice'")["Items"] == [
        {"pk": {"S": "alice"}}]
    for statement in (f"SELECT pk FROM \"{TENANTS}\" WHERE pk = 'bob'", f"SELECT pk FROM \"{TENANTS}\""):
        assert _refused(lambda s=statement: notbob.execute_statement(Statement=s)) == _denied(
            "notbob", "PartiQLSelect", why="identity")


_TENANT_KEYS = st.sampled_from(["alice", "bob", "carol", "ALICE", "alice "])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(keys=st.lists(_TENANT_KEYS, min_size=1, max_size=4), form=st.sampled_from(["in", "param", "or"]))
def test_a_statement_is_allowed_exactly_when_every_key_it_touches_is_the_tenant_s(
    url: str, keys: list[str], form: str
) -> None:
    """The class: however the keys are written (IN list, parameters, an OR of equalities that
    scans), alice's SELECT passes iff it can only touch her partition."""
    alice = client(url, "alice")
    quoted = ", ".join(f"'{k}'" for k in keys)
    if form == "in":
        call = {"Statement": f"SELECT pk FROM \"{TENANTS}\" WHERE pk IN [{quoted}]"}
    elif form == "param":
        marks = ", ".join("?" for _ in keys)
        call = {"Statement": f"SELECT pk FROM \"{TENANTS}\" WHERE pk IN [{marks}]",
                "Parameters": [{"S": k} for k in keys]}
    else:  # an OR of equalities: a scan, whatever the keys (one key alone is an equality: a get)
        call = {"Statement": f"SELECT pk FROM \"{TENANTS}\" WHERE " + " OR ".join(f"pk = '{k}'" for k in keys)}
    allowed = set(keys) == {"alice"} and (form != "or" or len(keys) == 1)
    if allowed:
        assert alice.execute_statement(**call)["Items"] == [{"pk": {"S": "alice"}}]
    else:
        assert _refused(lambda: alice.execute_statement(**call)) == _denied("alice", "PartiQLSelect")
