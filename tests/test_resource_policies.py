"""Resource-based policies: stored per table or stream ARN, versioned by RevisionId."""

from __future__ import annotations

import json
from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import create_table, error_of

NOT_FOUND = "Resource-based policy not found for the provided ResourceArn: "


def policy(action: str = "dynamodb:*") -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"AWS": "000000000000"}, "Action": [action], "Resource": "*"}]})


@pytest.fixture
def arn(ddb: Any, table_name: str) -> str:
    return str(create_table(ddb, table_name)["TableDescription"]["TableArn"])


def test_put_get_delete(ddb: Any, arn: str) -> None:
    revision = ddb.put_resource_policy(ResourceArn=arn, Policy=policy())["RevisionId"]
    got = ddb.get_resource_policy(ResourceArn=arn)
    assert (got["Policy"], got["RevisionId"]) == (policy(), revision)
    assert ddb.delete_resource_policy(ResourceArn=arn)["RevisionId"] == revision
    with pytest.raises(ClientError) as excinfo:
        ddb.get_resource_policy(ResourceArn=arn)
    assert error_of(excinfo) == ("PolicyNotFoundException", NOT_FOUND + arn)


def test_same_policy_keeps_its_revision_a_new_one_is_later(ddb: Any, arn: str) -> None:
    first = ddb.put_resource_policy(ResourceArn=arn, Policy=policy())["RevisionId"]
    assert ddb.put_resource_policy(ResourceArn=arn, Policy=policy())["RevisionId"] == first
    second = ddb.put_resource_policy(ResourceArn=arn, Policy=policy("dynamodb:PutItem"))["RevisionId"]
    assert second != first and int(second) > int(first)


def test_expected_revision(ddb: Any, arn: str, table_name: str) -> None:
    none_yet = ddb.put_resource_policy(ResourceArn=arn, Policy=policy(), ExpectedRevisionId="NO_POLICY")["RevisionId"]
    with pytest.raises(ClientError) as excinfo:
        ddb.put_resource_policy(ResourceArn=arn, Policy=policy("dynamodb:GetItem"), ExpectedRevisionId="NO_POLICY")
    assert error_of(excinfo) == ("PolicyNotFoundException", (
        f"{NOT_FOUND}Requested policy update expecting none to be present for table {table_name}, "
        f"but a policy exists with revision id {none_yet}."))
    current = ddb.put_resource_policy(ResourceArn=arn, Policy=policy("dynamodb:PutItem"),
                                      ExpectedRevisionId=none_yet)["RevisionId"]
    with pytest.raises(ClientError) as excinfo:
        ddb.put_resource_policy(ResourceArn=arn, Policy=policy("dynamodb:GetItem"), ExpectedRevisionId=none_yet)
    assert error_of(excinfo) == ("PolicyNotFoundException", (
        f"{NOT_FOUND}Requested update for policy with revision id {none_yet}, "
        f"but the policy associated to target table {table_name} has revision id {current}."))
    with pytest.raises(ClientError) as excinfo:
        ddb.delete_resource_policy(ResourceArn=arn, ExpectedRevisionId="unknown")
    assert error_of(excinfo) == ("PolicyNotFoundException", (
        f"{NOT_FOUND}Requested update for policy with revision id unknown, "
        f"but the policy associated to target table {table_name} has revision id {current}."))
    assert ddb.get_resource_policy(ResourceArn=arn)["RevisionId"] == current
    ddb.delete_resource_policy(ResourceArn=arn, ExpectedRevisionId=current)
    with pytest.raises(ClientError) as excinfo:
        ddb.delete_resource_policy(ResourceArn=arn)
    assert error_of(excinfo) == ("PolicyNotFoundException", NOT_FOUND + arn)


def test_confirm_remove_self_resource_access_is_accepted(ddb: Any, arn: str) -> None:
    ddb.put_resource_policy(ResourceArn=arn, Policy=policy(), ConfirmRemoveSelfResourceAccess=True)
    assert ddb.get_resource_policy(ResourceArn=arn)["Policy"] == policy()


@pytest.mark.parametrize("operation", ["get", "delete", "put"])
def test_unknown_table(ddb: Any, arn: str, table_name: str, operation: str) -> None:
    missing = arn + "unknown"
    with pytest.raises(ClientError) as excinfo:
        if operation == "get":
            ddb.get_resource_policy(ResourceArn=missing)
        elif operation == "delete":
            ddb.delete_resource_policy(ResourceArn=missing)
        else:
            ddb.put_resource_policy(ResourceArn=missing, Policy=policy())
    assert error_of(excinfo) == ("ResourceNotFoundException",
                                 f"Requested resource not found: Table: {table_name}unknown not found")


def test_stream_policy_is_kept_apart_from_the_table_policy(ddb: Any, table_name: str) -> None:
    created = create_table(ddb, table_name, StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})
    stream_arn = created["TableDescription"]["LatestStreamArn"]
    ddb.put_resource_policy(ResourceArn=stream_arn, Policy=policy("dynamodb:GetRecords"))
    assert "GetRecords" in ddb.get_resource_policy(ResourceArn=stream_arn)["Policy"]
    with pytest.raises(ClientError) as excinfo:
        ddb.get_resource_policy(ResourceArn=created["TableDescription"]["TableArn"])
    assert error_of(excinfo)[0] == "PolicyNotFoundException"


@pytest.mark.parametrize("document", ["not json", "[1]", "{}"])
def test_malformed_policy_is_refused(ddb: Any, arn: str, document: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        ddb.put_resource_policy(ResourceArn=arn, Policy=document)
    assert error_of(excinfo)[0] == "ValidationException"
    with pytest.raises(ClientError):
        ddb.get_resource_policy(ResourceArn=arn)


def test_oversized_policy_is_refused(ddb: Any, arn: str) -> None:
    big = json.dumps({"Statement": [{"Effect": "Allow", "Action": "dynamodb:*", "Resource": "*"}],
                      "Id": "x" * 21000})
    with pytest.raises(ClientError) as excinfo:
        ddb.put_resource_policy(ResourceArn=arn, Policy=big)
    assert error_of(excinfo) == ("ValidationException",
                                 "Resource-based policy size exceeds the maximum allowed size of 20480 bytes")


def test_index_arn_is_not_a_policy_target(ddb: Any, arn: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        ddb.put_resource_policy(ResourceArn=arn + "/index/x", Policy=policy())
    assert error_of(excinfo) == ("ValidationException",
                                 f"Invalid TableArn: Invalid ResourceArn provided as input {arn}/index/x")


def test_policy_goes_with_the_table(ddb: Any, arn: str, table_name: str) -> None:
    ddb.put_resource_policy(ResourceArn=arn, Policy=policy())
    ddb.delete_table(TableName=table_name)
    create_table(ddb, table_name)
    with pytest.raises(ClientError) as excinfo:
        ddb.get_resource_policy(ResourceArn=arn)
    assert error_of(excinfo) == ("PolicyNotFoundException", NOT_FOUND + arn)
