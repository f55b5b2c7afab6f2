"""Table definitions declared once, created for each test.

A definition comes from CreateTable input (a dict, or a list of them, in
Python or in a JSON/YAML file), or from the `AWS::DynamoDB::Table` (and
SAM `AWS::Serverless::SimpleTable`) resources of a CloudFormation/SAM
template, so the tables under test are the ones the stack deploys.

CloudFormation properties are translated to the API's shapes where they
differ (StreamSpecification, SSESpecification, SAM's PrimaryKey); the ones
that are separate API calls (TimeToLiveSpecification,
PointInTimeRecoverySpecification) are applied after CreateTable; the ones
with no local meaning (Kinesis streams, imports, contributor insights,
resource policies) are dropped. A resource without TableName gets its
logical id as name (CloudFormation would generate `stack-LogicalId-XYZ`).
Intrinsic functions are resolved where they can be without a stack:
`Ref` to a parameter (its Default, or the value given in `parameters`)
or a pseudo parameter, `Fn::Sub` and `Fn::Join` over those; anything else
raises ValueError naming the property.
"""

from __future__ import annotations

import copy
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class TableDefinition:
    """CreateTable input, plus the settings DynamoDB sets with other calls."""

    create: dict[str, Any]
    time_to_live: dict[str, Any] | None = None
    point_in_time_recovery: bool | None = None
    source: str = field(default="", compare=False)

    @property
    def name(self) -> str:
        name: str = self.create["TableName"]
        return name


Source = TableDefinition | Mapping[str, Any] | Iterable[Mapping[str, Any]] | str | os.PathLike[str]

_TABLE_TYPES = ("AWS::DynamoDB::Table", "AWS::Serverless::SimpleTable")
_DROPPED = ("ContributorInsightsSpecification", "KinesisStreamSpecification", "ImportSourceSpecification",
            "ResourcePolicy")
_SAM_TYPES = {"String": "S", "Number": "N", "Binary": "B"}


def load_definitions(*sources: Source, parameters: Mapping[str, str] | None = None) -> list[TableDefinition]:
    """Every table the sources define, in order."""
    out: list[TableDefinition] = []
    for source in sources:
        if isinstance(source, TableDefinition):
            out.append(source)
        elif isinstance(source, str | os.PathLike):
            path = Path(source)
            out += _from_document(_read(path), str(path), parameters or {})
        elif isinstance(source, Mapping):
            out += _from_document(copy.deepcopy(dict(source)), "<dict>", parameters or {})
        else:
            for each in source:
                out += _from_document(copy.deepcopy(each), "<dict>", parameters or {})
    names = [d.name for d in out]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"table {duplicates[0]!r} is defined more than once")
    return out


def create_tables(client: Any, definitions: Iterable[TableDefinition]) -> list[str]:
    """Create each table (and its TTL and PITR settings) through the DynamoDB API."""
    names = []
    for definition in definitions:
        client.create_table(**definition.create)
        if definition.time_to_live is not None:
            client.update_time_to_live(TableName=definition.name,
                                       TimeToLiveSpecification=definition.time_to_live)
        if definition.point_in_time_recovery is not None:
            client.update_continuous_backups(
                TableName=definition.name,
                PointInTimeRecoverySpecification={
                    "PointInTimeRecoveryEnabled": definition.point_in_time_recovery},
            )
        names.append(definition.name)
    return names


def _read(path: Path) -> Any:
    text = path.read_text()
    if path.suffix.lower() in (".yaml", ".yml", ".template") and not text.lstrip().startswith(("{", "[")):
        return _load_yaml(text, path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}: not JSON ({error}); name YAML files *.yaml or *.yml") from None


def _load_yaml(text: str, path: Path) -> Any:
    try:
        import yaml
    except ImportError:  # pragma: no cover - PyYAML comes with the testing extra
        raise ImportError(f"reading {path} needs PyYAML: pip install 'partita[testing]'") from None

    class Loader(yaml.SafeLoader):
        """SafeLoader that reads CloudFormation's short forms (`!Ref x` is `{"Ref": "x"}`)."""

    def intrinsic(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> dict[str, Any]:
        name = "Ref" if suffix == "Ref" else f"Fn::{suffix}"
        value: Any
        if isinstance(node, yaml.ScalarNode):
            value = loader.construct_scalar(node)
            if suffix == "GetAtt" and isinstance(value, str):
                value = value.split(".", 1)
        elif isinstance(node, yaml.SequenceNode):
            value = loader.construct_sequence(node, deep=True)
        else:
            value = loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]
        return {name: value}

    Loader.add_multi_constructor("!", intrinsic)
    return yaml.load(text, Loader=Loader)  # noqa: S506 - a SafeLoader subclass


def _from_document(doc: Any, where: str, parameters: Mapping[str, str]) -> list[TableDefinition]:
    if isinstance(doc, list):
        return [d for each in doc for d in _from_document(each, where, parameters)]
    if not isinstance(doc, dict):
        raise ValueError(f"{where}: expected CreateTable input, a list of them, or a template")
    if "Resources" in doc:
        return _from_template(doc, where, parameters)
    if "Tables" in doc and "TableName" not in doc:
        return _from_document(doc["Tables"], where, parameters)
    if "TableName" not in doc:
        raise ValueError(f"{where}: a table definition needs TableName")
    ttl = doc.pop("TimeToLiveSpecification", None)
    return [TableDefinition(doc, time_to_live=ttl, source=where)]


def _from_template(doc: dict[str, Any], where: str, given: Mapping[str, str]) -> list[TableDefinition]:
    values: dict[str, str] = {"AWS::StackName": "stack", "AWS::Region": "us-east-1",
                              "AWS::AccountId": "000000000000", "AWS::Partition": "aws",
                              "AWS::URLSuffix": "amazonaws.com", "AWS::NoValue": ""}
    for name, spec in (doc.get("Parameters") or {}).items():
        if isinstance(spec, dict) and "Default" in spec:
            values[name] = str(spec["Default"])
    values.update({k: str(v) for k, v in given.items()})
    out = []
    for logical_id, resource in (doc.get("Resources") or {}).items():
        if not isinstance(resource, dict) or resource.get("Type") not in _TABLE_TYPES:
            continue
        context = f"{where}: {logical_id}"
        kept = {k: v for k, v in (resource.get("Properties") or {}).items() if k not in _DROPPED}
        props = _resolve(kept, values, context)
        if resource["Type"] == "AWS::Serverless::SimpleTable":
            out.append(_simple_table(logical_id, props, context))
        else:
            out.append(_table(logical_id, props, context))
    return out


def _table(logical_id: str, props: dict[str, Any], where: str) -> TableDefinition:
    create = dict(props)
    create.setdefault("TableName", logical_id)
    ttl = create.pop("TimeToLiveSpecification", None)
    pitr = create.pop("PointInTimeRecoverySpecification", None)
    stream = props.get("StreamSpecification")
    if stream is not None:
        create["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": stream.get("StreamViewType")}
    sse = props.get("SSESpecification")
    if sse is not None:
        create["SSESpecification"] = {"Enabled": bool(sse.get("SSEEnabled", False)),
                                      **{k: sse[k] for k in ("SSEType", "KMSMasterKeyId") if k in sse}}
    for index in create.get("GlobalSecondaryIndexes") or []:
        index.pop("ContributorInsightsSpecification", None)
    enabled = None if pitr is None else bool(pitr.get("PointInTimeRecoveryEnabled", False))
    return TableDefinition(create, time_to_live=ttl, point_in_time_recovery=enabled, source=where)


def _simple_table(logical_id: str, props: dict[str, Any], where: str) -> TableDefinition:
    key = props.get("PrimaryKey") or {"Name": "id", "Type": "String"}
    kind = _SAM_TYPES.get(key.get("Type", "String"))
    if kind is None:
        raise ValueError(f"{where}: PrimaryKey Type must be String, Number or Binary")
    create: dict[str, Any] = {
        "TableName": props.get("TableName", logical_id),
        "KeySchema": [{"AttributeName": key["Name"], "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": key["Name"], "AttributeType": kind}],
    }
    if "ProvisionedThroughput" in props:
        create["ProvisionedThroughput"] = props["ProvisionedThroughput"]
    else:
        create["BillingMode"] = "PAY_PER_REQUEST"
    if "SSESpecification" in props:
        create["SSESpecification"] = {"Enabled": bool(props["SSESpecification"].get("SSEEnabled", False))}
    if isinstance(props.get("Tags"), dict):
        create["Tags"] = [{"Key": k, "Value": str(v)} for k, v in props["Tags"].items()]
    return TableDefinition(create, source=where)


_SUB = re.compile(r"\$\{([^}!][^}]*)\}")


def _resolve(value: Any, values: Mapping[str, str], where: str) -> Any:
    if isinstance(value, list):
        return [_resolve(v, values, where) for v in value]
    if not isinstance(value, dict):
        return value
    if len(value) == 1:
        (name, arg), = value.items()
        if name == "Ref":
            if arg not in values:
                raise ValueError(f"{where}: cannot resolve Ref {arg!r} without a stack; pass parameters=")
            return values[arg]
        if name == "Fn::Sub":
            text, extra = (arg, {}) if isinstance(arg, str) else (arg[0], _resolve(arg[1], values, where))
            scope = {**values, **extra}

            def substitute(match: re.Match[str]) -> str:
                key = match.group(1)
                if key not in scope:
                    raise ValueError(f"{where}: cannot resolve ${{{key}}} without a stack; pass parameters=")
                return str(scope[key])

            return _SUB.sub(substitute, text).replace("${!", "${")
        if name == "Fn::Join":
            separator, parts = arg
            return str(separator).join(str(p) for p in _resolve(parts, values, where))
        if name.startswith("Fn::") or name == "Condition":
            raise ValueError(f"{where}: {name} cannot be resolved without a stack")
    return {k: _resolve(v, values, where) for k, v in value.items()}
