"""Several AWS regions in one server (`--regions`), and the global tables that span them.

`build` gives every region its engine over its namespace of the store;
`group` is a global table's membership as each replica's description keeps
it; `replica_updates` and `jobs` create, update and delete replicas on the
server clock; `log` and `replicator` carry every write to the other
replicas (last writer wins, or one commit for multi-Region strong
consistency); `legacy` answers the 2017.11.29 API as DynamoDB does today.
"""
