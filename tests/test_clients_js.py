"""Cross-client check: the AWS SDK for JavaScript v3 runs short scenarios (tables, streams) against the server.

`./dev test` installs the SDK (`setup_node`: `npm ci` in tests/clients/js,
pinned by its package-lock.json). Without node or the installed SDK this
test fails, loudly, so CI cannot pass by skipping it; set
PARTITA_SKIP_NODE=1 to skip it on purpose.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).parent / "clients" / "js"


def _node() -> str:
    if os.environ.get("PARTITA_SKIP_NODE") == "1":
        pytest.skip("PARTITA_SKIP_NODE=1: the JavaScript SDK check is skipped on purpose")
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed: the JavaScript SDK check needs node 20+ and npm "
                    "(or set PARTITA_SKIP_NODE=1 to skip it)")
    if not all((HERE / "node_modules" / "@aws-sdk" / name).is_dir() for name in ("lib-dynamodb", "client-dynamodb-streams")):
        pytest.fail("the JavaScript SDK is not installed: run ./dev test (or npm ci in tests/clients/js)")
    return node


def test_js_sdk_v3_scenario(endpoint: str, table_name: str) -> None:
    node = _node()
    result = subprocess.run([node, "scenario.mjs", endpoint, table_name], cwd=HERE, capture_output=True,
                            text=True, timeout=120, check=False, env={**os.environ, "NODE_NO_WARNINGS": "1"})
    assert result.returncode == 0, result.stderr
    steps = [json.loads(line) for line in result.stdout.splitlines()]
    conditional_failed = {"name": "ConditionalCheckFailedException", "message": "The conditional request failed",
                          "status": 400}
    assert steps == [
        {"step": "status", "value": "ACTIVE"},
        {"step": "conditional", "value": conditional_failed},
        {"step": "get", "value": {"user": "ada", "ts": 1, "kind": "login", "tags": ["a", "b"], "n": 1.5}},
        {"step": "unprocessed", "value": 0},
        {"step": "unprocessed", "value": 0},
        {"step": "query", "value": {"ts": [9, 7, 5, 3, 1], "capacity": 0.5}},
        {"step": "index", "value": 11},
        {"step": "update", "value": {"n": 2.5, "seen": ["web"]}},
        {"step": "transaction", "value": {
            "name": "TransactionCanceledException",
            "message": "Transaction cancelled, please refer cancellation reasons for specific reasons "
                       "[None, ConditionalCheckFailed]",
            "status": 400}},
        {"step": "scan", "value": {"pages": 5, "items": 30}},
        {"step": "validation", "value": {"name": "ValidationException",
                                         "message": "The provided key element does not match the schema",
                                         "status": 400}},
        {"step": "missing", "value": {"name": "ResourceNotFoundException",
                                      "message": f"Requested resource not found: Table: {table_name} not found",
                                      "status": 400}},
    ]


def test_js_sdk_v3_streams_scenario(endpoint: str, table_name: str) -> None:
    """The JavaScript SDK's DynamoDBStreamsClient, given the server's URL, reads what boto3 reads.

    Records as in test_streams.py; shard order, paging and two validation
    answers as in test_stream_requests.py (issue 26, class 1).
    """
    node = _node()
    result = subprocess.run([node, "streams_scenario.mjs", endpoint, table_name], cwd=HERE, capture_output=True,
                            text=True, timeout=120, check=False, env={**os.environ, "NODE_NO_WARNINGS": "1"})
    assert result.returncode == 0, result.stderr
    steps = [json.loads(line) for line in result.stdout.splitlines()]
    key = {"pk": {"S": "a"}}
    v1, v2 = {**key, "v": {"N": "1"}}, {**key, "v": {"N": "2"}}
    common = {"keys": key, "view": "NEW_AND_OLD_IMAGES", "source": "aws:dynamodb", "version": "1.1",
              "region": "us-east-1"}
    assert steps == [
        {"step": "list", "value": [{"arn": True, "table": table_name, "labelInArn": True}]},
        {"step": "describe", "value": {"status": "ENABLED", "view": "NEW_AND_OLD_IMAGES", "table": table_name,
                                       "keys": [{"AttributeName": "pk", "KeyType": "HASH"}], "shards": 1}},
        {"step": "events", "value": ["INSERT", "MODIFY", "REMOVE"]},
        {"step": "records", "value": [
            {**common, "newImage": v1, "oldImage": None},
            {**common, "newImage": v2, "oldImage": v1},
            {**common, "newImage": None, "oldImage": v2},
        ]},
        {"step": "increasing", "value": True},
        {"step": "forged", "value": {"name": "ValidationException", "message": "Invalid ShardIterator",
                                     "status": 400}},
        # Eight shards paged three at a time, in ShardId (byte) order; nothing after the last one.
        {"step": "shardOrder", "value": {"sizes": [3, 3, 2], "lastEvaluatedIsLastOfPage": True, "ascending": True,
                                         "distinct": True}},
        {"step": "afterLast", "value": {"shards": 0, "lastEvaluated": None}},
        {"step": "invalidArn", "value": {"name": "ValidationException", "message": "Invalid StreamArn",
                                         "status": 400}},
        {"step": "latestWithSequence", "value": {
            "name": "ValidationException", "message": "Must not specify a SequenceNumber for LATEST shard iterator type",
            "status": 400}},
    ]
