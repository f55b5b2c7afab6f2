"""Item collections of tables with a local index, and GSI propagation lag."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from botocore.exceptions import ClientError
from conftest import Server, client_for, error_of
from streams_helpers import advance
from test_indexes import attr, gsi, key, lsi


def make_lsi_table(ddb: Any, name: str) -> None:
    ddb.create_table(
        TableName=name,
        KeySchema=[key("pk", "HASH"), key("sk", "RANGE")],
        AttributeDefinitions=[attr("pk"), attr("sk"), attr("l")],
        BillingMode="PAY_PER_REQUEST",
        LocalSecondaryIndexes=[lsi("by-l", "l", "ALL")],
    )


def test_item_collection_metrics(ddb: Any, table_name: str) -> None:
    make_lsi_table(ddb, table_name)
    item = {"pk": {"S": "p"}, "sk": {"S": "1"}, "l": {"S": "x"}}
    out = ddb.put_item(TableName=table_name, Item=item, ReturnItemCollectionMetrics="SIZE")
    assert out["ItemCollectionMetrics"] == {"ItemCollectionKey": {"pk": {"S": "p"}}, "SizeEstimateRangeGB": [0.0, 1.0]}
    out = ddb.update_item(TableName=table_name, Key={"pk": {"S": "p"}, "sk": {"S": "1"}},
                          UpdateExpression="SET v = :v", ExpressionAttributeValues={":v": {"N": "1"}},
                          ReturnItemCollectionMetrics="SIZE")
    assert out["ItemCollectionMetrics"]["ItemCollectionKey"] == {"pk": {"S": "p"}}
    out = ddb.delete_item(TableName=table_name, Key={"pk": {"S": "p"}, "sk": {"S": "1"}},
                          ReturnItemCollectionMetrics="SIZE")
    assert out["ItemCollectionMetrics"]["SizeEstimateRangeGB"] == [0.0, 1.0]
    # No metrics without a local index.
    ddb.create_table(TableName=table_name + "-plain", KeySchema=[key("pk", "HASH")],
                     AttributeDefinitions=[attr("pk")], BillingMode="PAY_PER_REQUEST")
    out = ddb.put_item(TableName=table_name + "-plain", Item={"pk": {"S": "p"}}, ReturnItemCollectionMetrics="SIZE")
    assert "ItemCollectionMetrics" not in out


def test_item_collection_limit(start_server: Callable[..., Server]) -> None:
    server = start_server("--in-memory", "--item-collection-limit", "2000")
    ddb = client_for(server.url)
    make_lsi_table(ddb, "capped")
    filler = "x" * 400
    written = 0
    with pytest.raises(ClientError) as excinfo:
        for i in range(10):
            ddb.put_item(TableName="capped", Item={"pk": {"S": "p"}, "sk": {"S": str(i)}, "l": {"S": "y"},
                                                   "f": {"S": filler}})
            written += 1
    assert error_of(excinfo) == ("ItemCollectionSizeLimitExceededException", "Collection size exceeded.")
    # Each item (and its LSI entry) is ~415 bytes: the table row and index entry of two items fit, a third does not.
    assert written == 2
    out = ddb.query(TableName="capped", KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": "p"}})
    assert out["Count"] == 2
    assert ddb.query(TableName="capped", IndexName="by-l", KeyConditionExpression="pk = :p",
                     ExpressionAttributeValues={":p": {"S": "p"}})["Count"] == 2
    # Another partition key is another collection.
    ddb.put_item(TableName="capped", Item={"pk": {"S": "q"}, "sk": {"S": "0"}, "f": {"S": filler}})


def test_gsi_lag_hides_fresh_writes(start_server: Callable[..., Server]) -> None:
    # A minute of lag, passed on the server clock: a slow machine cannot reach it between two requests.
    server = start_server("--in-memory", "--gsi-lag-ms", "60000")
    ddb = client_for(server.url)
    ddb.create_table(TableName="lagged", KeySchema=[key("pk", "HASH")],
                     AttributeDefinitions=[attr("pk"), attr("email")], BillingMode="PAY_PER_REQUEST",
                     GlobalSecondaryIndexes=[gsi("by-email", "email")])
    ddb.put_item(TableName="lagged", Item={"pk": {"S": "u1"}, "email": {"S": "a@x"}})
    query = dict(TableName="lagged", IndexName="by-email", KeyConditionExpression="email = :e",
                 ExpressionAttributeValues={":e": {"S": "a@x"}})
    assert ddb.query(**query)["Count"] == 0
    # The table itself is read-your-writes.
    assert "Item" in ddb.get_item(TableName="lagged", Key={"pk": {"S": "u1"}}, ConsistentRead=True)
    advance(server.url, 59)
    assert ddb.query(**query)["Count"] == 0
    advance(server.url, 2)
    assert ddb.query(**query)["Count"] == 1
    ddb.delete_item(TableName="lagged", Key={"pk": {"S": "u1"}})
    assert ddb.query(**query)["Count"] == 1
    advance(server.url, 61)
    assert ddb.query(**query)["Count"] == 0
