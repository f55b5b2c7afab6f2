"""Table tags: given at CreateTable, changed by TagResource/UntagResource, read back."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import create_table, error_of


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
    assert error_of(excinfo) == ("ResourceNotFoundException", f"Requested resource not found: ResourcArn: {missing} not found")
    with pytest.raises(ClientError) as excinfo:
        ddb.tag_resource(ResourceArn="not-an-arn", Tags=[{"Key": "a", "Value": "b"}])
    assert error_of(excinfo) == ("ValidationException", "Invalid TableArn: Invalid ResourceArn provided as input not-an-arn")
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
