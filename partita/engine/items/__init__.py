"""Reading and writing items: every data-plane path from a validated request to the store.

- `single`: PutItem, GetItem, UpdateItem, DeleteItem, and the prepare / resolve /
  store steps every write path shares (`actions` is the data they pass around);
- `updates`: applying an UpdateExpression (or AttributeUpdates) to an item;
- `writes`: the one place an item is stored, with its index entries, TTL entry,
  stream record and change log, in one commit;
- `batch`: BatchWriteItem and BatchGetItem; `transactions`: TransactWriteItems
  and TransactGetItems with their idempotency tokens;
- `reads`: Query and Scan, one page of rows in row-key order.
"""
