"""Obsidian's exclusions typed in a query, ``-tag:``, ``-path:`` and ``-word``, and ``path:`` as
text anywhere in the path, on real Postgres over the sample vault: each removes exactly the notes
it names, in every mode, through the search function and the HTTP API."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import psycopg
import pytest

from knowledge_assets.answer import Asker, LLMSettings
from knowledge_assets.answer.retrieve import retrieve
from knowledge_assets.core.database import db
from knowledge_assets.core.embedders import Embedder
from knowledge_assets.core.search import SearchFilters, keyword_sql, search, search_sql
from knowledge_assets.core.search.filters import with_excluded_notes
from knowledge_assets.core.search.operators import UnsearchableQuery
from tests.api_support import api_client
from tests.conftest import DIARY_10, DIARY_11, GARDEN, RAG

QUERY = "検索 設計 日記 走った 雪 tomatoes 料理 チャンキング"
MODES = ["keyword", "vector", "hybrid"]


@pytest.fixture
def conn(vault_url: str) -> Iterator[psycopg.Connection]:
    with db.connect(vault_url) as c:
        yield c


def _notes(conn: psycopg.Connection, query: str, mode: str, **kw: object) -> set[str]:
    response = search(conn, query, mode=mode, limit=50, threshold=-1.0, **kw)  # type: ignore[arg-type]
    return {h.file_path for h in response.hits}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("exclusion", "gone"),
    [
        ("-tag:日記", {DIARY_10, DIARY_11}),
        ("-tag:運動", {DIARY_11}),
        ("-TAG:#RAG", {RAG}),  # in any case, '#' optional
        ("-path:日記", {DIARY_10, DIARY_11}),
        ("-path:GARDEN", {GARDEN}),  # anywhere in the path, in any case
        ("-path:01-10", {DIARY_10}),
        ("-雪", {DIARY_10}),
        ("-日記", {DIARY_10, DIARY_11}),  # in their titles, not in their sections' text
        ("-走る", {DIARY_11}),  # as keyword search reads words: 走った, 走り終える
        ("-Tomatoes", {GARDEN}),
        ('-"味噌ラーメン"', {DIARY_10}),
        ('-"味噌バター"', set()),  # both words are in DIARY_10, but not side by side
        ("-tag:日記 -path:garden -チャンキング", {DIARY_10, DIARY_11, GARDEN, RAG}),
    ],
)
def test_an_exclusion_removes_exactly_the_notes_it_names(
    conn: psycopg.Connection, mode: str, exclusion: str, gone: set[str]
) -> None:
    everything = _notes(conn, QUERY, mode)
    assert gone <= everything, "the notes left out must match the query without the exclusion"
    assert _notes(conn, f"{QUERY} {exclusion}", mode) == everything - gone


@pytest.mark.parametrize("mode", MODES)
def test_exclusions_combine_with_operators_and_the_filters_given_beside_the_query(
    conn: psycopg.Connection, mode: str
) -> None:
    assert _notes(conn, f"tag:日記 {QUERY} -雪", mode) == {DIARY_11}
    beside = SearchFilters(tags=("日記", "garden"))
    assert _notes(conn, f"{QUERY} -tag:運動", mode, filters=beside) == {DIARY_10, GARDEN}
    under = SearchFilters(path_prefix="日記/")
    assert _notes(conn, f"{QUERY} -path:10", mode, filters=under) == {DIARY_11}
    per_note = search(conn, f"{QUERY} -path:日記", mode=mode, limit=50, threshold=-1.0, per_note=True)  # fmt: skip
    assert per_note.hits and not {h.file_path for h in per_note.hits} & {DIARY_10, DIARY_11}
    assert all(not s.file_path.startswith("日記/") for h in per_note.hits for s in h.sections)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("path", "kept"),
    [
        ("GARDEN", {GARDEN}),  # not a prefix: text anywhere in the path, in any case
        ("01-1", {DIARY_10, DIARY_11}),
        ("日記/", {DIARY_10, DIARY_11}),
        ("%", set()),  # LIKE's wildcards are the characters themselves
        ("1_1", set()),  # not "1-1" of the diaries' dates
        ("0_RAG", {RAG}),
    ],
)
def test_a_typed_path_keeps_the_notes_whose_path_holds_it(
    conn: psycopg.Connection, mode: str, path: str, kept: set[str]
) -> None:
    assert _notes(conn, f"path:{path} {QUERY}", mode) == kept
    assert len(_notes(conn, QUERY, mode)) > len(kept)
    assert _notes(conn, f"{QUERY} -path:{path}", mode) == _notes(conn, QUERY, mode) - kept


@pytest.mark.parametrize("through", ["index", "exact"])
def test_exclusions_hold_when_vectors_are_ranked_through_the_index(
    conn: psycopg.Connection, monkeypatch: pytest.MonkeyPatch, through: str
) -> None:
    """A larger store ranks filtered vectors through the HNSW index (filtered inside the scan,
    then deepened) instead of one by one: the exclusions hold there too."""
    if through == "index":
        monkeypatch.setattr(search_sql, "EXACT_MAX_ROWS", 0)
    query = f"{QUERY} -tag:運動 -path:garden -雪"
    assert _notes(conn, query, "vector") == _notes(conn, QUERY, "vector") - {DIARY_10, DIARY_11, GARDEN}  # fmt: skip


def test_excluded_words_reach_a_search_as_the_ids_of_their_notes(conn: psycopg.Connection) -> None:
    """A search looks up the notes holding its excluded words once and leaves them out by id;
    a leg given the words themselves refuses them rather than plan a sub-query per statement."""
    given = SearchFilters(exclude_words=("雪", "tomatoes"))
    resolved = with_excluded_notes(conn, given)
    assert resolved is not None and not resolved.exclude_words and len(resolved.exclude_notes) == 2
    kept = {
        r["file_path"] for r in keyword_sql.keyword_bm25(conn, QUERY, filters=resolved, limit=50)
    }
    assert kept == _notes(conn, QUERY, "keyword") - {DIARY_10, GARDEN}
    with pytest.raises(ValueError, match="with_excluded_notes"):
        keyword_sql.keyword_bm25(conn, QUERY, filters=given, limit=50)
    none = with_excluded_notes(conn, SearchFilters(exclude_words=("量子色力学",)))
    assert none == SearchFilters()  # no note holds it: nothing is left to filter


@pytest.mark.parametrize(
    ("query", "reason"),
    [("-tag:日記", "no words to search for"), ("-tag:日記 -雪", "no words to search for"),
     ("検索 -の", "excludes nothing"), ("検索 -path:", "names nothing")],
)  # fmt: skip
def test_a_query_of_exclusions_alone_is_refused(
    conn: psycopg.Connection, query: str, reason: str
) -> None:
    with pytest.raises(UnsearchableQuery, match=reason):
        search(conn, query, mode="keyword")


def test_an_answer_scores_the_words_and_keeps_the_question_as_asked(
    conn: psycopg.Connection, usem3: Embedder
) -> None:
    asked = "夜に何のラーメンを作った？ -雪 -tag:運動"
    found = retrieve(conn, asked, embedder=usem3)
    assert found.question == "夜に何のラーメンを作った？"
    assert "雪" not in found.weights
    assert DIARY_10 not in {n.note_id for n in found.notes}
    assert DIARY_10 in {n.note_id for n in retrieve(conn, found.question, embedder=usem3).notes}
    answer = Asker(LLMSettings(), embedder=usem3).ask(conn, asked)
    assert answer.question == asked and "味噌ラーメン" not in answer.answer


@pytest.fixture(scope="module")
def client(vault_url: str, usem3: Embedder) -> Iterator[httpx.Client]:
    with api_client(vault_url, Asker(LLMSettings(), embedder=usem3)) as c:
        yield c


@pytest.mark.parametrize(("path", "extra"), [("keyword", {}), ("semantic", {"threshold": -1}), ("hybrid", {})])  # fmt: skip
def test_the_api_leaves_out_the_excluded_notes_and_highlights_only_the_words(
    client: httpx.Client, path: str, extra: dict[str, object]
) -> None:
    def ids(query: str) -> set[str]:
        body = client.post(f"/api/search/{path}", json={"query": query, "limit": 50, **extra})
        assert body.status_code == 200, body.text
        return {hit["id"] for hit in body.json()["data"]}

    assert ids(f"{QUERY} -tag:日記 -path:garden") == ids(QUERY) - {DIARY_10, DIARY_11, GARDEN}
    body = client.post(f"/api/search/{path}", json={"query": "味噌ラーメン -雪 -tag:運動", **extra})
    assert body.json()["terms"] == ["味噌", "ラーメン"]


@pytest.mark.parametrize(
    ("query", "reason"),
    [("-tag:日記", "no words to search for"), ("検索 -の", "excludes nothing")],
)
def test_the_api_refuses_a_query_of_exclusions_alone(
    client: httpx.Client, query: str, reason: str
) -> None:
    response = client.post("/api/search/keyword", json={"query": query})
    assert response.status_code == 422 and reason in response.json()["error"]
