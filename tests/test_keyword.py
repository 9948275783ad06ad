"""Keyword search on real Postgres: token-count BM25 lengths, adjacent-word (bigram) evidence,
heading weighting and per-note results, over small vaults written for each test."""

from __future__ import annotations

import math
from pathlib import Path

import psycopg
import pytest

from knowledge_assets.core.chunks.chunk_refresh import refresh_chunks
from knowledge_assets.core.chunks.tokenize import tokens
from knowledge_assets.core.database import db
from knowledge_assets.core.ingest.latest import refresh_latest
from knowledge_assets.core.ingest.sync import sync_source
from knowledge_assets.core.search import SearchFilters, search
from knowledge_assets.core.search.keyword_sql import (
    K1_JAPANESE,
    KeywordSettings,
    default_settings,
    keyword_bm25,
)
from knowledge_assets.core.sources.local import LocalSource

FILLER = "天気は晴れで、風が少し強かった。"


def load(url: str, root: Path, notes: dict[str, str]) -> None:
    for name, text in notes.items():
        (root / name).write_text(text, encoding="utf-8")
    with db.connect(url) as conn:
        source = LocalSource(root)
        sync_source(conn, source)
        refresh_latest(conn, source.table)
        refresh_chunks(conn, max_tokens=8000)


def test_bm25_length_is_the_token_count(db_url: str, tmp_path: Path) -> None:
    body = "猫が好きだ。猫は猫らしく眠る。犬も好きだ。"
    load(db_url, tmp_path, {"a.md": f"# 動物\n\n## 猫\n\n{body}\n"})
    with psycopg.connect(db_url) as conn:
        row = conn.execute("SELECT c.token_count, length(c.tokens) FROM rag.chunks c").fetchone()
        total = conn.execute("SELECT ndocs, total_length FROM rag.keyword_totals").fetchone()
    expected = len(tokens("動物\n猫")) + len(tokens(body))
    assert row is not None and row[0] == expected
    assert row[1] > row[0]  # distinct lexemes, adjacent pairs included: not the length
    assert total == (1, expected)


def test_adjacent_query_words_rank_the_phrase_first(db_url: str, tmp_path: Path) -> None:
    notes = {
        "apart.md": "# 記録\n\n## 旅\n\n東京で友人と会い、その後は京都の大学を見学した。\n",
        "phrase.md": "# 記録\n\n## 学校\n\n東京大学の見学に行った。" + FILLER * 2 + "\n",
    }
    load(db_url, tmp_path, notes)
    with db.connect(db_url) as conn:
        hits = search(conn, "東京大学", mode="keyword").hits
        plain = keyword_bm25(conn, "東京大学", filters=None, limit=5,
                             settings=KeywordSettings(bigram_weight=0.0))  # fmt: skip
    assert [h.file_path for h in hits] == ["phrase.md", "apart.md"]
    # Without the pair lexemes the longer phrase note loses to the shorter one.
    assert [r["file_path"] for r in plain] == ["apart.md", "phrase.md"]


def test_a_word_in_the_heading_outranks_the_same_word_in_the_body(
    db_url: str, tmp_path: Path
) -> None:
    notes = {
        "body.md": "# 日誌\n\n## 午後\n\n温泉に行った。" + FILLER + "\n",
        "head.md": "# 日誌\n\n## 温泉\n\n午後に行った。" + FILLER + "\n",
    }
    load(db_url, tmp_path, notes)
    with db.connect(db_url) as conn:
        hits = search(conn, "温泉", mode="keyword").hits
        flat = keyword_bm25(conn, "温泉", filters=None, limit=5,
                            settings=KeywordSettings(heading_tf=1.0))  # fmt: skip
    assert [h.file_path for h in hits] == ["head.md", "body.md"]
    assert flat[0]["score"] == pytest.approx(flat[1]["score"])


@pytest.mark.parametrize(
    ("query", "k1"),
    [("温泉に行く", K1_JAPANESE), ("おんせん", K1_JAPANESE), ("ｵﾝｾﾝ", K1_JAPANESE),
     ("onsen trip", 1.2), ("hot spring 2024", 1.2), ("", 1.2)],
)  # fmt: skip
def test_japanese_queries_saturate_term_frequency_sooner(query: str, k1: float) -> None:
    settings = default_settings(query)
    assert settings.k1 == k1
    assert (settings.b, settings.heading_tf, settings.bigram_weight) == (0.75, 3.0, 0.5)


@pytest.mark.parametrize(("query", "k1"), [("温泉", K1_JAPANESE), ("onsen", 1.2)])
def test_default_bm25_counts_a_heading_three_times_with_the_queries_k1(
    db_url: str, tmp_path: Path, query: str, k1: float
) -> None:
    # The word once in the heading and twice in the body: tf = 3 + 2 under the default settings.
    notes = {
        "a.md": f"# 日誌\n\n## {query}\n\n午後に{query}へ行った。{query}は広い。\n",
        "b.md": "# 日誌\n\n## 夕方\n\n" + FILLER + "\n",
    }
    load(db_url, tmp_path, notes)
    with db.connect(db_url) as conn:
        hits = keyword_bm25(conn, query, filters=None, limit=5)
        dl = conn.execute(
            "SELECT token_count FROM rag.chunks WHERE heading = %s", (query,)
        ).fetchone()
        totals = conn.execute("SELECT ndocs, total_length FROM rag.keyword_totals").fetchone()
    assert dl is not None and totals is not None and [h["file_path"] for h in hits] == ["a.md"]
    ndocs, total = totals
    idf = math.log(1 + (ndocs - 1 + 0.5) / (1 + 0.5))
    tf, norm = 5.0, k1 * (1 - 0.75 + 0.75 * dl[0] / (total / ndocs))
    assert hits[0]["score"] == pytest.approx(idf * tf * (k1 + 1) / (tf + norm))


def test_per_note_returns_distinct_notes_with_their_other_sections(
    db_url: str, tmp_path: Path
) -> None:
    long_note = "# 畑\n\n" + "".join(f"## 区画{i}\n\nトマトを植えた区画{i}。\n\n" for i in range(6))
    notes = {"farm.md": long_note, "diary.md": "# 日記\n\n## 夕食\n\nトマトのサラダを食べた。\n"}
    load(db_url, tmp_path, notes)
    with db.connect(db_url) as conn:
        chunks = search(conn, "トマト", mode="keyword", limit=5).hits
        per_note = search(conn, "トマト", mode="keyword", limit=5, per_note=True).hits
    assert len({h.file_path for h in chunks}) < len(chunks)  # one note fills the chunk list
    assert sorted(h.file_path for h in per_note) == ["diary.md", "farm.md"]
    farm = next(h for h in per_note if h.file_path == "farm.md")
    assert len(farm.sections) == 3
    assert all(s.file_path == "farm.md" and s.score <= farm.score for s in farm.sections)
    assert farm.chunk_id not in {s.chunk_id for s in farm.sections}


def test_pre_ranking_keeps_the_exact_top_hits_and_the_filters(db_url: str, tmp_path: Path) -> None:
    # 160 notes share the common word, so more candidates than the pre-rank keeps (100): the
    # notes that also hold the rarer words, some of them several times, must still come first.
    (tmp_path / "sub").mkdir()
    notes = {}
    for i in range(160):
        extra = ("露天風呂が広い。" * (i % 4)) if i % 5 == 0 else ""
        folder = "sub/" if i % 2 else ""
        notes[f"{folder}n{i:03d}.md"] = f"# 旅{i}\n\n## 宿\n\n温泉に入った。{extra}{FILLER}\n"
    load(db_url, tmp_path, notes)
    with db.connect(db_url) as conn:
        top = keyword_bm25(conn, "露天風呂のある温泉", filters=None, limit=10)
        deep = keyword_bm25(conn, "露天風呂のある温泉", filters=None, limit=300)
        only_sub = keyword_bm25(conn, "露天風呂のある温泉", filters=SearchFilters(path_prefix="sub/"),
                                limit=300)  # fmt: skip
    assert len(deep) == 160
    assert [r["chunk_id"] for r in top] == [r["chunk_id"] for r in deep[:10]]
    scores = [r["score"] for r in deep]
    assert scores == sorted(scores, reverse=True)
    assert all("露天" in r["content"] for r in top[:8])  # the notes holding every query word
    assert len(only_sub) == 80 and all(r["file_path"].startswith("sub/") for r in only_sub)


def test_searches_are_planned_for_their_own_terms_and_filters(db_url: str, tmp_path: Path) -> None:
    # psycopg prepares a statement run five times; Postgres may then reuse a generic plan made
    # without the query's terms or filter values, which can skip the indexes altogether.
    load(
        db_url,
        tmp_path,
        {"a.md": "# 旅\n\n## 宿\n\n温泉に入った。\n", "b.md": "# 旅\n\n## 山\n\n温泉は遠い。\n"},
    )
    with db.connect(db_url) as conn:
        for _ in range(8):
            search(conn, "温泉", mode="keyword", filters=SearchFilters(path_prefix="a"))
            keyword_bm25(conn, "温泉", filters=None, limit=5)
        prepared = [r[0] for r in conn.execute("SELECT statement FROM pg_prepared_statements")]
    # Small look-ups (statistics, settings) may be prepared; no ranking or filtering query is.
    assert not [q for q in prepared if "@@" in q or "LIKE" in q]


@pytest.mark.parametrize(
    ("filters", "keep"),
    [
        (SearchFilters(path_prefix="sub/"), lambda path, tags: path.startswith("sub/")),
        (SearchFilters(tags=("露天",)), lambda path, tags: "露天" in tags),
        (SearchFilters(path_prefix="sub/n0", tags=("露天", "山")),
         lambda path, tags: path.startswith("sub/n0") and bool({"露天", "山"} & set(tags))),
    ],
)  # fmt: skip
def test_filtered_keyword_search_ranks_as_the_unfiltered_one_restricted(
    db_url: str, tmp_path: Path, filters: SearchFilters, keep: object
) -> None:
    """The filters only decide which chunks may match: each filtered hit keeps its exact BM25
    score and rank among the unfiltered hits that pass the filters."""
    (tmp_path / "sub").mkdir()
    notes = {}
    for i in range(120):
        extra = ("露天風呂が広い。" * (i % 4)) if i % 3 == 0 else ""
        tags = ["露天"] if extra else (["山"] if i % 7 == 0 else [])
        front = f"---\ntags: [{', '.join(tags)}]\n---\n" if tags else ""
        notes[f"{'sub/' if i % 2 else ''}n{i:03d}.md"] = f"{front}# 旅{i}\n\n## 宿\n\n温泉に入った。{extra}{FILLER}\n"  # fmt: skip
    load(db_url, tmp_path, notes)
    query = "露天風呂のある温泉"
    with db.connect(db_url) as conn:
        every = keyword_bm25(conn, query, filters=None, limit=500)
        wanted = [r for r in every if keep(r["file_path"], r["tags"])]  # type: ignore[operator]
        filtered = keyword_bm25(conn, query, filters=filters, limit=500)
        top = keyword_bm25(conn, query, filters=filters, limit=5)
    assert len(every) == 120 and 0 < len(wanted) < 120
    assert filtered == wanted
    assert top == wanted[:5]


def test_a_compound_is_found_among_more_candidates_than_are_re_scored(
    db_url: str, tmp_path: Path
) -> None:
    # 東京大学 is two words (東京, 大学) to the tokenizer. Many short notes hold both words apart;
    # one longer note holds the compound. Pre-ranked by the words alone, every note ties but for
    # its length, and the longer one would not reach the exact re-scoring of the best 100.
    apart = {
        f"apart{i:03d}.md": f"# 記録{i}\n\n## 旅\n\n東京の友人と京都の大学へ行った。\n"
        for i in range(120)
    }
    phrase = {"phrase.md": "# 記録\n\n## 学校\n\n東京大学の見学に行った。" + FILLER * 3 + "\n"}
    load(db_url, tmp_path, apart | phrase)
    with db.connect(db_url) as conn:
        hits = search(conn, "東京大学", mode="keyword").hits
    assert hits[0].file_path == "phrase.md"
