"""A search's two legs, keyword (BM25) and vector, and their fusion into hits.

Hybrid search runs both; given a companion connection it runs the keyword leg there, in a thread
of its own, while the vector leg runs on the search's connection. The hits are the same either way.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import psycopg

from knowledge_assets.core.search import keyword_sql, search_sql
from knowledge_assets.core.search.fusion import HybridWeights, default_threshold, fuse
from knowledge_assets.core.search.search_hits import SearchHit, make_hit
from knowledge_assets.core.search.search_sql import ModelInfo, SearchFilters


def _vector_rows(
    conn: psycopg.Connection, model: ModelInfo, vector: list[float], *,
    filters: SearchFilters | None, limit: int, min_similarity: float | None,
) -> list[dict[str, Any]]:  # fmt: skip
    """Exact ranking for small (filtered) sets; the HNSW index, deepened as needed, otherwise."""
    kw: dict[str, Any] = {"filters": filters, "limit": limit, "min_similarity": min_similarity}
    cap = search_sql.EXACT_MAX_ROWS
    small = search_sql.count_chunks(conn) <= cap or (
        filters is not None
        and not filters.is_empty()
        and search_sql.count_filtered(conn, filters, cap + 1) <= cap
    )
    if small:
        return search_sql.vector_exact(conn, model, vector, **kw)
    if filters is not None and not filters.is_empty():
        rows, short = search_sql.vector_hnsw_filtered(conn, model, vector, **kw)
        if not short:
            return rows
    k = max(2 * limit, 40)
    while True:
        rows, got, farthest = search_sql.vector_hnsw(conn, model, vector, k=k, **kw)
        exhausted = got < k or (min_similarity is not None and 1 - farthest < min_similarity)
        if len(rows) >= limit or exhausted:
            return rows
        if k >= search_sql.EF_SEARCH_MAX:  # the index cannot go deeper: rank exactly
            return search_sql.vector_exact(conn, model, vector, **kw)
        k = min(4 * k, search_sql.EF_SEARCH_MAX)


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

    def keyword(
        self, conn: psycopg.Connection, depth: int, rescore: int
    ) -> tuple[list[dict[str, Any]], dict[Any, float]]:
        """BM25 candidates and, for the first ``rescore`` of them, their cosine similarity."""
        rows = keyword_sql.keyword_bm25(conn, self.query, filters=self.filters, limit=depth)
        if not rescore or self.vector is None or self.info is None:
            return rows, {}
        ids = [r["chunk_id"] for r in rows[:rescore]]
        return rows, search_sql.cosines(conn, self.info, self.vector, ids)


def run(legs: Legs, mode: str, limit: int, weights: HybridWeights | None) -> list[SearchHit]:
    if mode == "vector":
        if legs.info is None:
            return []
        t = legs.threshold
        rows = legs.vector_rows(limit, t if t is not None else default_threshold(legs.info.model))
        return [make_hit(r, r["score"], ("vector",)) for r in rows]
    w = weights or HybridWeights.from_env(legs.info.model if legs.info is not None else None)
    if mode == "keyword":
        kw_rows, _ = legs.keyword(legs.conn, limit, 0)
        return [make_hit(r, r["score"], ("keyword",)) for r in kw_rows]
    depth = max(limit, w.candidates)
    rescore = w.candidates if w.rescores else 0
    if legs.companion is not None and legs.vector is not None:
        kw_rows, vec_rows, cos = _concurrent_legs(legs, depth, rescore)
    else:
        kw_rows, _ = legs.keyword(legs.conn, depth, 0)
        vec_rows = legs.vector_rows(depth, legs.threshold)
        cos = {}
        if rescore and legs.vector is not None and legs.info is not None:
            have = {r["chunk_id"] for r in vec_rows}
            missing = [r["chunk_id"] for r in kw_rows[:rescore] if r["chunk_id"] not in have]
            cos = search_sql.cosines(legs.conn, legs.info, legs.vector, missing)
    # Dense re-scoring: the keyword candidates the vector list missed get their cosine too.
    have = {r["chunk_id"] for r in vec_rows}
    dense = {cid: score for cid, score in cos.items() if cid not in have}
    fused = fuse(_pairs(vec_rows), _pairs(kw_rows), w, limit, dense)
    by_id = {r["chunk_id"]: r for r in kw_rows} | {r["chunk_id"]: r for r in vec_rows}
    return [make_hit(by_id[cid], score, found) for cid, score, found in fused]


def _concurrent_legs(
    legs: Legs, depth: int, rescore: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[Any, float]]:
    """The keyword leg (with the cosines of its candidates, as it cannot know yet which ones the
    vector leg misses) on the companion in a thread of its own, the vector leg on ``conn`` here.

    Each connection is used by one thread only. Whichever leg fails, the other is waited for
    (the companion is free again when this returns) and the failure is raised as it was.
    """
    assert legs.companion is not None
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ka-keyword-leg") as pool:
        keyword = pool.submit(legs.keyword, legs.companion, depth, rescore)
        vec_rows = legs.vector_rows(depth, legs.threshold)
        kw_rows, cos = keyword.result()
    return kw_rows, vec_rows, cos
