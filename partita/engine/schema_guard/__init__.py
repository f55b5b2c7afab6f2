"""The schema guard: entity schemas (JSON Schema) checked on every item write (`--schema FILE`).

DynamoDB enforces no schema beyond the key; the guard lets a test suite or a
development server catch the items an application should never write.
`spec` reads and checks the schema file (a malformed one is refused at
start-up), `plain` turns an item into the plain JSON its schema describes,
`guard` matches an item to its entity and validates it where every write
path resolves its new item (items/single.py), and `log` keeps the
violations of `warn` mode in the store, in the write's own commit.

Nothing here is imported, and nothing is checked, unless a schema is loaded.
"""
