"""The same request as boto3 code, an AWS CLI command and the raw JSON of the wire.

Written from the request the console actually sent, so copying any of the
three reproduces the page. The AWS CLI hides `Limit` and `ExclusiveStartKey`
behind its own pagination; one page is `--no-paginate` with those two in
`--cli-input-json` (explicit flags are merged over it).
"""

from __future__ import annotations

import json
import pprint
import shlex
from typing import Any

_CLI_FLAGS = {
    "IndexName": "--index-name",
    "KeyConditionExpression": "--key-condition-expression",
    "FilterExpression": "--filter-expression",
    "ProjectionExpression": "--projection-expression",
    "ExpressionAttributeNames": "--expression-attribute-names",
    "ExpressionAttributeValues": "--expression-attribute-values",
    "ReturnConsumedCapacity": "--return-consumed-capacity",
    "Select": "--select",
    "Segment": "--segment",
    "TotalSegments": "--total-segments",
}
_CLI_INPUT = ("Limit", "ExclusiveStartKey")
_COMMANDS = {"Query": "query", "Scan": "scan", "GetItem": "get-item", "PutItem": "put-item"}
_METHODS = {"Query": "query", "Scan": "scan", "GetItem": "get_item", "PutItem": "put_item"}


def boto3_code(operation: str, request: dict[str, Any], endpoint: str, region: str) -> str:
    """boto3 needs a region even with an endpoint (NoRegionError): the server's own is given."""
    lines = [
        "import boto3",
        "",
        f'client = boto3.client("dynamodb", endpoint_url={endpoint!r}, region_name={region!r})',
        f"response = client.{_METHODS[operation]}(",
    ]
    for name, value in request.items():
        text = pprint.pformat(value, indent=1, width=88, sort_dicts=False)
        lines.append(f"    {name}=" + text.replace("\n", "\n    ") + ",")
    lines.append(")")
    return "\n".join(lines)


def cli_command(operation: str, request: dict[str, Any], endpoint: str, region: str) -> str:
    parts = ["aws", "dynamodb", _COMMANDS[operation], "--endpoint-url", endpoint, "--region", region]
    if operation in ("Query", "Scan"):
        parts.append("--no-paginate")
    parts += ["--table-name", request["TableName"]]
    extra = {}
    for name, value in request.items():
        if name == "TableName":
            continue
        if name == "ConsistentRead":
            parts.append("--consistent-read" if value else "--no-consistent-read")
        elif name == "ScanIndexForward":
            parts.append("--scan-index-forward" if value else "--no-scan-index-forward")
        elif name in _CLI_INPUT:
            extra[name] = value
        elif name in _CLI_FLAGS:
            parts += [_CLI_FLAGS[name], value if isinstance(value, str) else json.dumps(value)]
        else:
            extra[name] = value
    if extra:
        parts += ["--cli-input-json", json.dumps(extra)]
    return " \\\n    ".join(_pairs(parts))


def _pairs(parts: list[str]) -> list[str]:
    """Shell-quoted words, a flag and its value on one line."""
    out: list[str] = [" ".join(shlex.quote(p) for p in parts[:3])]
    i = 3
    while i < len(parts):
        word = shlex.quote(parts[i])
        if i + 1 < len(parts) and not parts[i + 1].startswith("--"):
            word += " " + shlex.quote(parts[i + 1])
            i += 1
        out.append(word)
        i += 1
    return out


def raw_json(operation: str, request: dict[str, Any]) -> str:
    head = f"POST / HTTP/1.1\nContent-Type: application/x-amz-json-1.0\nX-Amz-Target: DynamoDB_20120810.{operation}\n\n"
    return head + json.dumps(request, indent=2, ensure_ascii=False)
