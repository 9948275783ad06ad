"""Plain-Python core: parsing, hashing, chunking, SQL, embedding and search.

Nothing under this package imports dagster; the asset layer in ``knowledge_assets.defs`` calls it.
"""
