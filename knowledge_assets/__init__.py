"""knowledge-assets: a Markdown knowledge base kept searchable in Postgres + pgvector."""

__version__ = "0.1.0"
