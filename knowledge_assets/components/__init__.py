"""Component types users declare in ``defs.yaml`` files (``dg list components`` shows them)."""

from knowledge_assets.components.source import KnowledgeSource

__all__ = ["KnowledgeSource"]
