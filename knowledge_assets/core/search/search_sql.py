"""Runtime SQL of chunk search: vector candidates (BM25 keyword candidates are in ``keyword_sql``,
the filters' condition in ``filters``; the per-model HNSW indexes are made by
``core.index.index_build``).

Values always travel as query parameters. The two things that cannot — a model name inside an
index predicate and a vector dimension inside a type modifier — are spliced in with
``psycopg.sql.Literal``: the planner uses a partial index only when the query's ``model = '…'``
is a constant it can prove matches the index predicate, which a parameter of a generic prepared
plan is not.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

from knowledge_assets.core.index.index_build import vec_type
from knowledge_assets.core.search.filters import SearchFilters, filter_clause
from knowledge_assets.core.search.hnsw_scan import ITERATIVE_MAX_TUPLES, set_hnsw_scan

# A store of up to this many chunks is ranked exactly by a scan of the model's vectors (5-7 ms at
# 5,152 chunks); a larger one through the HNSW index. The chunks a filter leaves are ranked one by
# one (about 7 µs each) while they are at most EXACT_FEW_ROWS, or EXACT_MAX_SHARE of the store and
# EXACT_MAX_ROWS; more go through the scan or an iterative index scan, which finds its rows quickly
# when many pass: 8-20 ms for 2,075 of 19,428 chunks, against 37-38 ms one by one
# (bench/results/vector_paths.txt).
EXACT_MAX_ROWS = 5000
EXACT_FEW_ROWS = 1000
EXACT_MAX_SHARE = 0.05
HIT_COLUMNS = sql.SQL(
    "c.id AS chunk_id, d.file_path, d.source_table, d.title, c.heading, c.parent_heading, c.heading_path,"
    " c.content, d.tags, d.content_type, d.doc_type, d.top_heading, c.heading_parts,"
    " coalesce(c.url, d.url) AS url, d.created, d.updated"
)


@dataclass(frozen=True)
class ModelInfo:
    """A row of rag.models: what made the vectors and how to embed queries like them."""

    model: str
    provider: str
    dims: int
    options: dict[str, Any]
    template: str = "seed000"  # which embedding inputs (rag.embedding_inputs) search reads


def get_model(conn: psycopg.Connection, model: str | None = None) -> ModelInfo | None:
    """``model``'s row, or the active model's when ``model`` is None."""
    row = conn.execute(
        "SELECT model, provider, dims, options, template FROM rag.models"
        " WHERE (%(m)s::text IS NULL AND is_active) OR model = %(m)s::text",
        {"m": model},
    ).fetchone()
    return ModelInfo(row[0], row[1], int(row[2]), dict(row[3] or {}), row[4]) if row else None


def _vector_literal(vector: Sequence[float]) -> str:
    # Text input works whether or not pgvector's psycopg adapters are registered on conn.
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"


def fetch_dicts(
    conn: psycopg.Connection, query: sql.Composed | sql.SQL, params: dict[str, Any]
) -> list[dict[str, Any]]:
    """Run ``query`` and return its rows as dicts, planned for these parameter values.

    Never as a prepared statement: after a few runs Postgres may switch it to a generic plan,
    made without knowing the filter or the query terms, and such a plan sorted every filtered
    chunk by distance instead of walking the vector index (7 ms became 150 ms).
    """
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(query, params, prepare=False).fetchall()


def count_filtered(conn: psycopg.Connection, filters: SearchFilters, cap: int) -> int:
    """How many chunks the filters leave, counting no further than ``cap``."""
    where, params = filter_clause(filters, "c")
    query = sql.SQL(
        "SELECT count(*) FROM (SELECT 1 FROM rag.chunks c JOIN rag.latest_docs d"
        " ON d.id = c.document_id WHERE {where} LIMIT %(cap)s) x"
    ).format(where=where)
    row = conn.execute(query, {**params, "cap": cap}, prepare=False).fetchone()
    return int(row[0]) if row else 0


def vector_exact(
    conn: psycopg.Connection, model: ModelInfo, vector: Sequence[float], *,
    filters: SearchFilters | None, limit: int, min_similarity: float | None,
) -> list[dict[str, Any]]:  # fmt: skip
    """Exact nearest chunks among those the filters leave, each chunk's vectors looked up by
    index: for a few chunks of a larger store (``embedding <=> q`` does not match the HNSW
    index expression)."""
    where, params = filter_clause(filters, "c")
    # A chunk embedded in parts scores as its best part.
    query = sql.SQL(
        "SELECT {cols}, 1 - p.dist AS score"
        " FROM rag.chunks c JOIN rag.latest_docs d ON d.id = c.document_id"
        " CROSS JOIN LATERAL (SELECT min(e.embedding <=> %(q)s::vector) AS dist"
        "  FROM rag.embedding_inputs i JOIN rag.embeddings e"
        "  ON e.model = i.model AND e.text_hash = i.text_hash"
        "  WHERE i.model = {model} AND i.template = {template} AND i.chunk_hash = c.text_hash) p"
        " WHERE {where} AND p.dist IS NOT NULL"
        " AND (%(min)s::float8 IS NULL OR 1 - p.dist >= %(min)s)"
        " ORDER BY p.dist, c.id LIMIT %(limit)s"
    ).format(
        cols=HIT_COLUMNS,
        model=sql.Literal(model.model),
        template=sql.Literal(model.template),
        where=where,
    )
    params |= {"q": _vector_literal(vector), "min": min_similarity, "limit": limit}
    return fetch_dicts(conn, query, params)


def vector_nearest(
    conn: psycopg.Connection, model: ModelInfo, vector: Sequence[float], *,
    filters: SearchFilters | None, limit: int, min_similarity: float | None, k: int,
    exact: bool = False,
) -> tuple[list[dict[str, Any]], int, float]:  # fmt: skip
    """The ``k`` nearest vectors of the model, then their chunks that pass the filters: through
    the model's HNSW index (approximate), or with ``exact`` by the full-precision distance to
    every vector (which does not match the index expression, so it is a scan).

    Returns the hits and, for deepening, how many neighbours came back and the largest distance.
    """
    where, params = filter_clause(filters, "c")
    vt = vec_type(model.dims)
    dist = sql.SQL(
        "e.embedding <=> %(q)s::vector" if exact else "(e.embedding::{vt}) <=> %(q)s::{vt}"
    ).format(vt=vt)
    query = sql.SQL(
        "WITH nn AS (SELECT e.text_hash, {dist} AS dist"
        "  FROM rag.embeddings e WHERE e.model = {model} ORDER BY {dist} LIMIT %(k)s),"
        # A chunk embedded in parts scores as its best part (DISTINCT ON keeps the nearest).
        " best AS (SELECT DISTINCT ON (c.id) {cols}, 1 - nn.dist AS score, nn.dist FROM nn"
        "  JOIN rag.embedding_inputs i ON i.model = {model} AND i.template = {template}"
        "   AND i.text_hash = nn.text_hash"
        "  JOIN rag.chunks c ON c.text_hash = i.chunk_hash"
        "  JOIN rag.latest_docs d ON d.id = c.document_id"
        "  WHERE {where} AND (%(min)s::float8 IS NULL OR 1 - nn.dist >= %(min)s)"
        "  ORDER BY c.id, nn.dist),"
        " hits AS (SELECT * FROM best ORDER BY dist, chunk_id LIMIT %(limit)s)"
        " SELECT s.nn_count, s.nn_max, hits.* FROM"
        " (SELECT count(*) AS nn_count, coalesce(max(dist), 0) AS nn_max FROM nn) s"
        " LEFT JOIN hits ON true ORDER BY hits.score DESC, hits.chunk_id"
    ).format(
        dist=dist,
        model=sql.Literal(model.model),
        template=sql.Literal(model.template),
        cols=HIT_COLUMNS,
        where=where,
    )
    params |= {"q": _vector_literal(vector), "min": min_similarity, "limit": limit, "k": k}
    if not exact:
        set_hnsw_scan(conn, ef_search=k)
    rows = fetch_dicts(conn, query, params)
    nn_count, nn_max = (int(rows[0]["nn_count"]), float(rows[0]["nn_max"])) if rows else (0, 0.0)
    hits = [
        {k_: v for k_, v in r.items() if k_ not in ("nn_count", "nn_max", "dist")} for r in rows
    ]
    return [h for h in hits if h["chunk_id"] is not None], nn_count, nn_max


def vector_hnsw_filtered(
    conn: psycopg.Connection, model: ModelInfo, vector: Sequence[float], *,
    filters: SearchFilters, limit: int, min_similarity: float | None,
    max_tuples: int = ITERATIVE_MAX_TUPLES,
) -> list[dict[str, Any]] | None:  # fmt: skip
    """Nearest chunks passing ``filters``, filtered inside the HNSW index scan.

    With pgvector >= 0.8 the scan is iterative (``hnsw.iterative_scan``): it keeps walking the
    graph until ``limit`` rows pass the filters or ``max_tuples`` were
    visited, instead of returning ``ef_search`` neighbours that the filters then thin out.
    ``relaxed_order`` may return neighbours slightly out of order, so the outer query sorts
    again. Returns the hits (fewer than ``limit`` when the scan stopped early), or None without
    a query when the database's pgvector has no iterative scans.
    """
    where, params = filter_clause(filters, "c")
    vt = vec_type(model.dims)
    query = sql.SQL(
        "WITH nn AS MATERIALIZED (SELECT c.id, (e.embedding::{vt}) <=> %(q)s::{vt} AS dist"
        "  FROM rag.embeddings e JOIN rag.embedding_inputs i ON i.model = e.model"
        "   AND i.template = {template} AND i.text_hash = e.text_hash"
        "  JOIN rag.chunks c ON c.text_hash = i.chunk_hash"
        "  JOIN rag.latest_docs d ON d.id = c.document_id"
        "  WHERE e.model = {model} AND {where}"
        "  ORDER BY (e.embedding::{vt}) <=> %(q)s::{vt} LIMIT %(limit)s)"
        # A chunk embedded in parts scores as its best part.
        " SELECT {cols}, 1 - min(nn.dist) AS score FROM nn JOIN rag.chunks c ON c.id = nn.id"
        " JOIN rag.latest_docs d ON d.id = c.document_id GROUP BY c.id, d.id"
        " HAVING %(min)s::float8 IS NULL OR 1 - min(nn.dist) >= %(min)s"
        " ORDER BY min(nn.dist), c.id"
    ).format(
        vt=vt, model=sql.Literal(model.model), template=sql.Literal(model.template),
        cols=HIT_COLUMNS, where=where,
    )  # fmt: skip
    params |= {"q": _vector_literal(vector), "min": min_similarity, "limit": limit}
    if not set_hnsw_scan(conn, ef_search=max(40, 2 * limit), iterative=True, max_tuples=max_tuples):
        return None  # no iterative scans in this pgvector: the caller deepens instead
    return fetch_dicts(conn, query, params)


def cosines(
    conn: psycopg.Connection, model: ModelInfo, vector: Sequence[float], ids: Sequence[Any]
) -> dict[Any, float]:
    """Cosine similarity between the query vector and the given chunks (those with a vector; a
    chunk embedded in parts counts its best part)."""
    if not ids:
        return {}
    # A correlated sub-query per chunk, so the plan always starts from the few chunks asked
    # for: a join let a planner with stale statistics walk every input row of the model.
    rows = conn.execute(
        sql.SQL(
            "SELECT c.id, (SELECT max(1 - (e.embedding <=> %(q)s::vector))"
            " FROM rag.embedding_inputs i JOIN rag.embeddings e"
            "  ON e.model = i.model AND e.text_hash = i.text_hash"
            " WHERE i.model = {model} AND i.template = {template} AND i.chunk_hash = c.text_hash)"
            " FROM rag.chunks c WHERE c.id = ANY(%(ids)s)"
        ).format(model=sql.Literal(model.model), template=sql.Literal(model.template)),
        {"q": _vector_literal(vector), "ids": list(ids)},
    ).fetchall()
    return {r[0]: float(r[1]) for r in rows if r[1] is not None}
