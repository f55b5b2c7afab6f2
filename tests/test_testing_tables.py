"""partita.testing.tables: table definitions from dicts, JSON/YAML files and CloudFormation templates."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from partita.testing.tables import TableDefinition, create_tables, load_definitions

KEYS = {
    "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
    "BillingMode": "PAY_PER_REQUEST",
}

TEMPLATE = """
Parameters:
  Stage: {Type: String, Default: dev}
  Other: {Type: String}
Resources:
  Plain:
    Type: AWS::DynamoDB::Table
    Properties:
      KeySchema: [{AttributeName: id, KeyType: HASH}]
      AttributeDefinitions: [{AttributeName: id, AttributeType: S}]
      ProvisionedThroughput: {ReadCapacityUnits: 2, WriteCapacityUnits: 3}
      SSESpecification: {SSEEnabled: true, SSEType: KMS}
      StreamSpecification: {StreamViewType: KEYS_ONLY}
      ContributorInsightsSpecification: {Enabled: true}
      KinesisStreamSpecification: {StreamArn: !GetAtt Stream.Arn}
      Tags: [{Key: stage, Value: !Ref Stage}]
  Named:
    Type: AWS::DynamoDB::Table
    Properties:
      TableName: !Sub "${AWS::StackName}-${Stage}-named-${!Literal}"
      BillingMode: PAY_PER_REQUEST
      KeySchema: [{AttributeName: id, KeyType: HASH}]
      AttributeDefinitions:
        - {AttributeName: id, AttributeType: S}
        - {AttributeName: g, AttributeType: N}
      GlobalSecondaryIndexes:
        - IndexName: by-g
          KeySchema: [{AttributeName: g, KeyType: HASH}]
          Projection: {ProjectionType: KEYS_ONLY}
          ContributorInsightsSpecification: {Enabled: true}
      TimeToLiveSpecification: {AttributeName: ttl, Enabled: true}
      PointInTimeRecoverySpecification: {PointInTimeRecoveryEnabled: false}
  Simple:
    Type: AWS::Serverless::SimpleTable
  SimpleNumber:
    Type: AWS::Serverless::SimpleTable
    Properties:
      TableName: !Join ["_", [simple, !Ref Stage]]
      PrimaryKey: {Name: n, Type: Number}
      ProvisionedThroughput: {ReadCapacityUnits: 1, WriteCapacityUnits: 1}
      Tags: {team: data}
  Queue:
    Type: AWS::SQS::Queue
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_cloudformation_template_translates_each_table(tmp_path: Path) -> None:
    definitions = load_definitions(_write(tmp_path, "template.yaml", TEMPLATE))
    by_name = {d.name: d for d in definitions}
    assert list(by_name) == ["Plain", "stack-dev-named-${Literal}", "Simple", "simple_dev"]
    assert by_name["Plain"].create == {
        "TableName": "Plain",
        "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
        "ProvisionedThroughput": {"ReadCapacityUnits": 2, "WriteCapacityUnits": 3},
        "SSESpecification": {"Enabled": True, "SSEType": "KMS"},
        "StreamSpecification": {"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"},
        "Tags": [{"Key": "stage", "Value": "dev"}],
    }
    named = by_name["stack-dev-named-${Literal}"]
    assert named.time_to_live == {"AttributeName": "ttl", "Enabled": True}
    assert named.point_in_time_recovery is False
    assert "TimeToLiveSpecification" not in named.create
    assert named.create["GlobalSecondaryIndexes"] == [
        {"IndexName": "by-g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
         "Projection": {"ProjectionType": "KEYS_ONLY"}}
    ]
    assert by_name["Simple"].create == {
        "TableName": "Simple",
        "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
        "BillingMode": "PAY_PER_REQUEST",
    }
    assert by_name["simple_dev"].create == {
        "TableName": "simple_dev",
        "KeySchema": [{"AttributeName": "n", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "n", "AttributeType": "N"}],
        "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
        "Tags": [{"Key": "team", "Value": "data"}],
    }


def test_parameters_override_defaults(tmp_path: Path) -> None:
    path = _write(tmp_path, "template.yml", TEMPLATE)
    names = [d.name for d in load_definitions(path, parameters={"Stage": "ci", "AWS::StackName": "app"})]
    assert names == ["Plain", "app-ci-named-${Literal}", "Simple", "simple_ci"]


def test_json_template_and_unresolvable_intrinsics(tmp_path: Path) -> None:
    template = {"Resources": {"T": {"Type": "AWS::DynamoDB::Table", "Properties": {
        **KEYS, "TableName": {"Ref": "Other"}}}}}
    path = _write(tmp_path, "template.json", json.dumps(template))
    with pytest.raises(ValueError, match=r"template.json: T: cannot resolve Ref 'Other' without a stack"):
        load_definitions(path)
    assert [d.name for d in load_definitions(path, parameters={"Other": "given"})] == ["given"]
    template["Resources"]["T"]["Properties"]["TableName"] = {"Fn::ImportValue": "shared-name"}
    path.write_text(json.dumps(template))
    with pytest.raises(ValueError, match="Fn::ImportValue cannot be resolved without a stack"):
        load_definitions(path)


def test_create_table_input_in_every_shape(tmp_path: Path) -> None:
    one = {"TableName": "one", **KEYS}
    two = {"TableName": "two", **KEYS, "TimeToLiveSpecification": {"AttributeName": "e", "Enabled": True}}
    from_json = load_definitions(_write(tmp_path, "t.json", json.dumps([one, two])))
    assert [d.name for d in from_json] == ["one", "two"]
    assert from_json[1].time_to_live == {"AttributeName": "e", "Enabled": True}
    assert "TimeToLiveSpecification" not in from_json[1].create
    wrapped = load_definitions(_write(tmp_path, "w.yaml", "Tables:\n  - " + json.dumps(one)))
    assert wrapped == [TableDefinition({"TableName": "one", **KEYS})]
    assert [d.name for d in load_definitions(one, [two])] == ["one", "two"]
    assert one == {"TableName": "one", **KEYS}  # the caller's dict is not changed


@pytest.mark.parametrize(
    ("sources", "message"),
    [
        (({"TableName": "x1", **KEYS}, {"TableName": "x1", **KEYS}), "table 'x1' is defined more than once"),
        (({**KEYS},), "<dict>: a table definition needs TableName"),
        (([1],), "<dict>: expected CreateTable input, a list of them, or a template"),
    ],
)
def test_bad_definitions(sources: tuple[Any, ...], message: str) -> None:
    with pytest.raises(ValueError) as error:
        load_definitions(*sources)
    assert str(error.value) == message


def test_created_through_the_api_with_ttl_and_pitr(ddb: Any, tmp_path: Path, table_name: str) -> None:
    named = TEMPLATE[TEMPLATE.index("  Named:"):TEMPLATE.index("  Simple:")]
    template = "Parameters:\n  Stage: {Type: String, Default: dev}\nResources:\n" + named.replace(
        "${AWS::StackName}-${Stage}-named-${!Literal}", "${Stage}-" + table_name)
    definitions = load_definitions(_write(tmp_path, "t.yaml", template))
    assert create_tables(ddb, definitions) == [f"dev-{table_name}"]
    name = f"dev-{table_name}"
    try:
        ttl = ddb.describe_time_to_live(TableName=name)["TimeToLiveDescription"]
        assert ttl == {"TimeToLiveStatus": "ENABLED", "AttributeName": "ttl"}
        backups = ddb.describe_continuous_backups(TableName=name)["ContinuousBackupsDescription"]
        assert backups["PointInTimeRecoveryDescription"]["PointInTimeRecoveryStatus"] == "DISABLED"
        indexes = ddb.describe_table(TableName=name)["Table"]["GlobalSecondaryIndexes"]
        assert [i["IndexName"] for i in indexes] == ["by-g"]
    finally:
        ddb.delete_table(TableName=name)
