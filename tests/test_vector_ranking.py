"""How a vector search ranks: by a scan of the model's vectors in a small store, chunk by chunk
for few filtered chunks of a larger one, through the HNSW index otherwise. The two exact ways
agree, and vectors live in their table's rows."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from knowledge_assets.core.database import db
from knowledge_assets.core.embedders import Embedder
from knowledge_assets.core.index import index_store
from knowledge_assets.core.search import SearchFilters, hnsw_scan, legs, search_sql


@pytest.fixture
def conn(vault_url: str) -> Iterator[psycopg.Connection]:
    with db.connect(vault_url) as c:
        yield c


@pytest.mark.parametrize(
    ("total", "few"), [(30, 1_000), (19_428, 1_000), (50_000, 2_500), (194_330, 5_000)]
)
def test_the_filtered_chunks_ranked_one_by_one_are_few_or_a_small_share(
    total: int, few: int
) -> None:
    assert legs._few(total) == few


def _ranking(rows: list[dict[str, Any]]) -> list[tuple[Any, float]]:
    return [(r["chunk_id"], round(float(r["score"]), 5)) for r in rows]


def _spy(monkeypatch: pytest.MonkeyPatch, names: tuple[str, ...]) -> list[str]:
    calls: list[str] = []
    for name in names:
        original = getattr(search_sql, name)

        def run(*args: Any, _name: str = name, _fn: Any = original, **kwargs: Any) -> Any:
            calls.append(_name)
            return _fn(*args, **kwargs)

        monkeypatch.setattr(search_sql, name, run)
    return calls


@pytest.mark.parametrize("min_similarity", [None, 0.1])
@pytest.mark.parametrize("limit", [3, 500])
@pytest.mark.parametrize(
    "filters", [None, SearchFilters(path_prefix="日記/"), SearchFilters(tags=("運動", "garden"))]
)
def test_a_small_store_ranked_by_scan_matches_chunk_by_chunk_ranking(
    conn: psycopg.Connection, usem3: Embedder, monkeypatch: pytest.MonkeyPatch,
    filters: SearchFilters | None, limit: int, min_similarity: float | None,
) -> None:  # fmt: skip
    """The scan ranks the model's nearest vectors and maps them to chunks; it must find the same
    chunks with the same scores as looking up each chunk's vectors, however few pass."""
    assert index_store.count_chunks(conn) <= search_sql.EXACT_MAX_ROWS
    model = search_sql.get_model(conn)
    assert model is not None
    vector = usem3.embed(["雪の日に走った"], "query")[0]
    kw: dict[str, Any] = {"filters": filters, "limit": limit, "min_similarity": min_similarity}
    looked_up = search_sql.vector_exact(conn, model, vector, **kw)
    # However few chunks the filters leave, scan (not the chunk-by-chunk ranking of few).
    monkeypatch.setattr(search_sql, "EXACT_FEW_ROWS", 0)
    monkeypatch.setattr(search_sql, "EXACT_MAX_SHARE", 0.0)
    calls = _spy(monkeypatch, ("vector_exact", "vector_hnsw_filtered", "vector_nearest"))
    scanned = legs._vector_rows(conn, model, vector, **kw)
    assert set(calls) == {"vector_nearest"}
    assert scanned, "the query must find something"
    assert _ranking(scanned) == _ranking(looked_up)
    if limit == 500:  # more than the store holds: every chunk that passes, once
        assert len({r["chunk_id"] for r in scanned}) == len(scanned)


@pytest.mark.parametrize(
    ("above", "expected"), [(0, ["vector_exact"]), (-1, ["vector_hnsw_filtered"])],
    ids=["few", "many"],
)  # fmt: skip
def test_a_filtered_search_in_a_larger_store_ranks_few_chunks_exactly(
    conn: psycopg.Connection, usem3: Embedder, monkeypatch: pytest.MonkeyPatch, above: int,
    expected: list[str],
) -> None:  # fmt: skip
    """The store counts as large (more chunks than ``EXACT_MAX_ROWS``): the filtered chunks are
    ranked one by one when they are at most that many, through the index when they are more
    (with pgvector 0.7, which has no iterative scans, through the deepened plain index scan)."""
    if "vector_hnsw_filtered" in expected and not hnsw_scan.has_iterative_scans(conn):
        expected = [*expected, "vector_nearest"]
    filters = SearchFilters(path_prefix="日記/")
    few = search_sql.count_filtered(conn, filters, 10**6)
    assert 2 <= few < index_store.count_chunks(conn)
    monkeypatch.setattr(search_sql, "EXACT_MAX_ROWS", few + above)
    calls = _spy(monkeypatch, ("vector_exact", "vector_hnsw_filtered", "vector_nearest"))
    model = search_sql.get_model(conn)
    assert model is not None
    vector = usem3.embed(["雪の日に走った"], "query")[0]
    rows = legs._vector_rows(conn, model, vector, filters=filters, limit=2, min_similarity=None)
    assert len(rows) == 2 and all(r["file_path"].startswith("日記/") for r in rows)
    assert calls == expected


def test_an_unfiltered_search_ranks_a_small_store_by_scan_and_a_larger_one_by_index(
    conn: psycopg.Connection, usem3: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = search_sql.get_model(conn)
    assert model is not None
    vector = usem3.embed(["雪の日に走った"], "query")[0]
    modes: list[bool] = []
    original = search_sql.vector_nearest

    def recorded(*args: Any, exact: bool = False, **kwargs: Any) -> Any:
        modes.append(exact)
        return original(*args, exact=exact, **kwargs)

    monkeypatch.setattr(search_sql, "vector_nearest", recorded)
    small = legs._vector_rows(conn, model, vector, filters=None, limit=5, min_similarity=None)
    monkeypatch.setattr(search_sql, "EXACT_MAX_ROWS", 1)
    large = legs._vector_rows(conn, model, vector, filters=None, limit=5, min_similarity=None)
    assert modes == [True, False]
    assert [r["chunk_id"] for r in large] == [r["chunk_id"] for r in small]


def test_a_vector_is_kept_in_its_row(conn: psycopg.Connection) -> None:
    """usem3's 512-d vectors (2 kB each) would go out of line at Postgres's default row target;
    the table keeps them in its rows, where ranking reads them without a TOAST lookup."""
    dims, vectors, toast = conn.execute(
        "SELECT (SELECT dims FROM rag.models WHERE is_active), (SELECT count(*) FROM"
        " rag.embeddings), pg_relation_size(reltoastrelid) FROM pg_class"
        " WHERE oid = 'rag.embeddings'::regclass"
    ).fetchone()
    assert dims == 512 and vectors > 10
    assert toast == 0


@pytest.mark.parametrize(
    ("after_scan", "then"), [(10**6, ["vector_exact"]), (0, ["vector_nearest"])],
    ids=["few-left", "many-left"],
)  # fmt: skip
def test_a_filtered_scan_that_finds_too_few_ranks_the_filtered_chunks_exactly(
    conn: psycopg.Connection, usem3: Embedder, monkeypatch: pytest.MonkeyPatch,
    after_scan: int, then: list[str],
) -> None:  # fmt: skip
    """The index scan stops short (more rows asked for than pass the filter, as when the kept
    passages lie far from the query): at most ``EXACT_AFTER_SCAN`` filtered chunks are then
    ranked one by one, the same ranking the exact way gives; more deepen the index scan, as
    does pgvector 0.7, which has no iterative scan to stop short."""
    if not hnsw_scan.has_iterative_scans(conn):
        then = ["vector_nearest"]
    filters = SearchFilters(path_prefix="日記/")
    few = search_sql.count_filtered(conn, filters, 10**6)
    monkeypatch.setattr(search_sql, "EXACT_MAX_ROWS", few - 1)
    monkeypatch.setattr(legs, "EXACT_AFTER_SCAN", after_scan)
    model = search_sql.get_model(conn)
    assert model is not None
    vector = usem3.embed(["雪の日に走った"], "query")[0]
    kw: dict[str, Any] = {"filters": filters, "limit": few + 5, "min_similarity": None}
    exact = search_sql.vector_exact(conn, model, vector, **kw)
    calls = _spy(monkeypatch, ("vector_exact", "vector_hnsw_filtered", "vector_nearest"))
    rows = legs._vector_rows(conn, model, vector, **kw)
    assert calls[:2] == ["vector_hnsw_filtered", *then]
    assert {r["chunk_id"] for r in rows} == {r["chunk_id"] for r in exact} and len(rows) == few
    if then == ["vector_exact"]:  # the index's half-precision scores differ in the 5th digit
        assert _ranking(rows) == _ranking(exact)
