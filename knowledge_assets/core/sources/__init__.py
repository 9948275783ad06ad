"""Where notes come from: a local folder or a GitHub repository, behind one interface."""

from knowledge_assets.core.sources.base import ChangeSet, Source, SourceError

__all__ = ["ChangeSet", "Source", "SourceError"]
