"""Group commit on the SQLite store: writes arriving together share one commit.

Requests pipelined on one connection arrive in one read, so they are
answered in one event-loop turn and their writes join one group transaction
(storage/sqlite.py). These tests pin what that must not change: each write
succeeds or fails on its own, answers keep their order, a read sees the
writes answered before it, and nothing acknowledged is lost to `kill -9`
however many writers share a commit.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import Server, client_for, create_table, kill_during_writes
from test_http_server import Reader, connect, request
from test_item_collections import make_lsi_table

DYNAMO = "com.amazonaws.dynamodb.v20120810#"


def _pipeline(url: str, requests: list[bytes]) -> list[tuple[int, dict[str, Any]]]:
    with connect(url) as sock:
        sock.sendall(b"".join(requests))
        reader = Reader(sock)
        answers = [reader.response() for _ in requests]
    return [(status, json.loads(body)) for status, _, body in answers]


def test_a_failed_write_in_a_group_undoes_only_itself(start_server: Callable[..., Server], tmp_path: Path) -> None:
    server = start_server("--data-dir", str(tmp_path / "data"), "--item-collection-limit", "2000")
    ddb = client_for(server.url)
    make_lsi_table(ddb, "capped")
    filler = "x" * 400

    def put(sk: str, **extra: Any) -> bytes:
        item = {"pk": {"S": "p"}, "sk": {"S": sk}, "l": {"S": "y"}, "f": {"S": filler}}
        return request("PutItem", {"TableName": "capped", "Item": item, **extra})

    key = {"pk": {"S": "p"}, "sk": {"S": "1"}}
    answers = _pipeline(server.url, [
        put("1"),
        # fails its condition before writing anything
        put("9", ConditionExpression="attribute_exists(pk)"),
        request("GetItem", {"TableName": "capped", "Key": key}),
        put("2"),
        # writes its row and index entry, then finds the collection over the cap
        put("3"),
        request("UpdateItem", {"TableName": "capped", "Key": key, "UpdateExpression": "SET n = :n",
                               "ExpressionAttributeValues": {":n": {"N": "7"}}}),
        request("Query", {"TableName": "capped", "KeyConditionExpression": "pk = :p",
                          "ExpressionAttributeValues": {":p": {"S": "p"}}, "Select": "COUNT"}),
    ])
    assert [status for status, _ in answers] == [200, 400, 200, 200, 400, 200, 200]
    assert answers[1][1] == {"__type": DYNAMO + "ConditionalCheckFailedException",
                             "message": "The conditional request failed"}
    assert answers[2][1]["Item"]["sk"] == {"S": "1"}
    assert answers[4][1] == {"__type": DYNAMO + "ItemCollectionSizeLimitExceededException",
                             "message": "Collection size exceeded."}
    assert answers[6][1]["Count"] == 2
    # The same state once committed, through the table and its index.
    out = ddb.query(TableName="capped", KeyConditionExpression="pk = :p",
                    ExpressionAttributeValues={":p": {"S": "p"}}, ConsistentRead=True)
    assert [item["sk"]["S"] for item in out["Items"]] == ["1", "2"]
    assert out["Items"][0]["n"] == {"N": "7"}
    assert ddb.query(TableName="capped", IndexName="by-l", KeyConditionExpression="pk = :p",
                     ExpressionAttributeValues={":p": {"S": "p"}})["Count"] == 2


def test_catalog_change_in_a_group_is_seen_by_the_next_request(
    start_server: Callable[..., Server], tmp_path: Path
) -> None:
    """A write that changes the catalog commits the group at once: the request after it sees the change."""
    server = start_server("--data-dir", str(tmp_path / "data"))
    ddb = client_for(server.url)
    create_table(ddb, "before")
    answers = _pipeline(server.url, [
        request("PutItem", {"TableName": "before", "Item": {"pk": {"S": "a"}}}),
        request("DeleteTable", {"TableName": "before"}),
        request("PutItem", {"TableName": "before", "Item": {"pk": {"S": "b"}}}),
        request("ListTables", {}),
    ])
    assert [status for status, _ in answers] == [200, 200, 400, 200]
    assert answers[2][1]["__type"] == DYNAMO + "ResourceNotFoundException"
    assert answers[3][1] == {"TableNames": []}


def test_kill_during_grouped_writes_loses_nothing_acknowledged(
    start_server: Callable[..., Server], tmp_path: Path
) -> None:
    """16 writers at once (PutItem, UpdateItem, BatchWriteItem) share commits; kill -9 loses none acknowledged."""
    data = str(tmp_path / "data")
    server = start_server("--data-dir", data)
    create_table(client_for(server.url), "shared")

    def write(ddb: Any, slot: int, n: int) -> list[str] | None:
        if slot % 3 == 0:
            ddb.put_item(TableName="shared", Item={"pk": {"S": f"{slot}-{n}"}})
            return [f"{slot}-{n}"]
        if slot % 3 == 1:
            ddb.update_item(TableName="shared", Key={"pk": {"S": f"{slot}-{n}"}}, UpdateExpression="ADD c :one",
                            ExpressionAttributeValues={":one": {"N": "1"}})
            return [f"{slot}-{n}"]
        keys = [f"{slot}-{n}-{i}" for i in range(5)]
        out = ddb.batch_write_item(RequestItems={"shared": [{"PutRequest": {"Item": {"pk": {"S": k}}}} for k in keys]})
        return None if out["UnprocessedItems"] else keys

    written = kill_during_writes(server, write, writers=16, at_least=600, seconds=15)

    restarted = start_server("--data-dir", data)
    ddb: Any = client_for(restarted.url)
    present: set[str] = set()
    pages = ddb.get_paginator("scan").paginate(TableName="shared", ConsistentRead=True)
    for page in pages:
        present.update(item["pk"]["S"] for item in page["Items"])
    assert [key for key in written if key not in present] == []
