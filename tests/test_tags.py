"""Table tags: given at CreateTable, changed by TagResource/UntagResource, read back."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError
from conftest import create_table, error_of, raw_request


def test_tags_round_trip(ddb: Any, table_name: str) -> None:
    arn = create_table(ddb, table_name, Tags=[{"Key": "team", "Value": "core"}])["TableDescription"]["TableArn"]
    assert ddb.list_tags_of_resource(ResourceArn=arn)["Tags"] == [{"Key": "team", "Value": "core"}]
    ddb.tag_resource(ResourceArn=arn, Tags=[{"Key": "env", "Value": "ci"}, {"Key": "team", "Value": "data"}])
    assert ddb.list_tags_of_resource(ResourceArn=arn)["Tags"] == [
        {"Key": "team", "Value": "data"},
        {"Key": "env", "Value": "ci"},
    ]
    ddb.untag_resource(ResourceArn=arn, TagKeys=["team", "absent"])
    assert ddb.list_tags_of_resource(ResourceArn=arn)["Tags"] == [{"Key": "env", "Value": "ci"}]
    assert "_Tags" not in ddb.describe_table(TableName=table_name)["Table"]


def test_tag_errors(ddb: Any, table_name: str) -> None:
    arn = create_table(ddb, table_name)["TableDescription"]["TableArn"]
    missing = arn + "-gone"
    with pytest.raises(ClientError) as excinfo:
        ddb.list_tags_of_resource(ResourceArn=missing)
    # 2026: "ResourceArn" (the older "ResourcArn" spelling is gone; ack-api-quirks DDB-TABLE-374).
    assert error_of(excinfo) == ("ResourceNotFoundException", f"Requested resource not found: ResourceArn: {missing} not found")
    with pytest.raises(ClientError) as excinfo:
        ddb.tag_resource(ResourceArn="not-an-arn", Tags=[{"Key": "a", "Value": "b"}])
    assert error_of(excinfo) == (
        "ValidationException", "One or more parameter values were invalid: ARNs must start with 'arn:': not-an-arn")
    with pytest.raises(ClientError) as excinfo:
        ddb.tag_resource(ResourceArn=arn, Tags=[])
    assert error_of(excinfo) == ("ValidationException", "Atleast one Tag needs to be provided as Input.")
    with pytest.raises(ClientError) as excinfo:
        ddb.tag_resource(ResourceArn=arn, Tags=[{"Key": "a", "Value": "1"}, {"Key": "a", "Value": "2"}])
    assert error_of(excinfo) == ("ValidationException", "Duplicate Tag Keys provided as input: Duplicate Tag Key found a")
    with pytest.raises(ClientError) as excinfo:
        ddb.tag_resource(ResourceArn=arn, Tags=[{"Key": f"k{i}", "Value": "v"} for i in range(51)])
    assert error_of(excinfo) == ("ValidationException", "Number of Tags exceed the current limit for the provided ResourceArn")
    assert ddb.list_tags_of_resource(ResourceArn=arn)["Tags"] == []


# -- The 2026 answers (issue 26, T1/T2). Sources: ack-api-quirks DDB-TABLE-105/106/107/372/374/442 and
# DDB-BACKUP-013 (recorded against DynamoDB 2026-10-08/09), ExtendDB PR 227 (which part of an ARN is
# checked first, verified against DynamoDB). See docs/decisions.md, "Control plane".

INVALID = "One or more parameter values were invalid: "


@pytest.fixture
def arn(ddb: Any, table_name: str) -> str:
    return str(create_table(ddb, table_name)["TableDescription"]["TableArn"])


@pytest.fixture
def raw(endpoint: str) -> Any:
    """A client that sends what it is given: the server, not botocore, refuses bad tags."""
    return boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1",
                        config=Config(retries={"max_attempts": 1}, parameter_validation=False))


def test_tag_and_untag_answer_an_empty_body(endpoint: str, arn: str) -> None:
    tagged = raw_request(endpoint, "TagResource", {"ResourceArn": arn, "Tags": [{"Key": "k", "Value": "v"}]})
    assert (tagged.status, tagged.body) == (200, b"")
    untagged = raw_request(endpoint, "UntagResource", {"ResourceArn": arn, "TagKeys": ["k"]})
    assert (untagged.status, untagged.body) == (200, b"")
    # Only these two: a read still answers a JSON document.
    listed = raw_request(endpoint, "ListTagsOfResource", {"ResourceArn": arn})
    assert (listed.status, listed.json()) == (200, {"Tags": []})


def _arn_kinds(arn: str) -> list[tuple[str, str, str]]:
    """(ResourceArn, code, message) for each way an ARN can be wrong, as the service answers."""
    region, account = arn.split(":")[3], arn.split(":")[4]
    foreign_account = arn.replace(f":{account}:", ":111122223333:")
    other_region = arn.replace(f":{region}:", ":eu-west-3:")
    denied = "User is not authorized to perform: dynamodb:{op} on resource: {arn}"  # Partita's words
    cases = [
        (f"{arn}-gone", "ResourceNotFoundException", "Requested resource not found: ResourceArn: {arn} not found"),
        (other_region, "ValidationException", "Invalid TableArn: Invalid ResourceArn provided as input {arn}"),
        (foreign_account, "AccessDeniedException", denied),
        ("arn:aws:s3:::bucket", "AccessDeniedException", denied),
        (f"{arn}/backup/01791525400213-63b4d36a", "ValidationException",
         INVALID + "Provided Arn is not a DynamoDB resource arn: {arn}"),
        (f"{arn}/index/by-x", "ValidationException",
         INVALID + "Invalid resource arn provided, only table or stream is accepted. Provided resource arn: {arn}"),
    ]
    # T2's list of ARNs that are no ARN at all (codes unknown there): no "arn:" prefix is the recorded
    # ValidationException; a malformed "arn:..." is refused like another service's ARN (unconfirmed).
    for bad in ("not_an_arn", "x" * 125, ":/" * 30, " ", "ÄÖÜßçøå"):
        cases.append((bad, "ValidationException", INVALID + "ARNs must start with 'arn:': {arn}"))
    for bad in ("arn:not/a/good/format", "arn:" + "abcdef/" * 15):
        cases.append((bad, "AccessDeniedException", denied))
    return cases


def test_every_tag_operation_checks_the_arn_alike(ddb: Any, arn: str) -> None:
    calls = {
        "TagResource": lambda a: ddb.tag_resource(ResourceArn=a, Tags=[{"Key": "7", "Value": "8"}]),
        "UntagResource": lambda a: ddb.untag_resource(ResourceArn=a, TagKeys=["7"]),
        "ListTagsOfResource": lambda a: ddb.list_tags_of_resource(ResourceArn=a),
    }
    for bad, code, message in _arn_kinds(arn):
        for op, call in calls.items():
            with pytest.raises(ClientError) as excinfo:
                call(bad)
            assert error_of(excinfo) == (code, message.format(arn=bad, op=op)), (op, bad)
    assert ddb.list_tags_of_resource(ResourceArn=arn)["Tags"] == []


def _refused(ddb: Any, arn: str, tags: list[dict[str, Any]]) -> tuple[str, str]:
    with pytest.raises(ClientError) as excinfo:
        ddb.tag_resource(ResourceArn=arn, Tags=tags)
    return error_of(excinfo)


def test_tag_content_is_checked_by_the_tag_validator(raw: Any, arn: str) -> None:
    key_invalid = "The Tag Key provided is invalid, Key: {}"
    value_invalid = "The Tag Value provided is invalid, Value: {}"
    cases: list[tuple[list[dict[str, Any]], str]] = [
        ([], "Atleast one Tag needs to be provided as Input."),
        ([{}], key_invalid.format("null")),
        ([{"Value": "v"}], key_invalid.format("null")),
        ([{"Key": "k"}], value_invalid.format("null")),
        ([{"Key": "", "Value": "v"}], key_invalid.format("")),
        ([{"Key": "k" * 129, "Value": "v"}], key_invalid.format("k" * 129)),
        ([{"Key": "k", "Value": "v" * 257}], value_invalid.format("v" * 257)),
        ([{"Key": "bad#char", "Value": "v"}], key_invalid.format("bad#char")),
        ([{"Key": "k", "Value": "bad#char"}], value_invalid.format("bad#char")),
        # T2's pairs: the first offending member is named, the key before the value.
        ([{"Key": "ok", "Value": "#!%%^$$&"}], value_invalid.format("#!%%^$$&")),
        ([{"Key": "->>;-)])", "Value": "ok"}], key_invalid.format("->>;-)])")),
        ([{"Key": "!!!\\|", "Value": "<><"}], key_invalid.format("!!!\\|")),
        ([{"Key": "k", "Value": "🔑"}], value_invalid.format("🔑")),
        ([{"Key": "a,b", "Value": "v"}], key_invalid.format("a,b")),
        ([{"Key": "good", "Value": "v"}, {"Key": "aws:zzz", "Value": "v"}], "Tag Key cannot be prefixed with aws:, Key: aws:zzz"),
        ([{"Key": "AWS:foo", "Value": "v"}], "Tag Key cannot be prefixed with aws:, Key: AWS:foo"),
        ([{"Key": "dup", "Value": "1"}, {"Key": "dup", "Value": "2"}],
         "Duplicate Tag Keys provided as input: Duplicate Tag Key found dup"),
    ]
    for tags, message in cases:
        assert _refused(raw, arn, tags) == ("ValidationException", message), tags
    # All or nothing: the good tags of a refused request were not applied.
    assert raw.list_tags_of_resource(ResourceArn=arn)["Tags"] == []
    accepted = [{"Key": "k" * 128, "Value": "v" * 256}, {"Key": "Env", "Value": ""}, {"Key": "sp ace", "Value": "a b+c-d=e.f_g:h/i@j"},
                {"Key": "ключ", "Value": "café 表"}, {"Key": "myaws:foo", "Value": "x"}, {"Key": " lead", "Value": "\u00a0"}]
    raw.tag_resource(ResourceArn=arn, Tags=accepted)
    assert raw.list_tags_of_resource(ResourceArn=arn)["Tags"] == accepted


def test_untag_keys_are_checked(ddb: Any, raw: Any, arn: str) -> None:
    ddb.tag_resource(ResourceArn=arn, Tags=[{"Key": "keep", "Value": "v"}])
    cases = [
        ([], "Atleast one Tag Key needs to be provided as Input."),
        ([""], "The Tag Key provided is invalid, Key: "),
        (["k" * 129], "The Tag Key provided is invalid, Key: " + "k" * 129),
        (["aws:foo"], "Tag Key cannot be prefixed with aws:, Key: aws:foo"),
        ([f"k{i}" for i in range(51)], "Number of Tags exceed the current limit for the provided ResourceArn"),
    ]
    for keys, message in cases:
        with pytest.raises(ClientError) as excinfo:
            raw.untag_resource(ResourceArn=arn, TagKeys=keys)
        assert error_of(excinfo) == ("ValidationException", message), keys
    ddb.untag_resource(ResourceArn=arn, TagKeys=["absent", "keep"])  # an absent key is a no-op
    assert ddb.list_tags_of_resource(ResourceArn=arn)["Tags"] == []


def test_at_most_50_tags_counting_overwrites_once(ddb: Any, arn: str) -> None:
    ddb.tag_resource(ResourceArn=arn, Tags=[{"Key": f"k{i}", "Value": "a"} for i in range(30)])
    # 20 more, 10 of them overwriting: 40 in all.
    ddb.tag_resource(ResourceArn=arn, Tags=[{"Key": f"k{i}", "Value": "b"} for i in range(20, 40)])
    assert len(ddb.list_tags_of_resource(ResourceArn=arn)["Tags"]) == 40
    assert _refused(ddb, arn, [{"Key": f"n{i}", "Value": "c"} for i in range(20)]) == (
        "ValidationException", "Number of Tags exceed the current limit for the provided ResourceArn")
    tags = ddb.list_tags_of_resource(ResourceArn=arn)["Tags"]
    assert len(tags) == 40 and {t["Key"] for t in tags} == {f"k{i}" for i in range(40)}
    ddb.tag_resource(ResourceArn=arn, Tags=[{"Key": f"n{i}", "Value": "c"} for i in range(10)])
    assert len(ddb.list_tags_of_resource(ResourceArn=arn)["Tags"]) == 50


def test_create_table_tags_use_the_same_words(ddb: Any, table_name: str) -> None:
    with pytest.raises(ClientError) as excinfo:
        create_table(ddb, table_name, Tags=[{"Key": "k", "Value": "a;b"}])
    assert error_of(excinfo) == ("ValidationException", "The Tag Value provided is invalid, Value: a;b")
