"""Vector indexes: declaration, maintenance in the one write path, and SearchVectors.

`model` is the index as the engine sees it, `declare` the CreateTable /
UpdateTable rules and DescribeTable documents, `entries` the index rows a
write keeps in the item's own commit, `search` the exact (numpy) and
approximate (usearch) nearest-neighbour search over a per-index matrix
cached in memory and rebuilt from those rows.
"""
