"""VectorWriteRequestBytes in the ConsumedCapacity of writes, with the bytes worked out by hand here.

An index entry weighs the projected attributes' DynamoDB size plus the vector
attribute's name and 4 bytes a dimension; a write is metered at least 1 KB,
reported per changed index under ReturnConsumedCapacity=INDEXES only, and never
added to CapacityUnits. CapacityUnits themselves bill the vector attribute at
its name plus 4 bytes a dimension (recorded on the service, docs/decisions.md),
so these 300-d items of "1"s (915 bytes stored, 1,212 billed) are 2 units.
"""

from __future__ import annotations

from typing import Any

DIMS = 300  # 4 x 300 = 1200 bytes of vector: above the 1 KB floor


def _vec(value: str = "1", dims: int = DIMS) -> dict[str, Any]:
    return {"L": [{"N": value} for _ in range(dims)]}


def _index(name: str, attribute: str, dims: int, projection: str) -> dict[str, Any]:
    return {"IndexName": name, "VectorAttribute": {"AttributeName": attribute}, "Dimensions": dims,
            "DistanceFunction": "EUCLIDEAN", "Projection": {"ProjectionType": projection}}


def _create(ddb: Any, name: str) -> None:
    ddb.create_table(
        TableName=name, AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}], BillingMode="PAY_PER_REQUEST",
        VectorIndexes=[_index("vix", "emb", DIMS, "ALL"), _index("small", "tiny", 4, "KEYS_ONLY")],
    )


#: Entry of {"pk": "a", "note": "xy", "emb": ...} in vix: pk (2 + 1) + note (4 + 2) + "emb" + 4 x 300.
ENTRY_A = 3 + 6 + 3 + 4 * DIMS
#: The attribute tiny = [0.5] x 4 as DynamoDB sizes it: name 4 + list 3 + 4 x (1 + 2).
TINY = 4 + 3 + 4 * 3


def _vectors(answer: dict[str, Any]) -> Any:
    return answer["ConsumedCapacity"].get("VectorIndexes")


def test_put_update_delete_report_bytes_per_changed_index(ddb: Any, table_name: str) -> None:
    _create(ddb, table_name)
    item = {"pk": {"S": "a"}, "note": {"S": "xy"}, "emb": _vec()}
    out = ddb.put_item(TableName=table_name, Item=item, ReturnConsumedCapacity="INDEXES")
    assert out["ConsumedCapacity"] == {
        "TableName": table_name, "CapacityUnits": 2.0, "Table": {"CapacityUnits": 2.0},
        "VectorIndexes": {"vix": {"VectorWriteRequestBytes": float(ENTRY_A)}},
    }
    # TOTAL: the aggregate only (the documentation asks for INDEXES on writes).
    out = ddb.put_item(TableName=table_name, Item=item, ReturnConsumedCapacity="TOTAL")
    assert out["ConsumedCapacity"] == {"TableName": table_name, "CapacityUnits": 2.0}
    # The same item again: the entry is unchanged, nothing is replicated, no map.
    out = ddb.put_item(TableName=table_name, Item=item, ReturnConsumedCapacity="INDEXES")
    assert "VectorIndexes" not in out["ConsumedCapacity"]
    # A projected (ALL) attribute changes: the new entry is sent (note "xyz": one byte more).
    out = ddb.update_item(TableName=table_name, Key={"pk": {"S": "a"}}, UpdateExpression="SET note = :n",
                          ExpressionAttributeValues={":n": {"S": "xyz"}}, ReturnConsumedCapacity="INDEXES")
    assert _vectors(out) == {"vix": {"VectorWriteRequestBytes": float(ENTRY_A + 1)}}
    # The small (KEYS_ONLY, 4-d) index gets a vector (pk 3 + "tiny" 4 + 16 bytes: the 1 KB floor);
    # vix's entry changes too, as ALL projects the new attribute.
    out = ddb.update_item(TableName=table_name, Key={"pk": {"S": "a"}}, UpdateExpression="SET tiny = :t",
                          ExpressionAttributeValues={":t": _vec("0.5", 4)}, ReturnConsumedCapacity="INDEXES")
    assert _vectors(out) == {"vix": {"VectorWriteRequestBytes": float(ENTRY_A + 1 + TINY)},
                             "small": {"VectorWriteRequestBytes": 1024.0}}
    # Deleting the item removes both entries; each removal is metered by the entry it removes.
    out = ddb.delete_item(TableName=table_name, Key={"pk": {"S": "a"}}, ReturnConsumedCapacity="INDEXES")
    assert out["ConsumedCapacity"]["CapacityUnits"] == 2.0
    assert _vectors(out) == {"vix": {"VectorWriteRequestBytes": float(ENTRY_A + 1 + TINY)},
                             "small": {"VectorWriteRequestBytes": 1024.0}}
    # An item outside every vector index: no map at all.
    out = ddb.put_item(TableName=table_name, Item={"pk": {"S": "b"}, "note": {"S": "x"}},
                       ReturnConsumedCapacity="INDEXES")
    assert out["ConsumedCapacity"] == {"TableName": table_name, "CapacityUnits": 1.0, "Table": {"CapacityUnits": 1.0}}


def test_unprojected_attribute_change_costs_nothing(ddb: Any, table_name: str) -> None:
    _create(ddb, table_name)
    ddb.put_item(TableName=table_name, Item={"pk": {"S": "a"}, "tiny": _vec("0.25", 4)})
    out = ddb.update_item(TableName=table_name, Key={"pk": {"S": "a"}}, UpdateExpression="SET extra = :o",
                          ExpressionAttributeValues={":o": {"N": "1"}}, ReturnConsumedCapacity="INDEXES")
    assert "VectorIndexes" not in out["ConsumedCapacity"]  # KEYS_ONLY entry unchanged; no emb: not in vix


def test_batch_and_transaction_sum_bytes_per_table(ddb: Any, table_name: str) -> None:
    _create(ddb, table_name)
    puts = [{"PutRequest": {"Item": {"pk": {"S": pk}, "note": {"S": "xy"}, "emb": _vec()}}} for pk in ("a", "c")]
    out = ddb.batch_write_item(RequestItems={table_name: puts}, ReturnConsumedCapacity="INDEXES")
    assert out["ConsumedCapacity"] == [{
        "TableName": table_name, "CapacityUnits": 4.0, "Table": {"CapacityUnits": 4.0},
        "VectorIndexes": {"vix": {"VectorWriteRequestBytes": float(2 * ENTRY_A)}},
    }]
    out = ddb.batch_write_item(RequestItems={table_name: puts}, ReturnConsumedCapacity="TOTAL")
    assert out["ConsumedCapacity"] == [{"TableName": table_name, "CapacityUnits": 4.0}]
    # A transaction doubles capacity units; the bytes replicated to the index are not doubled.
    out = ddb.transact_write_items(TransactItems=[
        {"Update": {"TableName": table_name, "Key": {"pk": {"S": "a"}}, "UpdateExpression": "SET tiny = :t",
                    "ExpressionAttributeValues": {":t": _vec("0.5", 4)}}},
        {"Delete": {"TableName": table_name, "Key": {"pk": {"S": "c"}}}},
    ], ReturnConsumedCapacity="INDEXES")
    assert out["ConsumedCapacity"] == [{
        "TableName": table_name, "CapacityUnits": 8.0, "WriteCapacityUnits": 8.0,
        "Table": {"CapacityUnits": 8.0, "WriteCapacityUnits": 8.0},
        "VectorIndexes": {"vix": {"VectorWriteRequestBytes": float(2 * ENTRY_A + TINY)},
                          "small": {"VectorWriteRequestBytes": 1024.0}},
    }]
