"""The value model: attribute values, keys and sizes as DynamoDB defines them.

- `values`: validation and the canonical form of attribute values, and their order;
- `serialization_errors`: what the service's JSON deserializer refuses, in its words;
- `sizes`: DynamoDB's size of a value and an item (the 400 KB limit, capacity);
- `keys`: key values as order-preserving bytes and the partition hash (an on-disk format);
- `item_keys`: that an item or a Key carries the table's key, with DynamoDB's messages.
"""
