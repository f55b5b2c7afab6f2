"""DynamoDB Streams: records written with each item change, shards, iterators, trimming.

- `keys`: where stream rows live in the store and how sequence numbers look;
- `records`: the record of one item change, written inside the write's commit;
- `lifecycle`: opening and closing streams as StreamSpecification changes;
- `reader`: ListStreams, DescribeStream, GetShardIterator, GetRecords;
- `trim`: the background duty that ages records out after 24 hours.
"""
