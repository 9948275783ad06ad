"""Vectors for every chunk text: embedding passes per model, the embedding text templates, the
per-model HNSW index build, re-embedding, and the data-quality queries of the index."""
