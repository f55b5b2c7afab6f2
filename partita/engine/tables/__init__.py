"""Tables and their lifecycle: definitions in the catalog, and every change to them.

- `schema`: a table as the engine uses it (keys, indexes, row prefixes);
- `catalog`: where table definitions live (catalog rows in the store) and their cache;
- `lifecycle`: CreateTable, DescribeTable, ListTables, DeleteTable;
- `updates`: UpdateTable (billing, throughput, streams, online index changes),
  with `index_jobs` the background backfill and drop of global indexes;
- `projections`: the Projection rules every index declaration shares;
- `tags`: TagResource, UntagResource, ListTagsOfResource;
- `reset`: drop every table at once (per-test isolation).
"""
