"""Search the latest notes (vector, keyword BM25, hybrid) and read single notes.

The search entry point lives in :mod:`knowledge_assets.core.search.engine`; what callers use is
re-exported here, so ``from knowledge_assets.core.search import search`` is the public API.
"""

from knowledge_assets.core.search.engine import (
    MAX_QUERY_CHARS,
    MODES,
    NoActiveModel,
    QueryEmbeddingFailed,
    group_by_note,
    query_embedder,
    search,
)
from knowledge_assets.core.search.filters import SearchFilters
from knowledge_assets.core.search.fusion import (
    DEFAULT_THRESHOLD,
    MODEL_THRESHOLDS,
    GivenWeights,
    HybridWeights,
    default_threshold,
)
from knowledge_assets.core.search.search_hits import SearchHit, SearchResponse, snippet

__all__ = [
    "DEFAULT_THRESHOLD",
    "MAX_QUERY_CHARS",
    "MODEL_THRESHOLDS",
    "MODES",
    "GivenWeights",
    "HybridWeights",
    "NoActiveModel",
    "QueryEmbeddingFailed",
    "SearchFilters",
    "SearchHit",
    "SearchResponse",
    "default_threshold",
    "group_by_note",
    "query_embedder",
    "search",
    "snippet",
]
